#!/usr/bin/env python3
"""Tables of one nvrows run: summarize.py RAWDIR > table.md.

RAWDIR holds TAG-npN-LIB.csv files (perftest/gpu CSV, every round appended). Per row and library:
median of the rounds and spread = (max - min) / median. Ratio = cost of `main` (and `new`) over
NVSHMEM's: time / time for us rows, NVSHMEM value / rshmem value for rate rows (> 1: behind).
BASE=old (environment) compares the candidates with `old` instead of `main` (session 26's runs)."""
import csv, glob, os, re, statistics, sys
from collections import defaultdict

raw = sys.argv[1]
data = defaultdict(lambda: defaultdict(list))  # (tag, np, row) -> lib -> values
units = {}
for f in sorted(glob.glob(os.path.join(raw, "*.csv"))):
    m = re.match(r"(.+)-np(\d+)-(\w+)\.csv$", os.path.basename(f))
    if not m:
        continue
    tag, np_, lib = m.groups()
    for r in csv.reader(line for line in open(f) if not line.startswith("#") and not line.startswith("bench,")):
        if len(r) != 7:
            continue
        key = (tag, int(np_), r[0], r[1], int(r[2]), r[3], r[4])
        data[key][lib].append(float(r[5]))
        units[key] = r[6]


def size(b):
    for u, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {u}"
    return f"{b} B"


def cell(v):
    if not v:
        return "–", None
    med = statistics.median(v)
    spread = (max(v) - min(v)) / med if med else 0.0
    return f"{med:.4g} ({spread * 100:.0f}%)", med


BASE = os.environ.get("BASE", "main")
ORDER = ["nv", "s24", "main", "old", "new", "new1", "new2", "new3", "new4"]
libs_seen = [l for l in ORDER if any(l in v for v in data.values())]
rs = [l for l in libs_seen if l != "nv"]
cand = [l for l in rs if l.startswith("new")]
hdr = ["tag", "PEs", "bench", "variant", "size", "ctas×thr", "unit"] + ["NVSHMEM" if l == "nv" else l for l in libs_seen]
hdr += [f"{l}/NV cost" for l in rs] + [f"{l}/{BASE} cost" for l in cand]
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for key in sorted(data, key=lambda k: (k[0], k[1], k[2], k[3], int(k[5]), k[4])):
    tag, np_, bench, var, sz, ctas, thr = key
    unit = units[key]
    cells = {lib: cell(data[key].get(lib, [])) for lib in libs_seen}

    def cost(a, b):  # cost of a relative to b (> 1: a is behind)
        a, b = cells[a][1], cells[b][1]
        if a is None or b is None or a == 0 or b == 0:
            return "–"
        return f"{(a / b) if unit == 'us' else (b / a):.3f}"

    row = [tag, str(np_), bench, var, size(sz), f"{ctas}×{thr}", unit] + [cells[l][0] for l in libs_seen]
    row += [cost(l, "nv") for l in rs] + [cost(l, BASE) if BASE in libs_seen else "–" for l in cand]
    print("| " + " | ".join(row) + " |")
