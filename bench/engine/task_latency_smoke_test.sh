#!/usr/bin/env bash
# Smoke test for bench/engine/task_latency: a quick run must produce the human
# table and a JSON file with the schema of DEVELOPERS.md and every case the
# issue asks for, each with positive, ordered figures. Timing targets are not
# checked here (they belong to the benchmark's own report): nothing asserted
# depends on a quiet machine (it passes with both cores busy with other jobs).
set -euo pipefail
bin="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/engine/task_latency"
[ -x "$bin" ] || bin="$(dirname "$0")/task_latency"
out="${TEST_TMPDIR:-/tmp}/task_latency.json"
"$bin" --quick --json "$out" > "${TEST_TMPDIR:-/tmp}/table.txt"
grep -q "median ns" "${TEST_TMPDIR:-/tmp}/table.txt"
python3 - "$out" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
assert doc["benchmark"] == "task_latency", doc.get("benchmark")
assert isinstance(doc["machine"], dict) and doc["machine"].get("processors", 0) >= 1
cases = {r["case"]: r for r in doc["results"]}
required = ["same_core", "core:0", "core:1", "global", "global_contended:2",
            "cacheline_roundtrip", "peer:mutex_deque", "peer:boost_lockfree",
            "peer:tbb", "pickup_after_sleep", "idle_impact"]
missing = [c for c in required if c not in cases]
assert not missing, f"missing cases: {missing}"
for name, r in cases.items():
    for k in ("median_ns", "min_ns", "p99_ns"):
        assert isinstance(r[k], (int, float)) and r[k] > 0, (name, k, r[k])
    assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], (name, r)
# Every shared level of the tree has a case named <level>:<index>.
assert any(c.startswith(("l3:", "numa:", "package:")) for c in cases), sorted(cases)
# Tasks pinned to a core ran on that core only.
assert set(cases["core:1"]["ran_on"]) == {"1"}, cases["core:1"]["ran_on"]
assert set(cases["same_core"]["ran_on"]) == {"0"}, cases["same_core"]["ran_on"]
# idle_impact: the compute loop with an idle engine over the loop alone. Its
# value is a timing (on a loaded machine it moved to 2.4 with nothing wrong):
# only its presence and consistency are checked, the <= 1% target is in the
# benchmark's report.
idle = cases["idle_impact"]
ratio, base = idle["ratio"], idle["baseline_median_ns"]
assert isinstance(ratio, (int, float)) and math.isfinite(ratio) and ratio > 0, idle
assert isinstance(base, (int, float)) and math.isfinite(base) and base > 0, idle
assert math.isclose(ratio, idle["median_ns"] / base, rel_tol=1e-9), idle
assert idle["pairs"] == 3, idle  # --quick
print(f"ok: {len(cases)} cases")
PY
