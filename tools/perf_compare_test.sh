#!/usr/bin/env bash
# tools/perf_compare.py on stand-in benchmark programs with known medians:
# the ratios, the verdicts and the exit status follow from them.
set -euo pipefail
tool=$(dirname "$0")/perf_compare.py
[ -f "$tool" ] || tool=tools/perf_compare.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fake_bench DIR PATH CASE=NS ... : a stand-in program DIR/PATH that writes
# those medians as JSON. The reference has the layout of before issue 30
# (bench/task_latency), the working tree today's (bench/engine/task_latency).
fake_bench() {
  local dir=$1 path=$2
  local name
  name=$(basename "$path")
  shift 2
  mkdir -p "$(dirname "$dir/$path")"
  local results=""
  for kv in "$@"; do
    results+="{\"case\": \"${kv%=*}\", \"median_ns\": ${kv#*=}},"
  done
  cat > "$dir/$path" <<FAKE
#!/usr/bin/env bash
while [ \$# -gt 0 ]; do
  if [ "\$1" = --json ]; then out=\$2; fi
  shift
done
echo '{"benchmark": "$name", "results": [${results%,}]}' > "\$out"
FAKE
  chmod +x "$dir/$path"
}

fake_bench "$tmp/ref" bench/task_latency same_core=40 core:1=200
fake_bench "$tmp/new" bench/engine/task_latency same_core=60 core:1=150
set +e
/usr/bin/python3 "$tool" --ref-bin "$tmp/ref" --new-bin "$tmp/new" \
  --cases task_latency --rounds 3 --json "$tmp/out.json" > "$tmp/log" 2>&1
rc=$?
set -e
cat "$tmp/log"
[ "$rc" -eq 1 ] || { echo "FAIL: a 1.5x slower case must exit 1, got $rc"; exit 1; }
grep -q "task_latency:same_core .*1.500 .*REGRESSION" "$tmp/log" ||
  { echo "FAIL: same_core not reported as a 1.500 regression"; exit 1; }
grep -q "task_latency:core:1 .*0.750 .*faster" "$tmp/log" ||
  { echo "FAIL: core:1 not reported as 0.750 faster"; exit 1; }
/usr/bin/python3 - "$tmp/out.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = {x["case"]: x for x in doc["results"]}
assert doc["benchmark"] == "perf_compare", doc
assert r["task_latency:same_core"]["ratio"] == 1.5, r
assert r["task_latency:same_core"]["median_ns"] == 60, r
assert r["task_latency:same_core"]["ref_median_ns"] == 40, r
assert r["task_latency:core:1"]["rounds"] == 3, r
PY

# No regression: exit 0. A case missing in the working tree: exit 1.
fake_bench "$tmp/new" bench/engine/task_latency same_core=40 core:1=200
/usr/bin/python3 "$tool" --ref-bin "$tmp/ref" --new-bin "$tmp/new" \
  --cases task_latency --rounds 2 > "$tmp/log" 2>&1 ||
  { cat "$tmp/log"; echo "FAIL: equal figures must exit 0"; exit 1; }
fake_bench "$tmp/new" bench/engine/task_latency same_core=40
set +e
/usr/bin/python3 "$tool" --ref-bin "$tmp/ref" --new-bin "$tmp/new" \
  --cases task_latency --rounds 1 > "$tmp/log" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "core:1 .*not measured in new" "$tmp/log" ||
  { cat "$tmp/log"; echo "FAIL: a case lost in the working tree must fail"; exit 1; }

# Bad arguments: exit 2 with the allowed values.
set +e
/usr/bin/python3 "$tool" --ref-bin "$tmp/ref" --new-bin "$tmp/new" --cases bogus > "$tmp/log" 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "allowed: task_latency" "$tmp/log" ||
  { cat "$tmp/log"; echo "FAIL: an unknown case set must exit 2 naming the allowed ones"; exit 1; }
echo "perf_compare_test: PASS"
