#!/usr/bin/env python3
"""Tables and plots for scripts/bench_compare.sh.

Reads raw.csv (lib,round,bench,variant,size,ctas,threads,value,unit: one row per measurement and
round) and writes, into --out:
  summary.csv   one row per measurement key: the median over rounds of every library, the spread
                (max-min)/median over rounds, and the ratio rshmem / NVSHMEM
  tables.md     the tables below in Markdown
  <family>.png  the ratio per row on a linear axis, 1.0 marked: rshmem's speed over NVSHMEM's
                (NVSHMEM time / rshmem time, or rshmem rate / NVSHMEM rate), so > 1 is rshmem
                ahead; one file per benchmark family; rows one library lacks are named on it
  <family>-values.png  value vs size for every library and the floors (size sweeps only)
  (plots need matplotlib; skipped with a message without it)
and prints one table per benchmark on stdout.

Libraries: "nvshmem" (NVSHMEM as installed: NCCL path for on-stream collectives where NVSHMEM
uses NCCL), "nvshmem-nonccl" (NVSHMEM_DISABLE_NCCL=1), "rshmem". Rows whose variant starts with
"floor" are bare-CUDA floors, measured inside each library's run (no SHMEM call).
"""
import argparse
import csv
import math
import os
import statistics
import sys
from collections import OrderedDict, defaultdict

LIBS = ["nvshmem", "nvshmem-nonccl", "rshmem"]
LIB_TITLE = {"nvshmem": "NVSHMEM", "nvshmem-nonccl": "NVSHMEM no-NCCL", "rshmem": "rshmem"}
HIGHER_BETTER = {"GB/s", "Gop/s", "Mop/s", "op/s"}
FAMILIES = OrderedDict([
    ("put_bw", ["put_bw", "put_bw_bidir"]),
    ("p_bw", ["p_bw"]),
    ("latency", ["lat_p_quiet", "lat_put", "lat_get"]),
    ("rtt", ["rtt"]),
    ("amo_bw", ["amo_bw"]),
    ("sync", ["sync"]),
    ("coll", ["coll_alltoall", "coll_fcollect", "coll_broadcast", "coll_reduce", "coll_reducescatter"]),
    ("stream", ["stream_put", "stream_put_lat", "stream_sync", "stream_coll"]),
    ("init", ["init", "mem", "launch"]),
])


def human_size(n):
    n = int(n)
    if n == 0:
        return "-"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def fmt(v):
    if v is None:
        return "-"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 10:
        return "%.2f" % v
    if a >= 1:
        return "%.3f" % v
    return "%.4g" % v


def higher_is_better(unit):
    return unit in HIGHER_BETTER


def load(path):
    data = defaultdict(lambda: defaultdict(list))  # key -> lib -> [values]
    order = []
    with open(path) as f:
        for row in csv.DictReader(f):
            try:
                v = float(row["value"])
            except (TypeError, ValueError):
                continue
            if math.isnan(v):
                continue
            key = (row["bench"], row["variant"], int(row["size"]), int(row["ctas"]), int(row["threads"]), row["unit"])
            if key not in data:
                order.append(key)
            data[key][row["lib"]].append(v)
    return data, order


def stats(vals):
    if not vals:
        return None, None
    m = statistics.median(vals)
    spread = (max(vals) - min(vals)) / m if m else 0.0
    return m, spread


def ratio_and_better(rs, nv, unit, floor):
    if rs is None or nv is None or nv == 0 or floor:
        return None, ""
    r = rs / nv
    if abs(r - 1.0) < 0.01:
        return r, "tie"
    better_rs = r > 1.0 if higher_is_better(unit) else r < 1.0
    return r, "rshmem" if better_rs else "NVSHMEM"


def build_rows(data, order):
    libs = [l for l in LIBS if any(l in data[k] for k in order)]
    benches = OrderedDict()
    for key in order:
        benches.setdefault(key[0], []).append(key)
    summary = []
    for bench, keys in benches.items():
        for key in keys:
            _, variant, size, ctas, threads, unit = key
            floor = variant.startswith("floor")
            rec = {"bench": bench, "variant": variant, "size": size, "ctas": ctas, "threads": threads, "unit": unit,
                   "floor": floor, "rounds": max(len(v) for v in data[key].values())}
            for lib in libs:
                rec[lib], rec[lib + "_spread"] = stats(data[key].get(lib, []))
            rec["ratio"], rec["better"] = ratio_and_better(rec.get("rshmem"), rec.get("nvshmem"), unit, floor)
            if "nvshmem-nonccl" in libs:
                rec["ratio_nonccl"], _ = ratio_and_better(rec.get("rshmem"), rec.get("nvshmem-nonccl"), unit, floor)
            summary.append(rec)
    return libs, benches, summary


