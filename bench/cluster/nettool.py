#!/usr/bin/env python3
"""Small network probes for the emulated cluster (bench/cluster/).

Debian 12's base system has no ping or iperf3, but it has python3, so the
cluster's checks use this instead. Run it inside a host namespace with
`cluster.sh exec I -- python3 nettool.py ...`. Every subcommand exits 0 when
what it was asked to observe happened and 1 otherwise, with a one-line reason.

  ping ADDR [--count N] [--timeout S]
      ICMP echo (raw socket, needs root); prints the round-trip times.
  listen --bind ADDR --port P [--ready FILE] [--timeout S]
      accepts ONE connection, reads until EOF, prints JSON
      {"bytes", "seconds", "bits_per_s", "t_start", "t_end"} (timed from
      accept to EOF; t_* are CLOCK_MONOTONIC seconds).
      Writes "ready" to FILE (a fifo) once listening, so that a sender never
      has to guess when it may connect.
  send --to ADDR --port P --bytes N [--timeout S]
      connects and sends N bytes, then closes.
  connect --to ADDR --port P [--timeout S]
      only connects: exit 0 if the connection was accepted.
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time


def fail(msg):
    print(f"nettool: {msg}", file=sys.stderr)
    sys.exit(1)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def cmd_ping(a):
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                             socket.getprotobyname("icmp"))
    except PermissionError:
        fail("ping needs root (a raw ICMP socket)")
    ident = os.getpid() & 0xFFFF
    rtts = []
    for seq in range(1, a.count + 1):
        payload = struct.pack("!d", time.monotonic()) + b"rondo-cluster"
        header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        packet = struct.pack("!BBHHH", 8, 0, checksum(header + payload), ident,
                             seq) + payload
        t0 = time.monotonic()
        try:
            sock.sendto(packet, (a.addr, 0))
        except OSError as e:
            fail(f"ping {a.addr}: cannot send: {e.strerror}")
        deadline = t0 + a.timeout
        got = False
        while not got:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([sock], [], [], left)
            if not r:
                break
            data, src = sock.recvfrom(2048)
            ihl = (data[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
            if src[0] == a.addr and typ == 0 and rid == ident and rseq == seq:
                rtts.append((time.monotonic() - t0) * 1e6)
                got = True
        if not got:
            fail(f"ping {a.addr}: no echo reply to request {seq} within "
                 f"{a.timeout} s")
    print(f"ping {a.addr}: {len(rtts)}/{a.count} replies, rtt us min "
          f"{min(rtts):.0f} median {sorted(rtts)[len(rtts) // 2]:.0f} "
          f"max {max(rtts):.0f}")


def cmd_listen(a):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        srv.bind((a.bind, a.port))
    except OSError as e:
        fail(f"listen: cannot bind {a.bind}:{a.port}: {e.strerror}")
    srv.listen(1)
    if a.ready:
        with open(a.ready, "w") as f:
            f.write("ready\n")
    r, _, _ = select.select([srv], [], [], a.timeout)
    if not r:
        fail(f"listen {a.bind}:{a.port}: nobody connected within {a.timeout} s")
    conn, _ = srv.accept()
    t0 = time.monotonic()
    conn.settimeout(a.timeout)
    total = 0
    buf = bytearray(1 << 20)
    try:
        while True:
            n = conn.recv_into(buf)
            if n == 0:
                break
            total += n
    except socket.timeout:
        fail(f"listen {a.bind}:{a.port}: no data for {a.timeout} s after "
             f"{total} bytes")
    t1 = time.monotonic()
    seconds = t1 - t0
    # t_start/t_end: CLOCK_MONOTONIC, comparable between processes, so
    # that concurrent flows can be summed over their common span.
    print(json.dumps({"bytes": total, "seconds": seconds,
                      "bits_per_s": total * 8 / seconds if seconds > 0 else 0,
                      "t_start": t0, "t_end": t1}))


def connect(a):
    try:
        return socket.create_connection((a.to, a.port), timeout=a.timeout)
    except OSError as e:
        why = e.strerror or str(e)
        fail(f"cannot connect to {a.to}:{a.port}: {why}")


def cmd_send(a):
    s = connect(a)
    chunk = memoryview(bytes(1 << 20))
    left = a.bytes
    try:
        while left > 0:
            n = min(left, len(chunk))
            s.sendall(chunk[:n])
            left -= n
        s.shutdown(socket.SHUT_WR)
        # Wait for the receiver's close, so that our exit means delivered.
        s.recv(1)
    except OSError as e:
        fail(f"send to {a.to}:{a.port}: {e.strerror or e} with {left} bytes "
             f"left")
    s.close()


def cmd_connect(a):
    connect(a).close()
    print(f"connected to {a.to}:{a.port}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    q = sub.add_parser("ping")
    q.add_argument("addr")
    q.add_argument("--count", type=int, default=3)
    q.add_argument("--timeout", type=float, default=2.0)
    q = sub.add_parser("listen")
    q.add_argument("--bind", required=True)
    q.add_argument("--port", type=int, required=True)
    q.add_argument("--ready")
    q.add_argument("--timeout", type=float, default=60.0)
    q = sub.add_parser("send")
    q.add_argument("--to", required=True)
    q.add_argument("--port", type=int, required=True)
    q.add_argument("--bytes", type=int, required=True)
    q.add_argument("--timeout", type=float, default=60.0)
    q = sub.add_parser("connect")
    q.add_argument("--to", required=True)
    q.add_argument("--port", type=int, required=True)
    q.add_argument("--timeout", type=float, default=2.0)
    a = p.parse_args()
    {"ping": cmd_ping, "listen": cmd_listen, "send": cmd_send,
     "connect": cmd_connect}[a.cmd](a)


if __name__ == "__main__":
    main()
