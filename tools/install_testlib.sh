# Sourced by the tests that install Rondo into a temporary prefix and build
# MPI programs outside Bazel (wrapper_test, autotools_test, cmake_test).
#   source "$TEST_SRCDIR/$TEST_WORKSPACE/tools/install_testlib.sh"
#   install_rondo "$install" "$prefix"   # sets san_flags
#   ...; fail "what went wrong"; ...
#   finish                               # exits 1 if anything failed
set -euo pipefail

testdata="$TEST_SRCDIR/$TEST_WORKSPACE/tools/testdata"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
step() { echo "--- $*"; }
finish() {
  if ((failures)); then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "PASS"
}

# need TOOL...: the test's tools are on the machine (.ci/install-deps).
need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null ||
      { echo "FAIL: $tool is not installed (run .ci/install-deps)" >&2; exit 1; }
  done
}

# install_rondo INSTALL PREFIX: runs //:install (its runfiles path) into
# PREFIX, exits on failure. Sets san_flags to the sanitizer flags that programs
# linking the installed librondo.so need: a sanitizer build (bazel test
# --config=asan) installs a sanitized library.
install_rondo() {
  local install="$1" prefix="$2" log="$TEST_TMPDIR/install.log"
  "$install" --prefix "$prefix" >"$log" 2>&1 ||
    { cat "$log"; echo "FAIL: install into $prefix failed" >&2; exit 1; }
  local needed
  needed=$(objdump -p "$prefix/lib/librondo.so.0" | awk '$1 == "NEEDED" {print $2}')
  san_flags=""
  [[ "$needed" != *libasan* ]] || san_flags+=" -fsanitize=address"
  [[ "$needed" != *libubsan* ]] || san_flags+=" -fsanitize=undefined"
  [[ "$needed" != *libtsan* ]] || san_flags+=" -fsanitize=thread"
  san_flags="${san_flags# }"
  [[ -z "$san_flags" ]] || echo "sanitized build: compiling with $san_flags"
}

# expect_mpi_sum RANKS OUTPUT: OUTPUT is mpi_sum's line for RANKS ranks
# (testdata/mpi_sum.c: the sum of (r + 1)^2 over the ranks, and the ring).
expect_mpi_sum() {
  local n="$1" out="$2"
  local want="mpi_sum: ranks=$n sum=$((n * (n + 1) * (2 * n + 1) / 6)) ring=ok"
  [[ "$out" == *"$want"* ]] || fail "want '$want', got: $out"
}
