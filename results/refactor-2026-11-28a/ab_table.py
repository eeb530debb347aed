#!/usr/bin/env python3
"""Table of an ab.sh CSV: per row the median over rounds of A, B and the floor, and B's speed
relative to A (> 1: B faster; for times A/B, for rates B/A).
    python3 ab_table.py run1.csv [run2.csv ...]   (rounds of every file pooled)"""
import csv
import statistics
import sys

vals = {}
for path in sys.argv[1:]:
    for r in csv.DictReader(open(path)):
        vals.setdefault((r["name"], int(r["size"]), r["unit"]), {}).setdefault(r["impl"], []).append(float(r["value"]))
print(f"| row | size | unit | A (median) | B (median) | floor | B speed / A | rounds |")
print("|---|---:|---|---:|---:|---:|---:|---:|")
for (name, size, unit), d in sorted(vals.items(), key=lambda kv: list(vals).index(kv[0])):
    if "A" not in d or "B" not in d:
        continue
    a, b = statistics.median(d["A"]), statistics.median(d["B"])
    fl = f"{statistics.median(d['floor']):.4g}" if "floor" in d else "-"
    speed = a / b if unit == "us" else b / a
    print(f"| {name} | {size} | {unit} | {a:.4g} | {b:.4g} | {fl} | {speed:.2f} | {min(len(d['A']), len(d['B']))} |")
