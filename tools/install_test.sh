#!/bin/bash
# End-to-end test of `bazel run //:install`: installs into a temporary prefix,
# checks the layout, builds a C++ and a C program outside Bazel with
# pkg-config, runs them against the installed librondo.so, and runs the
# installed tools. Usage: install_test.sh <runfiles path of //:install>
set -euo pipefail

install="$1"
srcdir="$TEST_SRCDIR/$TEST_WORKSPACE/tools/testdata"
tmp="$TEST_TMPDIR"
prefix="$tmp/prefix"
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
step() { echo "--- $*"; }

# ---- argument errors: exit 2 and say why ----
expect_usage_error() {
  local want="$1"; shift
  local out rc=0
  out=$("$install" "$@" 2>&1) || rc=$?
  if [[ $rc -ne 2 ]]; then
    fail "install $* exited $rc, want 2 ($out)"
  elif [[ "$out" != *"$want"* ]]; then
    fail "install $*: message '$out' lacks '$want'"
  fi
}
step "argument errors"
expect_usage_error "--prefix DIR is required"
expect_usage_error "absolute path" --prefix relative/dir
expect_usage_error "unknown argument '--frobnicate'" --prefix "$prefix" --frobnicate
expect_usage_error "--prefix needs a directory" --prefix
[[ ! -e "$prefix" ]] || fail "a failed install created $prefix"
help=$("$install" --help)
grep -q -- "--prefix DIR" <<<"$help" || fail "--help says nothing of --prefix"

# ---- install ----
step "install into $prefix"
"$install" --prefix "$prefix/" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; echo "FAIL: install failed" >&2; exit 1; }
cat "$tmp/install.log"
# Twice: reinstalling over an existing prefix works (files replaced).
"$install" --prefix="$prefix" >/dev/null || fail "second install failed"

step "installed files"
for f in bin/rondo-run bin/rondo-info lib/librondo.so.0; do
  [[ -f "$prefix/$f" && -x "$prefix/$f" ]] || fail "$f missing or not executable"
done
[[ -L "$prefix/lib/librondo.so" && "$(readlink "$prefix/lib/librondo.so")" == librondo.so.0 ]] ||
  fail "lib/librondo.so is not a symlink to librondo.so.0"
for h in engine/engine.h engine/status.h engine/rondo_engine.h engine/task.h \
         topology/topology.h topology/cpuset.h topology/check.h \
         queues/task_queue.h queues/spin_queue.h queues/lockfree_queue.h \
         drivers/driver.h drivers/bootstrap/bootstrap.h \
         drivers/ucx/ucx_driver.h drivers/loopback/loopback_driver.h \
         nmad/core.h nmad/options.h nmad/wire.h nmad/strategies/strategy.h; do
  [[ -f "$prefix/include/rondo/$h" ]] || fail "header $h not installed"
done
for h in engine/internal/futex.h topology/internal/text.h \
         drivers/bootstrap/internal/protocol.h drivers/bootstrap/pmix_bootstrap.h \
         drivers/bootstrap/singleton_bootstrap.h drivers/bootstrap/launcher_bootstrap.h; do
  [[ ! -e "$prefix/include/rondo/$h" ]] || fail "private header $h installed"
done
pc="$prefix/lib/pkgconfig/rondo.pc"
[[ -f "$pc" ]] || { fail "rondo.pc missing"; exit 1; }
grep -qx "prefix=$prefix" "$pc" || fail "rondo.pc: prefix is not $prefix: $(grep ^prefix= "$pc")"
grep -q "@" "$pc" && fail "rondo.pc has unsubstituted @...@: $(grep @ "$pc")"

step "librondo.so"
soname=$(objdump -p "$prefix/lib/librondo.so.0" | awk '$1 == "SONAME" {print $2}')
[[ "$soname" == librondo.so.0 ]] || fail "SONAME is '$soname', want librondo.so.0"
# The public API is exported (mangled names of a few entry points).
syms=$(nm -D --defined-only "$prefix/lib/librondo.so.0")
for sym in rondo_engine_init rondo_task_submit \
           _ZN5rondo6engine6Engine6SubmitERNS0_4TaskE \
           _ZN5rondo4nmad4Core6CreateE \
           _ZN5rondo7drivers9bootstrap24BootstrapFromEnvironment \
           _ZN5rondo4nmad7Session5Isend; do
  grep -q " T $sym" <<<"$syms" || fail "librondo.so does not export $sym"
