#!/usr/bin/env bash
# Smoke test for bench/overlap: the whole pipeline with a tiny grid (2 ranks,
# Rondo in the basic and dedicated configurations, ibcast and iallreduce,
# 200 us and 2 ms targets on both axes, 3 repetitions): the jobs run under
# rondo-run, the driver prints its tables and summary, and writes the JSON of
# bench/common/report.h (every cell's case; valid cells with finite positive
# figures and finite ratios; the mpi_impact cases), the CSV with its exact
# header and impact.csv. Bad arguments exit with status 2 and say what is
# allowed. Issue 27's figures: every valid cell's progress CPU per MiB
# (finite, not negative, the part during the computation at most the
# whole) and the kernel floor (a loopback TCP transfer here, the same for
# every cell of a job); the summaries' medians of them; the impact against
# a process that never initialised MPI on both ranks; rank 0's CPU per
# thread; and, with --invocations 2, each summary's two invocations and
# their spread. Overlap figures are not checked here (a 2-core machine), and the
# calibration accepts any time within 100% of its target (--tolerance 1), so
# that a busy machine still yields valid cells; the test runs alone
# (exclusive) for the same reason.
set -euo pipefail
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-rondo}/bench/overlap"
[ -x "$dir/overlap" ] || dir="$(dirname "$0")"
tmp="${TEST_TMPDIR:-/tmp}"
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# Bad arguments: status 2, a message naming the option, before any job.
for bad in "--ranks 0" "--configs nonsense" "--collectives ibarrier" \
           "--comm-us 0" "--libraries lam" "--tolerance 5" "--cluster 1" \
           "--cluster two" "--cluster 100000" "--rate 5 --cluster 2" \
           "--comm-bytes 7" "--launcher srun" "--launcher pbs --cluster 2"; do
  set +e
  # shellcheck disable=SC2086
  "$dir/overlap" $bad --plot-dir "$tmp/bad" > "$tmp/bad.out" 2> "$tmp/bad.err"
  rc=$?
  set -e
  if [ "$rc" -ne 2 ]; then
    echo "overlap $bad: exit status $rc, expected 2"; cat "$tmp/bad.err"; exit 1
  fi
  opt="${bad%% *}"
  grep -q -- "$opt" "$tmp/bad.err" || {
    echo "overlap $bad: no message naming $opt"; cat "$tmp/bad.err"; exit 1; }
  grep -q "allowed" "$tmp/bad.err" || {
    echo "overlap $bad: the message does not say what is allowed"
    cat "$tmp/bad.err"; exit 1; }
done
[ ! -e "$tmp/bad" ] || { echo "a bad argument still made --plot-dir"; exit 1; }

# A machine that cannot emulate a cluster (a stand-in cluster.sh whose check
# fails as it does without root): --cluster 2 is refused, naming what is
# missing, and nothing is created; --cluster auto says so in one line and
# runs the shared-memory comparison (below).
standin="$tmp/cluster-standin.sh"
cat > "$standin" <<STANDIN
#!/bin/sh
if [ "\$1" = check ]; then
  echo "cluster.sh check: this machine cannot run an emulated cluster:" >&2
  echo "  - not root (uid 1000): namespaces, veth and tc need root" >&2
  exit 1
fi
touch "$tmp/standin-called-\$1"
exit 3
STANDIN
chmod +x "$standin"
set +e
"$dir/overlap" --cluster 2 --cluster-sh "$standin" --plot-dir "$tmp/refused" \
  > "$tmp/refused.out" 2> "$tmp/refused.err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "--cluster 2 without the capability: exit status $rc, expected 1"; cat "$tmp/refused.err"; exit 1; }
grep -q "not root" "$tmp/refused.err" || { echo "the refusal does not name the missing capability"; cat "$tmp/refused.err"; exit 1; }
[ ! -e "$tmp/refused" ] || { echo "a refused --cluster still made --plot-dir"; exit 1; }
if ls "$tmp"/standin-called-* >/dev/null 2>&1; then
  echo "a refused --cluster still ran cluster.sh: $(ls "$tmp"/standin-called-*)"; exit 1
fi

# The run: Rondo, and both peers named by --compare but not installed (their
# launchers do not exist): they are skipped with a message and left out of
# the tables.
"$dir/overlap" --cluster auto --cluster-sh "$standin" --compare \
  --mpirun "$tmp/no/mpirun" --mpirun-mpich "$tmp/no/mpirun.mpich" \
  --ranks 2 --configs basic,dedicated \
  --collectives ibcast,iallreduce --comm-us 200,2000 --comp-us 200,2000 \
  --reps 3 --tolerance 1 --invocations 2 --json "$tmp/o.json" \
  --plot-dir "$tmp/plots" \
  > "$tmp/o.txt"
