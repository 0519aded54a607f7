#!/usr/bin/env bash
# Test of the emulated cluster's Slurm mode (`cluster.sh slurm up|run|down`,
# docs/cluster.md, "Running under Slurm").
# Usage: slurm_test.sh CLUSTER_SH SLURM_CHECK SLURM_CHECK_OPENMPI
#
# A 3-host Slurm cluster (slurmctld in host 0, slurmd in hosts 1 and 2) must
# come up within 30 s with each daemon in its host; `slurm run` must give a
# command in host 0 the clients' environment; slurm_check (Rondo's MadMPI,
# then Open MPI as the reference) under `srun --mpi=pmix -N 2 -n 4` must
# place ranks 0,1 on node 1 and 2,3 on node 2 on their hosts' cores, pass
# its point-to-point, MPI_Iallreduce and (Rondo) MPIX_Dynamic_bcast checks,
# and move its bytes over the hosts' links; a rank that calls abort() must
# end the job with an error naming it, and leave no job or step behind; a
# compute node lost mid-job (its slurmd, step and ranks killed) must end the
# job with srun naming the node, and leave the queue empty;
# `slurm down` must take under 30 s and leave no namespace, cgroup, daemon,
# mount or file, and a second one must be harmless. Hosts with every CPU
# must get task/affinity, whose --cpu-bind=cores gives each task of a node
# its own core. Plain `down` stops a Slurm cluster too, and a Slurm daemon
# that fails at start makes `slurm up` fail, naming it, and remove
# everything.
#
# Needs root, network namespaces and Slurm (slurmctld, slurmd, slurm-client,
# munge, srun's PMIx plugin). When `cluster.sh check` says one is missing it
# prints "SKIP: <reason>" and exits 0: a skip is not a pass (nothing was
# checked). No sleeps as synchronisation: waits are bounded polls.
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
CLUSTER=$1 CHECK=$2 CHECK_OMPI=$3
for f in "$CLUSTER" "$CHECK" "$CHECK_OMPI"; do
  [[ -e $f ]] || { echo "FAIL: $f not found"; exit 1; }
done
CHECK=$(readlink -f "$CHECK") CHECK_OMPI=$(readlink -f "$CHECK_OMPI")
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/slurm.XXXXXX")
OUT=$TMP/out ERR=$TMP/err
P=rsl$$             # this run's prefix: never a user's cluster
PREFIXES=("$P" "${P}d" "${P}f")
STATE=/run/rondo-cluster

