#!/bin/bash
# Installs Rondo into a prefix: `bazel run //:install -- --prefix DIR`.
#
#   DIR/bin/                  rondo-run, rondo-info
#   DIR/lib/                  librondo.so.0 (SONAME), librondo.so -> librondo.so.0
#   DIR/include/rondo/        headers at their workspace paths (engine/engine.h)
#   DIR/lib/pkgconfig/        rondo.pc (prefix=DIR)
#
# What to install comes from the manifest next to this script (<name>.manifest,
# written by rondo_install in tools/install.bzl), one line per entry:
#   file MODE SRC DEST       copy runfile SRC to DIR/DEST with mode MODE
#   template MODE SRC DEST   same, with @PREFIX@ replaced by DIR
#   link - TARGET DEST       symlink DIR/DEST -> TARGET
# SRC is a runfiles path (<workspace>/<path>), DEST is relative to DIR.
# Files are replaced atomically (copy to a temporary name, then rename), so
# reinstalling over a library in use does not corrupt running programs.
set -euo pipefail

usage() {
  cat <<USAGE
usage: bazel run //:install -- --prefix DIR

Installs rondo-run, rondo-info, librondo.so, the headers and rondo.pc into
DIR (an absolute path; created if missing). Then build outside Bazel with
  PKG_CONFIG_PATH=DIR/lib/pkgconfig g++ prog.cc \$(pkg-config --cflags --libs rondo)
and run with LD_LIBRARY_PATH=DIR/lib (or link with -Wl,-rpath,DIR/lib).
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

# sed replacement text for the prefix: escape \, & and the delimiter |.
prefix_sed=$(printf '%s' "$prefix" | sed -e 's/[\\&|]/\\&/g')

count=0
while read -r kind mode src dest; do
  [[ -n "$kind" ]] || continue
  target="$prefix/$dest"
  mkdir -p "$(dirname "$target")"
  tmp="$(dirname "$target")/.$(basename "$target").tmp.$$"
  case "$kind" in
    file|template)
      from="$runfiles/$src"
      [[ -f "$from" ]] || { echo "install: missing runfile $from" >&2; exit 1; }
      if [[ "$kind" == template ]]; then
        sed -e "s|@PREFIX@|$prefix_sed|g" "$from" >"$tmp"
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
echo "  PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs rondo"
echo "  LD_LIBRARY_PATH=$prefix/lib (or -Wl,-rpath,$prefix/lib) to run what you link"
