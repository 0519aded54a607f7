#!/bin/bash
# An autotools project (testdata/autotools: AC_PROG_CC, AC_PROG_CXX, checks
# that mpi.h and MPI_Init are there) configured as MPI software usually is,
#   ./configure CC=rondo-mpicc CXX=rondo-mpicxx && make
# with the installed wrappers on PATH, then run by the installed rondo-run.
# configure exports CC: a wrapper that fell back to $CC called itself forever,
# hence the timeout. Usage: autotools_test.sh <runfiles path of //:install>
# shellcheck source=tools/install_testlib.sh
source "$TEST_SRCDIR/$TEST_WORKSPACE/tools/install_testlib.sh"
need autoreconf autoconf automake make timeout

install="$1"
prefix="$TEST_TMPDIR/prefix"
src="$TEST_TMPDIR/autotools"
install_rondo "$install" "$prefix"
export PATH="$prefix/bin:$PATH"

step "autoreconf -i"
mkdir -p "$src"
cp "$testdata/autotools/configure.ac" "$testdata/autotools/Makefile.am" \
   "$testdata/mpi_sum.c" "$src/"
cp "$testdata/mpi_sum.c" "$src/mpi_sum_cxx.cc"
chmod u+w "$src"/*
cd "$src"
autoreconf -i >autoreconf.log 2>&1 || { cat autoreconf.log; echo "FAIL: autoreconf" >&2; exit 1; }

step "./configure CC=rondo-mpicc CXX=rondo-mpicxx"
# A sanitized librondo.so needs the sanitizer's runtime in every program.
rc=0
timeout -k 10 120 ./configure CC=rondo-mpicc CXX=rondo-mpicxx \
    CFLAGS="-g -O1 $san_flags" CXXFLAGS="-g -O1 $san_flags" >configure.out 2>&1 || rc=$?
cat configure.out
if ((rc == 124 || rc == 137)); then
  echo "FAIL: configure did not finish in 120 s (a wrapper calling itself?)" >&2; exit 1
elif ((rc)); then
  tail -60 config.log; echo "FAIL: configure exited $rc" >&2; exit 1
fi
grep -q "checking for MPI_Init... yes" configure.out || fail "configure did not find MPI_Init"
grep -q "checking whether rondo-mpicxx links an MPI program... yes" configure.out ||
  fail "configure: rondo-mpicxx did not link an MPI program"
grep -qx "CC='rondo-mpicc'" config.log || fail "config.log: CC is not rondo-mpicc"

step "make"
timeout -k 10 120 make >make.out 2>&1 || { cat make.out; echo "FAIL: make" >&2; exit 1; }
cat make.out

step "rondo-run -n 2 / -n 3"
for prog in mpi_sum mpi_sum_cxx; do
  for n in 2 3; do
    out=$(env -u RONDO_PROGRESS rondo-run -n "$n" --timeout 60 "./$prog" 2>&1) ||
      fail "rondo-run -n $n $prog exited $?: $out"
    echo "$prog, $n ranks: $out"
    expect_mpi_sum "$n" "$out"
  done
  linked=$(ldd "./$prog")
  grep -q "$prefix/lib/librondo.so.0" <<<"$linked" ||
    fail "$prog is not linked to the installed librondo.so.0: $linked"
done
finish