cleanup() {
  local p
  for p in "${PREFIXES[@]}"; do "$CLUSTER" slurm down --prefix "$p" >/dev/null 2>&1; done
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  echo "--- last stdout"; cat "$OUT" 2>/dev/null
  echo "--- last stderr"; cat "$ERR" 2>/dev/null
  local d=$STATE/slurm-$P
  if [[ -d $d/log ]]; then
    echo "--- the daemons' logs ($d/log)"
    tail -n 15 "$d"/log/* 2>/dev/null
  fi
  exit 1
}
ok() { echo "ok: $*"; }
namespaces_of() {  # the namespaces of a prefix
  ip netns list | awk '{print $1}' | grep -E "^$1-(sw|[0-9]+)\$" || true
}
cgroups_of() {  # the cpuset cgroups of a prefix (cgroup v1 or v2)
  find /sys/fs/cgroup /sys/fs/cgroup/cpuset -maxdepth 1 -type d \
    -regex ".*/rondo-cluster-$1-[0-9]+" 2>/dev/null || true
}
tx_bytes() {  # host interface's transmitted bytes
  ip netns exec "$P-$1" cat /sys/class/net/rc0/statistics/tx_bytes
}
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
alive() {  # PID START: is that process (not a zombie) still running?
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  local -a f
  read -ra f <<<"$s"
  [[ ${f[0]} != Z && ${f[0]} != X && ${f[19]} == "$2" ]]
}
# What is left of prefix $1 whose daemons were recorded in file $2: the
# namespaces, cgroups, state directory, daemons, processes naming the
# directory, and mounts of it in any mount namespace. Empty: nothing.
leftovers() {
  local p=$1 pids=$2 d=$STATE/slurm-$1 name pid start f
  namespaces_of "$p" | sed 's/^/namespace /'
  cgroups_of "$p" | sed 's/^/cgroup /'
  [[ ! -e $d ]] || echo "directory $d"
  [[ ! -e $STATE/$p.cpus ]] || echo "file $STATE/$p.cpus"
  if [[ -f $pids ]]; then
    while read -r name pid start; do
      if alive "$pid" "$start"; then echo "daemon $name (pid $pid)"; fi
    done <"$pids"
  fi
  for f in /proc/[0-9]*; do
    [[ ${f#/proc/} != "$$" && ${f#/proc/} != "$BASHPID" ]] || continue
    if tr '\0' ' ' 2>/dev/null <"$f/cmdline" | grep -qF "$d/"; then
      [[ $(awk '{print $3}' "$f/stat" 2>/dev/null) == Z ]] ||
        echo "process ${f#/proc/}: $(tr '\0' ' ' 2>/dev/null <"$f/cmdline")"
    fi
    if grep -qF " $d/" "$f/mountinfo" 2>/dev/null; then
      echo "mount in ${f#/proc/}'s namespace: $(grep -F " $d/" "$f/mountinfo" | head -1)"
    fi
  done
}
# Polls (bounded) until the queue of the cluster $P is empty.
queue_empty_within() {
  local deadline=$((SECONDS + $1)) q
  while :; do
    q=$("$CLUSTER" slurm run --prefix "$P" -- squeue -h -o '%i %T %R' 2>&1) || q="squeue failed: $q"
    [[ -n $q ]] || return 0
    ((SECONDS < deadline)) || { QUEUE=$q; return 1; }
    sleep 0.1  # a bounded poll of the queue
  done
}

# Polls (bounded) until the compute hosts hold only their slurmd.
only_slurmd_within() {
  local deadline=$((SECONDS + $1)) i pids
  while :; do
    LEFT=
    for i in 1 2; do
      pids=$(ip netns pids "$P-$i" | grep -vx "$(awk -v n="slurmd-$P-$i" '$1 == n {print $2}' "$PIDS")" || true)
      [[ -z $pids ]] || LEFT+="$P-$i: $(ps -o pid=,args= -p "$(paste -sd, <<<"$pids")" | paste -sd';' -) "
    done
    [[ -n $LEFT ]] || return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.1  # a bounded poll of the hosts' processes
  done
}

# ---- can this machine do it at all? ----
if ! "$CLUSTER" check >"$OUT" 2>"$ERR"; then
  echo "SKIP: $(grep -- '^  - ' "$ERR" | sed 's/^  - //' | paste -sd ';' -)"
  echo "(a skip is not a pass: nothing was checked; cluster.sh check says:)"
  cat "$OUT" "$ERR"
  exit 0
fi
if ! grep -q '^ok: slurm' "$OUT"; then
  echo "SKIP: $(grep '^missing: slurm' "$OUT" | sed 's/^missing: //')"
  echo "(a skip is not a pass: nothing was checked; install the Debian packages slurmctld slurmd slurm-client munge, as .ci/install-deps does)"
  exit 0
fi
ok "cluster.sh check: $(grep '^ok: slurm' "$OUT")"
ulimit -c 0  # the aborting rank must not leave a core file (srun propagates the limit)

# ---- argument errors: clear messages, nothing created ----
"$CLUSTER" slurm up 1 --prefix "$P" >"$OUT" 2>"$ERR" && fail "slurm up 1 succeeded"
grep -q "slurm up: needs at least 2 hosts" "$ERR" || fail "slurm up 1: unclear message"
"$CLUSTER" slurm up 3 --slots 0 --prefix "$P" >"$OUT" 2>"$ERR" && fail "--slots 0 accepted"
grep -q "invalid --slots '0'; allowed: 1..1024" "$ERR" || fail "--slots 0: unclear message"
"$CLUSTER" slurm run --prefix "$P" -- true >"$OUT" 2>"$ERR" && fail "slurm run without a cluster succeeded"
grep -q "slurm run: no Slurm cluster with prefix '$P' is up" "$ERR" || fail "slurm run without a cluster: unclear message"
"$CLUSTER" slurm start --prefix "$P" >"$OUT" 2>"$ERR" && fail "slurm start accepted"
grep -q "slurm: unknown command 'start'; allowed: up, run, down" "$ERR" || fail "slurm start: unclear message"
[[ -z $(leftovers "$P" /dev/null) ]] || fail "a rejected command left: $(leftovers "$P" /dev/null)"
ok "bad arguments are refused with their value named (slurm up 1, --slots 0, run without a cluster, an unknown command)"

# ---- slurm up ----
t0=$(now)
"$CLUSTER" slurm up 3 --rate 1gbit --prefix "$P" >"$OUT" 2>"$ERR" || fail "slurm up 3 failed"
t1=$(now)
UP_S=$(elapsed "$t0" "$t1")
awk -v s="$UP_S" 'BEGIN { exit !(s < 30) }' || fail "slurm up took $UP_S s (target: under 30 s)"
D=$STATE/slurm-$P
PIDS=$TMP/pids
cp "$D/pids" "$PIDS" || fail "slurm up recorded no pids in $D/pids"
[[ $(awk '{print $1}' "$PIDS" | paste -sd' ' -) == "munged slurmctld slurmd-$P-1 slurmd-$P-2" ]] ||
  fail "recorded daemons: $(awk '{print $1}' "$PIDS" | paste -sd' ' -), expected munged slurmctld slurmd-$P-1 slurmd-$P-2"
while read -r name pid start; do
  alive "$pid" "$start" || fail "$name (pid $pid) is not running"
  want=$P-0
  [[ $name != slurmd-* ]] || want=${name#slurmd-}
  [[ $(ip netns identify "$pid") == "$want" ]] || fail "$name runs in namespace '$(ip netns identify "$pid")', expected $want"
  [[ $(nsenter -t "$pid" -u cat /proc/sys/kernel/hostname) == "$want" ]] || fail "$name's host name is not $want"
  if [[ $name == slurmd-* ]]; then
    # Its own mount namespace, with the node's directory on TmpFS.
    grep -qF " $D/tmp " "/proc/$pid/mountinfo" || fail "$name has no mount on $D/tmp"
    [[ $(readlink "/proc/$pid/ns/mnt") != "$(readlink /proc/self/ns/mnt)" ]] || fail "$name shares the test's mount namespace"
  fi
done <"$PIDS"
! grep -qF " $D/" /proc/self/mountinfo || fail "slurm up mounted something in the root mount namespace: $(grep -F " $D/" /proc/self/mountinfo)"
"$CLUSTER" slurm run --prefix "$P" -- sinfo -h -N -o '%N %T %c' >"$OUT" 2>"$ERR" || fail "sinfo failed"
[[ $(sort "$OUT" | paste -sd';' -) == "$P-1 idle 2;$P-2 idle 2" ]] || fail "sinfo: nodes not idle with 2 CPUs: $(cat "$OUT")"
for f in slurm.conf cgroup.conf mpi.conf munge/munge.key; do [[ -f $D/$f ]] || fail "no $D/$f"; done
grep -qx "SlurmctldHost=$P-0(10.77.0.1)" "$D/slurm.conf" || fail "slurm.conf: no SlurmctldHost=$P-0(10.77.0.1)"
grep -qx "NodeName=$P-2 NodeAddr=10.77.0.3 CPUs=2 State=UNKNOWN" "$D/slurm.conf" || fail "slurm.conf: no node $P-2 at 10.77.0.3"
grep -qx "AuthInfo=socket=$D/munge/munge.socket" "$D/slurm.conf" || fail "slurm.conf: munged's socket is not the cluster's own"
grep -qx "PMIxCliTmpDirBase=$D/tmp" "$D/mpi.conf" || fail "mpi.conf: no PMIxCliTmpDirBase"
"$CLUSTER" slurm up 3 --prefix "$P" >"$OUT" 2>"$ERR" && fail "a second slurm up with the same prefix succeeded"
grep -q "exists already" "$ERR" || fail "second slurm up: unclear message"
cmp -s "$PIDS" "$D/pids" || fail "a refused slurm up changed the daemons"
ok "slurm up 3 in $UP_S s: munged and slurmctld in $P-0, slurmd in $P-1 and $P-2 (their namespaces, names, own mount of TmpFS), both nodes idle; a second up is refused"

# ---- slurm run: the clients' environment, in host 0 ----
# shellcheck disable=SC2016  # expanded by the command's shell
SLURM_JOB_ID=999 PMIX_RANK=5 UCX_TLS='' "$CLUSTER" slurm run --prefix "$P" -- sh -c \
  'echo "conf=$SLURM_CONF job=${SLURM_JOB_ID:-unset} pmix=${PMIX_RANK:-unset} tls=$UCX_TLS dev=$UCX_NET_DEVICES btl=$OMPI_MCA_btl if=$OMPI_MCA_btl_tcp_if_include pml=$OMPI_MCA_pml host=$(cat /proc/sys/kernel/hostname) net=$(ip -4 -o addr show dev rc0 | awk "{print \$4}")"' \
  >"$OUT" 2>"$ERR" || fail "slurm run sh failed"
want="conf=$D/slurm.conf job=unset pmix=unset tls=tcp dev=rc0 btl=tcp,self if=rc0 pml=ob1 host=$P-0 net=10.77.0.1/24"
[[ $(cat "$OUT") == "$want" ]] || fail "slurm run's environment: got '$(cat "$OUT")', expected '$want'"
"$CLUSTER" slurm run --prefix "$P" -- sh -c 'exit 7' >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 7 ]] || fail "slurm run exited with $rc, expected the command's 7"
ok "slurm run: the command runs in $P-0 with SLURM_CONF, UCX and Open MPI settings, without the caller's SLURM_*/PMIX_*, and its exit status"

# ---- MPI jobs under srun --mpi=pmix -N 2 -n 4 ----
for i in 1 2; do
  # shellcheck disable=SC2016  # awk's field
  HOST_CPUS[i]=$("$CLUSTER" exec "$i" --prefix "$P" -- awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
done
# check_job NAME WITH_DYNBCAST BEFORE1 BEFORE2: slurm_check's output in $OUT.
check_job() {
  local name=$1 dyn=$2 before1=$3 before2=$4 r node sent1 sent2
  for r in 0 1 2 3; do
    node=$((1 + r / 2))  # block distribution: 2 tasks per node
    grep -qx "rank $r of 4 host $P-$node cpus ${HOST_CPUS[node]}" "$OUT" ||
      fail "$name: rank $r is not on $P-$node's cores ${HOST_CPUS[node]}: $(grep "^rank $r of" "$OUT")"
    grep -qx "rank $r p2p ok (1048576 bytes from rank $(((r + 3) % 4)), 1048576 bytes to rank $(((r + 1) % 4)))" "$OUT" ||
      fail "$name: rank $r did not check its point-to-point messages"
    grep -qx "rank $r iallreduce ok (10000 ints, sum and max)" "$OUT" || fail "$name: rank $r did not check MPI_Iallreduce"
    if ((dyn)); then
      grep -qx "rank $r dynamic_bcast ok (roots 0 and 3, 100000 ints)" "$OUT" || fail "$name: rank $r did not check MPIX_Dynamic_bcast"
    fi
    grep -qx "rank $r done" "$OUT" || fail "$name: rank $r did not finish"
  done
  ! grep -q FAIL "$OUT" || fail "$name: $(grep FAIL "$OUT")"
  # The ring sends 1 MiB from node 1 to node 2 (rank 1 -> 2) and back
  # (rank 3 -> 0): both hosts' links carry it.
  sent1=$(($(tx_bytes 1) - before1)) sent2=$(($(tx_bytes 2) - before2))
  ((sent1 >= 1 << 20 && sent2 >= 1 << 20)) ||
    fail "$name: the ring's 1 MiB did not cross rc0: $P-1 sent $sent1, $P-2 sent $sent2 bytes"
  SENT="$P-1 sent $sent1, $P-2 sent $sent2 bytes on rc0"
}
before1=$(tx_bytes 1) before2=$(tx_bytes 2)
t0=$(now)
RONDO_PROGRESS=none timeout 180 "$CLUSTER" slurm run --prefix "$P" -- \
  srun --mpi=pmix -N 2 -n 4 "$CHECK" >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 0 ]] || fail "Rondo's slurm_check under srun --mpi=pmix -N 2 -n 4 exited with $rc"
check_job "Rondo" 1 "$before1" "$before2"
ok "Rondo (MadMPI) under srun --mpi=pmix -N 2 -n 4: ranks 0,1 on $P-1 and 2,3 on $P-2 on their hosts' cores; p2p, MPI_Iallreduce and MPIX_Dynamic_bcast checked; $SENT; $(elapsed "$t0" "$(now)") s"

before1=$(tx_bytes 1) before2=$(tx_bytes 2)
t0=$(now)
timeout 180 "$CLUSTER" slurm run --prefix "$P" -- \
  srun --mpi=pmix -N 2 -n 4 "$CHECK_OMPI" >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 0 ]] || fail "Open MPI's slurm_check under srun --mpi=pmix -N 2 -n 4 exited with $rc"
