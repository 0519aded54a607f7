#!/bin/bash
# Runs tools/mpi_pmpi.py on mpi.h (its PMPI block is up to date) and on
# librondo.so (every mpi.h function: PMPI_ strong, MPI_ weak).
# Usage: mpi_pmpi_test.sh <mpi_pmpi.py> <mpi.h> <librondo.so>
set -euo pipefail
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/nmad/mpi/include"
cp "$2" "$root/nmad/mpi/include/mpi.h"
python3 "$1" --root "$root" --check-header
python3 "$1" --root "$root" --check-symbols "$3"
