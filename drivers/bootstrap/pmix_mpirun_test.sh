#!/bin/bash
# Open MPI's mpirun starts 2 bootstrap_check ranks; they must pick the PMIx
# bootstrap (PMIX_NAMESPACE/PMIX_RANK set by mpirun) and pass the exchange.
# Usage: pmix_mpirun_test.sh BOOTSTRAP_CHECK
set -u
CHECK=$1
TMP=${TEST_TMPDIR:-$(mktemp -d)}
MPIRUN=/usr/bin/mpirun  # Bazel's strict action env has a minimal PATH
[[ -x $MPIRUN ]] || { echo "FAIL: $MPIRUN not found (openmpi-bin)"; exit 1; }

# What Open MPI 4.1 needs under `bazel test` here:
#  * HOME: Bazel's test env may not set it, and ORTE reads $HOME;
#  * TMPDIR=a fresh /tmp/rondo-mpirun.XXXXXX: ORTE puts its session
#    directory and PMIx rendezvous sockets under TMPDIR. Bazel's TEST_TMPDIR
#    is too deep for sun_path (108 bytes), and a shared /tmp is not enough:
#    each linux-sandbox has its own PID namespace, so concurrent mpiruns get
#    the same pid, hence the same job id and session directory, and ranks
#    reached another test's PMIx server (PMIx_Get: NOT-FOUND);
#  * --allow-run-as-root: CI runs as root;
#  * --oversubscribe: the machine may have fewer cores than ranks;
#  * plm isolated: start local daemons only, never try ssh/rsh.
export HOME=${HOME:-$TMP}
SESSION=$(mktemp -d /tmp/rondo-mpirun.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$SESSION"' EXIT
export TMPDIR=$SESSION
export OMPI_MCA_orte_tmpdir_base=$SESSION
export OMPI_MCA_plm=isolated
export OMPI_MCA_rmaps_base_oversubscribe=1
# Don't let a PMIx/rondo-run environment of the caller leak in.
unset RONDO_RUN_SOCKET RONDO_RUN_KEY RONDO_RANK RONDO_SIZE

OUT=$TMP/stdout
ERR=$TMP/stderr
timeout 120 "$MPIRUN" --allow-run-as-root --oversubscribe -n 2 "$CHECK" >"$OUT" 2>"$ERR"
rc=$?
fail() {
  echo "FAIL: $*"; echo "--- stdout"; cat "$OUT"; echo "--- stderr"; cat "$ERR"; exit 1
}
[[ $rc -eq 0 ]] || fail "mpirun exited with $rc"
n=$(grep -c "via pmix (local [01] of 2)" "$OUT")
[[ $n -eq 2 ]] || fail "expected 2 ranks via pmix, got $n"
grep -q "rank 0 ok" "$OUT" || fail "rank 0 did not finish"
grep -q "rank 1 ok" "$OUT" || fail "rank 1 did not finish"
echo "PASS"
