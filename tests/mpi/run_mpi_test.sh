#!/bin/bash
# Runs one MPI test program of tests/mpi on N ranks and judges the run.
#
# Usage: run_mpi_test.sh LAUNCHER N PROGRAM [ARGS...]
#   LAUNCHER  rondo-run: $RONDO_RUN -n N --timeout 120 PROGRAM ARGS...
#             mpirun:    Open MPI's /usr/bin/mpirun (settings below), under
#                        `timeout 180`, in a fresh TMPDIR removed at exit.
# Environment:
#   RONDO_RUN    path of rondo-run (LAUNCHER rondo-run)
#   EXPECT       ok (default): the launcher exits 0, the output has
#                  "<program>: ok (" and no line starting with FAIL;
#                fatal: the launcher exits non-zero, the output (stdout and
#                  stderr) contains EXPECT_TEXT, and no "<program>: ok (".
#   EXPECT_TEXT  fixed string searched for with EXPECT=fatal.
#   RUN_TIMEOUT  rondo-run's --timeout in seconds (default 120).
# Everything else (RONDO_*, e.g. RONDO_PROGRESS, RONDO_COLL_<NAME>) is
# inherited by the ranks. Prints the output; exits non-zero on failure.
set -u
if [[ $# -lt 3 ]]; then
  echo "usage: $0 rondo-run|mpirun N PROGRAM [ARGS...]" >&2
  exit 2
fi
LAUNCHER=$1 N=$2 PROG=$3
shift 3
EXPECT=${EXPECT:-ok}
NAME=$(basename "$PROG")
NAME=${NAME%_openmpi}  # the Open MPI builds print the program's own name

# Bazel hands runfiles-relative paths; the launchers may start the ranks
# elsewhere.
abs() { if [[ $1 == /* ]]; then echo "$1"; else echo "$PWD/$1"; fi; }
PROG=$(abs "$PROG")
[[ -x $PROG ]] || { echo "FAIL: $PROG is not an executable"; exit 1; }

TMP=${TEST_TMPDIR:-}
if [[ -z $TMP ]]; then
  TMP=$(mktemp -d) || exit 1
  CLEAN_TMP=$TMP
fi
OUT=$TMP/mpi_test.stdout
ERR=$TMP/mpi_test.stderr
SESSION=
cleanup() {
  [[ -n $SESSION ]] && rm -rf "$SESSION"
  [[ -n ${CLEAN_TMP:-} ]] && rm -rf "$CLEAN_TMP"
}
trap cleanup EXIT
# UCX's mmap hooks crash under ThreadSanitizer (drivers/ucx/BUILD).
export UCX_MEM_MMAP_HOOK_MODE=none

case $LAUNCHER in
  rondo-run)
    [[ -n ${RONDO_RUN:-} ]] || { echo "FAIL: RONDO_RUN is not set"; exit 1; }
    RUN=$(abs "$RONDO_RUN")
    [[ -x $RUN ]] || { echo "FAIL: rondo-run not found at $RUN"; exit 1; }
    unset RONDO_RUN  # not a setting of the ranks (they warn about it)
    "$RUN" -n "$N" --timeout "${RUN_TIMEOUT:-120}" "$PROG" "$@" >"$OUT" 2>"$ERR"
    rc=$?
    ;;
  mpirun)
    MPIRUN=/usr/bin/mpirun  # Bazel's test env has a minimal PATH
    [[ -x $MPIRUN ]] || { echo "FAIL: $MPIRUN not found (openmpi-bin)"; exit 1; }
    # See drivers/bootstrap/pmix_mpirun_test.sh for why each is needed:
    # HOME for ORTE, a short fresh TMPDIR per run for its session directory
    # and PMIx sockets, root, oversubscription, no ssh.
    export HOME=${HOME:-$TMP}
    SESSION=$(mktemp -d /tmp/rondo-mpirun.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
    export TMPDIR=$SESSION OMPI_MCA_orte_tmpdir_base=$SESSION
    # Open MPI's shared-memory transport (vader) names its backing files
    # after the job id in /dev/shm by default; concurrent sandboxed tests
    # (own PID namespaces, same mpirun pid, same job id) then map each
    # other's segments and crash in mca_btl_vader_poll_handle_frag. Keep
    # them in this run's directory.
    export OMPI_MCA_btl_vader_backing_directory=$SESSION
    export OMPI_MCA_plm=isolated OMPI_MCA_rmaps_base_oversubscribe=1
    unset RONDO_RUN_SOCKET RONDO_RUN_KEY RONDO_RANK RONDO_SIZE
    # Forward the RONDO_* settings to the ranks (a Rondo build started by
    # mpirun reads them; an Open MPI build ignores them).
    fwd=(-x UCX_MEM_MMAP_HOOK_MODE)
    while IFS='=' read -r var _; do
      [[ $var == RONDO_* ]] && fwd+=(-x "$var")
    done < <(env)
    timeout 180 "$MPIRUN" --allow-run-as-root --oversubscribe "${fwd[@]}" -n "$N" \
      "$PROG" "$@" >"$OUT" 2>"$ERR"
    rc=$?
    ;;
  *)
    echo "FAIL: unknown launcher '$LAUNCHER' (rondo-run or mpirun)"
    exit 2
    ;;
esac

echo "--- $LAUNCHER -n $N $NAME $* (exit $rc)"
echo "--- stdout"
cat "$OUT"
echo "--- stderr"
cat "$ERR"
echo "---"
fail() { echo "FAIL: $*"; exit 1; }

case $EXPECT in
  ok)
    [[ $rc -eq 0 ]] || fail "$LAUNCHER exited with $rc"
    grep -q "^$NAME: ok (" "$OUT" || fail "no \"$NAME: ok\" line"
    if grep -q "^FAIL" "$OUT"; then fail "FAIL lines in the output"; fi
    ;;
  fatal)
    [[ -n ${EXPECT_TEXT:-} ]] || fail "EXPECT=fatal needs EXPECT_TEXT"
    [[ $rc -ne 0 ]] || fail "$LAUNCHER exited 0, expected the job to abort"
    cat "$OUT" "$ERR" | grep -qF -- "$EXPECT_TEXT" ||
      fail "the output does not contain \"$EXPECT_TEXT\""
    if grep -q "^$NAME: ok (" "$OUT"; then fail "the program finished normally"; fi
    if grep -q "^FAIL" "$OUT"; then fail "FAIL lines in the output"; fi
    ;;
  *)
    fail "unknown EXPECT '$EXPECT' (ok or fatal)"
    ;;
esac
if grep -qi "sanitizer" "$ERR"; then fail "sanitizer report"; fi
echo "PASS"
