#!/bin/bash
# Installs Rondo into a prefix: `bazel run //:install -- --prefix DIR`.
#
#   DIR/bin/                  rondo-run, rondo-info, rondo-mpicc, rondo-mpicxx
#   DIR/lib/                  librondo.so.0 (SONAME), librondo.so -> librondo.so.0
#   DIR/include/rondo/        headers at their workspace paths (engine/engine.h)
#   DIR/lib/pkgconfig/        rondo.pc (prefix=DIR)
#
# What to install comes from the manifest next to this script (<name>.manifest,
# written by rondo_install in tools/install.bzl), one line per entry:
#   file MODE SRC DEST       copy runfile SRC to DIR/DEST with mode MODE
#   template MODE SRC DEST   same, with @PREFIX@ replaced by DIR, @CC@ and
#                            @CXX@ by the C and C++ compilers recorded for
#                            the MPI compiler wrappers (below)
#   link - TARGET DEST       symlink DIR/DEST -> TARGET
#   compiler - PATH -        the compiler that built Rondo (Bazel's toolchain)
# SRC is a runfiles path (<workspace>/<path>), DEST is relative to DIR.
# Files are replaced atomically (copy to a temporary name, then rename), so
# reinstalling over a library in use does not corrupt running programs.
set -euo pipefail

usage() {
  cat <<USAGE
usage: bazel run //:install -- --prefix DIR

Installs rondo-run, rondo-info, rondo-mpicc, rondo-mpicxx, librondo.so, the
headers and rondo.pc into DIR (an absolute path; created if missing). Then
build outside Bazel with
  PKG_CONFIG_PATH=DIR/lib/pkgconfig g++ prog.cc \$(pkg-config --cflags --libs rondo)
and run with LD_LIBRARY_PATH=DIR/lib (or link with -Wl,-rpath,DIR/lib).
MPI programs: DIR/bin/rondo-mpicc prog.c -o prog && DIR/bin/rondo-run -n 2 ./prog
The wrappers compile with the compiler that built Rondo (or gcc/g++ found on
PATH now), recorded as an absolute path; RONDO_MPICC_CC / RONDO_MPICXX_CXX
choose another when they run.
USAGE
}

die_usage() {
  echo "install: $*" >&2
  echo "usage: bazel run //:install -- --prefix DIR (try --help)" >&2
  exit 2
}

prefix=""
have_prefix=0
while (($#)); do
  case "$1" in
    --prefix)
      (($# >= 2)) || die_usage "--prefix needs a directory"
      prefix="$2"; have_prefix=1; shift 2 ;;
    --prefix=*)
      prefix="${1#--prefix=}"; have_prefix=1; shift ;;
    -h|--help)
      usage; exit 0 ;;
    *)
      die_usage "unknown argument '$1'" ;;
  esac
done

((have_prefix)) || die_usage "--prefix DIR is required"
[[ -n "$prefix" ]] || die_usage "--prefix is empty"
[[ "$prefix" == /* ]] ||
  die_usage "--prefix must be an absolute path, got '$prefix'" \
    "(bazel run starts the script in its runfiles directory)"
[[ "$prefix" != *[[:space:]]* ]] ||
  die_usage "--prefix must not contain whitespace (pkg-config cannot quote it): '$prefix'"
[[ "$prefix" != *[\'\"\\\$\`]* ]] ||
  die_usage "--prefix must not contain quotes, backslashes, \$ or \` (the compiler wrappers cannot quote them): '$prefix'"
# Normalise: no trailing slashes (but keep "/").
while [[ "$prefix" == */ && "$prefix" != / ]]; do prefix="${prefix%/}"; done

# Find the manifest (next to this script) and the runfiles root: our own
# runfiles tree under `bazel run`, the test's when a test runs us.
self="$0"
manifest="$self.manifest"
if [[ -d "$self.runfiles" ]]; then
  runfiles="$self.runfiles"
