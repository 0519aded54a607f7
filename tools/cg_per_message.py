#!/usr/bin/env python3
"""Instructions per message, split from the spinning, out of two callgrind runs.

A ping-pong's receiver spins until the message is there, and under callgrind
the number of empty passes depends on how the two ranks were scheduled. So a
function's inclusive cost per call mixes the work done for a message with the
waiting. This separates them, per function, from two runs of the same program
that differ only in the number of messages (N1 < N2), both recorded with
`valgrind --tool=callgrind --dump-instr=yes`:

- per instruction address, the executions the extra N2 - N1 messages added,
  divided by N2 - N1: what each message costs there, set-up excluded;
- an instruction executed on average at least --spin-above times per message
  in the longer run is counted as waiting (a poll loop), the others as the
  message's own work.

  tools/cg_per_message.py SHORT.out LONG.out N1 N2 [--min 1.5] [--spin-above 2.5]

prints, per function, the message's instructions and the spin instructions
per message, largest first, and the totals. The receive's critical path is
the message's instructions from the poll that finds the frame to the reply's
publication (docs/performance.md, "The receive's critical path").

  tools/cg_per_message.py --self-test

checks the parser and the split on a small synthetic profile.
"""
import argparse
import collections
import re
import sys


def load(path_or_lines):
    """Self cost per (function, instruction address) of a callgrind file."""
    lines = open(path_or_lines) if isinstance(path_or_lines, str) else path_or_lines
    names = {}
    cost = collections.defaultdict(collections.Counter)

    def name(token):
        m = re.match(r"\((\d+)\)(?: (.*))?", token)
        if not m:
            return token
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), token)

    current, last, after_calls = None, 0, False
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("fn="):
            current, after_calls = name(line[3:]), False
            continue
        if line.startswith("cfn="):
            name(line[4:])
            continue
        if line.startswith(("cfi=", "cob=", "cfl=")):
            continue
        if line.startswith("calls="):
            after_calls = True  # the next cost line is the call's inclusive cost
            continue
        if not line or line[0] not in "0123456789+-*":
            continue
        parts = line.split()
        a = parts[0]
        if a.startswith("0x"):
            addr = int(a, 16)
        elif a[0] in "+-":
            step = int(a[1:], 16 if a[1:].startswith("0x") else 10)
            addr = last + step if a[0] == "+" else last - step
        elif a == "*":
            addr = last
        else:
            addr = int(a)
        last = addr
        if after_calls:
            after_calls = False
            continue
        if current is not None:
            cost[current][addr] += int(parts[2]) if len(parts) > 2 else 0
    return cost


def split(short, long_, n1, n2, spin_above):
    """{function: (message instructions, spin instructions)} per message."""
    out = {}
    for fn in set(short) | set(long_):
        a, b = short.get(fn, {}), long_.get(fn, {})
        msg = spin = 0.0
        for addr in set(a) | set(b):
            d = (b.get(addr, 0) - a.get(addr, 0)) / (n2 - n1)
            if b.get(addr, 0) / n2 >= spin_above:
                spin += d
            else:
                msg += d
        out[fn] = (msg, spin)
    return out


def self_test():
    # f: 10 instructions executed once per message, and a poll loop of 3
    # instructions run 7 times per message; g: set-up only (the same count
    # in both runs). One cost line per instruction address: its executions.
    def profile(n):
        lines = ["events: Ir", "fn=(1) f"]
        lines += ["0x%x 1 %d" % (0x10 + i, n) for i in range(10)]
        lines += ["0x%x 1 %d" % (0x20 + i, 7 * n) for i in range(3)]
        lines += ["cfn=(2) g", "calls=1 0x40", "+2 1 999", "fn=(2)",
                  "0x40 1 500", "+1 1 500"]
        return lines
    got = split(load(profile(100)), load(profile(300)), 100, 300, 2.5)
    assert abs(got["f"][0] - 10) < 1e-9, got
    assert abs(got["f"][1] - 21) < 1e-9, got
    assert got["g"] == (0.0, 0.0), got
    print("self-test passed")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("short", nargs="?")
    p.add_argument("long", nargs="?")
    p.add_argument("n1", nargs="?", type=float)
    p.add_argument("n2", nargs="?", type=float)
    p.add_argument("--min", type=float, default=1.5,
                   help="print functions with at least this many (default 1.5)")
    p.add_argument("--spin-above", type=float, default=2.5,
                   help="executions per message from which an instruction "
                        "counts as waiting (default 2.5)")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args()
    if args.self_test:
        self_test()
        return 0
    if args.long is None or args.n2 is None or not args.n2 > args.n1 > 0:
        p.error("give SHORT.out LONG.out N1 N2 with N2 > N1 > 0")
    rows = split(load(args.short), load(args.long), args.n1, args.n2,
                 args.spin_above)
    total_msg = sum(m for m, _ in rows.values())
    total_spin = sum(s for _, s in rows.values())
    for fn, (m, s) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        if abs(m) >= args.min or abs(s) >= 30:
            print(f"{m:8.1f} {s:8.1f}  {fn[:110]}")
    print(f"per message: {total_msg:.1f} instructions, "
          f"{total_spin:.1f} spinning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
