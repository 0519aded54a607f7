#!/usr/bin/env bash
# Test of the emulated cluster (bench/cluster/cluster.sh, docs/cluster.md).
# Usage: cluster_test.sh CLUSTER_SH NETTOOL_PY RONDO_RUN NMAD_CHECK MPI_HOSTS_C
#
# A 3-host cluster at 100 Mbit/s must: give each host its address, its
# cores (a cpuset cgroup, seen by hwloc) and its host name, and no way to
# the machine's own interfaces; let the hosts reach each other; limit a TCP
# transfer to the rate, in each direction of a link (an incast of two
# senders into one host is limited by the switch port too);
# run an nmad job across the hosts through `rondo-run --rank-wrapper` with
# UCX over TCP, whose bytes go through the hosts' interfaces; run MPI jobs
# (mpi_hosts.c) with Open MPI's and MPICH's own launchers (`cluster.sh
# launch`, daemons started through `cluster.sh rsh`) and Rondo's nmad_check
# under Open MPI's mpirun (PMIx), each rank in its host's namespace on its
# host's cores, the bytes through rc0; and leave no namespace or cgroup
# behind, also after a failing command, a failure inside `up` and a SIGTERM
# during `run`. The root namespace's interfaces must not change.
#
# Needs root and network namespaces. Only when `cluster.sh check` says this
# machine cannot emulate a cluster does it print "SKIP: <reason>" and exit 0:
# a skip is not a pass (nothing was checked). No sleeps: readiness is read
# from fifos with bounded timeouts.
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
CLUSTER=$1 NETTOOL=$2 RUN=$3 CHECK=$4 MPI_HOSTS_C=$5 INFO=$6
for f in "$CLUSTER" "$NETTOOL" "$RUN" "$CHECK" "$MPI_HOSTS_C"; do
  [[ -e $f ]] || { echo "FAIL: $f not found"; exit 1; }
done
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cluster.XXXXXX")
OUT=$TMP/out ERR=$TMP/err
P=rct$$             # this run's prefix: never a user's cluster
PREFIXES=("$P" "${P}r" "${P}f" "${P}t" "${P}n" "${P}c")
LISTENER=

