#!/bin/bash
# Multi-process tests of rondo-run with bootstrap_check as the rank program.
# Usage: rondo_run_test.sh RONDO_RUN BOOTSTRAP_CHECK CASE
# No sleeps are used to synchronise: the signal case waits on a fifo.
set -u
RUN=$1
CHECK=$2
CASE=$3
TMP=${TEST_TMPDIR:-$(mktemp -d)}
OUT=$TMP/stdout
ERR=$TMP/stderr

fail() {
  echo "FAIL ($CASE): $*"
  echo "--- stdout"; cat "$OUT" 2>/dev/null
  echo "--- stderr"; cat "$ERR" 2>/dev/null
  exit 1
}
expect_rc() {  # expected actual
  [[ "$2" == "$1" ]] || fail "rondo-run exited with $2, expected $1"
}
expect_in() {  # file pattern [count]
  local n
  n=$(grep -c -- "$2" "$1")
  [[ "$n" -ge "${3:-1}" ]] || fail "expected ${3:-1} line(s) matching '$2' in $(basename "$1"), got $n"
}
not_in() {
  grep -q -- "$2" "$1" && fail "unexpected line matching '$2' in $(basename "$1")"
  return 0
}

case "$CASE" in
  ok)
    "$RUN" -n 4 "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    expect_in "$OUT" "via rondo-run (local [0-3] of 4)" 4
    for r in 0 1 2 3; do expect_in "$OUT" "rank $r ok"; done
    not_in "$ERR" "rondo-run:"
    ;;
  die)
    "$RUN" -n 3 "$CHECK" die >"$OUT" 2>"$ERR"
    rc=$?
    [[ $rc -ne 0 ]] || fail "rondo-run exited 0 although rank 1 was killed"
    expect_rc 137 $rc
    expect_in "$ERR" "rondo-run: rank 1 (pid [0-9]*) was killed by signal 9 (Killed)"
    # The survivors saw kPeerFailed and rank 1 in PollFailures, and exited 0.
    expect_in "$OUT" "rank 0 saw the failure of rank 1: rank 1 (pid [0-9]*) was killed by signal 9"
    expect_in "$OUT" "rank 2 saw the failure of rank 1"
    not_in "$ERR" "rank 0 (pid"
    not_in "$ERR" "rank 2 (pid"
    not_in "$ERR" "FAILED"
    ;;
  kill_grace)
    # Rank 1 dies; the survivors see it, then never exit by themselves.
    "$RUN" -n 3 --kill-grace 0.5 "$CHECK" diehang >"$OUT" 2>"$ERR"
    expect_rc 137 $?
    expect_in "$OUT" "saw the failure of rank 1" 2
    expect_in "$ERR" "rondo-run: killing the 2 ranks still running 0.5 s after the first failure"
    expect_in "$ERR" "rondo-run: rank [02] (pid [0-9]*) was killed by signal 9" 2
    ;;
  wrongkey)
    "$RUN" -n 2 "$CHECK" wrongkey >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    expect_in "$ERR" "rondo-run: refused a connection with a wrong key" 2
    expect_in "$OUT" "wrong key refused: rondo-run refused the connection" 2
    expect_in "$OUT" "rank 0 ok"
    expect_in "$OUT" "rank 1 ok"
    ;;
  missing_program)
    "$RUN" -n 2 rondo-no-such-program --flag >"$OUT" 2>"$ERR"
    expect_rc 127 $?
    expect_in "$ERR" "cannot execute 'rondo-no-such-program': No such file or directory" 2
    expect_in "$ERR" "rondo-run: rank [01] (pid [0-9]*) exited with status 127"
    ;;
  bad_arguments)
    "$RUN" -n 0 "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "rondo-run: -n 0 is out of range; allowed: 1..4096 ranks"
    "$RUN" -n 4097 "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "-n 4097 is out of range"
    "$RUN" -n 2 >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "no program given"
    "$RUN" "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "ranks is required"
    "$RUN" -n 2 --bind socket "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "allowed: auto|none|core"
    "$RUN" -n 2 --timeout 0 "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "--timeout 0"
    # --bind core still runs the job (rank r on CPU r mod #CPUs).
    "$RUN" -n 2 --bind core "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    expect_in "$OUT" "rank 1 ok"
    # Every rank is told where each local rank computes (RONDO_NODE_CPUS,
    # for the engine's placement), and its own entry is its affinity: bound
    # by default when the ranks fit on the CPUs, and with --bind core;
    # rondo-run's whole mask with --bind none and when oversubscribed.
    ncpu=$(nproc)
    for mode in auto core none over; do
      case $mode in
        over) args=(-n $((ncpu + 1))) ;;
        *) args=(-n 2 --bind "$mode") ;;
      esac
      "$RUN" "${args[@]}" sh -c 'echo "$RONDO_LOCAL_RANK|$RONDO_NODE_CPUS|$(taskset -cp $$ | sed "s/.*: //")"' \
        >"$OUT" 2>"$ERR" || true
      python3 - "$OUT" "$mode" "$ncpu" <<'PY' || fail "RONDO_NODE_CPUS ($mode): $(cat "$OUT" "$ERR")"
