#!/usr/bin/env python3
"""mpi_coverage: the functions mpi.h declares that no MPI test program calls.

Issue 18: the project's own MPI test programs (tests/mpi/*.c, *.cc) must
call every function of nmad/mpi/include/mpi.h. This lists the declared
functions (MPI_* and MPIX_*), finds each one's calls in the test sources
(a name followed by "("), and compares the uncovered ones with the file
of known gaps (tools/mpi_coverage_known_gaps.txt: one name per line, '#'
comments): it fails (exit 1) when a function is uncovered and not listed,
and when a listed function is covered now (remove it from the list), so
the list only shrinks and always tells the truth.

Issue 29: mpi.h is also checked against the standard's list of C functions
(tools/mpi_standard_functions.txt, by chapter): in a chapter MadMPI claims,
every function is declared unless marked "!NAME reason" (known missing; a
marked function that becomes declared fails until the mark goes), and
every MPI_ function mpi.h declares is one the standard lists.

  tools/mpi_coverage.py [--root DIR] [--list]   (--list: print all, exit 0)
"""
import argparse
import os
import re
import sys

DECL = re.compile(r"^\s*(?:int|double|MPI_\w+)\s+\**\s*(MPIX?_[A-Za-z0-9_]+)\s*\(",
                  re.M)


def declared(header):
    with open(header) as f:
        text = f.read()
    return sorted(set(DECL.findall(text)))


def called(test_dir):
    names = set()
    for base, _, files in os.walk(test_dir):
        for name in files:
            if not name.endswith((".c", ".cc", ".h")):
                continue
            with open(os.path.join(base, name), errors="replace") as f:
                names.update(re.findall(r"\b(MPIX?_[A-Za-z0-9_]+)\s*\(", f.read()))
    return names


def known_gaps(path):
    gaps = set()
    if not os.path.exists(path):
        return gaps
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                gaps.add(line)
    return gaps


CHAPTER = re.compile(r"^\[(\d+)\]\s*(.*?):\s*(claimed|not claimed)\b")


def standard(path):
    """{name: (chapter, claimed, marked_missing, reason)} from the list."""
    out = {}
    chapter, claimed = None, False
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = CHAPTER.match(line)
            if m:
                chapter, claimed = int(m.group(1)), m.group(3) == "claimed"
                continue
            missing = line.startswith("!")
            name, _, reason = line.lstrip("!").partition(" ")
            if chapter is None or not name.startswith("MPI_"):
                raise ValueError(f"{path}:{n}: not a chapter header or a "
                                 f"function: {line!r}")
            if missing and not reason.strip():
                raise ValueError(f"{path}:{n}: !{name} needs a reason")
            out[name] = (chapter, claimed, missing, reason.strip())
    return out


def check_standard(decl, std_file):
    """The lines that fail the check of mpi.h against the standard."""
    std = standard(std_file)
    errors = []
    for name, (chapter, claimed, missing, reason) in sorted(std.items()):
        if not claimed:
            continue
        if missing and name in decl:
            errors.append(f"DECLARED NOW {name}: remove the '!' in "
                          f"{os.path.basename(std_file)} (chapter {chapter})")
        elif not missing and name not in decl:
            errors.append(f"MISSING {name}: chapter {chapter} is claimed but "
                          f"mpi.h does not declare it (declare it, or mark it "
                          f"'!{name} reason')")
    for name in decl:
        if name.startswith("MPI_") and name not in std:
            errors.append(f"NOT IN THE STANDARD {name}: mpi.h declares it "
                          f"but {os.path.basename(std_file)} does not list it "
                          f"(extensions are MPIX_)")
    claimed = sorted({c for c, cl, _, _ in std.values() if cl})
    marked = sum(1 for _, cl, m, _ in std.values() if cl and m)
    summary = (f"mpi_coverage: standard: {len(std)} C functions listed; "
               f"chapters claimed {', '.join(map(str, claimed))}; "
               f"{marked} of their functions marked missing")
    return summary, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".", help="the repository (default .)")
    ap.add_argument("--list", action="store_true",
                    help="print every uncovered function and exit 0")
    args = ap.parse_args()
    header = os.path.join(args.root, "nmad/mpi/include/mpi.h")
    tests = os.path.join(args.root, "tests/mpi")
    gaps_file = os.path.join(args.root, "tools/mpi_coverage_known_gaps.txt")
    std_file = os.path.join(args.root, "tools/mpi_standard_functions.txt")
    for p in (header, tests, std_file):
        if not os.path.exists(p):
            print(f"mpi_coverage: {p} not found (--root is the repository)",
                  file=sys.stderr)
            return 2
    decl = declared(header)
    try:
        std_summary, std_errors = check_standard(set(decl), std_file)
    except ValueError as e:
        print(f"mpi_coverage: {e}", file=sys.stderr)
        return 2
    print(std_summary)
    for e in std_errors:
        print(e)
    calls = called(tests)
    uncovered = [n for n in decl if n not in calls]
    print(f"mpi_coverage: {len(decl)} functions in mpi.h, "
          f"{len(decl) - len(uncovered)} called by tests/mpi, "
          f"{len(uncovered)} not")
    if args.list:
        for n in uncovered:
            print(n)
        return 0
    gaps = known_gaps(gaps_file)
    new = [n for n in uncovered if n not in gaps]
    stale = sorted(g for g in gaps if g in decl and g not in uncovered)
    unknown = sorted(g for g in gaps if g not in decl)
    for n in new:
        print(f"UNCOVERED {n}: declared in mpi.h, called by no test in "
              f"tests/mpi (add a test; the known-gaps list only shrinks)")
    for n in stale:
        print(f"COVERED NOW {n}: remove it from {gaps_file}")
    for n in unknown:
        print(f"NOT IN mpi.h {n}: remove it from {gaps_file}")
    if new or stale or unknown or std_errors:
        return 1
    print(f"mpi_coverage: ok ({len(uncovered)} known gaps listed in "
          f"{os.path.relpath(gaps_file, args.root)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
