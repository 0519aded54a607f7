#!/usr/bin/env python3
"""Instructions per MPI call, Rondo beside Open MPI and MPICH (callgrind).

Wall-clock figures of a 2-rank message rate move by 2x on a shared VM; the
instructions a call executes do not. This runs one small program (a window of
64 MPI_Isend / MPI_Irecv of 8 bytes, then MPI_Waitall, and an ack) under
valgrind's callgrind with each library, 2 ranks on this machine, and prints
the inclusive instructions per call of the sender's MPI_Isend, the
receiver's MPI_Irecv and the sender's MPI_Waitall per request (its sends are
all complete by then: the cost of completing and releasing them). The
receiver's MPI_Waitall spins for the messages and is not a per-call cost.

  tools/mpi_icount.py --rondo-prefix /tmp/rondo [--libs rondo,openmpi,mpich]
                      [--rounds 300] [--json FILE]

--rondo-prefix is an installed Rondo (bazel run -c opt //:install -- --prefix
DIR). docs/performance.md has the figures and what they showed.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WINDOW = 64
WARMUP = 1000

PROGRAM = r"""
#include <mpi.h>
#include <stdlib.h>
#define W %(window)d
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int rounds = %(warmup)d + atoi(argv[1]);
  char sb[W][8] = {{0}}, rb[W][8], ack[4] = {0};
  MPI_Request rq[W];
  for (int it = 0; it < rounds; ++it) {
    if (me == 0) {
      for (int i = 0; i < W; ++i)
        MPI_Isend(sb[i], 8, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &rq[i]);
      MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
      MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (me == 1) {
      for (int i = 0; i < W; ++i)
        MPI_Irecv(rb[i], 8, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &rq[i]);
      MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
      MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
"""


def libraries(prefix):
    """name -> (compiler, launcher argv prefix)."""
    return {
        "rondo": ([os.path.join(prefix, "bin", "rondo-mpicc")],
                  [os.path.join(prefix, "bin", "rondo-run"), "-n", "2"]),
        "openmpi": (["mpicc"],
                    ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n",
                     "2"]),
        "mpich": (["mpicc.mpich"], ["mpirun.mpich", "-n", "2"]),
    }


def inclusive(outfile):
    """function name -> inclusive instructions, from callgrind_annotate."""
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", outfile],
        capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+\S*?:(P?MPI_\w+)\s", line)
        if m:
            name = m.group(2).lstrip("P")
            costs[name] = max(costs.get(name, 0),
                              int(m.group(1).replace(",", "")))
    return costs


def measure(name, cc, launch, rounds, work, keep=None):
    exe = os.path.join(work, "icount_" + name)
    subprocess.run(cc + ["-O2", "-o", exe, os.path.join(work, "icount.c")],
                   check=True)
    pattern = os.path.join(work, "cg.%s.%%p" % name)
    subprocess.run(launch + ["valgrind", "--tool=callgrind", "-q",
                             "--callgrind-out-file=" + pattern, exe,
                             str(rounds)],
                   check=True, stdout=subprocess.DEVNULL)
    files = glob.glob(os.path.join(work, "cg.%s.*" % name))
    if len(files) != 2:
        raise RuntimeError("%s: expected 2 callgrind files, found %d" %
                           (name, len(files)))
    if keep:
        os.makedirs(keep, exist_ok=True)
        for f in files:
            shutil.copy(f, keep)
    per_rank = [inclusive(f) for f in files]
    # The sender is the rank that called MPI_Isend.
    sender = next((c for c in per_rank if "MPI_Isend" in c), None)
    receiver = next((c for c in per_rank if "MPI_Irecv" in c), None)
    if sender is None or receiver is None:
        raise RuntimeError("%s: MPI_Isend/MPI_Irecv not in the profiles" % name)
    calls = (WARMUP + rounds) * WINDOW
    return {
        "isend": sender["MPI_Isend"] / calls,
        "irecv": receiver["MPI_Irecv"] / calls,
        "waitall_per_request": sender.get("MPI_Waitall", 0) / calls,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rondo-prefix", required=True)
    ap.add_argument("--libs", default="rondo,openmpi,mpich")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--json")
    ap.add_argument("--keep", help="copy the callgrind profiles here "
                    "(callgrind_annotate them for the per-function costs)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("mpi_icount: valgrind is not installed")
    libs = libraries(args.rondo_prefix)
    wanted = [l for l in args.libs.split(",") if l]
    for l in wanted:
        if l not in libs:
            sys.exit("mpi_icount: unknown library %r (known: %s)" %
                     (l, ", ".join(libs)))
    results = {}
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "icount.c"), "w") as f:
            f.write(PROGRAM % {"window": WINDOW, "warmup": WARMUP})
        for l in wanted:
            cc, launch = libs[l]
            results[l] = measure(l, cc, launch, args.rounds, work, args.keep)
    cols = ["isend", "irecv", "waitall_per_request"]
    print("instructions per call (callgrind, inclusive; %d x %d calls)" %
          (WARMUP + args.rounds, WINDOW))
    print("%-10s" % "library" + "".join("%22s" % c for c in cols))
    for l in wanted:
        print("%-10s" % l + "".join("%22.0f" % results[l][c] for c in cols))
    if "rondo" in results and "openmpi" in results:
        print("%-10s" % "rondo/ompi" + "".join(
            "%22.2f" % (results["rondo"][c] / results["openmpi"][c])
            if results["openmpi"][c] else "%22s" % "-" for c in cols))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tool": "mpi_icount", "rounds": args.rounds,
                       "window": WINDOW, "instructions_per_call": results},
                      f, indent=1)


if __name__ == "__main__":
    main()