cleanup() {
  [[ -z $LISTENER ]] || kill "$LISTENER" 2>/dev/null
  local p
  for p in "${PREFIXES[@]}"; do "$CLUSTER" down --prefix "$p" >/dev/null 2>&1; done
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  echo "--- last stdout"; cat "$OUT" 2>/dev/null
  echo "--- last stderr"; cat "$ERR" 2>/dev/null
  exit 1
}
ok() { echo "ok: $*"; }
namespaces_of() {  # the namespaces of a prefix
  ip netns list | awk '{print $1}' | grep -E "^$1-(sw|[0-9]+)\$" || true
}
tx_bytes() {  # host interface's transmitted bytes
  ip netns exec "$P-$1" cat /sys/class/net/rc0/statistics/tx_bytes
}
cgroups_of() {  # the cpuset cgroups of a prefix (cgroup v1 or v2)
  find /sys/fs/cgroup /sys/fs/cgroup/cpuset -maxdepth 1 -type d \
    -regex ".*/rondo-cluster-$1-[0-9]+" 2>/dev/null || true
}
host_cpus() {  # N I: the cores of host I with N cores per host (docs/cluster.md)
  python3 - "$1" "$2" <<'PY'
import sys
n, i = int(sys.argv[1]), int(sys.argv[2])
online = []
for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
    a, _, b = part.partition("-")
    online += range(int(a), int(b or a) + 1)
ranges = []
for c in sorted({online[(i * n + j) % len(online)] for j in range(n)}):
    if ranges and c == ranges[-1][1] + 1:
        ranges[-1][1] = c
    else:
        ranges.append([c, c])
print(",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in ranges))
PY
}
count_cpus() {  # a cpu list ("0-2,5") -> how many
  python3 -c 'import sys; print(sum(int(b or a) - int(a) + 1 for a, _, b in (p.partition("-") for p in sys.argv[1].split(","))))' "$1"
}
# mpi_field OUT RANK FIELD: a field of mpi_hosts' line for RANK ("host",
# "net", "cpus" or a variable's name). Launchers may glue two ranks' lines
# together, so the line is cut at the next "rank N of".
mpi_field() {
  python3 - "$@" <<'PY'
import re, sys
text, rank, field = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
m = re.search(r"rank %s of \d+ (.*?)(?=rank \d+ of |rank \d+ exchanged|\n|$)" % rank, text)
if m:
    words = m.group(1).split()
    for k, w in enumerate(words):
        if w == field and k + 1 < len(words):
            print(words[k + 1]); break
        if w.startswith(field + "="):
            print(w[len(field) + 1:]); break
PY
}
# listen HOST PORT RESULT: starts a receiver in host HOST and waits until
# it listens (bounded); its pid is in $! of the caller's LISTEN_PID.
listen() {
  local fifo=$TMP/ready.$1.$2 line=
  rm -f "$fifo"
  mkfifo "$fifo" || fail "mkfifo"
  ip netns exec "$P-$1" python3 "$NETTOOL" listen --bind "10.77.0.$(($1 + 1))" \
    --port "$2" --ready "$fifo" --timeout 60 >"$3" 2>"$3.err" &
  LISTEN_PID=$!
  read -r -t 20 line <"$fifo"
  [[ $line == ready ]] || fail "the receiver in $P-$1 did not listen within 20 s: $(cat "$3.err")"
}
field() {  # JSON_FILE KEY: a number from nettool's one-line JSON
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}
in_range() {  # VALUE LOW HIGH (floats)
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

# ---- can this machine do it at all? ----
if ! "$CLUSTER" check >"$OUT" 2>"$ERR"; then
  echo "SKIP: $(grep -- '^  - ' "$ERR" | sed 's/^  - //' | paste -sd ';' -)"
  echo "(a skip is not a pass: nothing was checked; cluster.sh check says:)"
  cat "$OUT" "$ERR"
  exit 0
fi
ok "cluster.sh check: $(tail -1 "$OUT")"
command -v python3 >/dev/null || fail "python3 is missing (the probes of nettool.py need it)"

ROOT_LINKS_BEFORE=$(ip -o link show | awk -F': ' '{print $2}' | sort)
ROOT_ADDRS=$(ip -4 -o addr show | awk '{sub(/\/.*/, "", $4); print $4}')

# ---- argument errors: clear messages, nothing created ----
"$CLUSTER" up 0 --prefix "$P" >"$OUT" 2>"$ERR" && fail "up 0 succeeded"
grep -q "invalid host count '0'; allowed: 1..250" "$ERR" || fail "up 0: unclear message"
"$CLUSTER" up 3 --rate fast --prefix "$P" >"$OUT" 2>"$ERR" && fail "--rate fast accepted"
grep -q "invalid --rate 'fast'" "$ERR" || fail "--rate fast: unclear message"
"$CLUSTER" up 3 --prefix "Bad-1" >"$OUT" 2>"$ERR" && fail "--prefix Bad-1 accepted"
grep -q "invalid --prefix 'Bad-1'" "$ERR" || fail "--prefix Bad-1: unclear message"
NCPUS=$(grep -c . < <(python3 -c '
for p in open("/sys/devices/system/cpu/online").read().strip().split(","):
    a, _, b = p.partition("-")
    [print(c) for c in range(int(a), int(b or a) + 1)]'))
"$CLUSTER" up 3 --cpus-per-host 0 --prefix "$P" >"$OUT" 2>"$ERR" && fail "--cpus-per-host 0 accepted"
grep -q "invalid --cpus-per-host '0'; allowed: 1..$NCPUS (the online CPUs)" "$ERR" || fail "--cpus-per-host 0: unclear message"
"$CLUSTER" run 3 --cpus-per-host $((NCPUS + 1)) --prefix "$P" -- true >"$OUT" 2>"$ERR" &&
  fail "--cpus-per-host $((NCPUS + 1)) accepted on $NCPUS CPUs"
grep -q "invalid --cpus-per-host '$((NCPUS + 1))'; allowed: 1..$NCPUS" "$ERR" || fail "--cpus-per-host $((NCPUS + 1)): unclear message"
"$CLUSTER" launch openmpi --prefix "$P" -- -n 2 true >"$OUT" 2>"$ERR" && fail "launch without a cluster succeeded"
grep -q "launch: no cluster with prefix '$P' is up" "$ERR" || fail "launch without a cluster: unclear message"
[[ -z $(namespaces_of "$P") && -z $(cgroups_of "$P") ]] || fail "a rejected command created namespaces or cgroups"
ok "bad arguments are refused with their value named (--cpus-per-host 0 and $((NCPUS + 1)), launch without a cluster)"

# ---- up ----
"$CLUSTER" up 3 --rate 100mbit --prefix "$P" >"$OUT" 2>"$ERR" || fail "up 3 failed"
cp "$ERR" "$TMP/up.err"
want=$(printf '%s\n' "$P-0" "$P-1" "$P-2" "$P-sw" | sort)
[[ $(namespaces_of "$P" | sort) == "$want" ]] ||
  fail "namespaces: got '$(namespaces_of "$P" | tr '\n' ' ')', expected '$(echo "$want" | tr '\n' ' ')'"
"$CLUSTER" up 2 --prefix "$P" >"$OUT" 2>"$ERR" && fail "a second up with the same prefix succeeded"
grep -q "exists already" "$ERR" || fail "second up: unclear message"
[[ $(namespaces_of "$P" | sort) == "$want" ]] || fail "a refused up changed the cluster"
for i in 0 1 2; do
  addr=$(ip -n "$P-$i" -4 -o addr show dev rc0 | awk '{print $4}')
  [[ $addr == "10.77.0.$((i + 1))/24" ]] || fail "$P-$i: rc0 has '$addr', expected 10.77.0.$((i + 1))/24"
  state=$(ip -n "$P-$i" -br link show dev rc0 | awk '{print $2}')
  [[ $state == UP ]] || fail "$P-$i: rc0 is $state"
  [[ $(ip -n "$P-$i" -br link show dev lo | awk '{print $2}') == UNKNOWN ]] || fail "$P-$i: lo is not up"
  tc -n "$P-$i" qdisc show dev rc0 | grep -q "tbf 1: root .*rate 100Mbit" ||
    fail "$P-$i: no 100 Mbit tbf on rc0: $(tc -n "$P-$i" qdisc show dev rc0)"
  tc -n "$P-sw" qdisc show dev "p$i" | grep -q "tbf 1: root .*rate 100Mbit" ||
    fail "$P-sw: no 100 Mbit tbf on p$i"
  # Only the subnet's route: nothing leads out of the cluster.
  routes=$(ip -n "$P-$i" -4 route show)
  [[ $routes == "10.77.0.0/24 dev rc0 proto kernel scope link src 10.77.0.$((i + 1)) " ||
    $routes == "10.77.0.0/24 dev rc0 proto kernel scope link src 10.77.0.$((i + 1))" ]] ||
    fail "$P-$i: unexpected routes: $routes"
done
ip -n "$P-sw" -br link show dev br0 | grep -q UP || fail "br0 is not up in $P-sw"
[[ $("$CLUSTER" exec 1 --prefix "$P" -- ip -4 -o addr show dev rc0 | awk '{print $4}') == 10.77.0.2/24 ]] ||
  fail "exec 1 did not run inside $P-1"
[[ $(ip -o link show | awk -F': ' '{print $2}' | sort) == "$ROOT_LINKS_BEFORE" ]] ||
  fail "up changed the root namespace's interfaces"
ok "3 hosts with their addresses, tbf at 100 Mbit/s on both ends of each link; root namespace untouched"

# ---- each host's cores and name ----
# Default cores per host: max(1, online CPUs / 3); host i gets cores
# i*N..i*N+N-1 modulo the online CPUs. With a cpuset cgroup per host, hwloc
# inside sees only those; without one (cluster.sh check says which), only
# the affinity is set and `up` warns.
CPN=$((NCPUS / 3)); ((CPN >= 1)) || CPN=1
CGROUPS=0
grep -q "^ok: cpuset cgroup" <("$CLUSTER" check 2>&1) && CGROUPS=1
for i in 0 1 2; do
  want=$(host_cpus "$CPN" "$i")
  HOST_CPUS[i]=$want
  got=$("$CLUSTER" exec "$i" --prefix "$P" -- awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
  [[ $got == "$want" ]] || fail "$P-$i: a process may run on cores '$got', expected '$want'"
  name=$("$CLUSTER" exec "$i" --prefix "$P" -- cat /proc/sys/kernel/hostname)
  [[ $name == "$P-$i" ]] || fail "$P-$i: host name '$name', expected '$P-$i'"
  HOST_NET[i]=$("$CLUSTER" exec "$i" --prefix "$P" -- readlink /proc/self/ns/net)
  pus=$("$CLUSTER" exec "$i" --prefix "$P" -- hwloc-calc --number-of pu all)
  if ((CGROUPS)); then
    [[ -d /sys/fs/cgroup/cpuset/rondo-cluster-$P-$i || -d /sys/fs/cgroup/rondo-cluster-$P-$i ]] ||
      fail "no cgroup rondo-cluster-$P-$i"
    [[ $pus == "$(count_cpus "$want")" ]] || fail "$P-$i: hwloc sees $pus PUs, expected $(count_cpus "$want") ($want)"
  else
    grep -q "warning: no cpuset cgroup" "$TMP/up.err" || fail "up did not warn that it has no cpuset cgroup"
  fi
done
[[ $(hostname) != "$P-0" ]] || fail "the root namespace's host name changed"
[[ ${HOST_NET[0]} != "${HOST_NET[1]}" && ${HOST_NET[1]} != "${HOST_NET[2]}" ]] || fail "hosts share a network namespace"
if ((3 * CPN > NCPUS)); then
  grep -q "note: 3 hosts x $CPN cores > $NCPUS online CPUs: hosts share cores" "$TMP/up.err" ||
    fail "up did not say the hosts share cores: $(cat "$TMP/up.err")"
fi
ok "host i runs on its cores ($(IFS=';'; echo "${HOST_CPUS[*]}"); $( ((CGROUPS)) && echo "cpuset cgroups, hwloc agrees" || echo "affinity only: no cpuset cgroup here")) and is named $P-i"

# ---- rsh: the remote-shell agent of the MPI launchers ----
got=$(CLUSTER_PREFIX=$P "$CLUSTER" rsh -x 10.77.0.2 'cat /proc/sys/kernel/hostname;' awk "'/^Cpus_allowed_list/ {print \$2}'" /proc/self/status 2>"$ERR" | paste -sd' ')
[[ $got == "$P-1 ${HOST_CPUS[1]}" ]] || fail "rsh -x 10.77.0.2: got '$got', expected '$P-1 ${HOST_CPUS[1]}' ($(cat "$ERR"))"
CLUSTER_PREFIX=$P "$CLUSTER" rsh 10.77.0.9 true >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 255 ]] || fail "rsh to an unknown host exited with $rc, expected 255 (ssh's code)"
grep -q "unknown host '10.77.0.9'; the hosts of cluster '$P' are: 10.77.0.1 ($P-0), 10.77.0.2 ($P-1), 10.77.0.3 ($P-2)" "$ERR" ||
  fail "rsh to an unknown host: unclear message: $(cat "$ERR")"
ok "rsh runs 'sh -c' in the host named by address, name or index; an unknown host exits 255 naming the hosts"

# ---- traffic stays inside ----
# A listener on every address of the root namespace; no host may reach it
# (not even through 127.0.0.1, which in a host is the host's own loopback).
PORT=$((20000 + $$ % 20000))
rm -f "$TMP/root.ready"; mkfifo "$TMP/root.ready" || fail "mkfifo"
python3 "$NETTOOL" listen --bind 0.0.0.0 --port "$PORT" --ready "$TMP/root.ready" --timeout 60 \
  >"$TMP/root.out" 2>&1 &
LISTENER=$!
read -r -t 20 line <"$TMP/root.ready"
[[ $line == ready ]] || fail "the root namespace's listener did not start"
for a in $ROOT_ADDRS; do
  "$CLUSTER" exec 0 --prefix "$P" -- python3 "$NETTOOL" connect --to "$a" --port "$PORT" --timeout 2 \
    >"$OUT" 2>"$ERR" && fail "$P-0 reached the root namespace's $a:$PORT"
  if [[ $a != 127.* ]]; then
    "$CLUSTER" exec 0 --prefix "$P" -- python3 "$NETTOOL" ping "$a" --count 1 --timeout 1 \
      >"$OUT" 2>"$ERR" && fail "$P-0 pinged the root namespace's $a"
  fi
done
# The listener was alive all along: the root namespace itself reaches it.
python3 "$NETTOOL" connect --to 127.0.0.1 --port "$PORT" >"$OUT" 2>"$ERR" ||
  fail "control: the root namespace cannot reach its own listener"
wait "$LISTENER"
LISTENER=
ok "no host reaches the root namespace ($(echo "$ROOT_ADDRS" | tr '\n' ' '))"

# ---- hosts reach each other ----
for i in 0 1 2; do
  for j in 0 1 2; do
    ((i != j)) || continue
    "$CLUSTER" exec "$i" --prefix "$P" -- python3 "$NETTOOL" ping "10.77.0.$((j + 1))" --count 3 \
      >"$OUT" 2>"$ERR" || fail "$P-$i cannot ping 10.77.0.$((j + 1))"
    grep -q "3/3 replies" "$OUT" || fail "$P-$i -> $P-$j: $(cat "$OUT")"
  done
done
ok "every host pings every other ($(cat "$OUT"))"

# ---- the rate limit ----
# A rate is a timing, and this test must pass on a busy machine (a loaded
# one measured the incast at 30.8 Mbit/s with the shaping intact). So the
# bounds check what shaping does, not how fast this machine is: at most
# 120% of the 100 Mbit/s (shaping works: an unshaped veth moves Gbit/s, an
# incast through an unshaped switch port reaches 200; a busy machine only
# slows a flow down), and at least 5% (traffic flows). The exact figures are
# printed; the quiet-machine ones (~95 Mbit/s goodput) are in docs/cluster.md.
RATE_MAX=120e6 RATE_MIN=5e6
BYTES=25000000  # 2 s at 100 Mbit/s
listen 1 5001 "$TMP/flow.json"
pid=$LISTEN_PID
"$CLUSTER" exec 0 --prefix "$P" -- python3 "$NETTOOL" send --to 10.77.0.2 --port 5001 --bytes $BYTES \
  >"$OUT" 2>"$ERR" || fail "send 0 -> 1 failed"
wait "$pid" || fail "receiver failed: $(cat "$TMP/flow.json.err")"
[[ $(field "$TMP/flow.json" bytes) == "$BYTES" ]] || fail "received $(field "$TMP/flow.json" bytes) of $BYTES bytes"
rate=$(field "$TMP/flow.json" bits_per_s)
in_range "$rate" $RATE_MIN $RATE_MAX ||
  fail "one flow at $(awk -v r="$rate" 'BEGIN{printf "%.1f", r/1e6}') Mbit/s; expected 5-120 (5-120% of the limit)"
ok "one flow $P-0 -> $P-1: $(awk -v r="$rate" 'BEGIN{printf "%.1f", r/1e6}') Mbit/s (limit 100)"

# Incast: 0 -> 1 and 2 -> 1 at once. Each sender's own link allows 100, so
# only the switch port's limit towards host 1 keeps the sum at 100.
listen 1 5002 "$TMP/in0.json"; pid0=$LISTEN_PID
listen 1 5003 "$TMP/in2.json"; pid2=$LISTEN_PID
"$CLUSTER" exec 0 --prefix "$P" -- python3 "$NETTOOL" send --to 10.77.0.2 --port 5002 --bytes $BYTES \
  >"$TMP/s0.out" 2>&1 &
s0=$!
"$CLUSTER" exec 2 --prefix "$P" -- python3 "$NETTOOL" send --to 10.77.0.2 --port 5003 --bytes $BYTES \
  >"$TMP/s2.out" 2>&1 &
s2=$!
wait "$s0" || fail "incast sender 0 failed: $(cat "$TMP/s0.out")"
wait "$s2" || fail "incast sender 2 failed: $(cat "$TMP/s2.out")"
wait "$pid0" && wait "$pid2" || fail "incast receivers failed"
sum=$(python3 - "$TMP/in0.json" "$TMP/in2.json" <<'PY'
import json, sys
r = [json.load(open(f)) for f in sys.argv[1:]]
span = max(x["t_end"] for x in r) - min(x["t_start"] for x in r)
print(sum(x["bytes"] for x in r) * 8 / span)
PY
)
in_range "$sum" $RATE_MIN $RATE_MAX ||
  fail "incast into $P-1 at $(awk -v r="$sum" 'BEGIN{printf "%.1f", r/1e6}') Mbit/s in total; expected 5-120 (5-120% of the switch port's limit)"
ok "incast $P-0 + $P-2 -> $P-1: $(awk -v r="$sum" 'BEGIN{printf "%.1f", r/1e6}') Mbit/s in total (limit 100)"

# ---- a Rondo job across the hosts: rondo-run --rank-wrapper, UCX over TCP ----
# nmad_check's "large" moves 64 MiB from rank 0 to rank 1 and back, which
# must show in both hosts' interface counters; the ranks find rc0 through
# UCX_NET_DEVICES, which exists only inside the hosts.
before0=$(tx_bytes 0) before1=$(tx_bytes 1)
UCX_TLS=tcp UCX_NET_DEVICES=rc0 RONDO_PROGRESS=none UCX_MEM_MMAP_HOOK_MODE=none \
  timeout 240 "$RUN" -n 3 --timeout 200 --rank-wrapper "$(command -v ip) netns exec $P-{rank}" \
  "$CHECK" ordering am large >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 0 ]] || fail "the nmad job across the hosts exited with $rc"
for c in ordering am large; do grep -q "^case $c ok" "$OUT" || fail "case $c did not pass"; done
for r in 0 1 2; do grep -q "^rank $r ok (rondo-run bootstrap" "$OUT" || fail "rank $r did not finish"; done
sent0=$(($(tx_bytes 0) - before0)) sent1=$(($(tx_bytes 1) - before1))
((sent0 >= 64 << 20 && sent1 >= 64 << 20)) ||
  fail "the job's 64 MiB each way did not go through the hosts' rc0: $P-0 sent $sent0, $P-1 sent $sent1 bytes"
ok "nmad job (ordering, am, large) on 3 hosts via rondo-run --rank-wrapper; $P-0 sent $sent0, $P-1 sent $sent1 bytes on rc0"

# A rank for a host that does not exist: the launcher fails with ip's reason.
timeout 60 "$RUN" -n 4 --rank-wrapper "$(command -v ip) netns exec $P-{rank}" "$CHECK" ordering \
  >"$OUT" 2>"$ERR" && fail "a 4-rank job on 3 hosts succeeded"
grep -q "Cannot open network namespace \"$P-3\"" "$ERR" || fail "no clear error for the missing host $P-3"
grep -q "rondo-run: rank 3 (pid [0-9]*) exited with status" "$ERR" || fail "rondo-run did not name rank 3"
ok "a rank without a host fails clearly"

# ---- MPI libraries' own launchers across the hosts: launch openmpi|mpich ----
# mpi_hosts (bench/cluster/mpi_hosts.c) prints each rank's host name,
# network namespace, cores and a variable of the caller's environment, and
# ranks 0 and 1 exchange 4 MiB each way and check every byte. Both ranks
# must run in their own host (namespace and cores), and the 4 MiB must
# cross both hosts' rc0.
# check_mpi_job NAME OUT RC VAR VALUE BEFORE0 BEFORE1
check_mpi_job() {
  local name=$1 out=$2 rc=$3 var=$4 value=$5 before0=$6 before1=$7 r sent0 sent1
  for r in 0 1; do
    [[ $(mpi_field "$out" "$r" host) == "$P-$r" ]] ||
      fail "$name: rank $r on host '$(mpi_field "$out" "$r" host)', expected $P-$r"
    [[ $(mpi_field "$out" "$r" net) == "${HOST_NET[r]}" ]] ||
      fail "$name: rank $r in namespace '$(mpi_field "$out" "$r" net)', expected $P-$r's ${HOST_NET[r]}"
    [[ $(mpi_field "$out" "$r" cpus) == "${HOST_CPUS[r]}" ]] ||
      fail "$name: rank $r may run on cores '$(mpi_field "$out" "$r" cpus)', expected $P-$r's '${HOST_CPUS[r]}'"
    [[ $(mpi_field "$out" "$r" "$var") == "$value" ]] ||
      fail "$name: rank $r has $var='$(mpi_field "$out" "$r" "$var")', expected the caller's '$value'"
    grep -q "rank $r exchanged 4194304 bytes with rank $((1 - r)): ok" "$out" ||
      fail "$name: rank $r did not check the 4 MiB it received"
  done
  sent0=$(($(tx_bytes 0) - before0)) sent1=$(($(tx_bytes 1) - before1))
  ((sent0 >= 4 << 20 && sent1 >= 4 << 20)) ||
    fail "$name: the 4 MiB each way did not cross rc0: $P-0 sent $sent0, $P-1 sent $sent1 bytes"
  [[ $(ip -o link show | awk -F': ' '{print $2}' | sort) == "$ROOT_LINKS_BEFORE" ]] ||
    fail "$name changed the root namespace's interfaces"
  MPI_SENT="$P-0 sent $sent0, $P-1 sent $sent1 bytes on rc0"
}
launch_dirs() { find /tmp -maxdepth 1 -name 'rondo-cluster-launch.*' 2>/dev/null | sort; }
LAUNCH_DIRS_BEFORE=$(launch_dirs)
MPICC=/usr/bin/mpicc.openmpi
[[ -x $MPICC ]] || fail "$MPICC not found (libopenmpi-dev)"
"$MPICC" -O2 -o "$TMP/mpi_hosts_openmpi" "$MPI_HOSTS_C" >"$OUT" 2>"$ERR" || fail "$MPICC mpi_hosts.c failed"
before0=$(tx_bytes 0) before1=$(tx_bytes 1)
RONDO_PROGRESS=bind timeout 120 "$CLUSTER" launch openmpi --prefix "$P" --hosts 2 -- \
  -n 2 --timeout 100 "$TMP/mpi_hosts_openmpi" --env RONDO_PROGRESS >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 0 ]] || fail "launch openmpi: the 2-host job exited with $rc"
