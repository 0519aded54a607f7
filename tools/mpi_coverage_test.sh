#!/bin/bash
# Runs tools/mpi_coverage.py on the sources in the runfiles: every function
# of mpi.h is called by a test program in tests/mpi, or listed with a reason
# in tools/mpi_coverage_known_gaps.txt (issue 18), and mpi.h holds the
# standard's functions of the chapters MadMPI claims
# (tools/mpi_standard_functions.txt, issue 29).
set -euo pipefail
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/nmad/mpi/include" "$root/tests/mpi" "$root/tools"
cp "$1" "$root/nmad/mpi/include/mpi.h"
cp "$2" "$root/tools/mpi_coverage_known_gaps.txt"
cp "$3" "$root/tools/mpi_standard_functions.txt"
shift 3
for f in "$@"; do cp "$f" "$root/tests/mpi/"; done
python3 "$(dirname "$0")/mpi_coverage.py" --root "$root"
