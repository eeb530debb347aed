#!/usr/bin/env python3
"""p3 (ll_send-once.patch) against m3 (main 587630d) per row of go4.sh's raw-*.csv: medians of
the rounds, spread = (max - min) / median per build, p3/m3, and both against NVSHMEM (nvshmem or
nvnccl, whichever the file has). usage: cmp4.py RAW... (prints a Markdown table)"""
import csv, statistics, sys
print("| file | row | size | NV µs | m3 µs (spread) | p3 µs (spread) | p3/m3 | m3/NV | p3/NV |")
print("|---|---|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["unit"] != "us": continue
        k = (r["bench"] + "/" + r["variant"], int(r["size"]))
        rows.setdefault(k, {}).setdefault(r["lib"], []).append(float(r["value"]))
    for (name, size), v in rows.items():
        med = {l: statistics.median(x) for l, x in v.items()}
        spr = {l: (max(x) - min(x)) / med[l] if med[l] else 0 for l, x in v.items()}
        nv = med.get("nvshmem", med.get("nvnccl"))
        if "m3" not in med or "p3" not in med: continue
        nvs = f"{nv:.3f}" if nv else "-"
        rel = lambda l: f"{med[l] / nv:.3f}" if nv else "-"
        print(f"| {path.split('raw-')[-1][:-4]} | {name} | {size} | {nvs} | {med['m3']:.3f} ({100 * spr['m3']:.0f} %) | "
              f"{med['p3']:.3f} ({100 * spr['p3']:.0f} %) | {med['p3'] / med['m3']:.3f} | {rel('m3')} | {rel('p3')} |")