check_mpi_job "launch openmpi" "$OUT" "$rc" RONDO_PROGRESS bind "$before0" "$before1"
ok "Open MPI job on 2 hosts (launch openmpi: mpirun in $P-0, orted through rsh): each rank in its host on its cores, the caller's RONDO_PROGRESS=bind reached both; $MPI_SENT"
timeout 60 "$CLUSTER" launch openmpi --prefix "$P" --hosts 2 -- -n 2 sh -c 'exit 3' >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 3 ]] || fail "launch openmpi exited with $rc for ranks that exit 3"
left=$(comm -13 <(echo "$LAUNCH_DIRS_BEFORE") <(launch_dirs))
[[ -z $left ]] || fail "launch left its directories: $left"
ok "launch exits with the launcher's status (3) and removes its session directories"

if [[ -x /usr/bin/mpirun.mpich && -x /usr/bin/mpicc.mpich ]]; then
  /usr/bin/mpicc.mpich -O2 -o "$TMP/mpi_hosts_mpich" "$MPI_HOSTS_C" >"$OUT" 2>"$ERR" || fail "mpicc.mpich mpi_hosts.c failed"
  before0=$(tx_bytes 0) before1=$(tx_bytes 1)
  CLUSTER_TEST_VAR=mpich-$$ timeout 30 "$CLUSTER" launch mpich --prefix "$P" --hosts 2 -- \
    -n 2 "$TMP/mpi_hosts_mpich" --env CLUSTER_TEST_VAR >"$OUT" 2>"$ERR"
  rc=$?
  note=
  if [[ $rc -eq 124 ]]; then
    # MPICH 4.0.2 (ch4:ucx) over UCX's tcp transport sometimes hangs in
    # MPI_Finalize after the job's work: a rank waits for its endpoints'
    # close while its peer sits in the PMI barrier. It happens without the
    # cluster too (docs/cluster.md). The job's checks below still apply.
    note=" (MPICH then hung in MPI_Finalize, a known MPICH/UCX issue; stopped after 30 s)"
  elif [[ $rc -ne 0 ]]; then
    fail "launch mpich: the 2-host job exited with $rc"
  fi
  check_mpi_job "launch mpich" "$OUT" "$rc" CLUSTER_TEST_VAR "mpich-$$" "$before0" "$before1"
  ok "MPICH job on 2 hosts (launch mpich: Hydra in $P-0, proxies through rsh): each rank in its host on its cores, the caller's environment reached both; $MPI_SENT$note"
