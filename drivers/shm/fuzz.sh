#!/bin/sh
# Builds the shm cell decoder's libFuzzer target with clang (outside Bazel,
# whose auto-configured toolchain is gcc) and runs it.
#
#   drivers/shm/fuzz.sh [SECONDS]        (default 60; run from anywhere)
#
# Environment: CXX (default clang++), OUT (default /tmp/cell_fuzzer), WORK
# (scratch corpus and crashes, default /tmp/cell_fuzzer.work).
set -eu

SECONDS_TO_RUN=${1:-60}
CXX=${CXX:-clang++}
OUT=${OUT:-/tmp/cell_fuzzer}
WORK=${WORK:-/tmp/cell_fuzzer.work}

cd "$(dirname "$0")/../.."  # repository root, so that -I. finds the headers

"$CXX" -std=c++20 -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I. drivers/shm/cell.cc drivers/shm/cell_fuzzer.cc -o "$OUT"

mkdir -p "$WORK/corpus" "$WORK/artifacts"
echo "fuzzing for ${SECONDS_TO_RUN}s: $OUT $WORK/corpus"
# 4 + a ring of 4 KiB: the whole input the target reads.
"$OUT" -max_total_time="$SECONDS_TO_RUN" -max_len=4100 \
  -artifact_prefix="$WORK/artifacts/" "$WORK/corpus"
