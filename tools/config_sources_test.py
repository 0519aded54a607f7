#!/usr/bin/env python3
"""Every RONDO_* variable the sources read is declared, and nothing else is.

Compares the names read in the sources of topology, queues, engine, drivers,
nmad and tools (string literals "RONDO_X" in C, C++ and Python, $RONDO_X in
shell, the compiler wrappers' variables in tools/BUILD) with what
`rondo-info --config --json` lists (the configuration registry,
topology/base/config_registry.h). A name ending in '_' ("RONDO_COLL_") is a
family built at run time: some declared name must start with it. Tests and
test data are not scanned (they set variables; they do not own them).

Usage: config_sources_test.py <rondo-info> [<source root>]
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_scan import files_under, source_root, strip_comments  # noqa: E402

ROOTS = ("topology", "queues", "engine", "drivers", "nmad", "tools")
C_LIKE = re.compile(r"""["'](RONDO_[A-Z0-9_]*)""")
SHELL = re.compile(r"(?<![A-Za-z0-9_])\$\{?(RONDO_[A-Z0-9_]+)")
# Quoted RONDO_ words that are not variables.
NOT_VARIABLES = {
    "RONDO_COPTS",  # the shared compiler options of rondo.bzl
    "RONDO_",  # the prefix itself (the unknown-variable check)
}
COMPONENTS = {"engine", "nmad", "coll", "mpi", "launcher", "wrappers", "log"}


def source_names(base):
    names = {}
    for rel in files_under(base, ROOTS):
        if rel.endswith((".h", ".cc", ".c", ".py")):
            pattern = C_LIKE
        elif rel.endswith((".sh", ".in")):
            pattern = SHELL
        elif rel == os.path.join("tools", "BUILD"):
            pattern = C_LIKE  # the compiler wrappers' variables
        else:
            continue
        with open(os.path.join(base, rel), errors="replace") as f:
            text = f.read()
        if rel.endswith((".h", ".cc", ".c")):
            text = strip_comments(text)
        for m in pattern.finditer(text):
            if m.group(1) not in NOT_VARIABLES:
                names.setdefault(m.group(1), rel)
    return names


def main():
    info = sys.argv[1]
    base = source_root(sys.argv[2] if len(sys.argv) > 2 else None)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RONDO_")}
    out = subprocess.run([info, "--config", "--json"], env=env, check=True,
                         capture_output=True, text=True)
    declared = {v["name"]: v for v in json.loads(out.stdout)["variables"]}
    found = source_names(base)
    errors = []
    if len(found) < 30:
        errors.append(f"only {len(found)} variables found in the sources "
                      f"under {base}: is the scan looking at them?")
    for name, path in sorted(found.items()):
        if name.endswith("_"):
            if not any(d.startswith(name) for d in declared):
                errors.append(f"{path} reads the family {name}* but no "
                              "declared variable starts with it")
        elif name not in declared:
            errors.append(f"{path} reads {name}, which is not declared "
                          "(topology/base/config_registry.h)")
    families = [n for n in found if n.endswith("_")]
    for name, d in sorted(declared.items()):
        if name not in found and not any(name.startswith(f) for f in families):
            errors.append(f"{name} ({d['component']}) is declared but no "
                          "source reads it")
        if d["component"] not in COMPONENTS:
            errors.append(f"{name}: unknown component {d['component']!r}")
        for field in ("type", "allowed", "help"):
            if not d[field]:
                errors.append(f"{name}: empty {field}")
    for e in errors:
        print("FAIL:", e)
    if errors:
        return 1
    print(f"OK: {len(declared)} declared variables, {len(found)} names read "
          "in the sources, all matched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