cat "$tmp/o.txt"
head -1 "$tmp/o.txt" | grep -q "^overlap: no emulated cluster here (not root" || {
  echo "--cluster auto did not say in its first line why it runs in shared memory"; exit 1; }
grep -q "^overlap: openmpi not run: .*no/mpirun not found" "$tmp/o.txt"
grep -q "^overlap: mpich not run: .*no/mpirun.mpich not found" "$tmp/o.txt"
if grep -Eq "^(openmpi|mpich):" "$tmp/o.txt"; then
  echo "a library that is not installed appears in a table"; exit 1
fi
grep -q "^job 1/2 of invocation 1/2: rondo basic" "$tmp/o.txt"
grep -q "^job 2/2 of invocation 2/2: rondo dedicated" "$tmp/o.txt"
grep -q "^Progress CPU per MiB" "$tmp/o.txt"
grep -q "^Between invocations" "$tmp/o.txt"
grep -q "kernel floor: 8 x 4 MiB over TCP" "$tmp/o.txt"
grep -q "^Summary" "$tmp/o.txt"
grep -q "^rondo:dedicated" "$tmp/o.txt"

"$py" - "$tmp/o.json" "$tmp/plots/overlap.csv" "$tmp/plots/impact.csv" <<'PY'
import csv, json, math, sys

doc = json.load(open(sys.argv[1]))
assert doc["benchmark"] == "overlap", doc.get("benchmark")
assert doc["failed"] == [], doc["failed"]
assert isinstance(doc["skipped"], list), doc["skipped"]
assert "--configs basic,dedicated" in doc["command"], doc["command"]
skipped = {(s["library"], s["config"]) for s in doc["skipped"]}
assert {("openmpi", "all"), ("mpich", "all")} <= skipped, doc["skipped"]
assert doc["machine"]["mode"] == "shared memory", doc["machine"]
configs = {(c["library"], c["config"]): c for c in doc["configs"]}
assert set(configs) == {("rondo", "basic"), ("rondo", "dedicated")}, configs
assert configs[("rondo", "basic")]["env"] == {
    "RONDO_PROGRESS": "none", "RONDO_TIMER_US": "0"}, configs
assert configs[("rondo", "dedicated")]["env"] == {"RONDO_COMM_CORES": "1", "RONDO_TIMER_US": "200"}
assert configs[("rondo", "dedicated")]["comm_cores"] == 1

cases = {r["case"]: r for r in doc["results"]}
want = {f"overlap:rondo:{cfg}:{coll}:{m}:{p}"
        for cfg in ("basic", "dedicated") for coll in ("ibcast", "iallreduce")
        for m in (200, 2000) for p in (200, 2000)}
missing = want - set(cases)
assert not missing, sorted(missing)

def finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) \
        and math.isfinite(x)

