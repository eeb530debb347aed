#!/usr/bin/env python3
"""Per-round B speed / A of an ab.sh CSV, split by order (ab.sh runs A first in odd rounds,
B first in even ones), and the median over rounds.  python3 ab_order.py run.csv"""
import csv,sys,statistics
d={}
for r in csv.DictReader(open(sys.argv[1])):
    d.setdefault((r['name'],r['size'],r['unit']),{}).setdefault(r['impl'],{})[int(r['round'])]=float(r['value'])
print("| row | size | B speed / A, A-first rounds (odd) | B-first rounds (even) | median of all |")
print("|---|---:|---|---|---:|")
for k,v in d.items():
    if 'A' not in v or 'B' not in v: continue
    sp={r:(v['A'][r]/v['B'][r] if k[2]=='us' else v['B'][r]/v['A'][r]) for r in v['A'] if r in v['B']}
    odd=[f"{sp[r]:.2f}" for r in sorted(sp) if r%2]; ev=[f"{sp[r]:.2f}" for r in sorted(sp) if not r%2]
    print(f"| {k[0]} | {k[1]} | {' '.join(odd)} | {' '.join(ev)} | {statistics.median(sp.values()):.2f} |")
