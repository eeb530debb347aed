#!/usr/bin/env python3
"""Per row of raw-*.csv (lib,round,bench,variant,size,ctas,threads,value,unit; several libs,
rounds alternating): median per lib, spread (max-min)/median, ratio lib/nvshmem for times
(nvshmem/lib for bandwidths). usage: summarize.py RAW... [--libs main,new] [--behind 1.02]"""
import csv, statistics, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
libs = opts.get("libs", "main,new").split(",")
behind = float(opts.get("behind", "0"))
print("| file | row | size | thr | NVSHMEM | " + " | ".join(f"{l} (spread)" for l in libs) + " | " +
      " | ".join(f"{l}/NV" for l in libs) + " |")
print("|" + "---|" * (5 + 2 * len(libs)))
for path in args:
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["bench"] == "launch": continue
        k = (r["bench"] + "/" + r["variant"], int(r["size"]), r["threads"], r["unit"])
        rows.setdefault(k, {}).setdefault(r["lib"], []).append(float(r["value"]))
    for (name, size, thr, unit), v in rows.items():
        if "nvshmem" not in v: continue
        nv = statistics.median(v["nvshmem"])
        cells, ratios, worst = [], [], 0
        for l in libs:
            if l not in v:
                cells.append("-"); ratios.append("-"); continue
            m = statistics.median(v[l]); sp = (max(v[l]) - min(v[l])) / m if m else 0
            rt = (m / nv if unit in ("us", "ms", "s") else nv / m) if nv and m else float("nan")
            worst = max(worst, rt)
            cells.append(f"{m:.3f} ({sp*100:.0f}%)"); ratios.append(f"{rt:.3f}")
        if worst < behind: continue
        nsp = (max(v["nvshmem"]) - min(v["nvshmem"])) / nv * 100 if nv else 0
        print(f"| {path.split('/')[-1][4:-4]} | {name} | {size} | {thr} | {nv:.3f} ({nsp:.0f}%) | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