elif [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR" ]]; then
  runfiles="$RUNFILES_DIR"
elif [[ -n "${TEST_SRCDIR:-}" && -d "$TEST_SRCDIR" ]]; then
  runfiles="$TEST_SRCDIR"
else
  echo "install: cannot find the runfiles of $self; run it with 'bazel run'" >&2
  exit 1
fi
[[ -f "$manifest" ]] || { echo "install: missing manifest $manifest" >&2; exit 1; }

if ! mkdir -p "$prefix"/{bin,lib/pkgconfig,include/rondo}; then
  echo "install: cannot create directories under $prefix" >&2
  exit 1
fi

# The compilers of rondo-mpicc and rondo-mpicxx, as absolute paths: the one
# that built Rondo (the manifest's `compiler` line) and its C++ sibling
# (gcc-12 -> g++-12, clang -> clang++, cc -> c++), else gcc and g++ (then cc
# and c++) found on PATH now. Empty if none: the wrappers then fail with a
# message naming RONDO_MPICC_CC / RONDO_MPICXX_CXX.
usable() {  # usable PATH: an absolute executable the wrappers can quote
  [[ "$1" == /* && -f "$1" && -x "$1" && "$1" != *[[:space:]\'\"\\\$\`]* ]]
}
on_path() {  # on_path NAME...: the first found on PATH, as an absolute path
  local name found
  for name in "$@"; do
    found=$(command -v "$name" 2>/dev/null) || continue
    [[ "$found" == /* ]] || found="$(cd "$(dirname "$found")" && pwd)/$(basename "$found")"
    usable "$found" && { echo "$found"; return 0; }
  done
  return 0
}
built_cc=$(awk '$1 == "compiler" { print $3 }' "$manifest")
cc=""
cxx=""
if [[ -n "$built_cc" ]] && usable "$built_cc"; then
  cc="$built_cc"
  base="${built_cc##*/}"
  case "$base" in
    *clang*) sibling="${base/clang/clang++}" ;;
    *gcc*) sibling="${base/gcc/g++}" ;;
    cc) sibling="c++" ;;
    *) sibling="" ;;
  esac
  if [[ -n "$sibling" ]] && usable "${built_cc%/*}/$sibling"; then
    cxx="${built_cc%/*}/$sibling"
  fi
fi
[[ -n "$cc" ]] || cc=$(on_path gcc cc)
[[ -n "$cxx" ]] || cxx=$(on_path g++ c++)

# sed replacement text: escape \, & and the delimiter |.
sed_text() { printf '%s' "$1" | sed -e 's/[\\&|]/\\&/g'; }
prefix_sed=$(sed_text "$prefix")
cc_sed=$(sed_text "$cc")
cxx_sed=$(sed_text "$cxx")

count=0
while read -r kind mode src dest; do
  [[ -n "$kind" && "$kind" != compiler ]] || continue
  target="$prefix/$dest"
  mkdir -p "$(dirname "$target")"
  tmp="$(dirname "$target")/.$(basename "$target").tmp.$$"
  case "$kind" in
    file|template)
      from="$runfiles/$src"
      [[ -f "$from" ]] || { echo "install: missing runfile $from" >&2; exit 1; }
      if [[ "$kind" == template ]]; then
        sed -e "s|@PREFIX@|$prefix_sed|g" -e "s|@CC@|$cc_sed|g" \
            -e "s|@CXX@|$cxx_sed|g" "$from" >"$tmp"
      else
        cp -L "$from" "$tmp"
      fi
      chmod "$mode" "$tmp"
      mv -f "$tmp" "$target"
      ;;
    link)
      ln -sfn "$src" "$tmp"
      mv -fT "$tmp" "$target"
      dest="$dest -> $src"
      ;;
    *)
      echo "install: bad manifest line: $kind $mode $src $dest" >&2
      exit 1 ;;
  esac
  echo "installed $prefix/$dest"
  count=$((count + 1))
done <"$manifest"

echo "install: $count entries into $prefix"
echo "  rondo-mpicc compiles with ${cc:-(no C compiler found: set RONDO_MPICC_CC)}," \
  "rondo-mpicxx with ${cxx:-(no C++ compiler found: set RONDO_MPICXX_CXX)}"
echo "  PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs rondo"
echo "  LD_LIBRARY_PATH=$prefix/lib (or -Wl,-rpath,$prefix/lib) to run what you link"
