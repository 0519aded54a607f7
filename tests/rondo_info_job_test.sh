#!/bin/bash
# rondo-info inside a 2-rank job: each rank's rails, what wakes its
# background progress, and the measured cost of an idle pass with the
# period it runs at (issue 27: the fallback's cost is printed); the default
# rail to a peer on this node is shm, and ucx with RONDO_SHM=0 (issue 28).
set -euo pipefail
RUN=$1
INFO=$2
rc=0
out=$("$RUN" -n 2 --timeout 120 "$INFO" 2>&1) || rc=$?
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
[ "$rc" -eq 0 ] || fail "rondo-run -n 2 rondo-info exited $rc"
for r in 0 1; do
  grep -Eq "^rank $r rails: 0=[a-z]+ 1=[a-z]+" <<<"$out" || fail "rank $r rails line"
  grep -Eq "^rank $r progress wakes on: rail 0: (the transport's event fd|nothing: polled every [0-9]+ us)" <<<"$out" ||
    fail "rank $r wake-up line"
  line=$(grep -E "^rank $r idle progress pass: " <<<"$out") || fail "rank $r cost line"
  ns=$(sed -E 's/.*pass: ([0-9]+) ns.*/\1/' <<<"$line")
  pct=$(sed -E 's/.*: ([0-9.]+)% of the computation.s core$/\1/' <<<"$line")
  [[ $ns =~ ^[0-9]+$ && $ns -gt 0 ]] || fail "rank $r pass cost '$ns'"
  [[ $pct =~ ^[0-9]+\.[0-9]+$ ]] || fail "rank $r share '$pct'"
  grep -Eq "runs every ([0-9]+ us|20 ms \(the safety net\))" <<<"$line" || fail "rank $r period"
done
# The defaults carry a peer on this node through Rondo's shared-memory
# driver (RONDO_SHM=1, issue 28), the rank itself through loopback.
grep -Eq "^rank 0 rails: 0=loopback 1=shm$" <<<"$out" || fail "rank 0 does not reach rank 1 through shm by default"
grep -Eq "^rank 1 rails: 0=shm 1=loopback$" <<<"$out" || fail "rank 1 does not reach rank 0 through shm by default"
out0=$(RONDO_SHM=0 "$RUN" -n 2 --timeout 120 "$INFO" 2>&1) || fail "RONDO_SHM=0 rondo-run -n 2 rondo-info failed: $out0"
grep -Eq "^rank 0 rails: 0=loopback 1=ucx$" <<<"$out0" || fail "RONDO_SHM=0: rank 0 does not reach rank 1 through ucx: $out0"
# The eager limit follows the node, not the rail: a peer on this node gets
# RONDO_EAGER_LIMIT through UCX too (RONDO_NET_EAGER_LIMIT is for other
# nodes; bench/cluster:cluster_test checks that side).
grep -Eq "^rank 0 eager limits: 0=16384 1=16384$" <<<"$out" || fail "rank 0 eager limits on one node: $(grep 'eager limits' <<<"$out")"
grep -Eq "^rank 1 eager limits: 0=16384 1=16384$" <<<"$out0" || fail "RONDO_SHM=0: rank 1 eager limits on one node: $(grep 'eager limits' <<<"$out0")"
out1=$(RONDO_EAGER_LIMIT=4096 RONDO_NET_EAGER_LIMIT=1024 "$RUN" -n 2 --timeout 120 "$INFO" 2>&1) || fail "rondo-info with eager limits set failed: $out1"
grep -Eq "^rank 1 eager limits: 0=4096 1=4096$" <<<"$out1" || fail "RONDO_EAGER_LIMIT=4096 on one node: $(grep 'eager limits' <<<"$out1")"
echo PASS
