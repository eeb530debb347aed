#!/usr/bin/env python3
"""A stranger attacking running rshmem jobs (ctest/security/run.sh), and a recording proxy.

attack --tag T --npes N --until FILE --report FILE [--replay FILE]
    Until FILE exists: find every process whose command line contains T, find the rendezvous
    sockets those processes made (abstract names rshmem-...-PID-... in /proc/net/unix, readable
    by every user), and attack each one several times, concurrently: forged hellos (the old
    protocol's, for every rank; the new one's with a made-up proof), a replay of bytes recorded
    from a real PE, garbage, a truncated hello, silence, a stalled valid hello, huge lengths.
    Anything that comes back beyond the handshake's refusal is a failure: a descriptor (the
    victim's memory; checked for its secret global), payload bytes, or an accepting verdict.
    The report's last line is "attacked K rendezvous with C connections, F failures".

proxy --listen NAME --to NAME --record FILE
    Relays one PE's connection to its rendezvous (descriptors included) and records what the
    PE sent, so an attacker can replay a real PE's bytes.
"""
import argparse
import array
import os
import re
import socket
import struct
import sys
import threading
import time

SECRET_MARK = b"RSHMEM-VICTIM-SECRET-"
OLD_MAGIC = 0x5253484D
AUTH_HELLO = b"RSHc" + struct.pack("<I", 1)
REFUSAL_BYTES = 72 + 1  # the server's nonce and proof, then a refusing verdict


def log_to(path):
    lock = threading.Lock()

    def log(line):
        with lock, open(path, "a") as f:
            f.write(line + "\n")

    return log


def victim_pids(tag):
    pids = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                if tag.encode() in f.read():
                    pids.add(int(d))
        except OSError:
            pass
    return pids


def rendezvous_names(pids):
    """Abstract socket names of listening sockets made by `pids` (rshmem-[uid-]PID-hex)."""
    names = set()
    try:
        with open("/proc/net/unix") as f:
            next(f)
            for line in f:
                parts = line.split()
                if len(parts) < 8 or not parts[7].startswith("@rshmem-"):
                    continue
                m = re.match(r"@rshmem-(?:uid-)?(\d+)-[0-9a-f]+$", parts[7])
                if m and int(m.group(1)) in pids:
                    names.add(parts[7][1:])
    except OSError:
        pass
    return names


def connect(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect("\0" + name)
    return s


def drain(s, seconds):
    """Everything the server sends until it closes or `seconds` pass: (bytes, descriptors)."""
    data, fds = b"", []
    end = time.time() + seconds
    while time.time() < end:
        s.settimeout(max(0.05, end - time.time()))
        try:
            msg, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(253 * 4))
        except (socket.timeout, BlockingIOError):
            break
        except OSError:
            break
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(payload[: len(payload) - len(payload) % a.itemsize])
                fds.extend(a)
        if not msg:
            break
        data += msg
    return data, fds


def judge(name, attack, data, fds, log):
    """Returns the number of failures this connection shows (and logs each)."""
    bad = 0
    for fd in fds:
        leaked = b""
        try:
            leaked = os.pread(fd, 1 << 22, 0)
        except OSError:
            pass
        what = "the victim's SECRET GLOBAL" if SECRET_MARK in leaked else f"{len(leaked)} bytes"
        log(f"FAIL {attack} @{name}: received a descriptor ({what})")
        os.close(fd)
        bad += 1
    if len(data) > REFUSAL_BYTES:
        log(f"FAIL {attack} @{name}: received {len(data)} bytes, more than a refusal")
        bad += 1
    elif len(data) == REFUSAL_BYTES and data[-1] != 0:
        log(f"FAIL {attack} @{name}: the verdict accepted the stranger")
        bad += 1
    if SECRET_MARK in data:
        log(f"FAIL {attack} @{name}: the victim's secret global came back in the data")
        bad += 1
    return bad


def attacks(npes, replay):
    """(name, bytes to send, seconds to hold the connection) for one round."""
    old_hello = lambda rank: struct.pack("<IIII", OLD_MAGIC, rank, npes, os.getpid())
    huge = struct.pack("<BxxxIQ", 1, 0, 1 << 62)
    out = [(f"forged-old-hello-rank{r}", old_hello(r), 2.0) for r in range(npes)]
    out += [
        ("forged-hello-bad-proof", AUTH_HELLO + os.urandom(32), 2.0),
        ("garbage", os.urandom(4096), 1.0),
        ("truncated-hello", AUTH_HELLO[:6], 0.2),
        ("silence", b"", 3.0),
        ("stalled-valid-hello", AUTH_HELLO + os.urandom(32), 3.0),
        ("huge-length-old", old_hello(npes - 1) + huge, 2.0),
        ("huge-length-new", AUTH_HELLO + os.urandom(32) + huge + bytes(16), 2.0),
    ]
    if replay:
        out.append(("replayed-pe-bytes", replay, 2.0))
    return out