def print_tables(libs, summary, md):
    out = []
    by_bench = OrderedDict()
    for rec in summary:
        by_bench.setdefault(rec["bench"], []).append(rec)
    has_rs = "rshmem" in libs
    for bench, recs in by_bench.items():
        libs_all = libs
        libs = [l for l in libs_all if any(r.get(l) is not None for r in recs)] or libs_all
        units = sorted(set(r["unit"] for r in recs))
        direction = "; ".join("%s: %s is better" % (u, "higher" if higher_is_better(u) else "lower") for u in units)
        cols = ["variant", "size", "ctas", "thr"] + [LIB_TITLE[l] for l in libs]
        if has_rs:
            cols += ["rshmem/NVSHMEM"]
            if "nvshmem-nonccl" in libs:
                cols += ["rshmem/no-NCCL"]
            cols += ["better"]
        cols += ["spread"]
        rows = []
        for r in recs:
            line = [r["variant"], human_size(r["size"]), str(r["ctas"] or "-"), str(r["threads"] or "-")]
            line += [fmt(r.get(l)) for l in libs]
            if has_rs:
                line.append("floor" if r["floor"] else ("n/a" if r["ratio"] is None else "%.3f" % r["ratio"]))
                if "nvshmem-nonccl" in libs:
                    rn = r.get("ratio_nonccl")
                    line.append("" if r["floor"] else ("n/a" if rn is None else "%.3f" % rn))
                line.append(r["better"])
            sp = [r.get(l + "_spread") for l in libs if r.get(l + "_spread") is not None]
            line.append("%.0f%%" % (100 * max(sp)) if sp else "")
            rows.append(line)
        widths = [max(len(c), *(len(x[i]) for x in rows)) for i, c in enumerate(cols)]
        title = "== %s (%s) ==" % (bench, direction)
        out.append(title)
        out.append("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
        for x in rows:
            out.append("  ".join(v.ljust(w) for v, w in zip(x, widths)))
        out.append("")
        md.append("### %s\n\n%s. Median over rounds; spread = (max-min)/median over rounds, worst library.\n" % (bench, direction))
        md.append("| " + " | ".join(cols) + " |")
        md.append("|" + "---|" * len(cols))
        for x in rows:
            md.append("| " + " | ".join(x) + " |")
        md.append("")
        libs = libs_all
    if not has_rs:
        out.append("rshmem: no results (not given, not built, or failed): NVSHMEM and floors only.")
    print("\n".join(out))


def write_summary(path, libs, summary):
    cols = ["bench", "variant", "size", "ctas", "threads", "unit", "rounds"]
    for l in libs:
        cols += [l, l + "_spread"]
    cols += ["ratio", "better"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in summary:
            w.writerow([("" if r.get(c) is None else ("%.6g" % r[c] if isinstance(r.get(c), float) else r[c])) for c in cols])


def plot(out_dir, libs, summary):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print("plots skipped: matplotlib not available (%s)" % e)
        return []
    styles = {"nvshmem": "-", "nvshmem-nonccl": "-.", "rshmem": "--"}
    markers = {"nvshmem": "o", "nvshmem-nonccl": "^", "rshmem": "s"}
    by_bench = OrderedDict()
    for rec in summary:
        by_bench.setdefault(rec["bench"], []).append(rec)
    written = []
    for fam, benches in FAMILIES.items():
        panels = []  # (title, records)
        for bench in benches:
            recs = by_bench.get(bench)
            if not recs:
                continue
            per_series = defaultdict(set)
            for r in recs:
                per_series[(r["variant"], r["ctas"], r["threads"])].add(r["size"])
            if max(len(v) for v in per_series.values()) > 1:  # some series is a sweep over sizes
                series = set((r["variant"], r["ctas"], r["threads"]) for r in recs)
                variants = list(OrderedDict.fromkeys(r["variant"] for r in recs if not r["floor"]))
                if len(series) > 10 and len(variants) > 1:
                    # One panel per variant, with the floors of the same grid shapes.
                    for v in variants:
                        mine = [r for r in recs if r["variant"] == v]
                        shapes = set((r["ctas"], r["threads"]) for r in mine)
                        floors = [r for r in recs if r["floor"] and (r["ctas"], r["threads"]) in shapes]
                        panels.append(("%s: %s" % (bench, v), mine + floors, True))
                    continue
                panels.append((bench, recs, True))
        panels = [p for p in panels if p[2]]  # single-size rows: their values are in the tables
        if not panels:
            continue
        n = len(panels)
        fig, axes = plt.subplots(n, 1, figsize=(12, 4.5 * n), squeeze=False)
        for ax, (title, recs, _) in zip(axes[:, 0], panels):
            units = sorted(set(r["unit"] for r in recs))
            series = OrderedDict()
            for r in recs:
                series.setdefault((r["variant"], r["ctas"], r["threads"], r["unit"]), []).append(r)
            cmap = plt.get_cmap("tab10")
            shape_color = {}
            for (variant, ctas, thr, unit), rs in series.items():
                rs = sorted(rs, key=lambda r: r["size"])
                is_floor = variant.startswith("floor")
                color = shape_color.setdefault((ctas, thr) if is_floor else (ctas, thr, variant),
                                               cmap(len(shape_color) % 10))
                label_base = variant + (" c=%d" % ctas if ctas else "") + (" t=%d" % thr if thr > 1 else "")
                for lib in libs:
                    pts = [(r["size"], r[lib]) for r in rs if r.get(lib) is not None]
                    if not pts:
                        continue
                    if is_floor and lib != libs[0]:
                        continue  # the floor is the same code in every run: draw it once
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ":" if is_floor else styles[lib],
                            marker="." if is_floor else markers[lib], markersize=3, color=color,
                            linewidth=0.9 if is_floor else 1.3,
                            label=("" if is_floor else LIB_TITLE[lib] + " ") + label_base)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("size (bytes)")
            ax.set_ylabel(", ".join(units))
            ax.set_title("%s (%s; %s is better; dotted = bare-CUDA floor)" % (
                title, ", ".join(units), "higher" if higher_is_better(units[0]) else "lower"))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6, ncol=3, loc="best")
        fig.tight_layout()
        path = os.path.join(out_dir, fam + "-values.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written + ratio_plots(out_dir, summary, plt)


def speedup(rec, base):
    """rshmem's speed over the base library's for one row (> 1: rshmem ahead); None if either is missing."""
    rs, nv = rec.get("rshmem"), rec.get(base)
    if rs is None or nv is None or rs == 0 or nv == 0 or rec["floor"]:
        return None
    return rs / nv if higher_is_better(rec["unit"]) else nv / rs


def row_label(r):
    return r["variant"] + (" c=%d" % r["ctas"] if r["ctas"] else "") + (" t=%d" % r["threads"] if r["threads"] > 1 else "")


# The ratio axis ends at most here: a row past it (a 216x finalize) is drawn to the edge with its
# value written beside, so one outlier does not squeeze every other row against 1.0.
RATIO_AXIS_MAX = 4.0


def ratio_axis_end(ratios):
    """Right end of the linear ratio axis: a little past the largest ratio, at most RATIO_AXIS_MAX."""
    return 1.05 * min(max([r for r in ratios if r is not None] + [1.0]), RATIO_AXIS_MAX)


def ratio_plots(out_dir, summary, plt):
    """One figure per family: every row's speed ratio on a linear axis with 1.0 marked, against
    NVSHMEM as installed (and against NVSHMEM without NCCL where that ran)."""
    bases = [b for b in ("nvshmem", "nvshmem-nonccl") if any(r.get(b) is not None for r in summary)]
    written = []
    for fam, benches in FAMILIES.items():
        rows = [r for r in summary if r["bench"] in benches and not r["floor"]]
        here = [b for b in bases if any(r.get(b) is not None for r in rows)]
        if not rows or not here:
            continue
        fig, ax = plt.subplots(1, 1, figsize=(11, max(3.0, 0.16 * len(rows) * len(here) + 1.5)))
        labels = ["%s %s %s" % (r["bench"], row_label(r), human_size(r["size"])) for r in rows]
        h = 0.8 / len(here)
        missing = [lab for lab, r in zip(labels, rows) if speedup(r, here[0]) is None]
        end = ratio_axis_end([speedup(r, b) for r in rows for b in here])
        for j, b in enumerate(here):
            vals = [speedup(r, b) for r in rows]
            ys = [i + j * h for i, v in enumerate(vals) if v is not None]
            shown = [v for v in vals if v is not None]
            ax.barh(ys, [min(v, end) - 1.0 for v in shown], left=1.0, height=h,
                    color="C%d" % j, label="vs " + LIB_TITLE[b])
            for y, v in zip(ys, shown):
                if v > end:
                    ax.text(end, y, " %.0fx " % v if v >= 10 else " %.1fx " % v, ha="right", va="center",
                            fontsize=6, color="white", fontweight="bold")
        ax.set_xlim(0.0, end)
        ax.axvline(1.0, color="black", linewidth=1.0)
        ax.set_yticks([i + h * (len(here) - 1) / 2 for i in range(len(rows))])
        ax.set_yticklabels(labels, fontsize=6)
        ax.invert_yaxis()
        ax.set_xlabel("rshmem speed / NVSHMEM speed (linear; 1.0 = equal, > 1: rshmem ahead; bars past"
                      " %.0f end at the edge with their value)" % RATIO_AXIS_MAX)
        title = "%s: rshmem against NVSHMEM, per row" % fam
        if missing:
            title += "\n(no ratio, a library lacks the row: %s)" % ", ".join(missing[:6] + (["..."] if len(missing) > 6 else []))
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        path = os.path.join(out_dir, fam + ".png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args()
    data, order = load(a.raw)
    if not order:
        print("no rows in %s" % a.raw)
        return 1
    libs, _, summary = build_rows(data, order)
    md = ["# rshmem vs NVSHMEM: tables\n", "Libraries: " + ", ".join(LIB_TITLE[l] for l in libs) + ".\n"]
    print_tables(libs, summary, md)
    write_summary(os.path.join(a.out, "summary.csv"), libs, summary)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    if not a.no_plots:
        for p in plot(a.out, libs, summary):
            print("plot: %s" % p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
