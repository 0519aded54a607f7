#!/usr/bin/env python3
"""No bare getenv or fprintf(stderr) in library code.

Library code (topology, queues, engine, drivers, nmad; not tests, test data
or fuzzers) reads RONDO_* variables through the configuration registry
(topology/base/config_registry.h) and other variables through
base::ForeignEnv, and prints through the logger (topology/base/log.h).
Tools talk to their users as they like: they are listed below, each with its
reason. An entry that no longer matches anything fails too, so the list only
shrinks.

Usage: library_output_test.py [<source root>]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_scan import files_under, source_root, strip_comments  # noqa: E402

ROOTS = ("topology", "queues", "engine", "drivers", "nmad")
PATTERNS = {
    "getenv": re.compile(r"\b(?:secure_)?getenv\s*\("),
    "stderr": re.compile(
        r"\bf(?:printf|puts|write)\s*\([^;]*\bstderr\b|std::cerr|\bperror\s*\("),
}
ALLOWED = {
    ("topology/base/config_registry.cc", "getenv"):
        "the registry's one reader of the environment",
    ("drivers/bootstrap/rondo_run.cc", "stderr"):
        "rondo-run, a tool: talks to its user",
    ("nmad/rondo_info.cc", "stderr"):
        "rondo-info, a tool: talks to its user",
    ("drivers/bootstrap/bootstrap_check.cc", "getenv"):
        "a test program (the rank of the bootstrap's multi-process tests)",
    ("drivers/bootstrap/bootstrap_check.cc", "stderr"):
        "a test program (the rank of the bootstrap's multi-process tests)",
    ("nmad/wire_fuzzer.cc", "stderr"):
        "a fuzzer (a test tool): reports its findings",
}


def main():
    base = source_root(sys.argv[1] if len(sys.argv) > 1 else None)
    errors, used, scanned = [], set(), 0
    for rel in files_under(base, ROOTS):
        if not rel.endswith((".h", ".cc", ".c")):
            continue
        scanned += 1
        with open(os.path.join(base, rel), errors="replace") as f:
            text = strip_comments(f.read())
        for kind, pattern in PATTERNS.items():
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                if (rel, kind) in ALLOWED:
                    used.add((rel, kind))
                    continue
                what = ("a bare getenv (read RONDO_* through "
                        "base::ConfigRegistry, others with base::ForeignEnv)"
                        if kind == "getenv" else
                        "output to stderr (use RONDO_LOG_* of "
                        "topology/base/log.h)")
                errors.append(f"{rel}:{line}: {what}")
    for key in sorted(set(ALLOWED) - used):
        errors.append(f"allow-list entry {key} matches nothing: remove it")
    if scanned < 100:
        errors.append(f"only {scanned} files scanned under {base}")
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"OK: {scanned} library files, {len(ALLOWED)} allowed exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
