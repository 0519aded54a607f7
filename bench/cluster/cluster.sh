#!/usr/bin/env bash
# cluster.sh: an emulated cluster on one Linux machine (docs/cluster.md).
#
# K "hosts" are network namespaces PREFIX-0..PREFIX-(K-1), each with one
# interface rc0 (10.77.0.(i+1)/24). A "switch" namespace PREFIX-sw holds a
# bridge br0 and the other end of every host's veth pair (port p<i>). Each
# link is rate-limited in both directions with tbf (the host's egress on
# rc0, the switch port's egress on p<i>), and optionally delayed with netem
# on the host side. Nothing is created in the root namespace except the
# namespace names under /run/netns, so no traffic can leak to the host's
# network: the namespaces have no route out.
#
# Each host also has its own cores: a cpuset cgroup rondo-cluster-PREFIX-i
# (as Slurm's task/cgroup gives a job), so that hwloc and every library
# inside the host see only those cores. Where no cpuset cgroup can be made,
# a host's processes get CPU affinity only (taskset).
#
# Ranks are placed with rondo-run's --rank-wrapper "cluster.sh exec {rank}
# --prefix PREFIX --" (`run` exports it as RONDO_RUN_RANK_WRAPPER) and use
# UCX over TCP on rc0 (UCX_TLS=tcp UCX_NET_DEVICES=rc0). Open MPI's and
# MPICH's own launchers run inside host 0 (`launch`) and reach the other
# hosts through `rsh`, a remote-shell agent in place of ssh. `slurm up`
# adds a Slurm cluster: munged and slurmctld in host 0, one slurmd in each
# other host, all configured in $STATE_DIR/slurm-PREFIX; `slurm run` runs
# srun (or any Slurm client) in host 0, e.g. `srun --mpi=pmix -N 2 -n 4`.
#
#   cluster.sh check
#   cluster.sh up K [--rate 1gbit] [--delay 0ms] [--prefix rondo] [--cpus-per-host N]
#   cluster.sh down [--prefix rondo]
#   cluster.sh run K [--rate R] [--delay D] [--prefix P] [--cpus-per-host N] -- COMMAND...
#   cluster.sh exec I [--prefix P] -- COMMAND...
#   cluster.sh rsh [OPTIONS...] HOST COMMAND...
#   cluster.sh launch openmpi|mpich [--prefix P] [--hosts N] [--slots S] -- LAUNCHER_ARGS...
#   cluster.sh slurm up K [--slots S] [--rate R] [--prefix P] [--cpus-per-host N]
#   cluster.sh slurm run [--prefix P] -- COMMAND...
#   cluster.sh slurm down [--prefix P]
#   cluster.sh show [--prefix P]
#   cluster.sh measure [--pairs N] [--bytes B] [--prefix P]
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

readonly PROG=cluster.sh
SELF=$(readlink -f "${BASH_SOURCE[0]}")
readonly SELF              # this script's absolute path (CLUSTER_SH, agents)
readonly IFACE=rc0         # every host's interface (same name in every host)
readonly SUBNET=10.77.0    # host i is $SUBNET.(i+1)/24
readonly MAX_HOSTS=250
readonly DEFAULT_PREFIX=rondo
# The default link rate: see docs/cluster.md ("Choosing the rate") for why
# the network, not this 2-core machine's CPU, is the bottleneck at this rate.
readonly DEFAULT_RATE=${CLUSTER_DEFAULT_RATE:-250mbit}
# tbf's queue bound: a packet that would wait longer than this in a link's
# queue is dropped (a switch port's buffer). Also bounds the added latency
# under load. See docs/cluster.md ("Shaping").
readonly TBF_LATENCY=${CLUSTER_TBF_LATENCY:-10ms}
# The bucket: at least one TSO/GSO super-packet (64 KiB + headers) so that
# tbf never has to segment, and at least 1 ms of traffic at the rate.
readonly TBF_MIN_BURST=$((96 * 1024))
# Host i's cpuset cgroup is $CGROUP_PREFIX-PREFIX-i, directly under the
# cpuset hierarchy's root.
readonly CGROUP_PREFIX=rondo-cluster
# $STATE_DIR/PREFIX.cpus: line i+1 holds host i's cores (a cpu list as
# taskset -c takes it). exec and rsh pin with it when the cluster has no
# cgroups; down removes it.
readonly STATE_DIR=/run/rondo-cluster

die() {
  echo "$PROG: $*" >&2
  exit 1
}

usage() {
  cat >&2 <<EOF
Usage:
  $PROG check                      can this machine emulate a cluster?
  $PROG up K [--rate R] [--delay D] [--prefix P] [--cpus-per-host N]
                                   create K hosts P-0..P-(K-1) and switch P-sw
  $PROG down [--prefix P]          remove them (safe to repeat)
  $PROG run K [--rate R] [--delay D] [--prefix P] [--cpus-per-host N] -- COMMAND...
                                   up, run COMMAND (ranks placed by rondo-run
                                   through RONDO_RUN_RANK_WRAPPER), down;
                                   exits with COMMAND's status
  $PROG exec I [--prefix P] -- COMMAND...
                                   run COMMAND inside host I (its namespace
                                   and its cores), keeping the pid
  $PROG rsh [OPTIONS...] HOST COMMAND...
                                   remote-shell agent (for Open MPI's
                                   plm_rsh_agent, MPICH's -launcher-exec):
                                   runs 'sh -c COMMAND' inside HOST (an address
                                   10.77.0.(i+1), a name P-i or an index i) of
                                   the cluster \$CLUSTER_PREFIX (default
                                   $DEFAULT_PREFIX); leading options are ignored
  $PROG launch openmpi|mpich [--prefix P] [--hosts N] [--slots S] -- LAUNCHER_ARGS...
                                   the MPI's own launcher inside host 0, over
                                   the first N hosts (default all) with S slots
                                   each (default 1); exits with its status
  $PROG slurm up K [--slots S] [--rate R] [--delay D] [--prefix P] [--cpus-per-host N]
                                   up, then Slurm: munged and slurmctld in
                                   host 0, slurmd in hosts 1..K-1 (S CPUs
                                   each, default max(2, cores per host));
                                   returns when every node is idle
  $PROG slurm run [--prefix P] -- COMMAND...
                                   COMMAND in host 0 with SLURM_CONF, UCX_TLS,
                                   UCX_NET_DEVICES and OMPI_MCA_* set, e.g.
                                   srun --mpi=pmix -N 2 -n 4 PROGRAM
  $PROG slurm down [--prefix P]    stop the daemons, then down (safe to repeat)
  $PROG show [--prefix P]          addresses, cores, qdiscs and counters
  $PROG measure [--pairs N] [--bytes B] [--prefix P]
                                   N concurrent TCP flows host 2p -> 2p+1
Defaults: --rate $DEFAULT_RATE (tc units: kbit, mbit, gbit, ...; 'off' = no
limit), --delay 0ms (one-way, us/ms/s; needs sch_netem), --prefix
$DEFAULT_PREFIX (a lowercase letter, then up to 11 lowercase letters or digits),
--cpus-per-host max(1, online CPUs / K) (host i gets cores i*N..i*N+N-1,
modulo the online CPUs).
EOF
  exit 2
}

# ---- argument checks ----

check_prefix() {
  [[ $1 =~ ^[a-z][a-z0-9]{0,11}$ ]] ||
    die "invalid --prefix '$1'; allowed: a lowercase letter, then up to 11 lowercase letters or digits (no '-')"
}

check_hosts() {
  [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= MAX_HOSTS)) ||
    die "invalid host count '$1'; allowed: 1..$MAX_HOSTS"
}

# Prints the rate in bits/s, or dies. tc's units: bit kbit mbit gbit tbit
# (powers of 1000) and bps kbps mbps gbps tbps (bytes per second).
rate_bits() {
  local r=${1,,}
  [[ $r =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$ ]] ||
    die "invalid --rate '$1'; allowed: a number with a tc unit (e.g. 100mbit, 1gbit, 2.5gbit, 50mbps) or 'off'"
  awk -v n="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" 'BEGIN {
    m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9; m["tbit"] = 1e12
    m["bps"] = 8; m["kbps"] = 8e3; m["mbps"] = 8e6; m["gbps"] = 8e9; m["tbps"] = 8e12
    v = n * m[u]; if (v < 8000) exit 1; printf "%.0f\n", v }' ||
    die "invalid --rate '$1'; allowed: at least 8kbit"
}

# Prints the delay in microseconds, or dies.
delay_us() {
  [[ $1 =~ ^([0-9]+(\.[0-9]+)?)(us|ms|s)$ ]] ||
    die "invalid --delay '$1'; allowed: a number with us, ms or s (e.g. 0ms, 50us, 2ms)"
  awk -v n="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" 'BEGIN {
    m["us"] = 1; m["ms"] = 1e3; m["s"] = 1e6; printf "%.0f\n", n * m[u] }'
}

# ---- cores: a cpuset cgroup per host ----

# The online CPUs, one number per line (/sys/devices/system/cpu/online,
# e.g. "0-3,6").
online_cpus() {
  local list r
  list=$(cat /sys/devices/system/cpu/online 2>/dev/null) ||
    list="0-$(($(getconf _NPROCESSORS_ONLN) - 1))"
  local -a parts
  IFS=, read -ra parts <<<"$list"
  for r in "${parts[@]}"; do
    if [[ $r == *-* ]]; then seq "${r%-*}" "${r#*-}"; else echo "$r"; fi
  done
}