else
  echo "skip: mpich not installed (mpirun.mpich, mpicc.mpich: Debian packages mpich libmpich-dev)"
fi
CLUSTER_MPIRUN_MPICH=/nonexistent/mpirun.mpich "$CLUSTER" launch mpich --prefix "$P" -- -n 2 true >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 127 ]] || fail "launch with a missing launcher exited with $rc, expected 127"
grep -q "CLUSTER_MPIRUN_MPICH='/nonexistent/mpirun.mpich' is not an executable file" "$ERR" || fail "launch with a missing launcher: unclear message"
ok "a missing launcher exits 127 with its name"

# Rondo's ranks started by Open MPI's mpirun across the hosts (PMIx from
# each host's orted): nmad_check's ordering sends 300 messages from rank 1
# to rank 0, 43 of them 40000 bytes.
before0=$(tx_bytes 0) before1=$(tx_bytes 1)
RONDO_PROGRESS=none UCX_MEM_MMAP_HOOK_MODE=none timeout 180 "$CLUSTER" launch openmpi --prefix "$P" --hosts 2 -- \
  -n 2 --timeout 150 "$CHECK" ordering >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 0 ]] || fail "nmad_check under launch openmpi exited with $rc"
grep -q "^case ordering ok" "$OUT" || fail "launch openmpi: case ordering did not pass"
for r in 0 1; do grep -q "^rank $r ok (pmix bootstrap" "$OUT" || fail "launch openmpi: rank $r did not finish through PMIx"; done
sent0=$(($(tx_bytes 0) - before0)) sent1=$(($(tx_bytes 1) - before1))
((sent1 >= 43 * 40000 && sent0 > 0)) ||
  fail "nmad_check's messages did not cross rc0: $P-0 sent $sent0, $P-1 sent $sent1 bytes (expected at least 1720000 from $P-1)"
