#!/bin/bash
# A CMake project (testdata/cmake: find_package(MPI REQUIRED)) pointed at the
# installed wrappers with -DMPI_C_COMPILER / -DMPI_CXX_COMPILER, as clusters'
# MPI libraries are. FindMPI asks them for their flags (-showme:compile,
# -showme:link); the programs are built by CMake's compilers and run by the
# installed rondo-run. Usage: cmake_test.sh <runfiles path of //:install>
# shellcheck source=tools/install_testlib.sh
source "$TEST_SRCDIR/$TEST_WORKSPACE/tools/install_testlib.sh"
need cmake make timeout

install="$1"
prefix="$TEST_TMPDIR/prefix"
src="$TEST_TMPDIR/cmake"
build="$TEST_TMPDIR/cmake-build"
install_rondo "$install" "$prefix"

step "cmake -DMPI_C_COMPILER=$prefix/bin/rondo-mpicc -DMPI_CXX_COMPILER=.../rondo-mpicxx"
mkdir -p "$src"
cp "$testdata/cmake/CMakeLists.txt" "$testdata/mpi_sum.c" "$src/"
chmod u+w "$src"/*
rc=0
timeout -k 10 180 cmake -S "$src" -B "$build" \
    -DMPI_C_COMPILER="$prefix/bin/rondo-mpicc" \
    -DMPI_CXX_COMPILER="$prefix/bin/rondo-mpicxx" \
    -DCMAKE_C_FLAGS="$san_flags" -DCMAKE_CXX_FLAGS="$san_flags" >"$TEST_TMPDIR/cmake.out" 2>&1 || rc=$?
cat "$TEST_TMPDIR/cmake.out"
((rc == 0)) || { echo "FAIL: cmake exited $rc" >&2; exit 1; }
out=$(cat "$TEST_TMPDIR/cmake.out")
for want in "MPI_C_LIBRARIES=$prefix/lib/librondo.so" \
            "MPI_C_INCLUDE_DIRS=$prefix/include/rondo/nmad/mpi/include" \
            "MPI_C_VERSION=3.1" "MPI_CXX_LIBRARIES=$prefix/lib/librondo.so"; do
  grep -qx -- "-- rondo-test: $want" <<<"$out" || fail "FindMPI: want $want"
done

step "cmake --build"
timeout -k 10 180 cmake --build "$build" >"$TEST_TMPDIR/build.out" 2>&1 ||
  { cat "$TEST_TMPDIR/build.out"; echo "FAIL: cmake --build" >&2; exit 1; }

step "rondo-run -n 2"
for prog in mpi_sum mpi_sum_cxx; do
  out=$(env -u RONDO_PROGRESS "$prefix/bin/rondo-run" -n 2 --timeout 60 "$build/$prog" 2>&1) ||
    fail "rondo-run -n 2 $prog exited $?: $out"
  echo "$prog: $out"
  expect_mpi_sum 2 "$out"
  linked=$(ldd "$build/$prog")
  grep -q "$prefix/lib/librondo.so.0" <<<"$linked" ||
    fail "$prog is not linked to the installed librondo.so.0: $linked"
done
finish
