#!/usr/bin/env python3
"""Per-launch summary of callB/probe.csv (ctx_probe under each launcher; run.sh).

For each launch (rep, PEs, configuration, program): the slowest PE's cuInit (`count`) and context
(`ctx`, what init.cu's `init/ctx` row is), the mean `ctx` over PEs, and `gap`: from the previous
launch's last context ready to this launch's first PE start (the previous launcher's exit, the
script, and this launcher's own start before it starts a PE). `ready` = gap + the time from this
launch's first PE start to its last context ready: launch to every context made, as far as the
probe's clocks can see it (the previous launcher's exit is included for every launch alike).
"""
import collections
import csv
import os
import statistics
import sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "callB", "probe.csv")
launches = collections.OrderedDict()
for r in csv.DictReader(open(path)):
    launches.setdefault((r["rep"], r["np"], r["config"], r["probe"]), []).append(r)

print("| rep | PEs | launcher | program | cuInit max ms | ctx max ms | ctx mean ms | gap ms | ready ms |")
print("|---|---|---|---|---|---|---|---|---|")
prev_end = None
for (rep, np, cfg, prog), rows in launches.items():
    first = min(float(r["start"]) for r in rows)
    end = max(float(r["start"]) + float(r["ctx_ms"]) / 1e3 for r in rows)
    gap = (first - prev_end) * 1e3 if prev_end is not None else None
    ready = gap + (end - first) * 1e3 if gap is not None else None
    fmt = lambda v: "-" if v is None else f"{v:.0f}"
    print(f"| {rep} | {np} | {cfg} | {prog} | {max(float(r['count_ms']) for r in rows):.0f} | "
          f"{max(float(r['ctx_ms']) for r in rows):.0f} | {statistics.mean(float(r['ctx_ms']) for r in rows):.0f} | "
          f"{fmt(gap)} | {fmt(ready)} |")
    prev_end = end