import sys
lines = [l.strip().split("|") for l in open(sys.argv[1]) if l.count("|") == 2]
mode, ncpu = sys.argv[2], int(sys.argv[3])
n = ncpu + 1 if mode == "over" else 2
assert len(lines) == n, lines
def cpus(text):
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out
for rank, node, own in lines:
    entries = node.split(";")
    assert len(entries) == n, (node, n)
    assert cpus(entries[int(rank)]) == cpus(own), (rank, node, own)
    bound = mode == "core" or (mode == "auto" and ncpu >= 2)
    assert (len(cpus(own)) == 1) == (bound or ncpu == 1), (mode, own)
PY
    done
    ;;
  signal)
    FIFO=$TMP/ready
    rm -f "$FIFO"
    mkfifo "$FIFO" || fail "mkfifo"
    "$RUN" -n 3 "$CHECK" pause "$FIFO" >"$OUT" 2>"$ERR" &
    pid=$!
    # Rank 0 writes "ready" once every rank has passed the barrier.
    read -r -t 25 line <"$FIFO" || { kill -KILL $pid; fail "ranks never became ready"; }
    [[ "$line" == ready ]] || fail "read '$line' from the fifo"
    kill -TERM $pid
    wait $pid
    rc=$?
    expect_rc 143 $rc
    for r in 0 1 2; do
      expect_in "$ERR" "rondo-run: rank $r (pid [0-9]*) was killed by signal 15 (Terminated)"
    done
    ;;
  timeout)
    "$RUN" -n 2 --timeout 0.5 /bin/sleep 60 >"$OUT" 2>"$ERR"
    expect_rc 137 $?
    expect_in "$ERR" "rondo-run: the job ran longer than --timeout 0.5 s"
    expect_in "$ERR" "was killed by signal 9" 2
    ;;
  wrapper)
    # --rank-wrapper puts a command before each rank's, {rank} replaced
    # (bench/cluster/ uses "ip netns exec HOST-{rank}"; these need no root).
    "$RUN" -n 3 --rank-wrapper "env RONDO_WRAPPED={rank}" \
      /bin/sh -c 'echo "rank $RONDO_RANK wrapped as $RONDO_WRAPPED"' >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    for r in 0 1 2; do expect_in "$OUT" "^rank $r wrapped as $r\$"; done
    # Quotes, {rank} inside a word, and a wrapper that execs the program:
    # the bootstrap still works through it (same pid, same socket).
    "$RUN" -n 3 --rank-wrapper "/bin/sh -c 'echo \"\$0 runs \$1\"; exec \"\$@\"' wrapper-of-rank-{rank}" \
      "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    for r in 0 1 2; do
      expect_in "$OUT" "^wrapper-of-rank-$r runs $CHECK\$"
      expect_in "$OUT" "rank $r ok"
    done
    expect_in "$OUT" "via rondo-run (local [0-2] of 3)" 3
    not_in "$ERR" "rondo-run:"
    # The default comes from RONDO_RUN_RANK_WRAPPER, which the ranks do not
    # inherit (their engine would warn about an unknown RONDO_ variable);
    # the option wins over it.
    RONDO_RUN_RANK_WRAPPER="env FROM_ENV={rank}" "$RUN" -n 2 /bin/sh -c \
      'echo "rank $RONDO_RANK from env $FROM_ENV, inherited [${RONDO_RUN_RANK_WRAPPER-unset}]"' >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    for r in 0 1; do expect_in "$OUT" "^rank $r from env $r, inherited \[unset\]\$"; done
    RONDO_RUN_RANK_WRAPPER="env FROM_ENV={rank}" "$RUN" -n 1 --rank-wrapper "env FROM_OPTION=yes" \
      /bin/sh -c 'echo "option ${FROM_OPTION-no} env ${FROM_ENV-no}"' >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    expect_in "$OUT" "^option yes env no\$"
    # An empty variable means no wrapper, as unset.
    RONDO_RUN_RANK_WRAPPER="" "$RUN" -n 1 /bin/sh -c 'echo plain' >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    expect_in "$OUT" "^plain\$"
    # Bad wrapper text: usage error 2, the text and the problem named.
    "$RUN" -n 2 --rank-wrapper "" "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "rondo-run: invalid --rank-wrapper '': it is empty; allowed: a command"
    "$RUN" -n 2 --rank-wrapper "   " "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "it is empty"
    "$RUN" -n 2 --rank-wrapper "ip netns exec 'host-{rank}" "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "invalid --rank-wrapper 'ip netns exec 'host-{rank}': the single quote at offset 14 is never closed"
    "$RUN" -n 2 --rank-wrapper 'env "A={rank}' "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "the double quote at offset 4 is never closed"
    "$RUN" -n 2 --rank-wrapper 'env A=\' "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "it ends with a lone backslash"
    "$RUN" -n 2 --rank-wrapper "ip netns exec host-{rnak}" "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "unknown placeholder '{rnak}'; allowed: {rank}"
    RONDO_RUN_RANK_WRAPPER="env 'X" "$RUN" -n 2 "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 2 $?
    expect_in "$ERR" "invalid RONDO_RUN_RANK_WRAPPER 'env 'X': the single quote at offset 4 is never closed"
    # A wrapper that cannot be executed fails like a missing program.
    "$RUN" -n 2 --rank-wrapper "rondo-no-such-wrapper {rank}" "$CHECK" >"$OUT" 2>"$ERR"
    expect_rc 127 $?
    expect_in "$ERR" "cannot execute 'rondo-no-such-wrapper': No such file or directory" 2
    # The usage text shows the option.
    "$RUN" --help >"$OUT" 2>"$ERR"
    expect_rc 0 $?
    expect_in "$OUT" "--rank-wrapper"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "PASS ($CASE)"
