"""Per-run ratios of put_bw rows from perftest/net/ab.sh's raw.csv: for each implementation
(floor, old, new) and each size, the median over rounds of (that size's figure / the 256 KiB
figure of the same run). Both figures come from one process a second apart, so the load of the
round cancels; a change that touches only puts over 256 KiB moves only the new side's ratio.
Also the per-round new/old and new/floor ratios (median, quartiles) per size.
    python3 within_run.py RAW.csv"""
import collections
import csv
import statistics
import sys

BASE = 262144
rows = collections.defaultdict(dict)  # (round, impl) -> size -> value
for r in csv.DictReader(open(sys.argv[1])):
    if r["name"] in ("put_bw", "tcp_stream"):
        rows[(int(r["round"]), r["impl"])][int(r["size"])] = float(r["value"])
rounds = sorted({k[0] for k in rows})


def summary(values):
    if len(values) < 2:
        return "n=%d" % len(values)
    q = statistics.quantiles(values, n=4)
    return "%.3f (q1 %.3f, q3 %.3f, n=%d)" % (statistics.median(values), q[0], q[2], len(values))


sizes = sorted({s for v in rows.values() for s in v})
print("size / 256 KiB in the same run (median over rounds):")
for impl in ("floor", "old", "new"):
    for s in sizes:
        if s > BASE:
            v = [x[s] / x[BASE] for (rd, i), x in rows.items() if i == impl and s in x and BASE in x]
            print("  %-5s %4d KiB  %s" % (impl, s >> 10, summary(v)))
print("per-round ratios (median over rounds):")
for s in sizes:
    pair = lambda a, b: [rows[(rd, a)][s] / rows[(rd, b)][s] for rd in rounds
                         if s in rows.get((rd, a), {}) and s in rows.get((rd, b), {})]
    print("  %7d  new/old %s  old/floor %s  new/floor %s" % (s, summary(pair("new", "old")),
          summary(pair("old", "floor")), summary(pair("new", "floor"))))
