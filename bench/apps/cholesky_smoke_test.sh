#!/usr/bin/env bash
# Smoke test for bench/apps/cholesky: the whole pipeline on this machine
# (--local: shared memory, no emulated cluster), 4 ranks (a 2x2 grid), T = 4
# tiles of 16 x 16 doubles, short kernels. It must print its table and write the
# JSON of bench/common/report.h with both modes (cholesky:<naive|dynamic>:4:4),
# positive and ordered figures, no routing error, the same number of tile
# transfers in both modes, broadcasts only in dynamic mode, and the recipient
# counts of the plan computed here independently; then two workers per rank with
# the in-order executor; then a bad argument.
# Timing results are for the emulated cluster (docs/cholesky.md) and are not
# checked here.
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/apps"
[ -x "$dir/cholesky" ] || dir="$(dirname "$0")"
tmp="${TEST_TMPDIR:-/tmp}"
"$dir/cholesky" --local --ranks 4 --tiles 4 --tile-doubles 16 \
  --potrf-us 100 --trsm-us 300 --syrk-us 300 --gemm-us 600 --reps 3 \
  --warmup 1 --json "$tmp/cholesky.json" > "$tmp/cholesky.txt"
cat "$tmp/cholesky.txt"
grep -q "dyn/naive" "$tmp/cholesky.txt"
grep -q "no routing errors" "$tmp/cholesky.txt"
/usr/bin/python3 - "$tmp/cholesky.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["benchmark"] == "cholesky", doc.get("benchmark")
assert doc["machine"]["emulated_cluster"] is False, doc["machine"]
cases = {r["case"]: r for r in doc["results"]}
# The plan, computed independently: Algorithm 1 with T = 4 on a 2x2 grid,
# the owner of the written tile runs the task, a tile goes once to every
# other rank with a task reading it.
T, p, q = 4, 2, 2
owner = lambda i, j: (i % p) * q + (j % q)
readers, tasks = {}, 0
def task(out, *ins):
    global tasks
    tasks += 1
    for t in ins:
        readers.setdefault(t, set()).add(owner(*out))
for k in range(T):
    task((k, k))
    for m in range(k + 1, T):
        task((m, k), (k, k))
    for m in range(k + 1, T):
        task((m, m), (m, k))
        for n in range(k + 1, m):
            task((m, n), (m, k), (n, k))
sizes, transfers = {}, 0
for t, rs in readers.items():
    n = len(rs - {owner(*t)})
    transfers += n
    if n:
        sizes[str(n)] = sizes.get(str(n), 0) + 1
assert tasks == 20 and transfers > 0 and max(map(int, sizes)) >= 2, sizes
assert set(cases) == {"cholesky:naive:4:4", "cholesky:dynamic:4:4"}, sorted(cases)
for c, r in cases.items():
    for k in ("median_ns", "min_ns", "p99_ns"):
        assert isinstance(r[k], (int, float)) and r[k] > 0, (c, k, r[k])
    assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], (c, r)
    assert r["tiles"] == 4 and r["ranks"] == 4 and r["grid"] == "2x2", r
    assert r["errors"] == 0, (c, r["errors"])
    assert len(r["samples_ns"]) == 3, r["samples_ns"]
    # A run cannot beat the busiest rank's kernels nor the critical path.
    bound = max(r["critical_path_ns"], r["max_work_ns"])
    assert bound > 0 and r["min_ns"] >= bound, (c, r["min_ns"], bound)
    assert 0 <= r["idle_fraction"] < 1, (c, r["idle_fraction"])
    assert r["tasks"] == tasks, (r["tasks"], tasks)
    assert r["list_sizes"] == sizes, (r["list_sizes"], sizes)
    assert r["transfers"] == transfers, (r["transfers"], transfers)
naive, dyn = cases["cholesky:naive:4:4"], cases["cholesky:dynamic:4:4"]
assert naive["broadcasts"] == 0 and naive["bcast_recipients"] == 0, naive
assert naive["sends"] == naive["transfers"], naive
assert dyn["broadcasts"] == 3 and dyn["bcast_recipients"] == 6, dyn
assert dyn["sends"] + dyn["bcast_recipients"] == dyn["transfers"], dyn
assert "ratio_vs_naive" not in naive, naive
ratio = dyn["median_ns"] / naive["median_ns"]
assert abs(dyn["ratio_vs_naive"] - ratio) < 1e-9, (dyn["ratio_vs_naive"], ratio)
print("cholesky_smoke_test: ok")
PY
# The other executor paths: two workers per rank, strict flow order.
"$dir/cholesky" --local --ranks 4 --tiles 3,5 --tile-doubles 8 \
  --potrf-us 100 --trsm-us 300 --syrk-us 300 --gemm-us 600 --reps 1 \
  --warmup 0 --workers 2 --executor inorder --json "$tmp/cholesky2.json" \
  > "$tmp/cholesky2.txt"
/usr/bin/python3 - "$tmp/cholesky2.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cases = {r["case"]: r for r in doc["results"]}
want = {f"cholesky:{m}:{t}:4" for m in ("naive", "dynamic") for t in (3, 5)}
assert set(cases) == want, sorted(cases)
for c, r in cases.items():
    assert r["errors"] == 0 and r["workers"] == 2, r
    assert r["executor"] == "inorder", r
    assert r["min_ns"] >= max(r["critical_path_ns"], r["max_work_ns"]) > 0, r
    assert (r["broadcasts"] > 0) == c.startswith("cholesky:dynamic"), r
print("cholesky_smoke_test: 2 workers, in order: ok")
PY
# Bad arguments are refused with status 2 before anything runs.
set +e
"$dir/cholesky" --local --ranks 4 --grid 3x3 > /dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "--grid 3x3 with 4 ranks: status $rc, not 2"; exit 1; }
echo "cholesky_smoke_test: bad --grid refused"
