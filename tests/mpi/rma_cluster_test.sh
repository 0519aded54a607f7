#!/usr/bin/env bash
# rma_check across emulated hosts (bench/cluster/cluster.sh, docs/cluster.md):
# 2 hosts, one rank each, UCX over tcp between them: by default windows take
# active messages (UCX's tcp emulates one-sided operations, more slowly);
# with RONDO_RMA_UCX=1 MPI_Win_create and MPI_Win_allocate windows take
# UCX's one-sided operations (RMA_CHECK_PATH=ucx makes rma_check assert
# rondo_rma_path = ucx); then the passive-target
# check with progress threads; then 2 ranks per host, where each host's
# pair talks through Rondo's shared-memory driver and UCX reaches only the
# other host: puts and gets to it by UCX, the rest by active messages
# (rondo_rma_path = ucx+am).
# Usage: rma_cluster_test.sh CLUSTER_SH RONDO_RUN RMA_CHECK
#
# Needs root and network namespaces. Only when `cluster.sh check` says this
# machine cannot emulate a cluster does it print "SKIP: <reason>" and exit 0.
set -uo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
CLUSTER=$(realpath "$1") RUN=$(realpath "$2") CHECK=$(realpath "$3")
if ! why=$("$CLUSTER" check 2>&1); then
  echo "SKIP: $(grep -v '^ok' <<<"$why" | head -3 | tr '\n' ' ')"
  exit 0
fi
P=rma$$  # this run's prefix: never a user's cluster
trap '"$CLUSTER" down --prefix "$P" >/dev/null 2>&1; rm -rf "${TMP:-}"' EXIT

# Rank wrapper for 2 ranks per host: ranks 2h and 2h+1 on host h.
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/rma_cluster.XXXXXX")
cat >"$TMP/two_per_host.sh" <<WRAP
#!/bin/sh
r=\$1; shift
exec "$CLUSTER" exec \$((r / 2)) --prefix "$P" -- "\$@"
WRAP
chmod +x "$TMP/two_per_host.sh"

# run NAME EXPECTED_TEXT RANKS ENV... -- ARGS...: rma_check on 2 hosts.
run() {
  local name=$1 want=$2 ranks=$3
  shift 3
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out rc
  out=$(timeout 300 "$CLUSTER" run 2 --prefix "$P" -- \
          env "${envs[@]}" "$RUN" -n "$ranks" "$CHECK" "$@" 2>&1)
  rc=$?
  echo "--- $name (exit $rc)"
  tail -n 8 <<<"$out"
  if [[ $rc -ne 0 || $out != *"$want"* ]]; then
    echo "FAIL: $name: exit $rc, expected '$want'"
    exit 1
  fi
}

# The defaults (RONDO_RMA_UCX=auto): UCX's one-sided lanes between the
# hosts are its tcp transport, which emulates them more slowly than active
# messages, so every window takes active messages (rondo_rma_path = am).
run "the defaults over tcp: active messages" "rma_check: ok" 2 \
  RONDO_RMA_SHM=0 RMA_CHECK_PATH=am --
# RONDO_RMA_UCX=1 takes UCX's operations even over tcp.
run "every mode on the UCX path" "rma_check: ok" 2 \
  RONDO_RMA_SHM=0 RONDO_RMA_UCX=1 RMA_CHECK_PATH=ucx --
run "passive target, progress threads" "rma_check: ok" 2 \
  RONDO_RMA_SHM=0 RONDO_RMA_UCX=1 RONDO_PROGRESS=numa -- --passive
run "2 ranks per host: UCX to the other host" "rma_check: ok" 4 \
  RONDO_RMA_SHM=0 RONDO_RMA_UCX=1 RMA_CHECK_PATH=ucx+am \
  "RONDO_RUN_RANK_WRAPPER=$TMP/two_per_host.sh {rank}" --
echo PASS
