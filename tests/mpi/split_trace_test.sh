#!/bin/bash
# The split point moves the right tree levels to the right threads, checked
# through the engine trace: for each S of a 4-rank job (H = 2) with one
# dedicated communication core (RONDO_COMM_CORES=1: the progress threads
# there, the application threads bound elsewhere, the timer off), every
# step of levels 1..S must have run inline on an application thread and
# every other level on a progress thread. The verifier must also reject the
# traces of S when told another S (the check can fail).
# Usage: split_trace_test.sh RONDO_RUN PROGRAM VERIFY
set -u
RUN=$1 PROG=$2 VERIFY=$3
TMP=${TEST_TMPDIR:-$(mktemp -d)}
export UCX_MEM_MMAP_HOOK_MODE=none
export RONDO_COMM_CORES=1 RONDO_PROGRESS=numa RONDO_TIMER_US=0
fail=0
for S in 0 1 2; do
  dir=$TMP/s$S
  rm -rf "$dir" && mkdir -p "$dir"
  echo "== S = $S"
  RONDO_TRACE="$dir/trace.%r.json" "$RUN" -n 4 --timeout 120 "$PROG" --s $S \
      >"$dir/out" 2>&1
  rc=$?
  cat "$dir/out"
  if [[ $rc -ne 0 ]] || ! grep -q "split_trace_check: ok" "$dir/out"; then
    echo "FAIL: the run with S = $S failed (exit $rc)"
    fail=1
    continue
  fi
  n=$(ls "$dir"/trace.*.json 2>/dev/null | wc -l)
  if [[ $n -ne 4 ]]; then
    echo "FAIL: expected 4 trace files, found $n"
    fail=1
    continue
  fi
  "$VERIFY" --s $S "$dir"/trace.*.json || fail=1
  # Told the wrong S, the verifier must refuse these traces.
  other=$(( S == 0 ? 1 : S - 1 ))
  if "$VERIFY" --s $other "$dir"/trace.*.json >"$dir/wrong" 2>&1; then
    echo "FAIL: the verifier accepted the S = $S traces as S = $other"
    cat "$dir/wrong"
    fail=1
  else
    echo "(the verifier rejects these traces as S = $other, as it must)"
  fi
done
[[ $fail -eq 0 ]] && echo "split_trace_test: ok" || echo "split_trace_test: FAILED"
exit $fail
