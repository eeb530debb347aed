#!/usr/bin/env python3
"""ll1 and ll2 against m2 per row of raw-*.csv (no NVSHMEM in these files): medians of the
rounds, ratio = time / m2's time. usage: cmp.py RAW... (prints a Markdown table)"""
import csv, statistics, sys
print("| file | row | size | thr | m2 µs | ll1 µs | ll2 µs | ll1/m2 | ll2/m2 |")
print("|---|---|---|---|---|---|---|---|---|")
for path in sys.argv[1:]:
    rows = {}
    for r in csv.DictReader(open(path)):
        if r["bench"] == "launch" or r["unit"] != "us": continue
        k = (r["bench"] + "/" + r["variant"], int(r["size"]), r["threads"])
        rows.setdefault(k, {}).setdefault(r["lib"], []).append(float(r["value"]))
    for (name, size, thr), v in rows.items():
        m = {l: statistics.median(x) for l, x in v.items()}
        print(f"| {path.split('raw-')[-1][:-4]} | {name} | {size} | {thr} | {m['m2']:.3f} | {m['ll1']:.3f} | {m['ll2']:.3f} | "
              f"{m['ll1']/m['m2']:.3f} | {m['ll2']/m['m2']:.3f} |")