ok "Rondo ranks (nmad_check ordering) under Open MPI's mpirun on 2 hosts, PMIx bootstrap; $P-0 sent $sent0, $P-1 sent $sent1 bytes on rc0"

# ---- down, twice ----
"$CLUSTER" down --prefix "$P" >"$OUT" 2>"$ERR" || fail "down failed"
[[ -z $(namespaces_of "$P") ]] || fail "down left $(namespaces_of "$P")"
[[ -z $(cgroups_of "$P") ]] || fail "down left the cgroups $(cgroups_of "$P")"
"$CLUSTER" down --prefix "$P" >"$OUT" 2>"$ERR" || fail "a second down failed"
ok "down removes everything, and may be repeated"

# ---- run: the job through the exported wrapper, then down ----
"$CLUSTER" run 3 --rate 1gbit --prefix "${P}r" -- \
  env RONDO_PROGRESS=none UCX_MEM_MMAP_HOOK_MODE=none timeout 120 "$RUN" -n 3 "$CHECK" ordering am \
  >"$OUT" 2>"$ERR" || fail "cluster.sh run with an nmad job failed"
for r in 0 1 2; do grep -q "^rank $r ok" "$OUT" || fail "run: rank $r did not finish"; done
[[ -z $(namespaces_of "${P}r") ]] || fail "run left $(namespaces_of "${P}r")"
"$CLUSTER" run 2 --prefix "${P}r" --cpus-per-host 1 -- sh -c \
  'echo "wrapper=$RONDO_RUN_RANK_WRAPPER tls=$UCX_TLS dev=$UCX_NET_DEVICES hosts=$CLUSTER_HOSTS cpus=$CLUSTER_HOST_CPUS sh=$CLUSTER_SH"
   RONDO_PROGRESS=none timeout 60 "$0" -n 2 sh -c "echo rank \$RONDO_RANK on \$(cat /proc/sys/kernel/hostname) cores \$(awk '"'"'/^Cpus_allowed_list/ {print \$2}'"'"' /proc/self/status)"
   exit 7' "$RUN" >"$OUT" 2>"$ERR"
