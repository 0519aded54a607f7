#!/usr/bin/env bash
# Smoke test for bench/apps/starpu_cholesky: the whole pipeline in shared memory
# (no emulated cluster), 4 ranks (a 2x2 grid), N = 512 in 128 x 128 tiles,
# real kernels. It must print its table and write the JSON of
# bench/common/report.h with both modes (starpu_cholesky:<naive|dynamic>:shm), a
# residual under 1e-12 in each, broadcasts only in dynamic mode and as many
# transfers served as the naive mode's single sends (the plan computed here
# independently), and the overhead pair; then a rank that dies in the middle
# of the factorization must end the job (non-zero, within the timeout) with
# rondo-run naming it; then a bad argument exits 2.
# Timing results are for docs/starpu.md and are not checked here.
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/apps"
[ -x "$dir/starpu_cholesky" ] || dir="$(dirname "$0")"
tmp="${TEST_TMPDIR:-/tmp}"
export HOME="${HOME:-$tmp}" STARPU_HOME="$tmp"

"$dir/starpu_cholesky" --hosts 0 --shm 4 --n 512 --tile 128 --reps 2 \
  --warmup 1 --overhead --overhead-n 256 --json "$tmp/sc.json" \
  > "$tmp/sc.txt" 2>&1 || { cat "$tmp/sc.txt"; exit 1; }
cat "$tmp/sc.txt"
grep -q "starpu_cholesky:dynamic:shm" "$tmp/sc.txt"
/usr/bin/python3 - "$tmp/sc.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["benchmark"] == "starpu_cholesky", doc.get("benchmark")
cases = {r["case"]: r for r in doc["results"]}
naive, dyn = cases["starpu_cholesky:naive:shm"], cases["starpu_cholesky:dynamic:shm"]
# The plan: T = 4 on a 2x2 grid; a final tile goes once to every other rank
# with a task reading it.
T, p, q = 4, 2, 2
owner = lambda i, j: (i % p) * q + (j % q)
need = {}
for k in range(T):
    for m in range(k + 1, T):
        need.setdefault((k, k), set()).add(owner(m, k))
        need.setdefault((m, k), set()).add(owner(m, m))
        for n in range(k + 1, m):
            need.setdefault((m, k), set()).add(owner(m, n))
            need.setdefault((n, k), set()).add(owner(m, n))
transfers = sum(len(r - {owner(*t)}) for t, r in need.items())
multi = sum(1 for t, r in need.items() if len(r - {owner(*t)}) >= 2)
reps = len(naive["samples_ns"])
assert reps == 2, reps
for c in (naive, dyn):
    assert c["median_ns"] > 0 and c["min_ns"] <= c["median_ns"] <= c["p99_ns"], c
    assert 0 < c["gflops"], c
    assert c["residual"] is not None and c["residual"] < 1e-12, c["residual"]
    assert c["errors"] == 0, c
    assert c["ranks"] == 4 and c["grid"] == "2x2" and c["tiles"] == T, c
assert naive["broadcasts"] == 0, naive
assert naive["single_sends"] == reps * transfers, (naive["single_sends"], transfers)
# A send registered after its tile was ready goes alone (counted as missed),
# so the broadcasts are at most one per multi-recipient tile; every transfer
# is served once either way.
assert 1 <= dyn["broadcasts"] <= reps * multi, (dyn["broadcasts"], multi)
assert dyn["bcast_recipients"] + dyn["single_sends"] == reps * transfers, dyn
assert dyn["missed"] == 0 or dyn["broadcasts"] < reps * multi, dyn
assert "ratio_vs_naive" in dyn and dyn["ratio_vs_naive"] > 0, dyn
none, rondo = cases["starpu_hook_overhead:none:1"], cases["starpu_hook_overhead:rondo:1"]
assert none["median_ns"] > 0 and rondo["median_ns"] > 0
assert rondo["overhead_ratio"] > 0, rondo
print("starpu_cholesky_smoke_test: JSON ok")
PY

# A rank that dies mid-factorization: rondo-run ends the job and names it.
rc=0
prog="$dir/starpu_cholesky_prog"
run="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/drivers/bootstrap/rondo-run"
[ -x "$run" ] || run="$(dirname "$0")/../drivers/bootstrap/rondo-run"
out=$(OPENBLAS_NUM_THREADS=1 STARPU_SILENT=1 STARPU_NCPU=1 \
      STARPU_WORKERS_NOBIND=1 UCX_MEM_MMAP_HOOK_MODE=none \
      timeout 120 "$run" -n 4 --timeout 100 --kill-grace 5 "$prog" \
      --n 512 --tile 128 --reps 1 --warmup 0 --no-check --fail-rank 3 2>&1) ||
  rc=$?
echo "$out" | grep -E "rondo-run|rondo_starpu|starpu_cholesky" | head -20
[ "$rc" -ne 0 ] || { echo "FAIL: the job survived a dead rank"; exit 1; }
[ "$rc" -ne 124 ] || { echo "FAIL: the job hung after rank 3 died"; exit 1; }
echo "$out" | grep -q "rondo-run: rank 3" ||
  { echo "FAIL: nothing names rank 3"; exit 1; }

# A bad argument.
rc=0
"$dir/starpu_cholesky" --hosts 9x >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: --hosts 9x exited $rc, want 2"; exit 1; }
echo "starpu_cholesky_smoke_test: ok"
