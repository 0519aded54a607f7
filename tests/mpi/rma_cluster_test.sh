#!/usr/bin/env bash
# rma_check across emulated hosts (bench/cluster/cluster.sh, docs/cluster.md):
# 2 hosts, one rank each, UCX over tcp between them, so MPI_Win_create and
# MPI_Win_allocate windows take UCX's one-sided operations (RMA_CHECK_PATH=ucx
# makes rma_check assert rondo_rma_path = ucx); then the passive-target
# check with progress threads.
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
trap '"$CLUSTER" down --prefix "$P" >/dev/null 2>&1' EXIT

# run NAME EXPECTED_TEXT ENV... -- ARGS...: rma_check on 2 hosts.
run() {
  local name=$1 want=$2
  shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out rc
  out=$(timeout 300 "$CLUSTER" run 2 --prefix "$P" -- \
          env "${envs[@]}" "$RUN" -n 2 "$CHECK" "$@" 2>&1)
  rc=$?
  echo "--- $name (exit $rc)"
  tail -n 8 <<<"$out"
  if [[ $rc -ne 0 || $out != *"$want"* ]]; then
    echo "FAIL: $name: exit $rc, expected '$want'"
    exit 1
  fi
}

run "every mode on the UCX path" "rma_check: ok" \
  RONDO_RMA_SHM=0 RMA_CHECK_PATH=ucx --
run "passive target, progress threads" "rma_check: ok" \
  RONDO_RMA_SHM=0 RONDO_PROGRESS=numa -- --passive
echo PASS
