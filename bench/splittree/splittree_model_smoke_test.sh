#!/usr/bin/env bash
# Smoke test for bench/splittree/splittree_model: the JSON has the report schema
# and a case choice:<op>:<nproc>:<N> for both ops, every N and each --nproc,
# with S in [0, H(N)] and consistent figures; on 64 cores the constant-size
# choice switches where the paper says (S=1 from N=52, 2 from 58, 3 from 62).
# The plots are optional: --plot-dir must succeed with or without matplotlib.
set -euo pipefail
bin="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/splittree/splittree_model"
[ -x "$bin" ] || bin="$(dirname "$0")/splittree_model"
tmp="${TEST_TMPDIR:-/tmp}"
out="$tmp/splittree_model.json"
"$bin" --nproc 64,48 --json "$out" > "$tmp/table.txt"
grep -q "S_chosen" "$tmp/table.txt"
python3 - "$out" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
assert doc["benchmark"] == "splittree_model", doc.get("benchmark")
assert isinstance(doc["machine"], dict)
cases = {r["case"]: r for r in doc["results"]}
for op in ("constant", "doubling"):
    for nproc in (64, 48):
        for n in range(1, nproc + 1):
            name = f"choice:{op}:{nproc}:{n}"
            assert name in cases, f"missing {name}"
            r = cases[name]
            h = math.ceil(math.log2(n)) if n > 1 else 0
            assert isinstance(r["S"], int) and 0 <= r["S"] <= h, (name, r["S"])
            for k in ("model_time", "median_ns", "min_ns", "p99_ns"):
                assert isinstance(r[k], (int, float)) and r[k] > 0, (name, k)
            assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], name
            times = [t for t in r["overlapped_by_S"] if t is not None]
            assert r["model_time"] == min(times), name
assert len(cases) == 2 * (64 + 48), len(cases)
s = {n: cases[f"choice:constant:64:{n}"]["S"] for n in range(1, 65)}
assert [s[51], s[52], s[57], s[58], s[61], s[62]] == [0, 1, 1, 2, 2, 3], s
print(f"ok: {len(cases)} cases")
PY
"$bin" --nproc 16 --quiet --plot-dir "$tmp/figs" > "$tmp/plot.txt"
cat "$tmp/plot.txt"
[ -f "$tmp/figs/splittree_model.json" ]
