#!/usr/bin/env python3
"""nvbench, session 23: tables from the call's files (init-all.txt, probe-all.txt) in this folder.
init-all.txt: one block per run (`== init-<variant>-<round>.txt`), PE 0's CSV rows of perftest/gpu
init. probe-all.txt: one block per run (`== probe-<mode>-<lib>-<round>.txt`), every PE's
`probe,PE,label,start_s,ms` lines of first_probe.cu."""
import collections, os, re, statistics, sys

here = os.path.dirname(os.path.abspath(__file__))


def blocks(path):
    out, name = collections.OrderedDict(), None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"== (.*)\.txt$", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name:
            out[name].append(line)
    return out


def init_table(path):
    rows = ["nvshmem_init", "first_barrier", "init_to_first_barrier", "malloc_256MiB", "first_bcast_64B",
            "first_bcast_64KiB", "first_sum_reduce_int"]
    vals = collections.defaultdict(lambda: collections.defaultdict(list))
    for name, lines in blocks(path).items():
        m = re.match(r"init-(\w+)-(\d+)$", name)
        if not m:
            continue
        for l in lines:
            f = l.split(",")
            if len(f) >= 7 and f[0] == "init" and f[1] in rows:
                vals[m.group(1)][f[1]].append(float(f[5]))
    variants = [v for v in ["old", "new", "sync", "lazy", "nvshmem"] if v in vals]
    print("| row (ms, PE 0) | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for r in rows + ["init+first calls"]:
        cells = []
        for v in variants:
            if r == "init+first calls":
                parts = [vals[v][k] for k in ["nvshmem_init", "first_barrier", "first_bcast_64B", "first_bcast_64KiB", "first_sum_reduce_int"]]
                xs = [sum(t) for t in zip(*parts)] if all(parts) else []
            else:
                xs = vals[v][r]
            cells.append(" / ".join(f"{x:.3g}" for x in xs) + (f" (**{statistics.median(xs):.3g}**)" if xs else ""))
        print(f"| {r} | " + " | ".join(cells) + " |")


def probe_table(path):
    for name, lines in blocks(path).items():
        recs = [l.split(",") for l in lines if l.startswith("probe,")]
        if not recs:
            print(f"{name}: no lines")
            continue
        t0 = min(float(r[3]) for r in recs if r[2] == "barrier_exit")
        by = collections.OrderedDict()
        for r in recs:
            by.setdefault(r[2], {})[int(r[1])] = (float(r[3]) - t0, float(r[4]))
        print(f"{name}: label: PE start (µs after PE-min barrier exit) + ms")
        for label, pes in by.items():
            if label in ("init",):
                continue
            print("   %-32s " % label + "  ".join(f"PE{p}: {s*1e6:9.1f} +{ms:.4f}" for p, (s, ms) in sorted(pes.items())))


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else here
    if os.path.exists(f"{d}/init-all.txt"):
        init_table(f"{d}/init-all.txt")
    if os.path.exists(f"{d}/probe-all.txt"):
        probe_table(f"{d}/probe-all.txt")