# CPU numbers on stdin -> a cpu list as the kernel prints it ("0-2,5").
compress_cpus() {
  sort -n -u | awk '
    NR == 1 { s = p = $1; next }
    $1 == p + 1 { p = $1; next }
    { out = out sep (s == p ? s : s "-" p); sep = ","; s = p = $1 }
    END { if (NR) out = out sep (s == p ? s : s "-" p); print out }'
}

# Checks --cpus-per-host (CPUS_PER_HOST, empty = the default) against the
# online CPUs and the host count K; sets CPUS_PER_HOST and HOST_CPUS[i],
# host i's cores: online[(i*N + j) mod ncpus] for j < N.
plan_cpus() {
  local k=$1 i j
  local -a online
  mapfile -t online < <(online_cpus)
  local ncpus=${#online[@]}
  if [[ -z $CPUS_PER_HOST ]]; then
    CPUS_PER_HOST=$((ncpus / k))
    ((CPUS_PER_HOST >= 1)) || CPUS_PER_HOST=1
  fi
  HOST_CPUS=()
  for ((i = 0; i < k; ++i)); do
    HOST_CPUS+=("$(for ((j = 0; j < CPUS_PER_HOST; ++j)); do
      echo "${online[(i * CPUS_PER_HOST + j) % ncpus]}"
    done | compress_cpus)")
  done
  NCPUS=$ncpus
}

check_cpus_per_host() {
  local ncpus
  ncpus=$(online_cpus | wc -l)
  [[ $1 =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= ncpus)) ||
    die "invalid --cpus-per-host '$1'; allowed: 1..$ncpus (the online CPUs)"
}

# Prints "v1 DIR" (cgroup v1, the hierarchy with the cpuset controller) or
# "v2 DIR" (the cgroup2 root, when its controllers include cpuset), or
# nothing.
cpuset_hierarchy() {
  local dev dir type opts rest
  # Our own mount under /run first: `ip netns exec` mounts a fresh /sys for
  # the namespace, which hides /sys/fs/cgroup inside a host (the rsh agent
  # runs there, as a child of the launcher in host 0), while /run stays.
  while read -r dev dir type opts rest; do
    if [[ $dir == "$STATE_DIR/cpuset" && -d $dir ]]; then
      if [[ $type == cgroup ]]; then echo "v1 $dir"; return; fi
      if [[ $type == cgroup2 ]]; then echo "v2 $dir"; return; fi
    fi
  done </proc/mounts
  while read -r dev dir type opts rest; do
    if [[ $type == cgroup && ,$opts, == *,cpuset,* ]]; then
      echo "v1 $dir"
      return
    fi
  done </proc/mounts
  while read -r dev dir type opts rest; do
    if [[ $type == cgroup2 ]] && grep -qw cpuset "$dir/cgroup.controllers" 2>/dev/null; then
      echo "v2 $dir"
      return
    fi
  done </proc/mounts
}

# put FILE VALUE: writes VALUE to a cgroup file; fails with the kernel's
# reason on stderr.
put() {
  printf '%s\n' "$2" >"$1"
}

# make_cgroup VERSION HIERARCHY NAME CPUS: creates a cpuset cgroup; on
# failure removes it, prints why and fails. Needs no process inside.
make_cgroup() {
  local v=$1 dir=$2 name=$3 cpus=$4 cg="$2/$3" mems out
  if [[ $v == v2 ]] && ! grep -qw cpuset "$dir/cgroup.subtree_control" 2>/dev/null; then
    out=$(put "$dir/cgroup.subtree_control" +cpuset 2>&1) ||
      { echo "cannot enable the cpuset controller in $dir: ${out:-no reason}"; return 1; }
  fi
  if [[ $v == v1 ]]; then
    mems=$(cat "$dir/cpuset.mems" 2>/dev/null)
  else
    mems=$(cat "$dir/cpuset.mems.effective" 2>/dev/null)
  fi
  [[ -n $mems ]] || { echo "cannot read the memory nodes of $dir"; return 1; }
  out=$(mkdir "$cg" 2>&1) || { echo "cannot create $cg: $out"; return 1; }
  if ! out=$(put "$cg/cpuset.cpus" "$cpus" 2>&1) ||
    ! out=$(put "$cg/cpuset.mems" "$mems" 2>&1); then
    rmdir "$cg" 2>/dev/null || true
    echo "cannot set $cg's cores to $cpus (memory nodes $mems): ${out:-no reason}"
    return 1
  fi
}

# The cgroup directory of host I of PREFIX, if it exists.
host_cgroup() {
  local v dir
  read -r v dir <<<"$(cpuset_hierarchy)"
  [[ -n $dir && -d $dir/$CGROUP_PREFIX-$1-$2 ]] && echo "$dir/$CGROUP_PREFIX-$1-$2"
  return 0
}

# Gives each host of the cluster its cores (HOST_CPUS): a cpuset cgroup
# per host, or, when none can be made (or CLUSTER_NO_CGROUP=1, for the
# test), CPU affinity only. Writes the state file. Sets CPU_MODE.
setup_cpus() {
  local prefix=$1 k=$2 v dir i why=
  read -r v dir <<<"$(cpuset_hierarchy)"
  # A second mount of the same hierarchy where a host can see it (see
  # cpuset_hierarchy); the cgroups are the same ones.
  if [[ ${CLUSTER_NO_CGROUP:-} != 1 && -n $dir && $dir != "$STATE_DIR/cpuset" ]]; then
    mkdir -p "$STATE_DIR/cpuset"
    if [[ $v == v1 ]]; then
      mount -t cgroup -o cpuset none "$STATE_DIR/cpuset" 2>/dev/null &&
        dir=$STATE_DIR/cpuset
    else
      mount -t cgroup2 none "$STATE_DIR/cpuset" 2>/dev/null &&
        dir=$STATE_DIR/cpuset
    fi
  fi
  if [[ ${CLUSTER_NO_CGROUP:-} == 1 ]]; then
    why="CLUSTER_NO_CGROUP=1"
  elif [[ -z $dir ]]; then
    why="no cgroup hierarchy with the cpuset controller is mounted"
  else
    for ((i = 0; i < k; ++i)); do
      why=$(make_cgroup "$v" "$dir" "$CGROUP_PREFIX-$prefix-$i" "${HOST_CPUS[i]}") || break
      why=
    done
    if [[ -n $why ]]; then
      remove_cgroups "$prefix" >/dev/null 2>&1 || true
    fi
  fi
  mkdir -p "$STATE_DIR"
  printf '%s\n' "${HOST_CPUS[@]}" >"$STATE_DIR/$prefix.cpus"
  if [[ -n $why ]]; then
    CPU_MODE="CPU affinity only"
    echo "$PROG: warning: no cpuset cgroup ($why); the hosts get CPU affinity only (taskset), so libraries (hwloc, MPI) will see the whole machine" >&2
  else
    CPU_MODE="cpuset cgroups $CGROUP_PREFIX-$prefix-* ($v)"
  fi
  if ((k * CPUS_PER_HOST > NCPUS)); then
    echo "$PROG: note: $k hosts x $CPUS_PER_HOST cores > $NCPUS online CPUs: hosts share cores (host by host: $(IFS=';'; echo "${HOST_CPUS[*]}"))" >&2
  fi
}

# enter_host PREFIX I PID: puts process PID into host I's cgroup, and sets
# INTO=(the command words that run a command inside host I). When the
# cluster has no cgroups, also sets PIN=(taskset -c CPUS). The caller runs
# "${PIN[@]}" "${INTO[@]}" COMMAND...; every word execs the next, so the
# command keeps the caller's pid.
#
# Inside host I: its network namespace, and a UTS namespace of its own
# whose hostname is PREFIX-I. The hosts must not share a name: Open MPI
# names its session directory after the host (its daemons on two hosts
# would share files, and one crashed on another's topology file), and MPI
# libraries, Rondo's included, take ranks with the same host name for
# ranks of one node (MPI_COMM_TYPE_SHARED, local ranks).
enter_host() {
  local prefix=$1 i=$2 pid=$3 cg out cpus
  PIN=()
  # shellcheck disable=SC2016
  INTO=(ip netns exec "$prefix-$i" unshare --uts --
    sh -c 'echo "$0" >/proc/sys/kernel/hostname && exec "$@"' "$prefix-$i")
  cg=$(host_cgroup "$prefix" "$i")
  if [[ -n $cg ]]; then
    out=$(put "$cg/cgroup.procs" "$pid" 2>&1) ||
      die "cannot move pid $pid into host $prefix-$i's cgroup $cg: ${out:-no reason}"
    return 0
  fi
  cpus=$(sed -n "$((i + 1))p" "$STATE_DIR/$prefix.cpus" 2>/dev/null || true)
  [[ -z $cpus ]] || PIN=(taskset -c "$cpus")
}

# Removes the cgroups of a prefix (after killing what is still inside,
# bounded) and its state file; fails if a cgroup stays.
remove_cgroups() {
  local prefix=$1 v dir cg pids deadline rc=0
  read -r v dir <<<"$(cpuset_hierarchy)"
  if [[ -n $dir ]]; then
    for cg in "$dir/$CGROUP_PREFIX-$prefix-"*; do
      [[ -d $cg && ${cg##*/} =~ ^$CGROUP_PREFIX-$prefix-[0-9]+$ ]] || continue
      deadline=$((SECONDS + 10))
      while pids=$(grep -vx -e "$$" -e "$BASHPID" "$cg/cgroup.procs" 2>/dev/null) && [[ -n $pids ]]; do
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
        ((SECONDS < deadline)) || break
        sleep 0.05  # a bounded poll until the killed processes have exited
      done
      if ! rmdir "$cg" 2>/dev/null; then
        echo "$PROG: error: cannot remove cgroup $cg (processes: $(tr '\n' ' ' <"$cg/cgroup.procs" 2>/dev/null))" >&2
        rc=1
      fi
    done
  fi
  rm -f "$STATE_DIR/$prefix.cpus"
  return $rc
}

# ---- namespaces ----

# The namespaces of a prefix, one per line (switch last).
cluster_namespaces() {
  local prefix=$1
  ip netns list 2>/dev/null | awk '{print $1}' |
    grep -E "^${prefix}-[0-9]+\$" | sort -t- -k2 -n || true
  ip netns list 2>/dev/null | awk '{print $1}' | grep -Fx "${prefix}-sw" || true
}

# Removes every namespace of the prefix, after killing the processes still
# inside (they would keep the namespace, and its links, alive unnamed), then
# the hosts' cgroups (also when the namespaces are gone already).
teardown() {
  local prefix=$1 ns pids rc=0
  # Slurm's daemons first, gently (their job steps go with the namespaces).
  slurm_stop "$prefix" || rc=1
  for ns in $(cluster_namespaces "$prefix"); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null ||
      echo "$PROG: warning: cannot remove namespace $ns" >&2
  done
  if [[ -n $(cluster_namespaces "$prefix") ]]; then
    echo "$PROG: error: namespaces left behind: $(cluster_namespaces "$prefix" | tr '\n' ' ')" >&2
    rc=1
  fi
  remove_cgroups "$prefix" || rc=1
  slurm_remove_dir "$prefix" || rc=1
  return $rc
}

# step "what" command...: runs the command; on failure names the step and
# the command's own message, and fails.
step() {
  local what=$1 out
  shift
  if ! out=$("$@" 2>&1); then
    echo "$PROG: cannot $what: '$*' said: ${out:-nothing}" >&2
    return 1
  fi
}

# Adds the shaping qdiscs to one end of a link.
#   shape NS DEV DELAY_US
# Without a delay: root tbf. With one: root netem (the delay) whose child is
# the tbf, so a packet is first held for the delay, then paced at the rate.
shape() {
  local ns=$1 dev=$2 delay=$3 tbf=()
  if [[ $RATE != off ]]; then
    tbf=(tbf rate "$RATE" burst "${BURST}b" latency "$TBF_LATENCY")
  fi
  if ((delay > 0)); then
    step "add a ${delay}us delay on $dev in $ns" \
      tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "${delay}us" limit 100000
    if ((${#tbf[@]})); then
      step "limit $dev in $ns to $RATE" \
        tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: "${tbf[@]}"
    fi
  elif ((${#tbf[@]})); then
    step "limit $dev in $ns to $RATE" \
      tc -n "$ns" qdisc add dev "$dev" root handle 1: "${tbf[@]}"
  fi
}

# Waits (bounded) until every host's interface is up with its carrier.
wait_links_up() {
  local prefix=$1 k=$2 i state deadline=$((SECONDS + 10))
  for ((i = 0; i < k; ++i)); do
    while :; do
      state=$(ip -n "$prefix-$i" -br link show dev "$IFACE" 2>/dev/null | awk '{print $2}')
      [[ $state == UP ]] && break
      ((SECONDS < deadline)) ||
        die "host $prefix-$i: $IFACE is '$state', not UP, after 10 s"
      sleep 0.02  # a bounded poll of the link state, not a synchronisation guess
    done
  done
}

# Creates the cluster; on any failure the caller's EXIT trap removes it.
build_cluster() {
  local prefix=$1 k=$2 delay=$3 sw="$1-sw" i ns
  step "create the switch namespace $sw" ip netns add "$sw"
  step "bring up lo in $sw" ip -n "$sw" link set lo up
  step "create the bridge br0 in $sw" ip -n "$sw" link add br0 type bridge
  step "bring up br0 in $sw" ip -n "$sw" link set br0 up
  for ((i = 0; i < k; ++i)); do
    ns="$prefix-$i"
    step "create the host namespace $ns" ip netns add "$ns"
    step "bring up lo in $ns" ip -n "$ns" link set lo up
    step "create the veth pair p$i ($sw) <-> $IFACE ($ns)" \
      ip -n "$sw" link add "p$i" type veth peer name "$IFACE" netns "$ns"
    step "attach p$i to br0" ip -n "$sw" link set "p$i" master br0
    step "bring up p$i" ip -n "$sw" link set "p$i" up
    step "address $IFACE in $ns" ip -n "$ns" addr add "$SUBNET.$((i + 1))/24" dev "$IFACE"
    step "bring up $IFACE in $ns" ip -n "$ns" link set "$IFACE" up
    shape "$ns" "$IFACE" "$delay"   # host -> switch (the host's egress)
    shape "$sw" "p$i" 0             # switch -> host (the host's ingress)
    # For cluster_test.sh: a failure in the middle of `up` must remove
    # everything created so far.
    if [[ ${CLUSTER_FAULT_AFTER_HOSTS:-} == "$((i + 1))" ]]; then
      step "continue after host $i (CLUSTER_FAULT_AFTER_HOSTS=$((i + 1)) injects a failure)" false
    fi
  done
  wait_links_up "$prefix" "$k"
}

# Parses [--rate R] [--delay D] [--prefix P] into RATE, BURST, DELAY_US,
# PREFIX; leaves the remaining arguments in REST.
parse_options() {
  RATE=$DEFAULT_RATE DELAY=0ms PREFIX=$DEFAULT_PREFIX REST=() CPUS_PER_HOST=
  local cpus_given=0
  while (($#)); do
    case $1 in
      --rate) (($# >= 2)) || die "--rate needs a value"; RATE=$2; shift 2 ;;
      --delay) (($# >= 2)) || die "--delay needs a value"; DELAY=$2; shift 2 ;;
      --prefix) (($# >= 2)) || die "--prefix needs a value"; PREFIX=$2; shift 2 ;;
      --cpus-per-host)
        (($# >= 2)) || die "--cpus-per-host needs a value"
        CPUS_PER_HOST=$2 cpus_given=1
        shift 2
        ;;
      --rate=*) RATE=${1#*=}; shift ;;
      --delay=*) DELAY=${1#*=}; shift ;;
      --prefix=*) PREFIX=${1#*=}; shift ;;
      --cpus-per-host=*) CPUS_PER_HOST=${1#*=} cpus_given=1; shift ;;
      --) REST=("$@"); break ;;
      -*) die "unknown option '$1'; allowed: --rate, --delay, --prefix, --cpus-per-host" ;;
      *) REST=("$@"); break ;;
    esac
  done
  check_prefix "$PREFIX"
  if ((cpus_given)); then
    [[ $CMD == up || $CMD == run || $CMD == slurm ]] || die "$CMD: --cpus-per-host is an option of up, run and slurm up only"
    check_cpus_per_host "$CPUS_PER_HOST"
  fi
  RATE=${RATE,,}
  if [[ $RATE != off ]]; then
    local bits
    bits=$(rate_bits "$RATE")
    BURST=$((bits / 8 / 1000))
    ((BURST >= TBF_MIN_BURST)) || BURST=$TBF_MIN_BURST
  fi
  DELAY_US=$(delay_us "$DELAY")
}

need_root() {
  (($(id -u) == 0)) ||
    die "$1 needs root (network namespaces, veth and tc need CAP_SYS_ADMIN and CAP_NET_ADMIN); run '$PROG check'"
}

netem_available() {
  # The probe namespace of `check`, or a throw-away one.
  local ns="$PREFIX-netem-probe" ok=1
  ip netns add "$ns" 2>/dev/null || return 1
  if ip -n "$ns" link add v0 type veth peer name v1 2>/dev/null &&
    tc -n "$ns" qdisc add dev v0 root netem delay 1ms 2>/dev/null; then
    ok=0
  fi
  ip netns del "$ns" 2>/dev/null || true
  return $ok
}

cmd_up() {
  (($#)) || usage
  local k=$1
  shift
  check_hosts "$k"
  parse_options "$@"
  ((${#REST[@]} == 0)) || die "up: unexpected argument '${REST[0]}'"
  need_root up
  if ((DELAY_US > 0)) && ! netem_available; then
    die "--delay $DELAY needs the netem qdisc (sch_netem), which this kernel does not have; use --delay 0ms"
  fi
  [[ -z $(cluster_namespaces "$PREFIX") ]] ||
    die "a cluster with prefix '$PREFIX' exists already ($(cluster_namespaces "$PREFIX" | tr '\n' ' ')); remove it with '$PROG down --prefix $PREFIX'"
  check_no_cgroups "$PREFIX"
  plan_cpus "$k"
  UP_PREFIX=$PREFIX
  trap 'on_up_exit' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  build_cluster "$PREFIX" "$k" "$DELAY_US"
  setup_cpus "$PREFIX" "$k"
  if ((${UP_SLURM:-0})); then
    SLURM_PREFIX=$PREFIX SLURM_D=$(slurm_dir "$PREFIX")
    SLURM_TASK_PLUGIN=$(slurm_task_plugin "$k")
    # Each node's CPUs for Slurm: --slots, else its cores but at least 2.
    [[ -n $UP_SLURM_SLOTS ]] || UP_SLURM_SLOTS=$((CPUS_PER_HOST > SLURM_DEFAULT_SLOTS ? CPUS_PER_HOST : SLURM_DEFAULT_SLOTS))
    slurm_configure "$k" "$UP_SLURM_SLOTS"
    slurm_bring_up "$k"
  fi
  UP_PREFIX=
  trap - EXIT INT TERM
  echo "$PROG: up: $k hosts $PREFIX-0..$PREFIX-$((k - 1)) ($SUBNET.1..$SUBNET.$k on $IFACE), switch $PREFIX-sw, rate $RATE, delay $DELAY, cores per host: $CPUS_PER_HOST ($(IFS=';'; echo "${HOST_CPUS[*]}"); $CPU_MODE)"
}

on_up_exit() {
  local rc=$?
  if [[ -n ${UP_PREFIX:-} ]]; then
    echo "$PROG: up failed; removing what was created for prefix '$UP_PREFIX'" >&2
    teardown "$UP_PREFIX" || true
    ((rc != 0)) || rc=1
  fi
  exit $rc
}

cmd_down() {
  parse_options "$@"
  ((${#REST[@]} == 0)) || die "down: unexpected argument '${REST[0]}'"
  need_root down
  teardown "$PREFIX"
}

cmd_exec() {
  (($#)) || usage
  local i=$1
  shift
  [[ $i =~ ^[0-9]+$ ]] || die "exec: invalid host '$i'; allowed: a host number 0..K-1"
  parse_options "$@"
  ((${#REST[@]})) || die "exec: no command given"
  [[ ${REST[0]} != -- ]] || REST=("${REST[@]:1}")
  ((${#REST[@]})) || die "exec: no command given"
  need_root exec
  ip netns list | awk '{print $1}' | grep -qFx "$PREFIX-$i" ||
    die "exec: host $PREFIX-$i does not exist (hosts: $(cluster_namespaces "$PREFIX" | grep -v -- -sw | tr '\n' ' '))"
  enter_host "$PREFIX" "$i" $$
  exec "${PIN[@]}" "${INTO[@]}" "${REST[@]}"
}

# Dies if cgroups of the prefix are left (by a cluster that was not taken
# down); `down` removes them.
check_no_cgroups() {
  local v dir left
  read -r v dir <<<"$(cpuset_hierarchy)"
  [[ -n $dir ]] || return 0
  left=$(find "$dir" -maxdepth 1 -type d -regex ".*/$CGROUP_PREFIX-$1-[0-9]+" -printf '%f ' 2>/dev/null || true)
  [[ -z $left ]] ||
    die "cgroups of prefix '$1' exist already ($left); remove them with '$PROG down --prefix $1'"
}

# A word for rondo-run's --rank-wrapper: as is when it has no character
# that the splitter treats specially, else single-quoted.
wrapper_word() {
  if [[ $1 =~ ^[A-Za-z0-9_./+=:@%,-]+$ ]]; then
    printf '%s' "$1"
  else
    printf "'%s'" "${1//\'/\'\\\'\'}"
  fi
}

# The number of hosts of a running cluster (0: none).
host_count() {
  cluster_namespaces "$1" | grep -c -E -- "-[0-9]+\$" || true
}

# rsh [OPTIONS...] HOST COMMAND...: the remote-shell agent. Like ssh, it
# joins the command's words with spaces and runs them with `sh -c` on the
# host (its namespace and cores), and fails with 255 when the host cannot
# be reached. Unlike ssh, the command inherits this process's environment
# and working directory (one machine), which is how the caller's variables
# reach Open MPI's daemons and so the ranks.
rsh_die() {
  echo "$PROG rsh: $*" >&2
  exit 255
}

cmd_rsh() {
  local prefix=${CLUSTER_PREFIX:-$DEFAULT_PREFIX}
  while (($#)) && [[ $1 == -* ]]; do
    case $1 in
      --prefix) (($# >= 2)) || rsh_die "--prefix needs a value"; prefix=$2; shift 2 ;;
      --prefix=*) prefix=${1#*=}; shift ;;
      *) shift ;;  # an ssh option (Hydra passes -x): ignored
    esac
  done
  [[ $prefix =~ ^[a-z][a-z0-9]{0,11}$ ]] ||
    rsh_die "invalid prefix '$prefix' (from --prefix or CLUSTER_PREFIX); allowed: a lowercase letter, then up to 11 lowercase letters or digits"
  (($#)) || rsh_die "no host given; usage: $PROG rsh [OPTIONS...] HOST COMMAND..."
  local host=$1
  shift
  (($#)) || rsh_die "no command given for host '$host' (an interactive login is not supported)"
  (($(id -u) == 0)) || rsh_die "needs root (to enter the hosts' namespaces)"
  local i='' addr_re="^${SUBNET//./\\.}\\.([0-9]{1,3})\$"
  if [[ $host =~ $addr_re ]] && ((10#${BASH_REMATCH[1]} >= 1)); then
    i=$((10#${BASH_REMATCH[1]} - 1))
  elif [[ $host =~ ^$prefix-([0-9]{1,3})$ || $host =~ ^([0-9]{1,3})$ ]]; then
    i=$((10#${BASH_REMATCH[1]}))
  fi
  local k
  k=$(host_count "$prefix")
  ((k > 0)) || rsh_die "unknown host '$host': no cluster with prefix '$prefix' is up (CLUSTER_PREFIX or --prefix names it)"
  if [[ -z $i ]] || ((i >= k)); then
    local known=() j
    for ((j = 0; j < k; ++j)); do known+=("$SUBNET.$((j + 1)) ($prefix-$j)"); done
    rsh_die "unknown host '$host'; the hosts of cluster '$prefix' are: $(IFS=,; k2="${known[*]}"; echo "${k2//,/, }") (or their index 0..$((k - 1)))"
  fi
  ip netns list | awk '{print $1}' | grep -qFx "$prefix-$i" ||
    rsh_die "host $prefix-$i is missing from cluster '$prefix'"
  enter_host "$prefix" "$i" $$
  exec "${PIN[@]}" "${INTO[@]}" sh -c "$*"
}

# launch openmpi|mpich [--prefix P] [--hosts N] [--slots S] -- ARGS...:
# the MPI's own launcher, run inside host 0 (namespace and cores), with the
# options that make it start its daemons (Open MPI's orted, MPICH's
# hydra_pmi_proxy) through `rsh` on the first N hosts and use rc0.
cmd_launch() {
  (($#)) || usage
  local mpi=$1
  shift
  [[ $mpi == openmpi || $mpi == mpich ]] || die "launch: unknown MPI '$mpi'; allowed: openmpi, mpich"
  local prefix=${CLUSTER_PREFIX:-$DEFAULT_PREFIX} hosts='' slots=1
  while (($#)); do
    case $1 in
      --prefix) (($# >= 2)) || die "--prefix needs a value"; prefix=$2; shift 2 ;;
      --hosts) (($# >= 2)) || die "--hosts needs a value"; hosts=$2; shift 2 ;;
      --slots) (($# >= 2)) || die "--slots needs a value"; slots=$2; shift 2 ;;
      --prefix=*) prefix=${1#*=}; shift ;;
      --hosts=*) hosts=${1#*=}; shift ;;
      --slots=*) slots=${1#*=}; shift ;;
      --) shift; break ;;
      *) die "launch: unknown option '$1'; allowed: --prefix, --hosts, --slots, then -- and the launcher's arguments" ;;
    esac
  done
  (($#)) || die "launch: no launcher arguments given (e.g. '$PROG launch $mpi -- -n 2 PROGRAM')"
  check_prefix "$prefix"
  [[ $slots =~ ^[0-9]+$ ]] && ((slots >= 1 && slots <= 1024)) ||
    die "invalid --slots '$slots'; allowed: 1..1024"
  need_root launch
  local k
  k=$(host_count "$prefix")
  ((k > 0)) ||
    die "launch: no cluster with prefix '$prefix' is up; start one with '$PROG up K --prefix $prefix', or launch from the command of '$PROG run K --prefix $prefix -- ...'"
  [[ -n $hosts ]] || hosts=$k
  [[ $hosts =~ ^[0-9]+$ ]] && ((hosts >= 1 && hosts <= k)) ||
    die "invalid --hosts '$hosts'; allowed: 1..$k (the hosts of cluster '$prefix')"
  # The launcher: Debian's name for it (found in PATH, then /usr/bin), or
  # CLUSTER_MPIRUN_OPENMPI / CLUSTER_MPIRUN_MPICH (e.g. another install).
  local name=mpirun.$mpi package=openmpi-bin var=CLUSTER_MPIRUN_OPENMPI launcher
  if [[ $mpi == mpich ]]; then
    package="mpich (and libmpich-dev for mpicc.mpich)" var=CLUSTER_MPIRUN_MPICH
  fi
  launcher=${!var:-}
  if [[ -n $launcher ]]; then
    if [[ ! -x $launcher || -d $launcher ]]; then
      echo "$PROG: launch $mpi: $var='$launcher' is not an executable file" >&2
      exit 127
    fi
  else
    launcher=$(PATH="$PATH:/usr/bin" command -v "$name" || true)
    if [[ -z $launcher ]]; then
      echo "$PROG: launch $mpi: $name not found; install the Debian package $package" >&2
      exit 127
    fi
  fi
  # The directory without symlinks: Open MPI derives its install prefix
  # from it, and refuses /bin/mpirun.openmpi (prefix "/", found first in
  # Bazel's PATH=/bin:/usr/bin on a merged-/usr system).
  launcher="$(cd "$(dirname "$launcher")" && pwd -P)/$(basename "$launcher")"

  local hostlist=() i
  for ((i = 0; i < hosts; ++i)); do hostlist+=("$SUBNET.$((i + 1)):$slots"); done
  # Open MPI's session directory (and MPICH's agent script) in a fresh
  # directory, as bench/common/jobs.cc does for local jobs: concurrent jobs must
  # not share a session directory. Short, for the sockets' sun_path.
  LAUNCH_DIR=$(mktemp -d /tmp/rondo-cluster-launch.XXXXXX) || die "launch: mktemp failed"
  LAUNCH_CHILD=
  trap 'on_launch_exit' EXIT
  trap 'on_launch_signal INT 130' INT
  trap 'on_launch_signal TERM 143' TERM
  trap 'on_launch_signal HUP 129' HUP
  # The ranks use UCX over TCP on the hosts' interface: without it UCX sees
  # one machine and uses shared memory between the emulated hosts. A
  # caller's UCX_TLS is kept (it must not name a shared-memory transport).
  export UCX_TLS=${UCX_TLS:-tcp,self} UCX_NET_DEVICES=$IFACE CLUSTER_PREFIX=$prefix
  # A rondo-run rank's own bootstrap must not leak into the job.
  unset RONDO_RUN_SOCKET RONDO_RUN_KEY RONDO_RANK RONDO_SIZE
  local agent cmd=()
  if [[ $mpi == openmpi || $SELF =~ [[:space:]:] ]]; then
    # Open MPI takes "PATH ARGS" (split at blanks; ':' separates alternatives).
    agent="$SELF rsh"
  fi
  if [[ $mpi == mpich || $SELF =~ [[:space:]:] ]]; then
    # Hydra's -launcher-exec is one executable: a tiny agent script.
    agent=$LAUNCH_DIR/rsh
    printf '#!/bin/sh\nCLUSTER_PREFIX=%s exec %s rsh "$@"\n' "$prefix" "'${SELF//\'/\'\\\'\'}'" >"$agent"
    chmod +x "$agent"
  fi
  if [[ $mpi == openmpi ]]; then
    export TMPDIR=$LAUNCH_DIR OMPI_MCA_orte_tmpdir_base=$LAUNCH_DIR HOME=${HOME:-$LAUNCH_DIR}
    # shellcheck disable=SC2054  # the commas are the MCA values' own
    cmd=("$launcher" --allow-run-as-root --host "$(IFS=,; echo "${hostlist[*]}")"
      --mca plm rsh --mca plm_rsh_agent "$agent" --mca routed direct
      --mca oob_tcp_if_include "$IFACE" --mca btl tcp,self --mca btl_tcp_if_include "$IFACE"
      --bind-to none -x UCX_TLS -x UCX_NET_DEVICES "$@")
  else
    cmd=("$launcher" -launcher ssh -launcher-exec "$agent" -hosts "$(IFS=,; echo "${hostlist[*]}")"
      -iface "$IFACE" -genv UCX_TLS "$UCX_TLS" -genv UCX_NET_DEVICES "$IFACE" "$@")
  fi
  # In the background (with the caller's stdin) so that a signal to this
  # script can be forwarded to the launcher, which then stops its job.
  (
    enter_host "$prefix" 0 "$BASHPID"
    exec "${PIN[@]}" "${INTO[@]}" "${cmd[@]}"
  ) <&0 &
  LAUNCH_CHILD=$!
  local status
  set +e
  wait "$LAUNCH_CHILD"
  status=$?
  set -e
  LAUNCH_CHILD=
  exit "$status"
}

# stop_child SIG PID TARGET WHAT: sends SIG to TARGET (PID, or -PID for its
# process group), gives PID 10 s to end, then SIGKILLs TARGET, and reaps PID.
stop_child() {
  local sig=$1 pid=$2 target=$3 what=$4
  kill -"$sig" -- "$target" 2>/dev/null || true
  if ! timeout 10 tail --pid="$pid" -f /dev/null; then
    echo "$PROG: $what is still running 10 s after SIG$sig; killing it" >&2
    kill -KILL -- "$target" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

on_launch_signal() {
  local sig=$1 code=$2
  trap '' INT TERM HUP
  if [[ -n ${LAUNCH_CHILD:-} ]]; then
    stop_child "$sig" "$LAUNCH_CHILD" "$LAUNCH_CHILD" "launch: the launcher"
    LAUNCH_CHILD=
  fi
  exit "$code"
}

on_launch_exit() {
  local rc=$?
  if [[ -n ${LAUNCH_CHILD:-} ]]; then
    kill -KILL "$LAUNCH_CHILD" 2>/dev/null || true
    wait "$LAUNCH_CHILD" 2>/dev/null || true
  fi
  [[ -z ${LAUNCH_DIR:-} ]] || rm -rf "$LAUNCH_DIR"
  exit $rc
}

cmd_show() {
  parse_options "$@"
  ((${#REST[@]} == 0)) || die "show: unexpected argument '${REST[0]}'"
  local ns dev cg cpus
  for ns in $(cluster_namespaces "$PREFIX"); do
    echo "== $ns"
    if [[ $ns != *-sw ]]; then
      cg=$(host_cgroup "$PREFIX" "${ns##*-}")
      if [[ -n $cg ]]; then
        echo "  cores: $(cat "$cg/cpuset.cpus") (cgroup $cg)"
      else
        cpus=$(sed -n "$((${ns##*-} + 1))p" "$STATE_DIR/$PREFIX.cpus" 2>/dev/null || true)
        echo "  cores: ${cpus:-all} (CPU affinity only)"
      fi
    fi
    for dev in $(ip -n "$ns" -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}'); do
      [[ $dev != lo ]] || continue
      echo "  $dev: $(ip -n "$ns" -4 -o addr show dev "$dev" | awk '{printf "%s ", $4}')$(
        ip netns exec "$ns" sh -c "echo rx_bytes=\$(cat /sys/class/net/$dev/statistics/rx_bytes) tx_bytes=\$(cat /sys/class/net/$dev/statistics/tx_bytes)")"
      tc -n "$ns" -s qdisc show dev "$dev" |
        awk '/^qdisc/ { show = ($2 != "noqueue") } show && !/backlog/ { print "    " $0 }'
    done
  done
}

# measure: N concurrent TCP flows, host 2p -> host 2p+1 (p < N), of B bytes
# each, timed by the receivers (bench/cluster/nettool.py); prints one line
# per flow and their sum. The cluster must be up.
cmd_measure() {
  local pairs=1 bytes=$((64 * 1024 * 1024)) port=5201 args=()
  while (($#)); do
    case $1 in
      --pairs) pairs=${2:-}; shift 2 || die "--pairs needs a value" ;;
      --bytes) bytes=${2:-}; shift 2 || die "--bytes needs a value" ;;
      *) args+=("$1"); shift ;;
    esac
  done
  parse_options "${args[@]}"
  ((${#REST[@]} == 0)) || die "measure: unexpected argument '${REST[0]}'"
  [[ $pairs =~ ^[0-9]+$ ]] && ((pairs >= 1)) || die "invalid --pairs '$pairs'; allowed: 1 or more"
  [[ $bytes =~ ^[0-9]+$ ]] && ((bytes >= 1)) || die "invalid --bytes '$bytes'; allowed: 1 or more"
  need_root measure
  local hosts p
  hosts=$(cluster_namespaces "$PREFIX" | grep -c -- "-[0-9]*$" || true)
  ((2 * pairs <= hosts)) ||
    die "measure: --pairs $pairs needs $((2 * pairs)) hosts; cluster '$PREFIX' has $hosts"
  local tool
  tool="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/nettool.py"
  [[ -f $tool ]] || die "measure: $tool not found"
  MEASURE_DIR=$(mktemp -d)
  MEASURE_PIDS=()
  trap 'kill ${MEASURE_PIDS[*]} 2>/dev/null || true; rm -rf "$MEASURE_DIR"' EXIT
  for ((p = 0; p < pairs; ++p)); do
    mkfifo "$MEASURE_DIR/ready$p"
    ip netns exec "$PREFIX-$((2 * p + 1))" python3 "$tool" listen \
      --bind "$SUBNET.$((2 * p + 2))" --port "$port" --ready "$MEASURE_DIR/ready$p" \
      >"$MEASURE_DIR/result$p" &
    MEASURE_PIDS+=($!)
    local line=
    read -r -t 10 line <"$MEASURE_DIR/ready$p" || true
    [[ $line == ready ]] || die "measure: the receiver on $PREFIX-$((2 * p + 1)) did not start within 10 s"
  done
  local senders=()
  for ((p = 0; p < pairs; ++p)); do
    ip netns exec "$PREFIX-$((2 * p))" python3 "$tool" send \
      --to "$SUBNET.$((2 * p + 2))" --port "$port" --bytes "$bytes" &
    senders+=($!)
  done
  local failed=0 pid
  for pid in "${senders[@]}" "${MEASURE_PIDS[@]}"; do wait "$pid" || failed=1; done
  MEASURE_PIDS=()
  ((failed == 0)) || die "measure: a transfer failed"
  for ((p = 0; p < pairs; ++p)); do
    awk -v f="$PREFIX-$((2 * p)) -> $PREFIX-$((2 * p + 1))" '{
      match($0, /"bits_per_s": [0-9.e+]+/); v = substr($0, RSTART + 14, RLENGTH - 14)
      printf "%s: %.1f Mbit/s\n", f, v / 1e6 }' "$MEASURE_DIR/result$p"
  done
  cat "$MEASURE_DIR"/result* | awk '{
      match($0, /"bits_per_s": [0-9.e+]+/); s += substr($0, RSTART + 14, RLENGTH - 14) }
      END { printf "sum of %d flows: %.1f Mbit/s\n", NR, s / 1e6 }'
}

# run: up, COMMAND, down. COMMAND runs in the root namespace in its own
# process group (job control), so that INT/TERM reach this script, which
# forwards them to COMMAND's group, waits for it (10 s at most, then
# SIGKILL), removes the cluster and exits with COMMAND's status.
cmd_run() {
  (($#)) || usage
  local k=$1 status
  shift
  check_hosts "$k"
  parse_options "$@"
  ((${#REST[@]})) || die "run: no command given"
  [[ ${REST[0]} != -- ]] || REST=("${REST[@]:1}")
  ((${#REST[@]})) || die "run: no command given"
  need_root run
  if ((DELAY_US > 0)) && ! netem_available; then
    die "--delay $DELAY needs the netem qdisc (sch_netem), which this kernel does not have; use --delay 0ms"
  fi
  [[ -z $(cluster_namespaces "$PREFIX") ]] ||
    die "a cluster with prefix '$PREFIX' exists already; remove it with '$PROG down --prefix $PREFIX'"
  check_no_cgroups "$PREFIX"
  plan_cpus "$k"
  RUN_PREFIX=$PREFIX RUN_CHILD=
  trap 'on_run_exit' EXIT
  trap 'on_run_signal INT 130' INT
  trap 'on_run_signal TERM 143' TERM
  trap 'on_run_signal HUP 129' HUP
  build_cluster "$PREFIX" "$k" "$DELAY_US"
  setup_cpus "$PREFIX" "$k"
  echo "$PROG: run: $k hosts $PREFIX-0..$PREFIX-$((k - 1)), rate $RATE, delay $DELAY, cores per host: $CPUS_PER_HOST ($(IFS=';'; echo "${HOST_CPUS[*]}"); $CPU_MODE)" >&2

  local addrs=() i
  for ((i = 0; i < k; ++i)); do addrs+=("$SUBNET.$((i + 1))"); done
  export CLUSTER_PREFIX=$PREFIX CLUSTER_HOSTS=$k CLUSTER_IFACE=$IFACE
  export CLUSTER_ADDRS="${addrs[*]}" CLUSTER_RATE=$RATE CLUSTER_DELAY=$DELAY
  CLUSTER_HOST_CPUS=$(IFS=';'; echo "${HOST_CPUS[*]}")
  export CLUSTER_HOST_CPUS CLUSTER_SH=$SELF
  # rondo-run splits the wrapper as sh does (quotes, no expansion).
  RONDO_RUN_RANK_WRAPPER="$(wrapper_word "$SELF") exec {rank} --prefix $PREFIX --"
  export RONDO_RUN_RANK_WRAPPER
  export UCX_TLS=tcp UCX_NET_DEVICES=$IFACE

  set -m
  "${REST[@]}" &
  RUN_CHILD=$!
  set +m
  set +e
  wait "$RUN_CHILD"
  status=$?
  # A trapped signal interrupts `wait`; the handler exits, so reaching
  # here means COMMAND itself ended.
  set -e
  RUN_CHILD=
  exit "$status"
}

on_run_signal() {
  local sig=$1 code=$2
  trap '' INT TERM HUP
  if [[ -n ${RUN_CHILD:-} ]]; then
    echo "$PROG: run: got SIG$sig; forwarding it to the command (pid $RUN_CHILD)" >&2
    stop_child "$sig" "$RUN_CHILD" "-$RUN_CHILD" "run: the command"
    RUN_CHILD=
  fi
  exit "$code"
}

on_run_exit() {
  local rc=$?
  trap '' INT TERM HUP
  if [[ -n ${RUN_CHILD:-} ]]; then
    kill -KILL -- -"$RUN_CHILD" 2>/dev/null || true
    wait "$RUN_CHILD" 2>/dev/null || true
  fi
  if [[ -n ${RUN_PREFIX:-} ]]; then
    teardown "$RUN_PREFIX" || { ((rc != 0)) || rc=1; }
  fi
  exit $rc
}

# ---- Slurm: slurmctld in host 0, slurmd in hosts 1..K-1 ----
#
# `slurm up` generates everything into $STATE_DIR/slurm-PREFIX (SLURM_D):
# a munge key, slurm.conf, cgroup.conf, mpi.conf, plugstack.conf, the
# daemons' state, spool, logs and per-node temporary directories, and the
# file `pids` ("NAME PID STARTTIME" per daemon, for `down`). Nothing goes to
# /etc. See docs/cluster.md, "Running under Slurm".

readonly SLURM_DEFAULT_SLOTS=2
# How long `slurm up` waits for each daemon (munged's socket, slurmctld's
# answer, every node idle).
readonly SLURM_TIMEOUT=${CLUSTER_SLURM_TIMEOUT:-30}
# The task plugin (TaskPlugin) is chosen by slurm_task_plugin; the
# variable CLUSTER_SLURM_TASK_PLUGIN overrides it, for experiments.

slurm_dir() { echo "$STATE_DIR/slurm-$1"; }

# The Debian package of a Slurm or munge tool.
slurm_package() {
  case $1 in
    slurmctld | slurmd) echo "$1" ;;
    munged | munge | unmunge) echo munge ;;
    *) echo slurm-client ;;
  esac
}

# Probes whether this machine can run `slurm`: sets SLURM_PROBLEMS (the
# reasons it cannot, none when it can), SLURM_VERSION and SLURM_MPI_LIST
# (the plugins `srun --mpi=list` offers, on one line).
slurm_probe() {
  local tool tmp out
  SLURM_PROBLEMS=() SLURM_VERSION='?' SLURM_MPI_LIST=
  for tool in slurmctld slurmd srun sinfo squeue scontrol munged munge; do
    [[ -x $(command -v "$tool") ]] ||
      SLURM_PROBLEMS+=("'$tool' is missing (Debian package $(slurm_package "$tool"))")
  done
  ((${#SLURM_PROBLEMS[@]} == 0)) || return 0
  # srun needs a configuration even to list its plugins: a throw-away one.
  tmp=$(mktemp -d) || { SLURM_PROBLEMS+=("mktemp failed"); return 0; }
  printf 'ClusterName=check\nSlurmctldHost=check(127.0.0.1)\nNodeName=check CPUs=1\nPartitionName=check Nodes=check\n' \
    >"$tmp/slurm.conf"
  out=$(SLURM_CONF=$tmp/slurm.conf timeout 10 srun --mpi=list 2>&1) || true
  SLURM_VERSION=$(SLURM_CONF=$tmp/slurm.conf timeout 10 srun --version 2>/dev/null | awk '{print $NF}') || true
  rm -rf "$tmp"
  SLURM_MPI_LIST=$(awk '/^[[:space:]]+[a-z]/ {printf "%s%s", sep, $1; sep = " "}
    /versions available:/ {sub(/.*available: */, ""); printf "%s%s", sep, $0; sep = " "}' <<<"$out")
  grep -qw pmix <<<"$SLURM_MPI_LIST" ||
    SLURM_PROBLEMS+=("srun has no PMIx plugin (srun --mpi=list said: $(tr '\n' ' ' <<<"$out"); Debian package slurm-wlm-basic-plugins)")
}

# proc_start PID: the start time of process PID (field 22 of its stat), or
# nothing when it is gone or a zombie. A pid and its start time name one
# process: `down` never signals a process that merely reuses a pid.
proc_start() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }
  local -a f
  read -ra f <<<"$s"
  if [[ ${f[0]} != Z && ${f[0]} != X ]]; then echo "${f[19]}"; fi
  return 0
}

# slurm_start NAME HOST SRC DST COMMAND...: starts a daemon inside host HOST
# (its cgroup, network namespace and name) in a session of its own, with
# stdin from /dev/null and its output in $SLURM_D/log/NAME.out (what it
# writes before it opens its log file $SLURM_D/log/NAME.log), and records
# "NAME PID STARTTIME" in $SLURM_D/pids. With a SRC (not empty), the
# daemon also gets a mount namespace of its own (private propagation) in
# which directory SRC is bind-mounted on DST. Every word execs the next,
# so the recorded pid is the daemon's.
slurm_start() {
  local name=$1 i=$2 src=$3 dst=$4 log=$SLURM_D/log/$1.out pid start
  shift 4
  (
    enter_host "$SLURM_PREFIX" "$i" "$BASHPID"
    if [[ -n $src ]]; then
      # shellcheck disable=SC2016,SC2030
      INTO=(ip netns exec "$SLURM_PREFIX-$i" unshare --uts --mount --propagation private --
        sh -c 'echo "$0" >/proc/sys/kernel/hostname && mount --bind "$1" "$2" && shift 2 && exec "$@"'
        "$SLURM_PREFIX-$i" "$src" "$dst")
    fi
    exec setsid "${PIN[@]}" "${INTO[@]}" "$@"
  ) </dev/null >>"$log" 2>&1 &
  pid=$!
  start=$(proc_start "$pid")
  [[ -n $start ]] || die "slurm up: $name exited at once: $(tail -5 "$log" 2>/dev/null)"
  echo "$name $pid $start" >>"$SLURM_D/pids"
}

# Dies, naming the daemon and the end of its log, if a recorded daemon is
# no longer running.
slurm_check_alive() {
  local name pid start
  while read -r name pid start; do
    [[ $(proc_start "$pid") == "$start" ]] ||
      die "slurm up: $name (pid $pid) exited; the end of its output ($SLURM_D/log/$name.out):
$(tail -8 "$SLURM_D/log/$name.out" 2>/dev/null)"
  done <"$SLURM_D/pids"
}

# A Slurm client command inside host 0 (its network namespace only).
slurm_client() {
  ip netns exec "$SLURM_PREFIX-0" env SLURM_CONF="$SLURM_D/slurm.conf" "$@"
}

# The task plugin for hosts with HOST_CPUS (plan_cpus): task/affinity
# (binding, --cpu-bind) when every compute host has all the online CPUs,
# else task/none. slurmd sees the whole machine's CPUs whatever its
# cpuset (Slurm's hwloc loads the whole system), so task/affinity computes
# masks outside a smaller host's cpuset and every task launch fails with
# "task_g_set_affinity: Invalid argument". With task/none each task
# inherits its host's cores from slurmd, as with Slurm's task/cgroup.
slurm_task_plugin() {
  local k=$1 i all
  if [[ -n ${CLUSTER_SLURM_TASK_PLUGIN:-} ]]; then
    echo "$CLUSTER_SLURM_TASK_PLUGIN"
    return
  fi
  all=$(online_cpus | compress_cpus)
  for ((i = 1; i < k; ++i)); do
    if [[ ${HOST_CPUS[i]} != "$all" ]]; then
      echo task/none
      return
    fi
  done
  echo task/affinity
}

# Writes the configuration of a cluster of K hosts with S CPUs per node.
slurm_configure() {
  local k=$1 slots=$2 i d=$SLURM_D
  mkdir -p "$d/munge" "$d/ctld" "$d/log" "$d/tmp"
  # munged checks its directories: the socket's (and its parents) must be
  # searchable by all, the key readable by its owner only.
  chmod a+rx "$STATE_DIR" "$d" "$d/munge"
  (umask 077 && head -c 1024 /dev/urandom >"$d/munge/munge.key")
  for ((i = 1; i < k; ++i)); do
    mkdir -p "$d/node/$SLURM_PREFIX-$i/spool" "$d/node/$SLURM_PREFIX-$i/tmp"
  done
  : >"$d/plugstack.conf"
  echo "CgroupPlugin=cgroup/v1" >"$d/cgroup.conf"
  echo "PMIxCliTmpDirBase=$d/tmp" >"$d/mpi.conf"
  {
    cat <<CONF
# Generated by cluster.sh slurm up (docs/cluster.md, "Running under Slurm").
ClusterName=$SLURM_PREFIX
SlurmctldHost=$SLURM_PREFIX-0($SUBNET.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/ctld
SlurmctldPidFile=$d/ctld/slurmctld.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdSpoolDir=$d/node/%n/spool
SlurmdPidFile=$d/node/%n/slurmd.pid
SlurmdLogFile=$d/log/slurmd-%n.log
PlugStackConfig=$d/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=$SLURM_TASK_PLUGIN
SelectType=select/linear
SchedulerType=sched/builtin
MpiDefault=none
TmpFS=$d/tmp
ReturnToService=2
SlurmdParameters=config_overrides
KillOnBadExit=1
KillWait=5
MinJobAge=2
# A lost node (its slurmd and steps gone) is declared down after 10 s,
# not Slurm's default 300 s, and its jobs end with NODE_FAIL: the emulated
# hosts answer within milliseconds when they are alive.
SlurmdTimeout=10
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
CONF
    for ((i = 1; i < k; ++i)); do
      echo "NodeName=$SLURM_PREFIX-$i NodeAddr=$SUBNET.$((i + 1)) CPUs=$slots State=UNKNOWN"
    done
    echo "PartitionName=$SLURM_PREFIX Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$d/slurm.conf"
}

# Starts munged, slurmctld and the slurmds, and waits (bounded) until every
# node is idle.
slurm_bring_up() {
  local k=$1 i d=$SLURM_D deadline out idle
  : >"$d/pids"
  # munged, in host 0: its socket is a file, which every host reaches.
  slurm_start munged 0 "" "" munged --foreground --origin="$SUBNET.1" \
    --key-file="$d/munge/munge.key" --socket="$d/munge/munge.socket" \
    --pid-file="$d/munge/munged.pid" \
    --seed-file="$d/munge/munged.seed"
  deadline=$((SECONDS + SLURM_TIMEOUT))
  until [[ -S $d/munge/munge.socket ]] && munge -n -S "$d/munge/munge.socket" >/dev/null 2>&1; do
    slurm_check_alive
    ((SECONDS < deadline)) || die "slurm up: munged did not answer on $d/munge/munge.socket within $SLURM_TIMEOUT s"
    sleep 0.05  # a bounded poll of munged's socket
  done
  slurm_start slurmctld 0 "" "" slurmctld -D -c -f "$d/slurm.conf"
  deadline=$((SECONDS + SLURM_TIMEOUT))
  # The slurmds register with slurmctld when they start: wait for it first.
  until out=$(slurm_client scontrol ping 2>&1) && [[ $out == *UP* ]]; do
    slurm_check_alive
    ((SECONDS < deadline)) ||
      die "slurm up: slurmctld did not answer within $SLURM_TIMEOUT s (scontrol ping: ${out//$'\n'/ }); the end of its output:
$(tail -8 "$d/log/slurmctld.out" 2>/dev/null)"
    sleep 0.05  # a bounded poll of slurmctld
  done
  for ((i = 1; i < k; ++i)); do
    # Each slurmd has its own mount namespace, in which TmpFS (where the
    # PMIx plugin puts its per-job directories) is the node's own
    # directory: the hosts share /tmp and every other path.
    slurm_start "slurmd-$SLURM_PREFIX-$i" "$i" "$d/node/$SLURM_PREFIX-$i/tmp" "$d/tmp" slurmd -D -N "$SLURM_PREFIX-$i" -f "$d/slurm.conf"
  done
  deadline=$((SECONDS + SLURM_TIMEOUT))
  while :; do
    out=$(slurm_client sinfo -h -N -o '%N %T' 2>&1) || true
    idle=$(awk '$2 == "idle"' <<<"$out" | wc -l)
    ((idle < k - 1)) || break
    slurm_check_alive
    ((SECONDS < deadline)) ||
      die "slurm up: $idle of $((k - 1)) nodes idle after $SLURM_TIMEOUT s (sinfo: ${out//$'\n'/; }); the end of the daemons' output:
$(tail -n 4 "$d"/log/slurm*.out 2>/dev/null)"
    sleep 0.05  # a bounded poll of the nodes' state
  done
}

# Stops the daemons recorded in the prefix's pids file: SIGTERM, up to 10 s,
# then SIGKILL. Only processes whose pid and start time both match.
slurm_stop() {
  local d name pid start e
  d=$(slurm_dir "$1")
  [[ -f $d/pids ]] || return 0
  local -a live=()
  while read -r name pid start; do
    [[ -n $pid && $(proc_start "$pid") == "$start" ]] || continue
    kill -TERM "$pid" 2>/dev/null || true
    live+=("$pid:$start:$name")
  done <"$d/pids"
  ((${#live[@]})) || return 0
  slurm_wait_gone 10 && return 0
  echo "$PROG: warning: still running 10 s after SIGTERM, killing them (pid:start:name): ${live[*]}" >&2
  for e in "${live[@]}"; do
    IFS=: read -r pid start name <<<"$e"
    kill -KILL "$pid" 2>/dev/null || true
  done
  slurm_wait_gone 5 && return 0
  echo "$PROG: error: cannot stop (pid:start:name): ${live[*]}" >&2
  return 1
}

# slurm_wait_gone SECONDS: waits (bounded) until none of the caller's
# `live` entries (PID:START:NAME) runs any more; keeps the ones that do.
slurm_wait_gone() {
  local deadline=$((SECONDS + $1)) e pid start name
  local -a alive
  while :; do
    alive=()
    for e in "${live[@]}"; do
      IFS=: read -r pid start name <<<"$e"
      [[ $(proc_start "$pid") != "$start" ]] || alive+=("$e")
    done
    live=("${alive[@]}")
    ((${#live[@]})) || return 0
    ((SECONDS < deadline)) || return 1
    sleep 0.05  # a bounded poll until the daemons have exited
  done
}

# Removes the prefix's Slurm directory (after the processes using it are
# gone), unmounting anything still mounted below it in this namespace.
slurm_remove_dir() {
  local d mnt
  d=$(slurm_dir "$1")
  [[ -e $d ]] || return 0
  awk -v d="$d" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/self/mounts | sort -r |
    while read -r mnt; do umount -l "$mnt" 2>/dev/null || true; done
  rm -rf "$d" || { echo "$PROG: error: cannot remove $d" >&2; return 1; }
}

# slurm up K [--slots S] [up's options] | slurm run [--prefix P] -- COMMAND...
# | slurm down [--prefix P]
cmd_slurm() {
  (($#)) || usage
  local sub=$1
  shift
  case $sub in
    up) cmd_slurm_up "$@" ;;
    run) cmd_slurm_run "$@" ;;
    down)
      parse_options "$@"
      ((${#REST[@]} == 0)) || die "slurm down: unexpected argument '${REST[0]}'"
      [[ -z $CPUS_PER_HOST ]] || die "slurm down: --cpus-per-host is an option of slurm up"
      need_root "slurm down"
      teardown "$PREFIX"
      ;;
    *) die "slurm: unknown command '$sub'; allowed: up, run, down" ;;
  esac
}

cmd_slurm_up() {
  (($#)) || usage
  local k=$1 args=() slots='' t0=$EPOCHREALTIME
  shift
  check_hosts "$k"
  ((k >= 2)) || die "slurm up: needs at least 2 hosts (host 0 runs slurmctld, hosts 1..K-1 run slurmd)"
  while (($#)); do
    case $1 in
      --slots) (($# >= 2)) || die "--slots needs a value"; slots=$2; shift 2 ;;
      --slots=*) slots=${1#*=}; shift ;;
      *) args+=("$1"); shift ;;
    esac
  done
  if [[ -n $slots ]]; then
    [[ $slots =~ ^[0-9]+$ ]] && ((slots >= 1 && slots <= 1024)) ||
      die "invalid --slots '$slots'; allowed: 1..1024 (the CPUs each node offers to Slurm)"
  fi
  parse_options "${args[@]}"
  ((${#REST[@]} == 0)) || die "slurm up: unexpected argument '${REST[0]}'"
  need_root "slurm up"
  slurm_probe
  ((${#SLURM_PROBLEMS[@]} == 0)) || die "slurm up: Slurm is not usable on this machine: $(IFS=';'; echo "${SLURM_PROBLEMS[*]}")"
  [[ ! -e $(slurm_dir "$PREFIX") ]] ||
    die "slurm up: $(slurm_dir "$PREFIX") exists already (a Slurm cluster with prefix '$PREFIX' is up, or was not taken down); remove it with '$PROG slurm down --prefix $PREFIX'"
  UP_SLURM=1 UP_SLURM_SLOTS=$slots
  cmd_up "$k" "${args[@]}"
  echo "$PROG: slurm up: slurmctld in $PREFIX-0, slurmd in $PREFIX-1..$PREFIX-$((k - 1)) ($UP_SLURM_SLOTS CPUs each, $SLURM_TASK_PLUGIN), all idle; $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s. Jobs: $PROG slurm run --prefix $PREFIX -- srun --mpi=pmix -N $((k - 1)) ..."
}

cmd_slurm_run() {
  parse_options "$@"
  [[ -z $CPUS_PER_HOST ]] || die "slurm run: --cpus-per-host is an option of slurm up"
  ((${#REST[@]})) || die "slurm run: no command given (e.g. '$PROG slurm run -- srun --mpi=pmix -N 2 -n 4 PROGRAM')"
  [[ ${REST[0]} != -- ]] || REST=("${REST[@]:1}")
  ((${#REST[@]})) || die "slurm run: no command given (e.g. '$PROG slurm run -- srun --mpi=pmix -N 2 -n 4 PROGRAM')"
  need_root "slurm run"
  SLURM_D=$(slurm_dir "$PREFIX")
  [[ -f $SLURM_D/slurm.conf ]] && ip netns list | awk '{print $1}' | grep -qFx "$PREFIX-0" ||
    die "slurm run: no Slurm cluster with prefix '$PREFIX' is up; start one with '$PROG slurm up K --prefix $PREFIX'"
  # A surrounding job's variables (a real Slurm allocation, mpirun,
  # rondo-run) must not leak into this cluster's jobs: every SLURM_* (set
  # srun's input variables inside COMMAND), and the job context of PMIx,
  # PMI and Open MPI (their MCA parameters are kept).
  local v
  for v in $(compgen -e); do
    case $v in
      OMPI_MCA_* | PMIX_MCA_*) ;;
      SLURM_* | PMIX_* | PMI_* | OMPI_* | RONDO_RUN_SOCKET | RONDO_RUN_KEY | RONDO_RANK | RONDO_SIZE) unset "$v" ;;
    esac
  done
  export SLURM_CONF=$SLURM_D/slurm.conf
  # The ranks use the hosts' interface over TCP, never shared memory
  # (which would bypass the links between the emulated hosts).
  export UCX_TLS=${UCX_TLS:-tcp} UCX_NET_DEVICES=$IFACE
  export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=$IFACE OMPI_MCA_pml=ob1
  export CLUSTER_PREFIX=$PREFIX CLUSTER_SH=$SELF CLUSTER_IFACE=$IFACE
  enter_host "$PREFIX" 0 $$
  # shellcheck disable=SC2031  # INTO is set by enter_host just above
  exec "${PIN[@]}" "${INTO[@]}" "${REST[@]}"
}

cmd_check() {
  local problems=() ns="rondo-check-$$"
  if (($(id -u) != 0)); then
    problems+=("not root (uid $(id -u)): namespaces, veth and tc need root")
  else
    echo "ok: root"
  fi
  local tool
  for tool in ip tc awk timeout tail taskset unshare; do
    if command -v "$tool" >/dev/null; then
      echo "ok: $tool ($(command -v "$tool"))"
    else
      problems+=("'$tool' is missing (package ${tool/ip/iproute2})")
    fi
  done
  if ((${#problems[@]} == 0)); then
    trap 'ip netns del "'"$ns"'" 2>/dev/null || true' EXIT
    local out
    if ! out=$(ip netns add "$ns" 2>&1); then
      problems+=("cannot create a network namespace: $out")
    else
      echo "ok: ip netns add"
      if ! out=$(ip -n "$ns" link add v0 type veth peer name v1 2>&1); then
        problems+=("cannot create a veth pair: $out")
      else
        echo "ok: veth"
        if ! out=$(ip -n "$ns" link add br0 type bridge 2>&1 &&
          ip -n "$ns" link set v0 master br0 2>&1); then
          problems+=("cannot create a bridge: $out")
        else
          echo "ok: bridge"
        fi
        if ! out=$(tc -n "$ns" qdisc add dev v1 root handle 1: tbf rate 100mbit burst 96kb latency 10ms 2>&1); then
          problems+=("the tbf qdisc (sch_tbf) is not available: $out")
        else
          echo "ok: tc tbf"
        fi
        if out=$(ip -n "$ns" link add v2 type veth peer name v3 2>&1 &&
          tc -n "$ns" qdisc add dev v2 root netem delay 1ms 2>&1); then
          echo "ok: tc netem (--delay available)"
        else
          echo "missing: tc netem (sch_netem): only --delay 0ms works (${out//$'\n'/ })"
        fi
      fi
      ip netns del "$ns" 2>/dev/null || true
    fi
    trap - EXIT
    local v dir why cpu
    read -r v dir <<<"$(cpuset_hierarchy)"
    cpu=$(online_cpus | head -1)
    if [[ -z $dir ]]; then
      why="no cgroup hierarchy with the cpuset controller is mounted"
    elif why=$(make_cgroup "$v" "$dir" "$CGROUP_PREFIX-check-$$" "$cpu"); then
      rmdir "$dir/$CGROUP_PREFIX-check-$$" 2>/dev/null || true
      echo "ok: cpuset cgroup (cgroup $v, $dir): each host gets its own cores, and hwloc and the libraries inside see only those"
    fi
    [[ -z $why ]] ||
      echo "missing: cpuset cgroup ($why): hosts get CPU affinity only (taskset); libraries see the whole machine"
  fi
  local mpi launcher package
  for mpi in openmpi mpich; do
    launcher=mpirun.$mpi package=openmpi-bin
    [[ $mpi == openmpi ]] || package=mpich
    if command -v "$launcher" >/dev/null; then
      echo "ok: $launcher (launch $mpi)"
    else
      echo "missing: $launcher (Debian package $package): no 'launch $mpi'"
    fi
  done
  slurm_probe
  if ((${#SLURM_PROBLEMS[@]} == 0)); then
    echo "ok: slurm $SLURM_VERSION (slurmctld, slurmd, srun, munged; srun --mpi=list: $SLURM_MPI_LIST): 'slurm up/run/down'"
  else
    echo "missing: slurm ($(IFS=';'; echo "${SLURM_PROBLEMS[*]}")): no 'slurm' mode"
  fi
  if ((${#problems[@]})); then
    echo "$PROG check: this machine cannot run an emulated cluster:" >&2
    local p
    for p in "${problems[@]}"; do echo "  - $p" >&2; done
    exit 1
  fi
  echo "ok: this machine can run an emulated cluster"
}

(($#)) || usage
CMD=$1
shift
case $CMD in
  check) (($# == 0)) || die "check takes no arguments"; cmd_check ;;
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  run) cmd_run "$@" ;;
  exec) cmd_exec "$@" ;;
  show) cmd_show "$@" ;;
  measure) cmd_measure "$@" ;;
  rsh) cmd_rsh "$@" ;;
  launch) cmd_launch "$@" ;;
  slurm) cmd_slurm "$@" ;;
  -h | --help | help) usage ;;
  *) die "unknown command '$CMD'; allowed: check, up, down, run, exec, rsh, launch, slurm, show, measure" ;;
esac