def one_attack(name, attack, payload, hold, log, counts):
    try:
        s = connect(name)
    except OSError:
        return  # the rendezvous is gone (or full): nothing to attack
    with counts["lock"]:
        counts["connections"] += 1
    try:
        if attack == "forged-hello-bad-proof":
            s.sendall(payload)
            data, fds = drain_exact(s, 72)
            s.sendall(os.urandom(32))
            more, more_fds = drain(s, hold)
            data, fds = data + more, fds + more_fds
        elif attack == "stalled-valid-hello":
            s.sendall(payload)
            data, fds = drain(s, hold)
        else:
            if payload:
                s.sendall(payload)
            data, fds = drain(s, hold)
    except OSError:
        data, fds = b"", []
    finally:
        s.close()
    bad = judge(name, attack, data, fds, log)
    with counts["lock"]:
        counts["failures"] += bad


def drain_exact(s, n):
    data, fds = b"", []
    end = time.time() + 3
    while len(data) < n and time.time() < end:
        more, more_fds = drain(s, 0.2)
        data, fds = data + more, fds + more_fds
        if not more:
            break
    return data, fds


def attack_main(args):
    log = log_to(args.report)
    counts = {"connections": 0, "failures": 0, "lock": threading.Lock()}
    seen = {}
    threads = []
    deadline = time.time() + args.max_seconds
    while not os.path.exists(args.until) and time.time() < deadline:
        replay = b""
        if args.replay and os.path.exists(args.replay):
            with open(args.replay, "rb") as f:
                replay = f.read()
        for name in rendezvous_names(victim_pids(args.tag)):
            # At once (the start-up race), then again every 0.7 s while the job runs.
            rounds, last = seen.get(name, (0, 0.0))
            if rounds >= args.rounds or time.time() - last < 0.7:
                continue
            seen[name] = (rounds + 1, time.time())
            for attack, payload, hold in attacks(args.npes, replay):
                t = threading.Thread(target=one_attack, args=(name, attack, payload, hold, log, counts), daemon=True)
                t.start()
                threads.append(t)
        time.sleep(0.01)
    for t in threads:
        t.join(10)
    log(f"attacked {len(seen)} rendezvous with {counts['connections']} connections, {counts['failures']} failures")
    return 1 if counts["failures"] else 0


def relay(src, dst, record):
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(src, 65536, 253)
        except OSError:
            data, fds = b"", []
        if not data:
            break
        if record:
            with open(record, "ab") as f:
                f.write(data)
        try:
            if fds:
                # The descriptors rode on the last byte read (the kernel ends a read there);
                # attached to more, the receiver's plain reads would drop them.
                dst.sendall(data[:-1])
                socket.send_fds(dst, [data[-1:]], fds)
            else:
                dst.sendall(data)
        except OSError:
            break
        finally:
            for fd in fds:
                os.close(fd)
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def proxy_main(args):
    """Relays every connection made to --listen; records the PE bytes of the first one."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + args.listen)
    listener.listen(8)
    listener.settimeout(0.5)
    parent = os.getppid()
    first = True
    while os.getppid() == parent:  # ends with the PE that started it
        try:
            pe, _ = listener.accept()
        except socket.timeout:
            continue
        pe.settimeout(None)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.connect("\0" + args.to)
        record = args.record if first else None
        if first:
            open(args.record, "wb").close()
            os.chmod(args.record, 0o644)  # the recording is what a sniffer would hold
            first = False
        threading.Thread(target=relay, args=(server, pe, None), daemon=True).start()
        threading.Thread(target=relay, args=(pe, server, record), daemon=True).start()


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    a = sub.add_parser("attack")
    a.add_argument("--tag", required=True)
    a.add_argument("--npes", type=int, required=True)
    a.add_argument("--until", required=True)
    a.add_argument("--report", required=True)
    a.add_argument("--replay")
    a.add_argument("--rounds", type=int, default=4)
    a.add_argument("--max-seconds", type=float, default=120)
    x = sub.add_parser("proxy")
    x.add_argument("--listen", required=True)
    x.add_argument("--to", required=True)
    x.add_argument("--record", required=True)
    args = p.parse_args()
    return attack_main(args) if args.mode == "attack" else proxy_main(args)


if __name__ == "__main__":
    sys.exit(main())
