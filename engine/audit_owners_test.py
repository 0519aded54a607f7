#!/usr/bin/env python3
"""Fails on a std::atomic declared in engine/ or queues/ with no owner.

The engine's shared state is made of OwnedAtomic (an owner node,
writes seen by engine/audit_test.cc). A plain std::atomic must be listed in
engine/audit_owners.txt with its owner and the reason it is off the task
path, so that a new engine-wide counter is a decision, not an accident.
"""
import os
import re
import sys

DECL = re.compile(r"std::atomic<[^>]*>\s+(\w+)\s*(\{|=|;|\[)")


def main():
    root = os.environ.get("TEST_SRCDIR")
    base = os.path.join(root, os.environ.get("TEST_WORKSPACE", "rondo")) if root else "."
    listed = set()
    with open(os.path.join(base, "engine/audit_owners.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                parts = line.split()
                listed.add((parts[0], parts[1]))
    found = set()
    for folder in ("engine", "engine/internal", "queues"):
        for name in sorted(os.listdir(os.path.join(base, folder))):
            if not name.endswith((".h", ".cc")) or name.endswith("_test.cc"):
                continue
            if name == "owned_atomic.h":
                continue
            path = f"{folder}/{name}"
            with open(os.path.join(base, path)) as f:
                for lineno, line in enumerate(f, 1):
                    code = line.split("//")[0]
                    for m in DECL.finditer(code):
                        found.add((path, m.group(1), lineno))
    missing = [(p, n, l) for p, n, l in found if (p, n) not in listed]
    stale = listed - {(p, n) for p, n, _ in found}
    for p, n, l in sorted(missing):
        print(f"{p}:{l}: std::atomic '{n}' has no owner: make it an "
              "OwnedAtomic with a tree node as owner, or list it in "
              "engine/audit_owners.txt with its owner and why it is off the task path")
    for p, n in sorted(stale):
        print(f"engine/audit_owners.txt: '{n}' in {p} is listed but not declared there")
    if len(found) < 10:
        print(f"found only {len(found)} declarations: is the scan looking at the sources?")
        return 1
    print(f"{len(found)} plain atomics, all with an owner" if not (missing or stale) else "")
    return 1 if missing or stale else 0


if __name__ == "__main__":
    sys.exit(main())
