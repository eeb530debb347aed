#!/usr/bin/env python3
"""Table of perftest/net/ab.sh's rounds: per 1-minute load bucket, each row's median over the
bucket's rounds for old and new, new/old, and (bandwidth rows) each build against the TCP
stream floor measured in the same rounds. Input columns: round,load,impl,name,size,value,unit
(impl is floor, old or new; the floor's rows are tcp_rtt and tcp_stream).
  python3 perftest/net/ab_table.py raw.csv"""

import csv
import statistics
import sys

BUCKETS = [(0, 1), (1, 2), (2, 4), (4, 8), (8, 1e9)]


def bucket_of(load):
    for lo, hi in BUCKETS:
        if lo <= load < hi:
            return lo, hi
    return BUCKETS[-1]


def label(b):
    lo, hi = b
    return f"load >= {lo:g}" if hi >= 1e9 else f"load {lo:g}-{hi:g}"


def main(path):
    rows = list(csv.DictReader(open(path)))
    # values[(bucket, impl, name, size)] -> list of values; rounds per bucket
    values, rounds, order = {}, {}, []
    for r in rows:
        b = bucket_of(float(r["load"]))
        rounds.setdefault(b, set()).add(r["round"])
        key = (r["name"], int(r["size"]), r["unit"])
        if r["impl"] != "floor" and key not in order:
            order.append(key)
        values.setdefault((b, r["impl"], r["name"], int(r["size"])), []).append(float(r["value"]))

    def med(b, impl, name, size):
        v = values.get((b, impl, name, size))
        return statistics.median(v) if v else None

    def fmt(x, spec):
        return format(x, spec) if x is not None else "-".rjust(int(spec.split(".")[0]))

    for b in sorted(rounds):
        print(f"{label(b)}: {len(rounds[b])} rounds")
        print(f"  {'row':<12} {'size':>8} {'unit':<5} {'old':>8} {'new':>8} {'new/old':>7} "
              f"{'floor':>8} {'old/fl':>6} {'new/fl':>6}  better")
        for name, size, unit in order:
            old, new = med(b, "old", name, size), med(b, "new", name, size)
            if old is None and new is None:
                continue
            ratio = new / old if old and new is not None else None
            bw = unit == "GB/s"
            floor = med(b, "floor", "tcp_stream", size) if bw else None
            of = old / floor if bw and floor and old is not None else None
            nf = new / floor if bw and floor and new is not None else None
            better = "-"
            if ratio is not None:
                better = "new" if (ratio > 1.05 if bw else ratio < 0.95) else \
                         "old" if (ratio < 0.95 if bw else ratio > 1.05) else "same"
            print(f"  {name:<12} {size:>8} {unit:<5} {fmt(old, '8.3f')} {fmt(new, '8.3f')} {fmt(ratio, '7.2f')} "
                  f"{fmt(floor, '8.3f')} {fmt(of, '6.2f')} {fmt(nf, '6.2f')}  {better}")
        rtt = med(b, "floor", "tcp_rtt", 8)
        if rtt is not None:
            print(f"  tcp_rtt (floor) {rtt:.2f} us")
        print()
    print("latency rows (us): lower is better; GB/s: higher is better; better: new/old beyond 5%")


if __name__ == "__main__":
    main(sys.argv[1])
