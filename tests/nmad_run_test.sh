#!/bin/bash
# Runs nmad_check cases on several ranks through a launcher.
# Usage: nmad_run_test.sh LAUNCHER(rondo-run|mpirun) RONDO_RUN NMAD_CHECK NRANKS EXPECT CASE...
#   EXPECT: ok    every rank passes every case, launcher exits 0;
#           death the last rank kills itself; the others must see it fail
#                 (kPeerFailed, with a text) and the launcher must name it.
# Environment for the ranks comes from the sh_test's `env`. No sleeps: every
# step waits on messages or the launcher.
set -u
LAUNCHER=$1 RUN=$2 CHECK=$3 N=$4 EXPECT=$5
shift 5
TMP=${TEST_TMPDIR:-$(mktemp -d)}
OUT=$TMP/stdout
ERR=$TMP/stderr
# UCX's mmap hooks crash under ThreadSanitizer (drivers/ucx/BUILD); the
# transports used here do not need them.
export UCX_MEM_MMAP_HOOK_MODE=none
fail() {
  echo "FAIL: $*"; echo "--- stdout"; cat "$OUT"; echo "--- stderr"; cat "$ERR"; exit 1
}
if [[ $LAUNCHER == mpirun ]]; then
  # See drivers/bootstrap/pmix_mpirun_test.sh for why each setting is needed.
  export HOME=${HOME:-$TMP}
  SESSION=$(mktemp -d /tmp/rondo-mpirun.XXXXXX) || exit 1
  trap 'rm -rf "$SESSION"' EXIT
  export TMPDIR=$SESSION OMPI_MCA_orte_tmpdir_base=$SESSION
  export OMPI_MCA_plm=isolated OMPI_MCA_rmaps_base_oversubscribe=1
  unset RONDO_RUN_SOCKET RONDO_RUN_KEY RONDO_RANK RONDO_SIZE
  timeout 240 /usr/bin/mpirun --allow-run-as-root --oversubscribe \
    -x UCX_MEM_MMAP_HOOK_MODE -x RONDO_PROGRESS -n "$N" "$CHECK" "$@" >"$OUT" 2>"$ERR"
else
  timeout 240 "$RUN" -n "$N" "$CHECK" "$@" >"$OUT" 2>"$ERR"
fi
rc=$?
case $EXPECT in
  ok)
    [[ $rc -eq 0 ]] || fail "launcher exited with $rc"
    for c in "$@"; do grep -q "^case $c ok" "$OUT" || fail "case $c did not pass"; done
    n=$(grep -c "^rank [0-9]* ok" "$OUT")
    [[ $n -eq $N ]] || fail "$n of $N ranks finished"
    if [[ $LAUNCHER == mpirun ]]; then
      grep -q "pmix bootstrap" "$OUT" || fail "ranks did not use the PMIx bootstrap"
    fi
    ;;
  death)
    victim=$((N - 1))
    [[ $rc -ne 0 ]] || fail "launcher exited 0 although rank $victim was killed"
    grep -q "rank $victim (pid [0-9]*) was killed by signal 9" "$ERR" ||
      fail "rondo-run did not name rank $victim and signal 9"
    for ((r = 0; r < victim; ++r)); do
      grep -q "^rank $r saw rank $victim fail: ." "$OUT" || fail "rank $r did not see the failure"
    done
    ;;
esac
grep -i "sanitizer" "$ERR" && fail "sanitizer report"
echo "PASS"
