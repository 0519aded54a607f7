#!/usr/bin/env bash
# Smoke test for bench/p2p/pingpong and bench/p2p/overlap_p2p: quick runs (each
# binary re-executes itself under rondo-run, found in the runfiles) must
# print their tables and write JSON with the schema of bench/common/report.h,
# every case, and numeric figures. Timing targets are not checked here.
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/p2p"
[ -x "$dir/pingpong" ] || dir="$(dirname "$0")"
tmp="${TEST_TMPDIR:-/tmp}"
"$dir/pingpong" --quick --json "$tmp/pingpong.json" > "$tmp/pingpong.txt"
grep -q "median ns" "$tmp/pingpong.txt"
"$dir/overlap_p2p" --quick --reps 5 --json "$tmp/overlap.json" > "$tmp/overlap.txt"
grep -q "median ns" "$tmp/overlap.txt"
python3 - "$tmp/pingpong.json" "$tmp/overlap.json" <<'PY'
import json, math, sys

def load(path, name):
    doc = json.load(open(path))
    assert doc["benchmark"] == name, doc.get("benchmark")
    assert isinstance(doc["machine"], dict) and doc["machine"].get("processors", 0) >= 1
    cases = {r["case"]: r for r in doc["results"]}
    for c, r in cases.items():
        for k in ("median_ns", "min_ns", "p99_ns"):
            assert isinstance(r[k], (int, float)) and r[k] > 0, (c, k, r[k])
        assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], (c, r)
    return cases

pp = load(sys.argv[1], "pingpong")
sizes = [0, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304]
for impl in ("rondo", "ucx"):
    for n in sizes:
        assert f"pingpong:{impl}:{n}" in pp, f"missing pingpong:{impl}:{n}"
        if n:
            r = pp[f"bw:{impl}:{n}"]
            assert isinstance(r["bytes_per_s"], (int, float)) and r["bytes_per_s"] > 0, r
for n in sizes:
    assert pp[f"pingpong:rondo:{n}"]["ratio"] > 0
    if n:
        assert pp[f"bw:rondo:{n}"]["ratio"] > 0

ov = load(sys.argv[2], "overlap_p2p")
for side in ("send", "recv", "both"):
    for n in (32768, 1048576):
        for mode in ("default", "no_progress", "thread", "timer", "kernel"):
            c = f"overlap:{side}:{n}:{mode}"
            assert c in ov, f"missing {c}"
            r = ov[c]
            for k in ("overhead_ratio", "t_comm_ns", "t_comp_ns"):
                assert isinstance(r[k], (int, float)) and math.isfinite(r[k]), (c, k, r.get(k))
            assert r["t_comm_ns"] > 0 and r["t_comp_ns"] > 0, (c, r)
            assert 0 <= r["overhead_ratio_clamped"] <= 1, (c, r)
print(f"ok: {len(pp)} pingpong cases, {len(ov)} overlap cases")
PY