rc=$?
[[ $rc -eq 7 ]] || fail "run exited with $rc, expected the command's 7"
cluster_abs=$(readlink -f "$CLUSTER")
grep -qF "wrapper=$cluster_abs exec {rank} --prefix ${P}r -- tls=tcp dev=rc0 hosts=2 cpus=$(host_cpus 1 0);$(host_cpus 1 1) sh=$cluster_abs" "$OUT" ||
  fail "run's environment: $(cat "$OUT")"
for r in 0 1; do
  grep -qx "rank $r on ${P}r-$r cores $(host_cpus 1 "$r")" "$OUT" || fail "run: rondo-run's rank $r is not on host ${P}r-$r's cores: $(cat "$OUT")"
done
[[ -z $(namespaces_of "${P}r") && -z $(cgroups_of "${P}r") ]] || fail "run left $(namespaces_of "${P}r") $(cgroups_of "${P}r") after a failing command"
ok "run exports the wrapper (cluster.sh exec), CLUSTER_HOST_CPUS, CLUSTER_SH and UCX settings; rondo-run's ranks land on their hosts' cores; exits with the command's status, and cleans up after a failure"

# ---- rails by locality: shm inside a host, UCX (TCP) across (issue 28) ----
# Two hosts with two ranks each, the defaults otherwise: a host's ranks
# share a segment (the node key holds the network namespace), the other
# host's are reached through UCX and never see it.
printf '%s\n' '#!/bin/sh' '# Ranks 2h and 2h+1 on host h.' 'r=$1' 'shift' \
  'exec "$CLUSTER_SH" exec $((r / 2)) --prefix "$CLUSTER_PREFIX" -- "$@"' >"$TMP/two_per_host.sh"