done
# ldd's output is read once: `ldd | grep -q` under pipefail fails at random
# when grep exits before ldd has written everything (SIGPIPE).
deps=$(ldd "$prefix/lib/librondo.so.0")
if grep -q "not found" <<<"$deps"; then
  fail "librondo.so has unresolved dependencies: $deps"
fi
for lib in libhwloc libucp libpmix; do
  grep -q "$lib" <<<"$deps" || fail "librondo.so does not depend on $lib"
done

# A sanitizer build (bazel test --config=asan) installs a sanitized
# librondo.so: programs that link it need the same runtime, loaded first.
needed=$(objdump -p "$prefix/lib/librondo.so.0" | awk '$1 == "NEEDED" {print $2}')
san=()
[[ "$needed" == *libasan* ]] && san+=(-fsanitize=address)
[[ "$needed" == *libubsan* ]] && san+=(-fsanitize=undefined)
[[ "$needed" == *libtsan* ]] && san+=(-fsanitize=thread)
((${#san[@]} == 0)) || echo "sanitized build: compiling with ${san[*]}"

# ---- pkg-config ----
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
step "pkg-config: $(pkg-config --modversion rondo) / $(pkg-config --cflags --libs rondo)"
[[ "$(pkg-config --modversion rondo)" == 0.4.0 ]] || fail "pkg-config version"
cflags=$(pkg-config --cflags rondo)
[[ " $cflags " == *" -I$prefix/include/rondo "* ]] || fail "Cflags lack -I$prefix/include/rondo: $cflags"
[[ " $cflags " == *" -std=c++20 "* ]] || fail "Cflags lack -std=c++20: $cflags"

# ---- every installed header compiles on its own ----
step "headers are self-contained"
while IFS= read -r h; do
  rel="${h#"$prefix/include/rondo/"}"
  lang=c++; std=-std=c++20
  [[ "$rel" == engine/rondo_engine.h ]] && { lang=c; std=-std=c11; }
  echo "#include \"$rel\"" | $([[ $lang == c ]] && echo gcc || echo g++) \
      -x "$lang" "$std" -Wall -Wextra -Werror -fsyntax-only \
      -I"$prefix/include/rondo" - 2>"$tmp/header.err" ||
    { fail "header $rel does not compile alone:"; cat "$tmp/header.err" >&2; }
done < <(find "$prefix/include/rondo" -name '*.h' | sort)

# ---- C++ program outside Bazel ----
step "C++: g++ outside.cc \$(pkg-config --cflags --libs rondo)"
cd "$tmp"
if g++ -Wall -Wextra -Werror ${san[@]+"${san[@]}"} -o outside "$srcdir/outside.cc" $(pkg-config --cflags --libs rondo); then
  out=$(env -u RONDO_PROGRESS LD_LIBRARY_PATH="$prefix/lib" ./outside 2>&1) ||
    fail "outside exited $?: $out"
  echo "$out"
  [[ "$out" == *"rank 0 of 1, singleton bootstrap"* ]] || fail "outside: no singleton Core"
  [[ "$out" == *"outside: ok"* ]] || fail "outside did not finish"
  linked=$(LD_LIBRARY_PATH="$prefix/lib" ldd ./outside)
  grep -q "$prefix/lib/librondo.so.0" <<<"$linked" ||
    fail "outside is not linked to the installed librondo.so.0"
else
  fail "g++ could not build outside.cc"
fi

# ---- C program outside Bazel (C API) ----
step "C: gcc outside_c.c \$(pkg-config --cflags-only-I --libs rondo)"
if gcc -std=c11 -Wall -Wextra -Werror ${san[@]+"${san[@]}"} -o outside_c "$srcdir/outside_c.c" \
    $(pkg-config --cflags-only-I --libs rondo); then
  out=$(LD_LIBRARY_PATH="$prefix/lib" ./outside_c 2>&1) || fail "outside_c exited $?: $out"
  echo "$out"
  [[ "$out" == *"outside_c: ok"* ]] || fail "outside_c did not finish"
else
  fail "gcc could not build outside_c.c"
fi

# ---- an MPI program through rondo-mpicc, run by rondo-run ----
step "MPI: rondo-mpicc outside_mpi.c, rondo-run -n 3"
if "$prefix/bin/rondo-mpicc" -std=c11 -Wall -Wextra -Werror ${san[@]+"${san[@]}"} \
    -o outside_mpi "$srcdir/outside_mpi.c"; then
  out=$(env -u RONDO_PROGRESS "$prefix/bin/rondo-run" -n 3 --timeout 60 ./outside_mpi 2>&1) ||
    fail "rondo-run -n 3 outside_mpi exited $?: $out"
  echo "$out"
  [[ "$out" == *"outside_mpi: ok (3 ranks)"* ]] || fail "outside_mpi did not finish"
else
  fail "rondo-mpicc could not build outside_mpi.c"
fi
step "MPI: rondo-mpicxx (the same program as C++), pkg-config rondo-mpi"
"$prefix/bin/rondo-mpicxx" -x c++ -std=c++20 -Wall -Werror ${san[@]+"${san[@]}"} \
    -o outside_mpicxx "$srcdir/outside_mpi.c" || fail "rondo-mpicxx failed"
out=$(env -u RONDO_PROGRESS "$prefix/bin/rondo-run" -n 2 --timeout 60 ./outside_mpicxx 2>&1) ||
  fail "outside_mpicxx exited $?: $out"
[[ "$out" == *"outside_mpi: ok (2 ranks)"* ]] || fail "outside_mpicxx did not finish: $out"
[[ "$(pkg-config --modversion rondo-mpi)" == 0.4.0 ]] || fail "rondo-mpi.pc version"
gcc -std=c11 ${san[@]+"${san[@]}"} -o outside_mpi_pc "$srcdir/outside_mpi.c" \
    $(pkg-config --cflags --libs rondo-mpi) || fail "gcc with pkg-config rondo-mpi failed"
[[ "$("$prefix/bin/rondo-mpicc" --showme:compile)" == "-I$prefix/include/rondo/nmad/mpi/include" ]] ||
  fail "rondo-mpicc --showme:compile"

# ---- the profiling interface: a tool library linked ahead of librondo ----
step "PMPI: a counting tool as a shared library ahead of librondo.so"
python3 "$TEST_SRCDIR/$TEST_WORKSPACE/tools/mpi_pmpi.py" --root "$TEST_SRCDIR/$TEST_WORKSPACE" \
    --check-symbols "$prefix/lib/librondo.so" || fail "librondo.so's MPI_/PMPI_ symbols"
mpisrc="$TEST_SRCDIR/$TEST_WORKSPACE/tests/mpi"
if "$prefix/bin/rondo-mpicc" -std=c11 -fPIC -shared ${san[@]+"${san[@]}"} \
    -o libpmpitool.so "$mpisrc/pmpi_tool.c" &&
   "$prefix/bin/rondo-mpicc" -std=c11 ${san[@]+"${san[@]}"} -I"$mpisrc" \
    -o pmpi_check "$mpisrc/pmpi_check.c" -L. -Wl,-rpath,"$PWD" -lpmpitool; then
  out=$(env -u RONDO_PROGRESS "$prefix/bin/rondo-run" -n 2 --timeout 60 ./pmpi_check 2>&1) ||
    fail "rondo-run -n 2 pmpi_check exited $?: $out"
  echo "$out"
  [[ "$out" == *"pmpi_check: ok"* ]] || fail "pmpi_check did not pass"
else
  fail "rondo-mpicc could not build the PMPI tool or pmpi_check.c"
fi

# ---- installed tools ----
step "rondo-info --config"
out=$("$prefix/bin/rondo-info" --config 2>&1) || fail "rondo-info --config exited $?: $out"
[[ "$out" == *RONDO_PROGRESS* ]] || fail "rondo-info --config does not list RONDO_PROGRESS: $out"
step "rondo-run -n 2 /bin/true"
out=$("$prefix/bin/rondo-run" -n 2 /bin/true 2>&1) || fail "rondo-run -n 2 /bin/true exited $?: $out"
rc=0; "$prefix/bin/rondo-run" -n 2 /bin/false >/dev/null 2>&1 || rc=$?
[[ $rc -ne 0 ]] || fail "rondo-run -n 2 /bin/false exited 0"

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "PASS"
