#!/usr/bin/env bash
# Smoke test for bench/coll: a --quick run (2 ranks, sizes 4,1024,65536, few
# repetitions) of every implementation whose program is in the runfiles
# (coll_openmpi always; coll_rondo once it is a data dependency of :coll)
# must print its table and write JSON with the schema of bench/common/report.h:
# every collective and size with positive figures, the overlap case with its
# fields, and no failed job or check. Timing targets are not checked here.
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/coll"
[ -x "$dir/coll" ] || dir="$(dirname "$0")"
tmp="${TEST_TMPDIR:-/tmp}"
impls=openmpi
[ -x "$dir/coll_rondo" ] && impls=rondo,openmpi
"$dir/coll" --quick --impls "$impls" --json "$tmp/coll.json" > "$tmp/coll.txt"
grep -q "openmpi med." "$tmp/coll.txt"
python3 - "$tmp/coll.json" "$impls" <<'PY'
import json, math, sys

doc = json.load(open(sys.argv[1]))
impls = sys.argv[2].split(",")
assert doc["benchmark"] == "coll", doc.get("benchmark")
machine = doc["machine"]
assert isinstance(machine, dict) and machine.get("processors", 0) >= 1
assert sorted(machine["impls"]) == sorted(impls), machine["impls"]
assert doc["failed"] == [], doc["failed"]
cases = {r["case"]: r for r in doc["results"]}
for c, r in cases.items():
    for k in ("median_ns", "min_ns", "p99_ns"):
        assert isinstance(r[k], (int, float)) and r[k] > 0, (c, k, r[k])
    assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], (c, r)

colls = ["bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
         "alltoall", "reduce_scatter_block", "scan", "ibcast", "iallreduce"]
for impl in impls:
    want = [f"coll:{impl}:barrier:2:0"]
    want += [f"coll:{impl}:{c}:2:{b}" for c in colls for b in (4, 1024, 65536)]
    for c in want:
        assert c in cases, f"missing {c}"
        assert cases[c]["check"] == "ok", cases[c]
    o = cases.get(f"coll:{impl}:iallreduce_overlap:2:1048576")
    assert o is not None, f"missing coll:{impl}:iallreduce_overlap:2:1048576"
    for k in ("overhead_ratio", "t_comm_ns", "t_comp_ns", "t_total_ns"):
        assert isinstance(o[k], (int, float)) and math.isfinite(o[k]), (k, o)
    assert o["t_comm_ns"] > 0 and o["t_comp_ns"] > 0 and o["t_total_ns"] > 0, o
if "rondo" in impls:
    r = cases["coll:rondo:allreduce:2:4"]
    assert r["ratio_vs_openmpi"] > 0, r
print(f"ok: {len(cases)} cases for {','.join(impls)}")
PY