check_job "Open MPI" 0 "$before1" "$before2"
ok "Open MPI (the reference) under the same srun: same placement, p2p and MPI_Iallreduce checked; $SENT; $(elapsed "$t0" "$(now)") s"

# ---- a rank killed: the job ends with an error naming it, nothing hangs ----
for lib in Rondo "Open MPI"; do
  prog=$CHECK
  [[ $lib == Rondo ]] || prog=$CHECK_OMPI
  t0=$(now)
  RONDO_PROGRESS=none timeout 120 "$CLUSTER" slurm run --prefix "$P" -- \
    srun --mpi=pmix -N 2 -n 4 "$prog" --abort-rank 3 >"$OUT" 2>"$ERR"
  rc=$?
  [[ $rc -ne 124 ]] || fail "$lib: the job with rank 3 aborting did not end within 120 s"
  [[ $rc -ne 0 ]] || fail "$lib: the job with rank 3 aborting exited with 0"
  grep -qx "rank 3 aborting (--abort-rank 3)" "$OUT" || fail "$lib: rank 3 did not reach its abort()"
  grep -q "srun: error: $P-2: task 3: Aborted" "$ERR" || fail "$lib: srun did not name task 3 as aborted"
  queue_empty_within 30 || fail "$lib: the queue is not empty 30 s after the job ended: $QUEUE"
  # Only the slurmds are left in the compute hosts: no step, no task.
  only_slurmd_within 30 || fail "$lib: processes left in the compute hosts 30 s after the job: $LEFT"
  ok "$lib: rank 3's abort() ends the job (exit $rc, 'srun: error: $P-2: task 3: Aborted') in $(elapsed "$t0" "$(now)") s; queue empty, no step left"
