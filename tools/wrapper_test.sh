#!/bin/bash
# The installed compiler wrappers, rondo-mpicc and rondo-mpicxx: which
# compiler they run (RONDO_MPICC_CC / RONDO_MPICXX_CXX, else the one recorded
# at install time, never CC/CXX), the errors when there is none or it would
# loop, the -show/-showme options, and arguments passed word for word.
# Usage: wrapper_test.sh <runfiles path of //:install>
# shellcheck source=tools/install_testlib.sh
source "$TEST_SRCDIR/$TEST_WORKSPACE/tools/install_testlib.sh"
need timeout

install="$1"
[[ "$install" == /* ]] || install="$PWD/$install"
tmp="$TEST_TMPDIR"
prefix="$tmp/prefix"
install_rondo "$install" "$prefix"
mpicc="$prefix/bin/rondo-mpicc"
mpicxx="$prefix/bin/rondo-mpicxx"
version=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion rondo)
inc="-I$prefix/include/rondo/nmad/mpi/include"
link="-L$prefix/lib -Wl,-rpath,$prefix/lib -lrondo"

# expect_error WANT CMD...: CMD fails (within 20 s) with a message holding WANT.
expect_error() {
  local want="$1" out rc=0
  shift
  out=$(timeout -k 5 20 "$@" 2>&1) || rc=$?
  if ((rc == 0)); then
    fail "'$*' succeeded, want an error with '$want': $out"
  elif ((rc == 124)); then
    fail "'$*' did not finish in 20 s"
  elif [[ "$out" != *"$want"* ]]; then
    fail "'$*': message '$out' lacks '$want'"
  fi
}

# ---- the recorded compiler ----
step "the compilers recorded at install time"
cc=$("$mpicc" -show | awk '{print $1}')
cxx=$("$mpicxx" -show | awk '{print $1}')
echo "rondo-mpicc: $cc, rondo-mpicxx: $cxx"
[[ "$cc" == /* && -x "$cc" ]] || fail "rondo-mpicc's compiler '$cc' is not an absolute executable"
[[ "$cxx" == /* && -x "$cxx" ]] || fail "rondo-mpicxx's compiler '$cxx' is not an absolute executable"
# The one that built Rondo (Bazel's toolchain), as install.bzl records it.
built=$(awk '$1 == "compiler" {print $3}' "$install.manifest")
[[ -z "$built" || "$cc" == "$built" ]] || fail "rondo-mpicc compiles with $cc, Rondo was built with $built"
"$cxx" --version >/dev/null || fail "$cxx --version failed"
[[ "$("$cxx" -dumpmachine)" == "$("$cc" -dumpmachine)" ]] ||
  fail "$cc and $cxx target different machines"
grep -q "rondo-mpicc compiles with $cc, rondo-mpicxx with $cxx" "$tmp/install.log" ||
  fail "install does not say which compilers the wrappers use: $(cat "$tmp/install.log")"

step "CC and CXX are never read"
out=$(CC=/nonexistent "$mpicc" --showme)
[[ "$out" == "$cc $inc $link" ]] || fail "CC=/nonexistent rondo-mpicc --showme: $out"
out=$(CXX=/nonexistent CC=/nonexistent "$mpicxx" --showme)
[[ "$out" == "$cxx $inc $link" ]] || fail "CXX=/nonexistent rondo-mpicxx --showme: $out"
# As under `./configure CC=rondo-mpicc`: CC names the wrapper itself.
cat >"$tmp/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  printf("%s, %d rank(s)\n", MSG, size);
  MPI_Finalize();
  return 0;
}
C
cd "$tmp"
CC="$mpicc" CXX="$mpicxx" timeout -k 5 60 "$mpicc" $san_flags '-DMSG="CC is  the wrapper"' \
    hello.c -o hello || fail "CC=rondo-mpicc rondo-mpicc hello.c failed"

# ---- the show options ----
step "-show, -showme:*, -compile_info, -link_info"
expect_output() {  # expect_output WANT CMD...
  local want="$1" out
  shift
  out=$("$@" 2>&1) || { fail "'$*' exited $?: $out"; return; }
  [[ "$out" == "$want" ]] || fail "'$*': got '$out', want '$want'"
}
for dash in - --; do
  expect_output "$inc" "$mpicc" "${dash}showme:compile"
  expect_output "$link" "$mpicc" "${dash}showme:link"
  expect_output "$prefix/include/rondo/nmad/mpi/include" "$mpicc" "${dash}showme:incdirs"
  expect_output "$prefix/lib" "$mpicc" "${dash}showme:libdirs"
  expect_output "rondo" "$mpicc" "${dash}showme:libs"
  expect_output "rondo-mpicc: Rondo $version (Language: C)" "$mpicc" "${dash}showme:version"
  expect_output "rondo-mpicxx: Rondo $version (Language: C++)" "$mpicxx" "${dash}showme:version"
done
expect_output "$cc $inc -O2 prog.c -o prog $link" "$mpicc" -O2 prog.c -show -o prog
expect_output "$cc $inc prog.c $link" "$mpicc" -showme prog.c
expect_output "$cc $inc -c prog.c" "$mpicc" -c prog.c -showme
expect_output "$cc $inc prog.c" "$mpicc" -compile_info prog.c
expect_output "$cc $inc prog.c" "$mpicc" -compile-info prog.c
expect_output "$cc $inc prog.c -o prog $link" "$mpicc" -link_info prog.c -o prog
expect_output "$cc $inc prog.c $link" "$mpicc" -link-info prog.c
expect_output "$cxx $inc -c 'a b.cc' '-DS=\"x y\"' 'it'\\''s'" "$mpicxx" -c 'a b.cc' -DS='"x y"' "it's" -show
expect_error "unknown option '--showme:frobnicate'; allowed: -show" "$mpicc" --showme:frobnicate

step "--version"
out=$(CC=/nonexistent "$mpicc" --version) || fail "rondo-mpicc --version exited $?"
[[ "$(head -1 <<<"$out")" == "$("$cc" --version | head -1)" ]] ||
  fail "rondo-mpicc --version does not start with $cc's version: $out"
[[ "$(tail -1 <<<"$out")" == "rondo-mpicc: Rondo $version (MadMPI, MPI 3.1), compiler: $cc (recorded at install time)" ]] ||
  fail "rondo-mpicc --version does not end with Rondo's: $out"
out=$(RONDO_MPICXX_CXX="$cxx" "$mpicxx" --version) || fail "rondo-mpicxx --version exited $?"
[[ "$(tail -1 <<<"$out")" == "rondo-mpicxx: Rondo $version (MadMPI, MPI 3.1), compiler: $cxx (from RONDO_MPICXX_CXX)" ]] ||
  fail "rondo-mpicxx --version: $out"
expect_output "$("$cc" -dumpversion)" "$mpicc" -dumpversion

# ---- arguments pass word for word, in order ----
step "arguments: order and quoting"
# A "compiler" that prints its arguments, one per line.
cat >"$tmp/argv" <<'SH'
#!/bin/sh
for a do printf '[%s]\n' "$a"; done
SH
chmod +x "$tmp/argv"
out=$(RONDO_MPICC_CC="$tmp/argv --first" "$mpicc" -O2 'my prog.c' -o 'my prog' \
      -DX='"q  r"' '*' "it's" '' -lm)
want=$(printf '[%s]\n' --first "$inc" -O2 'my prog.c' -o 'my prog' -DX='"q  r"' '*' "it's" '' -lm \
       -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lrondo)
[[ "$out" == "$want" ]] || fail "arguments reached the compiler as:"$'\n'"$out"$'\n'"want:"$'\n'"$want"
out=$(RONDO_MPICC_CC="$tmp/argv" "$mpicc" -c 'a b.c')
[[ "$out" == "$(printf '[%s]\n' "$inc" -c 'a b.c')" ]] || fail "-c: no link flags expected: $out"
out=$(RONDO_MPICC_CC="$tmp/argv" "$mpicc" -E -dM x.c)
[[ "$out" == "$(printf '[%s]\n' "$inc" -E -dM x.c)" ]] || fail "-E: no link flags expected: $out"

# A real compile: a define with two spaces, a source file and an output with one.
cp hello.c "my hello.c"
if timeout -k 5 60 "$mpicc" $san_flags '-DMSG="hello,  world"' "my hello.c" -o "my hello"; then
  out=$(env -u RONDO_PROGRESS "$prefix/bin/rondo-run" -n 2 --timeout 60 "./my hello" 2>&1) ||
    fail "rondo-run -n 2 './my hello' exited $?: $out"
  [[ "$out" == *"hello,  world, 2 rank(s)"* ]] || fail "'my hello' printed: $out"
else
  fail "rondo-mpicc '-DMSG=\"hello,  world\"' 'my hello.c' failed"
fi
if timeout -k 5 60 "$mpicxx" $san_flags -x c++ '-DMSG="C++,  too"' "my hello.c" -o hello_cxx; then
  out=$(env -u RONDO_PROGRESS "$prefix/bin/rondo-run" -n 2 --timeout 60 ./hello_cxx 2>&1) ||
    fail "rondo-run -n 2 ./hello_cxx exited $?: $out"
  [[ "$out" == *"C++,  too, 2 rank(s)"* ]] || fail "hello_cxx printed: $out"
else
  fail "rondo-mpicxx -x c++ 'my hello.c' failed"
fi

# ---- errors ----
step "errors: bad compiler, no compiler, loops"
# A path that cannot exist (not /nonexistent: Debian's HOME for nobody,
# which a tool running as nobody may create).
missing="$tmp/no-such-dir/cc"
expect_error "the C compiler '$missing' (from RONDO_MPICC_CC) is not found" \
  env RONDO_MPICC_CC="$missing" "$mpicc" hello.c
expect_error "the C compiler '$tmp' (from RONDO_MPICC_CC) is not an executable file" \
  env RONDO_MPICC_CC="$tmp" "$mpicc" hello.c
expect_error "the C++ compiler 'no-such-cxx' (from RONDO_MPICXX_CXX) is not found in PATH" \
  env RONDO_MPICXX_CXX=no-such-cxx "$mpicxx" hello.c
expect_error "Invalid value for RONDO_MPICC_CC: ' '. Expected: a C compiler command" \
  env RONDO_MPICC_CC=' ' "$mpicc" hello.c
expect_error "the C compiler '$mpicc' (from RONDO_MPICC_CC) is rondo-mpicc itself" \
  env RONDO_MPICC_CC="$mpicc" "$mpicc" hello.c
ln -sf "$mpicc" "$tmp/mpicc"
expect_error "the C compiler 'mpicc' (from RONDO_MPICC_CC) is rondo-mpicc itself" \
  env PATH="$tmp:$PATH" RONDO_MPICC_CC=mpicc "$mpicc" hello.c
# A script that calls the wrapper back with the same compiler: a loop.
printf '#!/bin/sh\nexec "%s" "$@"\n' "$mpicxx" >"$tmp/loop-cxx"
chmod +x "$tmp/loop-cxx"
expect_error "rondo-mpicxx: called again by the compiler it runs ('$tmp/loop-cxx', from RONDO_MPICXX_CXX): a loop" \
  env RONDO_MPICXX_CXX="$tmp/loop-cxx" "$mpicxx" -c hello.c
# ... but one that calls it with another compiler is no loop.
printf '#!/bin/sh\nRONDO_MPICC_CC="%s" exec "%s" "$@"\n' "$cc" "$mpicc" >"$tmp/outer-cc"
chmod +x "$tmp/outer-cc"
RONDO_MPICC_CC="$tmp/outer-cc" timeout -k 5 20 "$mpicc" $san_flags '-DMSG="x"' -c hello.c -o nested.o ||
  fail "a compiler script calling rondo-mpicc with another compiler was refused"

# ---- install: the compiler found on PATH, or none ----
# A copy of //:install whose manifest names no toolchain compiler.
cp "$install" "$tmp/inst"
grep -v '^compiler ' "$install.manifest" >"$tmp/inst.manifest"
tools="$tmp/tools"
mkdir -p "$tools" "$tmp/fakebin"
for t in awk sed cp mv ln mkdir chmod dirname basename cat rm; do
  ln -sf "$(command -v "$t")" "$tools/$t"
done
printf '#!/bin/sh\nexec "%s" "$@"\n' "$cc" >"$tmp/fakebin/gcc"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$cxx" >"$tmp/fakebin/g++"
chmod +x "$tmp/fakebin/gcc" "$tmp/fakebin/g++"

step "install without a toolchain compiler: gcc and g++ from PATH"
PATH="$tmp/fakebin:$tools" "$tmp/inst" --prefix "$tmp/p2" >"$tmp/p2.log" 2>&1 ||
  fail "install into $tmp/p2 failed: $(cat "$tmp/p2.log")"
inc2="-I$tmp/p2/include/rondo/nmad/mpi/include"
expect_output "$tmp/fakebin/gcc $inc2 -c x.c" env -u CC "$tmp/p2/bin/rondo-mpicc" -show -c x.c
expect_output "$tmp/fakebin/g++ $inc2 -c x.cc" env -u CXX "$tmp/p2/bin/rondo-mpicxx" -show -c x.cc
step "install with no compiler at all"
PATH="$tools" "$tmp/inst" --prefix "$tmp/p3" >"$tmp/p3.log" 2>&1 ||
  fail "install into $tmp/p3 failed: $(cat "$tmp/p3.log")"
grep -q "no C compiler found: set RONDO_MPICC_CC" "$tmp/p3.log" ||
  fail "install does not say that it found no compiler: $(cat "$tmp/p3.log")"
expect_error "no C compiler: RONDO_MPICC_CC is not set and none was recorded at install time" \
  env -u RONDO_MPICC_CC CC="$cc" "$tmp/p3/bin/rondo-mpicc" -c hello.c
expect_error "no C++ compiler: RONDO_MPICXX_CXX is not set and none was recorded at install time" \
  env -u RONDO_MPICXX_CXX CXX="$cxx" "$tmp/p3/bin/rondo-mpicxx" -c hello.c
expect_output "$("$cc" -dumpversion)" env RONDO_MPICC_CC="$cc" "$tmp/p3/bin/rondo-mpicc" -dumpversion
finish