chmod +x "$TMP/two_per_host.sh"
"$CLUSTER" run 2 --prefix "${P}s" -- env RONDO_PROGRESS=none UCX_MEM_MMAP_HOOK_MODE=none \
  timeout 120 "$RUN" -n 4 --timeout 100 --rank-wrapper "$TMP/two_per_host.sh {rank}" "$INFO" \
  >"$OUT" 2>"$ERR" || fail "rondo-info on 2 hosts x 2 ranks failed: $(cat "$OUT" "$ERR")"
for want in "rank 0 rails: 0=loopback 1=shm 2=ucx 3=ucx" "rank 1 rails: 0=shm 1=loopback 2=ucx 3=ucx" \
  "rank 2 rails: 0=ucx 1=ucx 2=loopback 3=shm" "rank 3 rails: 0=ucx 1=ucx 2=shm 3=loopback"; do
  grep -qx "$want" "$OUT" || fail "rails by locality: no '$want' in: $(grep rails "$OUT")"
done
[[ -z $(namespaces_of "${P}s") ]] || fail "the rails job left $(namespaces_of "${P}s")"
ok "2 hosts x 2 ranks with the defaults: shm inside each host, ucx across (rondo-info)"
for want in "rank 0 eager limits: 0=16384 1=16384 2=65472 3=65472" \
  "rank 3 eager limits: 0=65472 1=65472 2=16384 3=16384"; do
  grep -qx "$want" "$OUT" || fail "eager limits by locality: no '$want' in: $(grep 'eager limits' "$OUT")"
