#!/usr/bin/env python3
"""Prints the comparison table of perftest/host/bench.sh from its raw CSV.

Input columns: impl,round,name,size,value,unit (impl is floor, rshmem or oshmem).
Rows measured under a competing CPU load carry a suffix in their name (bench.sh).
Each implementation's value for a row is the median over rounds (each round's value is
already a median of repetitions). Latency rows (unit us): lower is better; bandwidth rows
(GB/s): higher is better. Standard library only."""
import csv
import statistics
import sys

IMPLS = ("floor", "rshmem", "oshmem")


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "us":
        return f"{v:.4f}" if v < 10 else f"{v:.2f}"
    if unit == "Mmsg/s":
        return f"{v:.3g}"
    return f"{v:.1f}"


def main(path):
    values = {}  # (name, size) -> impl -> [values]
    units = {}
    order = []
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            key = (rec["name"], int(rec["size"]))
            if key not in values:
                values[key] = {}
                order.append(key)
            units[key] = rec["unit"]
            values[key].setdefault(rec["impl"], []).append(float(rec["value"]))

    def med(key, impl):
        v = values[key].get(impl)
        return statistics.median(v) if v else None

    # Rows the benchmark has first, then floor-only rows (reference figures).
    bench_rows = [k for k in order if "rshmem" in values[k] or "oshmem" in values[k]]
    floor_only = [k for k in order if k not in bench_rows]
    head = f"{'row':<26} {'size':>8} {'unit':<5} {'floor':>9} {'rshmem':>9} {'OSHMEM':>9} {'rshmem/OSHMEM':>14}  better"
    print(head)
    print("-" * len(head))
    for key in bench_rows + floor_only:
        name, size = key
        unit = units[key]
        fl, rs, om = (med(key, i) for i in IMPLS)
        ratio, better = "-", ""
        if rs is not None and om is not None and om > 0 and rs > 0:
            ratio = f"{rs / om:.2f}"
            lower_better = unit == "us"
            if abs(rs / om - 1) < 0.05:
                better = "~same"
            elif (rs < om) == lower_better:
                better = "rshmem"
            else:
                better = "OSHMEM"
        label = name if key in bench_rows else name + " (floor)"
        print(f"{label:<26} {size:>8} {unit:<5} {fmt(fl, unit):>9} {fmt(rs, unit):>9} {fmt(om, unit):>9} {ratio:>14}  {better}")
    print("latency rows (us): lower is better; bandwidth (GB/s) and message-rate (Mmsg/s) rows: higher is better; "
          "ratio < 1 on latency and > 1 on bandwidth favour rshmem")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: table.py RAW.csv")
    main(sys.argv[1])