def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else (v[k // 2 - 1] + v[k // 2]) / 2

floors = {}
valid = 0
for name in want:
    r = cases[name]
    assert isinstance(r["valid"], bool), (name, r["valid"])
    for k in ("bytes", "order", "t_comm_ref_ns", "t_comp_ref_ns", "t_call_ns",
              "t_comp_ns", "t_wait_ns"):
        assert k in r, (name, k)
    if not r["valid"]:
        for k in ("overhead_ratio", "comm_ratio", "comp_slowdown"):
            assert r[k] is None, (name, k, r[k])
        continue
    valid += 1
    # Progress CPU: the process's CPU that was not the GEMM, per MiB.
    whole, comp = r["progress_cpu_ns_per_mib"], r["progress_cpu_comp_ns_per_mib"]
    assert finite(whole) and finite(comp), (name, whole, comp)
    assert comp >= -1e3 and comp <= whole + 1e-6 * abs(whole) + 1, (name, comp, whole)
    floor = r["kernel_floor_ns_per_mib"]
    assert finite(floor) and floor > 0, (name, floor)
    floors.setdefault(name.split(":")[2], set()).add(floor)
    for k in ("median_ns", "min_ns", "p99_ns"):
        assert finite(r[k]) and r[k] > 0, (name, k, r[k])
    assert r["min_ns"] <= r["median_ns"] <= r["p99_ns"], (name, r)
    for k in ("overhead_ratio", "comm_ratio", "comp_slowdown"):
        assert finite(r[k]), (name, k, r[k])
    for k in ("t_comm_ref_ns", "t_comp_ref_ns", "t_comp_ns"):
        assert finite(r[k]) and r[k] > 0, (name, k, r[k])
    # The confidence interval brackets the ratio; significance follows
    # from its width.
    assert isinstance(r["significant"], bool), (name, r)
    if r["ci_low"] is not None:
        assert r["ci_low"] <= r["ci_high"], (name, r)
        assert r["significant"] == ((r["ci_high"] - r["ci_low"]) / 2 <= 0.25), (name, r)
    else:
        assert not r["significant"], (name, r)
    assert (r["diagnosis"] == "not significant") == (not r["significant"]), (name, r)
# Within 100% every calibration should converge; one may still miss on a
# busy 2-core machine (the cell is then invalid, as the paper marks it), but
# not every one.
assert valid > 0, f"no valid cell among {len(want)}"

# One floor per job, in every cell of it.
assert all(len(v) == 1 for v in floors.values()), floors
for cfg in ("basic", "dedicated"):
    c = configs[("rondo", cfg)]
    fl = c["kernel_floor"]
    assert fl["send"]["bytes"] == fl["recv"]["bytes"] == 8 * 4194304, fl
    cpu = fl["send"]["cpu_us"] + fl["recv"]["cpu_us"]
    assert abs(fl["ns_per_mib"] - cpu * 1e3 / (2 * 32)) < 1e-6 * fl["ns_per_mib"] + 1e-9, fl
    names = [t["name"] for t in c["threads"]]
    assert names and all(t["cpu_ms"] >= 0 for t in c["threads"]), c["threads"]
    assert len(c["passive"]) == 2 and len(c["comp_alone"]) == 2, c
    r = cases[f"mpi_impact:rondo:{cfg}"]
    alone = {x["rank"]: x for x in r["ranks_vs_nompi_process"]}
    assert set(alone) == {0, 1}, r
    for x in alone.values():
        assert finite(x["ratio"]) and x["ratio"] > 0, r
        assert finite(x["t_comp_alone_ns"]) and x["t_comp_alone_ns"] > 0, r
    assert r["ratio_vs_nompi_process"] == alone[0]["ratio"], r
    assert r["ratio_vs_nompi_process_worst"] == max(x["ratio"] for x in alone.values()), r
    assert r["after_finalize"] is True, r
    s = cases[f"summary:rondo:{cfg}:all"]
    assert s["invocations"] == 2, s
    inv = s["overhead_ratio_invocations"]
    assert len(inv) == 2 and inv[0] == s["overhead_ratio"], s
    if None not in inv:
        assert abs(s["overhead_ratio_spread"] - (max(inv) - min(inv))) < 1e-9, s
    else:  # one invocation's median says nothing about the spread
        assert s["overhead_ratio_spread"] is None, s
    assert s["kernel_floor_ns_per_mib"] == fl["ns_per_mib"], s
    # The kernel floor's slowdown: 1 + the floor's CPU on one rank's share
    # of the bytes / the computation (none when no cell was summarized).
    kf = s["comp_slowdown_kernel_floor"]
    assert kf is None or (finite(kf) and kf >= 1), s
    if s["cells"] > 0:
        assert kf is not None, s
    assert s["impact_vs_nompi"] == r["ratio_vs_nompi_process_worst"], s
assert doc["machine"]["invocations"] == 2, doc["machine"]

for cfg in ("basic", "dedicated"):
    r = cases.get(f"mpi_impact:rondo:{cfg}")
    assert r is not None, f"missing mpi_impact:rondo:{cfg}"
    assert finite(r["ratio"]) and r["ratio"] > 0, r
    assert finite(r["median_ns"]) and r["median_ns"] > 0, r
    # Every rank's ratio, and the worst one among them.
    ranks = {x["rank"]: x["ratio"] for x in r["ranks"]}
    assert set(ranks) == {0, 1}, r
    assert r["ratio_worst"] == max(ranks.values()), r
    assert ranks[r["worst_rank"]] == r["ratio_worst"], r
    # The summaries: per collective and all, from the significant diagonal
    # cells only.
    for coll in ("ibcast", "iallreduce", "all"):
        s = cases.get(f"summary:rondo:{cfg}:{coll}")
        assert s is not None, f"missing summary:rondo:{cfg}:{coll}"
        used = [cases[n] for n in want if n.split(":")[2] == cfg
                and (coll == "all" or n.split(":")[3] == coll)
                and cases[n]["valid"] and cases[n]["significant"]
                and max(int(n.split(":")[4]), int(n.split(":")[5]))
                <= 3 * min(int(n.split(":")[4]), int(n.split(":")[5]))]
        assert s["cells"] == len(used), (coll, s, len(used))
        # The progress CPU: every valid diagonal cell, significant or not.
        eligible = [cases[n] for n in want if n.split(":")[2] == cfg
                    and (coll == "all" or n.split(":")[3] == coll)
                    and cases[n]["valid"]
                    and max(int(n.split(":")[4]), int(n.split(":")[5]))
                    <= 3 * min(int(n.split(":")[4]), int(n.split(":")[5]))]
        if eligible:
            cpu = median([c["progress_cpu_ns_per_mib"] for c in eligible])
            assert abs(s["progress_cpu_ns_per_mib"] - cpu) < 1e-6 * abs(cpu) + 1e-9, (s, cpu)
            cpu = median([c["progress_cpu_comp_ns_per_mib"] for c in eligible])
            assert abs(s["progress_cpu_comp_ns_per_mib"] - cpu) < 1e-6 * abs(cpu) + 1e-9, (s, cpu)
        else:
            assert s["progress_cpu_ns_per_mib"] is None, s
        if used:
            ratios = sorted(c["overhead_ratio"] for c in used)
            k = len(ratios)
            # (mid, not median: a module-level name would shadow median()
            # for every later configuration and collective)
            mid = ratios[k // 2] if k % 2 else (ratios[k // 2 - 1] + ratios[k // 2]) / 2
            assert abs(s["overhead_ratio"] - mid) < 1e-9, (s, ratios)
            # The honest figures: the computation's reference without MPI
            # (t_comp_ref / impact, the impact clamped at 1).
            imp = max(1.0, s["impact_vs_nompi"])
            honest = median([(c["t_measured_ns"] - max(c["t_comm_ref_ns"], c["t_comp_ref_ns"] / imp))
                             / min(c["t_comm_ref_ns"], c["t_comp_ref_ns"] / imp) for c in used])
            assert abs(s["overhead_ratio_vs_nompi"] - honest) < 1e-6, (s, honest)
            assert abs(s["comp_slowdown_vs_nompi"] - median([c["comp_slowdown"] for c in used]) * imp) < 1e-6, s
        else:
            assert s["overhead_ratio"] is None, s

with open(sys.argv[2]) as f:
    header = f.readline().rstrip("\n")
    assert header == ("library,config,collective,comm_target_us,"
                      "comp_target_us,comm_us,comp_us,measured_us,"
                      "overhead_ratio,comm_ratio,comp_slowdown,valid,"
                      "bytes,significant,ci_low,ci_high"), header
    rows = list(csv.reader(f))
assert len(rows) == len(want), len(rows)
assert {(r[1], r[2], int(r[3]), int(r[4])) for r in rows} == {
    tuple(n.split(":")[2:4]) + (int(n.split(":")[4]), int(n.split(":")[5]))
    for n in want}, rows
with open(sys.argv[3]) as f:
    assert f.readline().rstrip("\n") == "library,config,ratio,ratio_worst,worst_rank"
    impact = list(csv.reader(f))
assert sorted(r[1] for r in impact) == ["basic", "dedicated"], impact
print(f"overlap_smoke_test: ok ({valid} of {len(want)} cells valid)")
PY

# The kernel floor (issue 27): not a library but the same methodology with
# the bytes moved by threads blocked in TCP sockets, under Open MPI's
# launcher. Its cells are measured and it is read as the floor, not as a peer.
if [ -x /usr/bin/mpirun ]; then
  "$dir/overlap" --libraries rondo,kernel --configs default,basic \
    --collectives iallreduce,ialltoall --comm-us 2000 --comp-us 2000 \
    --reps 3 --tolerance 1 --json "$tmp/k.json" --plot-dir "$tmp/kplots" \
    > "$tmp/k.txt"
  grep -q "^job 1/3: rondo default" "$tmp/k.txt"
  grep -q "^job 2/3: kernel default" "$tmp/k.txt"
  grep -q "kernel basic skipped: the kernel floor has one configuration" "$tmp/k.txt"
  grep -q "^Against the kernel floor beside the computation" "$tmp/k.txt"
  "$py" - "$tmp/k.json" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
assert doc["failed"] == [], doc["failed"]
configs = {(c["library"], c["config"]): c for c in doc["configs"]}
k = configs[("kernel", "default")]
assert k["setup"]["kernel_floor"] is True, k["setup"]
assert configs[("rondo", "default")]["setup"]["kernel_floor"] is False
assert "--kernel-floor" in k["command"], k["command"]
cases = {r["case"]: r for r in doc["results"]}
for coll in ("iallreduce", "ialltoall"):
    c = cases[f"overlap:kernel:default:{coll}:2000:2000"]
    assert c["bytes"] > 0 and math.isfinite(c["t_comm_ref_ns"]), c
    s = cases[f"summary:rondo:default:{coll}"]
    assert "kernel_floor_overhead_ratio" in s and "overhead_minus_kernel_floor" in s, s
    assert "kernel_floor_overhead_ratio" not in cases[f"summary:kernel:default:{coll}"]
print("overlap_smoke_test: the kernel floor ok")
PY
fi
