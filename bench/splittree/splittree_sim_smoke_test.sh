#!/usr/bin/env bash
# Smoke test for bench/splittree/splittree_sim (the folded-collective simulator
# on the split-tree paper's configurations). Runs it on a reduced N range and
# checks: the JSON has the report schema and every case (iscan:<placement>,
# blocking/split/best:<op>:<nproc>:<N> for the last 8 N) with consistent
# figures; Figure 7's order bind < odd-even < numa; at N = 62 of 64, S = 3
# beats the blocking collective, which beats S = 0; the run is deterministic (two runs, same JSON
# results); bad arguments fail with a message naming the option; --plot-dir
# succeeds with or without matplotlib.
set -euo pipefail
bin="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/splittree/splittree_sim"
[ -x "$bin" ] || bin="$(dirname "$0")/splittree_sim"
tmp="${TEST_TMPDIR:-/tmp}"
out="$tmp/splittree_sim.json"
"$bin" --p-max 8 --json "$out" > "$tmp/table.txt"
grep -q "SIMULATED" "$tmp/table.txt"
grep -q "Figure 7 (simulated)" "$tmp/table.txt"
"$bin" --p-max 8 --json "$tmp/again.json" --quiet > /dev/null
python3 - "$out" "$tmp/again.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
again = json.load(open(sys.argv[2]))
assert doc["benchmark"] == "splittree_sim", doc.get("benchmark")
assert doc["machine"]["simulated"] is True
assert "cost_model" in doc["machine"]
cases = {r["case"]: r for r in doc["results"]}
for r in doc["results"]:
    for k in ("median_ns", "min_ns", "p99_ns", "units"):
        assert isinstance(r[k], (int, float)) and r[k] > 0, (r["case"], k)
    assert r["min_ns"] == r["median_ns"] == r["p99_ns"], r["case"]
    assert r["simulated"] is True, r["case"]
# Figure 7.
iscan = {p: cases[f"iscan:{p}:64:62"] for p in ("bind", "numa", "odd-even")}
assert iscan["bind"]["units"] < iscan["odd-even"]["units"] < iscan["numa"]["units"], \
    {p: c["units"] for p, c in iscan.items()}
assert iscan["numa"]["comm_cores"] == [31, 63], iscan["numa"]["comm_cores"]
# Figures 17-19: every N from N_proc - 8 to N_proc - 1.
for op, nproc in (("bcast", 64), ("reduce", 64), ("reduce", 48)):
    for n in range(nproc - 8, nproc):
        for kind in ("blocking", "best"):
            assert f"{kind}:{op}:{nproc}:{n}" in cases, f"missing {kind}:{op}:{nproc}:{n}"
        for s in range(4):
            assert f"split:{op}:{nproc}:{n}:{s}" in cases, f"missing split:{op}:{nproc}:{n}:{s}"
        b = cases[f"best:{op}:{nproc}:{n}"]
        assert b["units"] == min(b["units_by_S"]), b
        assert 0 <= b["S_model"] <= b["H"], b
for op in ("bcast", "reduce"):
    s0 = cases[f"split:{op}:64:62:0"]["units"]
    s3 = cases[f"split:{op}:64:62:3"]["units"]
    blocking = cases[f"blocking:{op}:64:62"]["units"]
    assert s3 < blocking < s0, (op, s0, s3, blocking)
    assert cases[f"best:{op}:64:62"]["S_model"] == 3
assert len(cases) == 3 + 3 * 8 * (4 + 2), len(cases)
# Deterministic: the second run gives the same results.
assert doc["results"] == again["results"], "two runs differ"
print(f"ok: {len(cases)} cases")
PY
# Bad arguments: a clear message naming the option, non-zero exit.
if "$bin" --figures 8 > "$tmp/bad.txt" 2>&1; then
  echo "expected --figures 8 to fail"; exit 1
fi
grep -q -- "--figures" "$tmp/bad.txt"
if "$bin" --knl-topology "synthetic:bogus" > "$tmp/bad.txt" 2>&1; then
  echo "expected a bad topology to fail"; exit 1
fi
grep -q -- "--knl-topology" "$tmp/bad.txt"
if "$bin" --figures 7 --iscan-ranks 64 > "$tmp/bad.txt" 2>&1; then
  echo "expected --iscan-ranks 64 to fail"; exit 1
fi
grep -q -- "--iscan-ranks" "$tmp/bad.txt"
if "$bin" --chunk-bytes 65536 --bounce-bytes 1024 > "$tmp/bad.txt" 2>&1; then
  echo "expected bounce < chunk to fail"; exit 1
fi
grep -q "bounce_bytes" "$tmp/bad.txt"
# Plots are optional: --plot-dir must succeed with or without matplotlib.
"$bin" --figures 7,19 --p-max 4 --quiet --plot-dir "$tmp/figs" > "$tmp/plot.txt"
cat "$tmp/plot.txt"
[ -f "$tmp/figs/splittree_sim.json" ]
