#!/bin/bash
# A process started by a launcher Rondo cannot use, or with another job's
# or a forged job's identity, stops with an error that says what is wrong
# and what to do, before any rank waits for another (issue 20):
#   - srun without --mpi=pmix (a Slurm step of several tasks, no PMIx);
#   - a PMI-1 launcher (MPICH's Hydra);
#   - PMIx variables naming a job whose server cannot be reached;
#   - rondo-run variables with a forged key.
# Checked on rondo-info, which runs the bootstrap as an MPI rank does.
# Usage: launcher_errors_test.sh <rondo-info>
set -u
info="$1"
failures=0
expect() {  # expect WANT VAR=VALUE...
  local want="$1" out rc=0
  shift
  out=$(env -u PMIX_NAMESPACE -u PMIX_RANK -u RONDO_RUN_SOCKET \
        -u SLURM_STEP_NUM_TASKS -u PMI_SIZE "$@" timeout 30 "$info" 2>&1) || rc=$?
  if ((rc == 0)); then
    echo "FAIL: '$*' rondo-info exited 0; want an error with '$want'"
    failures=$((failures + 1))
  elif ((rc == 124)); then
    echo "FAIL: '$*' rondo-info hung"
    failures=$((failures + 1))
  elif [[ "$out" != *"$want"* ]]; then
    echo "FAIL: '$*': '$out' lacks '$want'"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $(echo "$out" | tail -1 | cut -c1-160)"
  fi
}
expect "run it with \`srun --mpi=pmix\`" SLURM_STEP_NUM_TASKS=4 SLURM_STEP_ID=0 \
  SLURM_JOB_ID=9 SLURM_MPI_TYPE=none
expect "PMI-1 launcher" PMI_SIZE=3 PMI_RANK=1
expect "PMIx_Init failed" PMIX_NAMESPACE=another-job PMIX_RANK=0
expect "RONDO_RUN_KEY" RONDO_RUN_SOCKET=/nonexistent/socket RONDO_RUN_KEY=00 \
  RONDO_RANK=0 RONDO_SIZE=2
((failures == 0)) || exit 1
echo "launcher_errors_test: ok"