done

# ---- a node lost mid-job (its slurmd, step and ranks gone at once) ----
# Slurm declares it down (SlurmdTimeout=10 in the generated slurm.conf) and
# ends the job with NODE_FAIL; the ranks on the surviving node are stopped,
# nothing hangs. Rondo's program, a long loop of rings and allreduces.
t0=$(now)
timeout 180 "$CLUSTER" slurm run --prefix "$P" -- \
  srun --mpi=pmix -N 2 -n 2 "$CHECK" --rounds 1000000 >"$OUT" 2>"$ERR" &
job=$!
# Wait (bounded) until the job computes, then take node 2 down.
for ((i = 0; i < 300; ++i)); do
  grep -q "^rank 0 round 3$" "$OUT" 2>/dev/null && break
  sleep 0.1  # a bounded poll of the job's output
done
grep -q "^rank 0 round 3$" "$OUT" || fail "node loss: the job never got going: $(tail -3 "$ERR")"
for pid in $(ip netns pids "$P-2"); do kill -9 "$pid" 2>/dev/null || true; done
rc=0
wait "$job" || rc=$?
[[ $rc -ne 124 ]] || fail "node loss: the job did not end within 180 s"
[[ $rc -ne 0 ]] || fail "node loss: the job exited with 0"
# Two ends are right, whichever comes first: Slurm declares the node down
# (srun names it), or rank 0's next send or receive to rank 1, the rank on
# that node, fails and the error names rank 1 (MPIX_ERR_PROC_FAILED from
# a send, a receive or a collective's step; the job aborts before
# SlurmdTimeout).
if grep -q "Node failure on $P-2" "$ERR"; then
  named="'srun: error: Node failure on $P-2'"