done
ok "the same job: eager up to 16384 B inside each host, 65472 B across (rondo-info)"

# ---- no cpuset cgroup: CPU affinity only, with a warning ----
CLUSTER_NO_CGROUP=1 "$CLUSTER" run 2 --prefix "${P}n" --cpus-per-host 1 -- \
  sh -c '"$CLUSTER_SH" exec 1 --prefix "$CLUSTER_PREFIX" -- awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status' \
  >"$OUT" 2>"$ERR" || fail "run without cgroups failed: $(cat "$ERR")"
[[ $(cat "$OUT") == "$(host_cpus 1 1)" ]] || fail "without cgroups, host 1's process may run on '$(cat "$OUT")', expected '$(host_cpus 1 1)'"
[[ $(grep -c "warning: no cpuset cgroup (CLUSTER_NO_CGROUP=1); the hosts get CPU affinity only (taskset), so libraries (hwloc, MPI) will see the whole machine" "$ERR") -eq 1 ]] ||
  fail "without cgroups: no single warning line: $(cat "$ERR")"
[[ -z $(namespaces_of "${P}n") && -z $(cgroups_of "${P}n") ]] || fail "run without cgroups left something behind"
ok "without a cpuset cgroup the hosts get CPU affinity only, with one warning"

# ---- down removes the cgroups also when the namespaces are gone ----
if ((CGROUPS)); then
  "$CLUSTER" up 2 --prefix "${P}c" >"$OUT" 2>"$ERR" || fail "up 2 --prefix ${P}c failed"
  [[ $(cgroups_of "${P}c" | wc -l) -eq 2 ]] || fail "up 2 made $(cgroups_of "${P}c" | wc -l) cgroups"
  for ns in $(namespaces_of "${P}c"); do ip netns del "$ns"; done
  "$CLUSTER" up 2 --prefix "${P}c" >"$OUT" 2>"$ERR" && fail "up over left-over cgroups succeeded"
  grep -q "cgroups of prefix '${P}c' exist already" "$ERR" || fail "up over left-over cgroups: unclear message"
  "$CLUSTER" down --prefix "${P}c" >"$OUT" 2>"$ERR" || fail "down without namespaces failed: $(cat "$ERR")"
  [[ -z $(cgroups_of "${P}c") ]] || fail "down left $(cgroups_of "${P}c")"
  ok "down removes the cgroups when the namespaces are gone already; up refuses left-over cgroups"
fi

# ---- a failure inside up removes what was created ----
CLUSTER_FAULT_AFTER_HOSTS=2 "$CLUSTER" up 3 --prefix "${P}f" >"$OUT" 2>"$ERR" && fail "up with an injected failure succeeded"
grep -q "up failed; removing what was created" "$ERR" || fail "up's failure was not reported"
[[ -z $(namespaces_of "${P}f") ]] || fail "a failed up left $(namespaces_of "${P}f")"
CLUSTER_FAULT_AFTER_HOSTS=1 "$CLUSTER" run 3 --prefix "${P}f" -- true >"$OUT" 2>"$ERR" &&
  fail "run with an injected failure succeeded"
[[ -z $(namespaces_of "${P}f") ]] || fail "a failed run left $(namespaces_of "${P}f")"
ok "a failure in the middle of up (or run) removes everything"

# ---- SIGTERM during run: the command is stopped, the cluster removed ----
rm -f "$TMP/started"; mkfifo "$TMP/started"
"$CLUSTER" run 2 --prefix "${P}t" -- sh -c "echo started > '$TMP/started'; exec tail -f /dev/null" \
  >"$OUT" 2>"$ERR" &
runpid=$!
read -r -t 30 line <"$TMP/started"
[[ $line == started ]] || { kill -KILL $runpid; fail "run's command never started"; }
[[ -n $(namespaces_of "${P}t") ]] || fail "no cluster while run's command runs"
kill -TERM $runpid
timeout 30 tail --pid=$runpid -f /dev/null || fail "run did not exit within 30 s of SIGTERM"
wait $runpid
rc=$?
[[ $rc -eq 143 ]] || fail "run exited with $rc after SIGTERM, expected 143"
[[ -z $(namespaces_of "${P}t") ]] || fail "SIGTERM left $(namespaces_of "${P}t")"
grep -q "got SIGTERM; forwarding it to the command" "$ERR" || fail "run did not forward SIGTERM"
ok "SIGTERM during run stops the command and removes the cluster"

# ---- nothing left ----
for p in "${PREFIXES[@]}"; do
  [[ -z $(namespaces_of "$p") && -z $(cgroups_of "$p") ]] || fail "left behind: $(namespaces_of "$p") $(cgroups_of "$p")"
done
[[ $(ip -o link show | awk -F': ' '{print $2}' | sort) == "$ROOT_LINKS_BEFORE" ]] ||
  fail "the root namespace's interfaces changed"
echo "PASS"
