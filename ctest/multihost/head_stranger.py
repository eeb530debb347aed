#!/usr/bin/env python3
"""A stranger host against the head launcher's TCP ports (ctest/scripts/multihost_head_strangers.sh).

usage: head_stranger.py IP PORTS STOPFILE REPORT [FLOOD]

For each port in PORTS (comma-separated) of IP, while the job is still starting, it opens:
  garbage  64 KiB of random bytes, then hangs up
  silent   a connection that never sends a byte
  length   an 8-byte little-endian length of 4 GiB (and a u32 0xffffffff), then silence
  stall    a valid-looking rshmem hello ("RSHc", version 1, a 32-byte nonce), reads the
           server's reply, then never sends its proof (a handshake stalled in the middle)
  flood    FLOOD (default 0) more silent connections, held open
and holds every connection open until STOPFILE exists. Then it writes to REPORT one line per
connection kind and port: "KIND PORT sent N got M", and "done C connections" last. A head that
is sound sends nothing to any of them but the stalled handshake's 72-byte reply.
"""
import os
import socket
import sys
import time

HELLO = b"RSHc" + (1).to_bytes(4, "little") + os.urandom(32)
REPLY = 72


def connect(ip, port):
    s = socket.create_connection((ip, port), timeout=5)
    s.settimeout(0.2)
    return s


def drain(s):
    """Bytes the head sent so far (without blocking past the socket's short timeout)."""
    got = 0
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += len(b)
    except (socket.timeout, BlockingIOError):
        pass
    except OSError:
        pass
    return got


def main():
    ip, ports, stop, report = sys.argv[1], [int(p) for p in sys.argv[2].split(",")], sys.argv[3], sys.argv[4]
    flood = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    held = []  # (kind, port, socket, bytes sent)
    lines = []
    for port in ports:
        try:
            s = connect(ip, port)
            junk = os.urandom(65536)
            s.sendall(junk)
            lines.append(f"garbage {port} sent {len(junk)} got {drain(s)}")
            s.close()
        except OSError as e:
            lines.append(f"garbage {port} error {e}")
        for kind, data in (("silent", b""), ("length", (4 << 30).to_bytes(8, "little") + b"\xff\xff\xff\xff"), ("stall", HELLO)):
            try:
                s = connect(ip, port)
                if data:
                    s.sendall(data)
                held.append((kind, port, s, len(data)))
            except OSError as e:
                lines.append(f"{kind} {port} error {e}")
        for _ in range(flood):
            try:
                held.append(("flood", port, connect(ip, port), 0))
            except OSError as e:
                lines.append(f"flood {port} error {e}")
                break
    with open(report + ".ready", "w") as f:
        f.write(f"{len(held)}\n")
    while not os.path.exists(stop):
        time.sleep(0.1)
    got = {}
    for kind, port, s, sent in held:
        k = (kind, port)
        n = drain(s)
        g = got.setdefault(k, [0, 0, 0])
        g[0] += sent
        g[1] = max(g[1], n)
        g[2] += 1
        s.close()
    for (kind, port), (sent, most, count) in sorted(got.items()):
        lines.append(f"{kind} {port} sent {sent} got {most} x{count}")
    lines.append(f"done {len(held) + len(ports)} connections")
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