elif grep -q "MPIX_ERR_PROC_FAILED.*rank 1[^0-9]" "$ERR"; then
  named="rank 0: '$(grep -m1 "MPIX_ERR_PROC_FAILED.*rank 1[^0-9]" "$ERR" | cut -c1-160)'"
else
  fail "node loss: neither srun named the lost node nor rank 0 the lost rank 1: $(tail -5 "$ERR")"
fi
queue_empty_within 30 || fail "node loss: the queue is not empty 30 s after the job ended: $QUEUE"
ok "node $P-2 lost mid-job: the job ends (exit $rc, $named) in $(elapsed "$t0" "$(now)") s; queue empty"

# ---- slurm down, twice ----
t0=$(now)
"$CLUSTER" slurm down --prefix "$P" >"$OUT" 2>"$ERR" || fail "slurm down failed"
DOWN_S=$(elapsed "$t0" "$(now)")
awk -v s="$DOWN_S" 'BEGIN { exit !(s < 30) }' || fail "slurm down took $DOWN_S s (target: under 30 s)"
left=$(leftovers "$P" "$PIDS")
[[ -z $left ]] || fail "slurm down left: $left"
"$CLUSTER" slurm down --prefix "$P" >"$OUT" 2>"$ERR" || fail "a second slurm down failed"
[[ ! -s $OUT && ! -s $ERR ]] || fail "a second slurm down said something"
ok "slurm down in $DOWN_S s leaves no namespace, cgroup, daemon, process, mount or file; a second one is harmless"

