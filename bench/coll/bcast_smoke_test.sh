#!/usr/bin/env bash
# Smoke test for bench/coll/bcast: the whole pipeline on this machine (--local:
# shared memory, no emulated cluster), 2..3 receivers, 64 KiB, must print
# its table and write the JSON of bench/common/report.h with every case
# (bcast:<naive|binomial|dynamic>:<P>) having positive, ordered figures and
# the ratio fields. Timing targets are for the emulated cluster (docs/bcast.md)
# and are not checked here.
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/coll"
[ -x "$dir/bcast" ] || dir="$(dirname "$0")"
tmp="${TEST_TMPDIR:-/tmp}"
"$dir/bcast" --local --min-p 2 --max-p 3 --bytes 65536 --reps 3 --warmup 1 \
  --json "$tmp/bcast.json" > "$tmp/bcast.txt"
cat "$tmp/bcast.txt"
grep -q "dyn/bin" "$tmp/bcast.txt"
/usr/bin/python3 - "$tmp/bcast.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["benchmark"] == "bcast", doc.get("benchmark")
assert doc["machine"]["emulated_cluster"] is False
cases = {r["case"]: r for r in doc["results"]}
want = {f"bcast:{a}:{p}" for a in ("naive", "binomial", "dynamic") for p in (2, 3)}
assert set(cases) == want, sorted(cases)
for c, r in cases.items():
    for k in ("median_ns", "min_ns", "p99_ns", "bytes_per_s"):
        assert r[k] > 0, (c, k, r[k])
    assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], (c, r)
    assert r["bytes"] == 65536 and r["receivers"] == int(c.split(":")[2])
    if c.startswith("bcast:dynamic"):
        assert r["ratio_vs_binomial"] > 0, r
    if c.startswith("bcast:naive"):
        assert r["ratio_vs_dynamic"] > 0, r
print("bcast_smoke_test: ok")
PY
