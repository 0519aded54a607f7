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
# Ranks are placed with rondo-run's --rank-wrapper "ip netns exec
# PREFIX-{rank}" (`run` exports it as RONDO_RUN_RANK_WRAPPER) and use UCX
# over TCP on rc0 (UCX_TLS=tcp UCX_NET_DEVICES=rc0).
#
#   cluster.sh check
#   cluster.sh up K [--rate 1gbit] [--delay 0ms] [--prefix rondo]
#   cluster.sh down [--prefix rondo]
#   cluster.sh run K [--rate R] [--delay D] [--prefix P] -- COMMAND...
#   cluster.sh exec I [--prefix P] -- COMMAND...
#   cluster.sh show [--prefix P]
#   cluster.sh measure [--pairs N] [--bytes B] [--prefix P]
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

readonly PROG=cluster.sh
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

die() {
  echo "$PROG: $*" >&2
  exit 1
}

usage() {
  cat >&2 <<EOF
Usage:
  $PROG check                      can this machine emulate a cluster?
  $PROG up K [--rate R] [--delay D] [--prefix P]
                                   create K hosts P-0..P-(K-1) and switch P-sw
  $PROG down [--prefix P]          remove them (safe to repeat)
  $PROG run K [--rate R] [--delay D] [--prefix P] -- COMMAND...
                                   up, run COMMAND (ranks placed by rondo-run
                                   through RONDO_RUN_RANK_WRAPPER), down;
                                   exits with COMMAND's status
  $PROG exec I [--prefix P] -- COMMAND...
                                   run COMMAND inside host I
  $PROG show [--prefix P]          addresses, qdiscs and counters
  $PROG measure [--pairs N] [--bytes B] [--prefix P]
                                   N concurrent TCP flows host 2p -> 2p+1
Defaults: --rate $DEFAULT_RATE (tc units: kbit, mbit, gbit, ...; 'off' = no
limit), --delay 0ms (one-way, us/ms/s; needs sch_netem), --prefix
$DEFAULT_PREFIX (a lowercase letter, then up to 11 lowercase letters or digits).
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

# ---- namespaces ----

# The namespaces of a prefix, one per line (switch last).
cluster_namespaces() {
  local prefix=$1
  ip netns list 2>/dev/null | awk '{print $1}' |
    grep -E "^${prefix}-[0-9]+\$" | sort -t- -k2 -n || true
  ip netns list 2>/dev/null | awk '{print $1}' | grep -Fx "${prefix}-sw" || true
}

# Removes every namespace of the prefix, after killing the processes still
# inside (they would keep the namespace, and its links, alive unnamed).
teardown() {
  local prefix=$1 ns pids
  for ns in $(cluster_namespaces "$prefix"); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null ||
      echo "$PROG: warning: cannot remove namespace $ns" >&2
  done
  if [[ -n $(cluster_namespaces "$prefix") ]]; then
    echo "$PROG: error: namespaces left behind: $(cluster_namespaces "$prefix" | tr '\n' ' ')" >&2
    return 1
  fi
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
  RATE=$DEFAULT_RATE DELAY=0ms PREFIX=$DEFAULT_PREFIX REST=()
  while (($#)); do
    case $1 in
      --rate) (($# >= 2)) || die "--rate needs a value"; RATE=$2; shift 2 ;;
      --delay) (($# >= 2)) || die "--delay needs a value"; DELAY=$2; shift 2 ;;
      --prefix) (($# >= 2)) || die "--prefix needs a value"; PREFIX=$2; shift 2 ;;
      --rate=*) RATE=${1#*=}; shift ;;
      --delay=*) DELAY=${1#*=}; shift ;;
      --prefix=*) PREFIX=${1#*=}; shift ;;
      --) REST=("$@"); break ;;
      -*) die "unknown option '$1'; allowed: --rate, --delay, --prefix" ;;
      *) REST=("$@"); break ;;
    esac
  done
  check_prefix "$PREFIX"
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
  UP_PREFIX=$PREFIX
  trap 'on_up_exit' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  build_cluster "$PREFIX" "$k" "$DELAY_US"
  UP_PREFIX=
  trap - EXIT INT TERM
  echo "$PROG: up: $k hosts $PREFIX-0..$PREFIX-$((k - 1)) ($SUBNET.1..$SUBNET.$k on $IFACE), switch $PREFIX-sw, rate $RATE, delay $DELAY"
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
  exec ip netns exec "$PREFIX-$i" "${REST[@]}"
}

cmd_show() {
  parse_options "$@"
  ((${#REST[@]} == 0)) || die "show: unexpected argument '${REST[0]}'"
  local ns dev
  for ns in $(cluster_namespaces "$PREFIX"); do
    echo "== $ns"
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
  RUN_PREFIX=$PREFIX RUN_CHILD=
  trap 'on_run_exit' EXIT
  trap 'on_run_signal INT 130' INT
  trap 'on_run_signal TERM 143' TERM
  trap 'on_run_signal HUP 129' HUP
  build_cluster "$PREFIX" "$k" "$DELAY_US"
  echo "$PROG: run: $k hosts $PREFIX-0..$PREFIX-$((k - 1)), rate $RATE, delay $DELAY" >&2

  local addrs=() i
  for ((i = 0; i < k; ++i)); do addrs+=("$SUBNET.$((i + 1))"); done
  export CLUSTER_PREFIX=$PREFIX CLUSTER_HOSTS=$k CLUSTER_IFACE=$IFACE
  export CLUSTER_ADDRS="${addrs[*]}" CLUSTER_RATE=$RATE CLUSTER_DELAY=$DELAY
  local ip_path
  ip_path=$(command -v ip)
  export RONDO_RUN_RANK_WRAPPER="$ip_path netns exec $PREFIX-{rank}"
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
    kill -"$sig" -- -"$RUN_CHILD" 2>/dev/null || true
    if ! timeout 10 tail --pid="$RUN_CHILD" -f /dev/null; then
      echo "$PROG: run: the command is still running 10 s after SIG$sig; killing it" >&2
      kill -KILL -- -"$RUN_CHILD" 2>/dev/null || true
    fi
    wait "$RUN_CHILD" 2>/dev/null || true
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

cmd_check() {
  local problems=() ns="rondo-check-$$"
  if (($(id -u) != 0)); then
    problems+=("not root (uid $(id -u)): namespaces, veth and tc need root")
  else
    echo "ok: root"
  fi
  local tool
  for tool in ip tc awk timeout tail; do
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
cmd=$1
shift
case $cmd in
  check) (($# == 0)) || die "check takes no arguments"; cmd_check ;;
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  run) cmd_run "$@" ;;
  exec) cmd_exec "$@" ;;
  show) cmd_show "$@" ;;
  measure) cmd_measure "$@" ;;
  -h | --help | help) usage ;;
  *) die "unknown command '$cmd'; allowed: check, up, down, run, exec, show, measure" ;;
esac