# ---- hosts with every CPU: task/affinity binds; plain down stops Slurm ----
# When each compute host has all the online CPUs, `slurm up` picks
# task/affinity, and --cpu-bind=cores gives a node's two tasks a core each.
NCPUS=$(awk -F, '{ for (i = 1; i <= NF; ++i) { n = split($i, r, "-"); s += n == 2 ? r[2] - r[1] + 1 : 1 } } END { print s }' \
  /sys/devices/system/cpu/online)
"$CLUSTER" slurm up 3 --cpus-per-host "$NCPUS" --prefix "${P}d" >"$OUT" 2>"$ERR" || fail "slurm up 3 --cpus-per-host $NCPUS failed"
cp "$STATE/slurm-${P}d/pids" "$TMP/pids.d"
grep -q "slurmd in ${P}d-1..${P}d-2 ($(( NCPUS > 2 ? NCPUS : 2 )) CPUs each, task/affinity)" "$OUT" ||
  fail "hosts with all $NCPUS CPUs: not task/affinity: $(cat "$OUT")"
if ((NCPUS >= 2)); then
  # shellcheck disable=SC2016  # expanded by the tasks' shell
  "$CLUSTER" slurm run --prefix "${P}d" -- srun --mpi=pmix -N 2 -n 4 --cpu-bind=cores sh -c \
    'echo "$SLURM_PROCID $(cat /proc/sys/kernel/hostname) $(awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status)"' \
    >"$OUT" 2>"$ERR" || fail "srun --cpu-bind=cores failed"
  for node in 1 2; do
    cpus=$(awk -v h="${P}d-$node" '$2 == h {print $3}' "$OUT" | sort -u)
    [[ $(wc -l <<<"$cpus") -eq 2 && $cpus != *[,-]* ]] ||
      fail "--cpu-bind=cores: the tasks on ${P}d-$node may run on '$(paste -sd' ' - <<<"$cpus")', expected one distinct core each: $(cat "$OUT")"
  done
  ok "hosts with all $NCPUS CPUs get task/affinity: --cpu-bind=cores gives each task of a node its own core ($(sort "$OUT" | awk '{printf "%s%s:%s", s, $1, $3; s = " "}'))"
else
  echo "skip: one online CPU: no --cpu-bind=cores check"
fi
"$CLUSTER" down --prefix "${P}d" >"$OUT" 2>"$ERR" || fail "down of a Slurm cluster failed"
left=$(leftovers "${P}d" "$TMP/pids.d")
[[ -z $left ]] || fail "down of a Slurm cluster left: $left"
ok "plain down stops the Slurm daemons and removes their directory"

# ---- a daemon that fails at start: up fails naming it, and cleans up ----
CLUSTER_SLURM_TASK_PLUGIN=task/nonexistent "$CLUSTER" slurm up 2 --prefix "${P}f" >"$OUT" 2>"$ERR" &&
  fail "slurm up with a task plugin that does not exist succeeded"
grep -q "slurm up: slurmd-${P}f-1 (pid [0-9]*) exited" "$ERR" || fail "slurm up did not name the daemon that exited"
grep -q "cannot find task plugin for task/nonexistent" "$ERR" || fail "slurm up did not show the daemon's own message"
grep -q "up failed; removing what was created for prefix '${P}f'" "$ERR" || fail "slurm up's failure was not reported"
left=$(leftovers "${P}f" /dev/null)
[[ -z $left ]] || fail "a failed slurm up left: $left"
ok "a daemon failing at start fails slurm up, named with its log, and everything is removed"
echo "PASS (slurm up $UP_S s, slurm down $DOWN_S s)"
