#!/bin/sh
# Builds the nmad wire decoder's libFuzzer target with clang (outside Bazel,
# whose auto-configured toolchain is gcc) and runs it on the seed corpus.
#
#   nmad/fuzz.sh [SECONDS]        (default 60; run from anywhere)
#
# The checked-in seeds (nmad/testdata/wire_corpus/) are read-only inputs; new
# interesting inputs go to a scratch corpus under $WORK (default
# /tmp/wire_fuzzer.work), crashes to $WORK/artifacts/. Reproduce one with
#   /tmp/wire_fuzzer $WORK/artifacts/crash-...
# Environment: CXX (default clang++), OUT (default /tmp/wire_fuzzer), WORK,
# JOBS (parallel fuzzing jobs, default 1).
set -eu

SECONDS_TO_RUN=${1:-60}
CXX=${CXX:-clang++}
OUT=${OUT:-/tmp/wire_fuzzer}
WORK=${WORK:-/tmp/wire_fuzzer.work}
JOBS=${JOBS:-1}

cd "$(dirname "$0")/.."  # repository root, so that -I. finds nmad/wire.h

"$CXX" -std=c++20 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I. nmad/wire.cc nmad/dynamic_bcast.cc nmad/wire_fuzzer.cc -o "$OUT"

mkdir -p "$WORK/corpus" "$WORK/artifacts"
echo "fuzzing for ${SECONDS_TO_RUN}s: $OUT $WORK/corpus nmad/testdata/wire_corpus"
# -max_len: the largest packet nmad sends is 1 MiB, but the decoder's logic is
# exercised by small packets; 4 KiB keeps executions fast.
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
  "$OUT" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -print_final_stats=1 \
  $( [ "$JOBS" -gt 1 ] && echo "-jobs=$JOBS -workers=$JOBS" ) \
  -artifact_prefix="$WORK/artifacts/" \
  "$WORK/corpus" nmad/testdata/wire_corpus
