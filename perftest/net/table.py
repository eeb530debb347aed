#!/usr/bin/env python3
"""Prints the multi-host table of perftest/net/bench.sh from its raw CSV.

Input columns: impl,round,name,size,value,unit; impl is floor (tcp_floor's tcp_rtt and
tcp_stream rows), rshmem, oshmem or base (another rshmem build, bench.sh's BASE: its column and
rshmem/base appear only when it ran). Each figure is the median over rounds.

Each benchmark row is set beside the bare-TCP figure for the same work:
  put8_quiet, get8, fetch_add, put8_quiet_multi (puts to N PEs, one quiet: the N round trips
                               may overlap)
                               one 8-byte round trip (the data or request goes out, the
                               completion or the value comes back): tcp_rtt
  barrier_all (2 PEs)          both PEs send at once and wait for the other: one one-way trip,
                               tcp_rtt / 2
  put_bw SIZE                  a TCP stream written in SIZE-byte writes: tcp_stream SIZE (the
                               median of 3 streams timed as put_bw is: tcp_floor.c)
  put8_alltoall_npN            (put_rate.c, N PEs over 2 hosts) blocking 8-byte puts per second
                               of the slowest PE, every PE to every PE: no floor, beside OSHMEM
The issue's targets: latency <= OSHMEM's and <= 2x the floor; bandwidth >= 0.9x the floor.
Standard library only."""
import csv
import statistics
import sys

ROUND_TRIP = ("put8_quiet", "put8_quiet_multi", "get8", "fetch_add", "atomic_add", "p")


def fmt(v, unit):
    if v is None:
        return "-"
    if unit == "us":
        return f"{v:.2f}"
    if unit == "op/s":
        return f"{v:.0f}"
    return f"{v:.3f}"


def main(path):
    values = {}  # (impl, name, size) -> [values]
    units = {}
    order = []
    with open(path, newline="") as f:
        for rec in csv.DictReader(f):
            key = (rec["name"], int(rec["size"]))
            values.setdefault((rec["impl"],) + key, []).append(float(rec["value"]))
            if rec["impl"] != "floor" and key not in order:
                order.append(key)
                units[key] = rec["unit"]

    def med(impl, name, size):
        v = values.get((impl, name, size))
        return statistics.median(v) if v else None

    def floor_of(name, size):
        rtt = med("floor", "tcp_rtt", 8)
        if name in ROUND_TRIP:
            return rtt, "tcp round trip"
        if name == "barrier_all":
            return (rtt / 2 if rtt is not None else None), "tcp one way"
        if name.endswith("_bw"):
            return med("floor", "tcp_stream", size), f"tcp stream, {size} B writes"
        return None, "-"

    has_base = any(k[0] == "base" for k in values)
    base_head = f" {'base':>8} {'rs/base':>7}" if has_base else ""
    head = (f"{'row':<16} {'size':>8} {'unit':<5} {'floor':>8}{base_head} {'rshmem':>8} {'OSHMEM':>8} "
            f"{'rs/OSHMEM':>9} {'rs/floor':>8} {'OSH/floor':>9}  {'target':<7} floor is")
    print(head)
    print("-" * len(head))
    for name, size in order:
        unit = units[(name, size)]
        fl, what = floor_of(name, size)
        rs, om = med("rshmem", name, size), med("oshmem", name, size)

        def ratio(a, b):
            return f"{a / b:.2f}" if a is not None and b else "-"

        target = "-"
        if rs is not None and fl:
            if unit == "us":
                ok = rs <= 2 * fl and (om is None or rs <= om)
            else:
                ok = rs >= 0.9 * fl
            target = "met" if ok else "MISSED"
        base = ""
        if has_base:
            b = med("base", name, size)
            base = f" {fmt(b, unit):>8} {ratio(rs, b):>7}"
        print(f"{name:<16} {size:>8} {unit:<5} {fmt(fl, unit):>8}{base} {fmt(rs, unit):>8} {fmt(om, unit):>8} "
              f"{ratio(rs, om):>9} {ratio(rs, fl):>8} {ratio(om, fl):>9}  {target:<7} {what}")
    rtt = med("floor", "tcp_rtt", 8)
    if rtt is not None:
        print(f"tcp_rtt (floor): {rtt:.2f} us for 8 bytes there and back ({rtt / 2:.2f} us one way)")
    print("latency (us): lower is better; bandwidth (GB/s): higher is better. target: latency <= OSHMEM "
          "and <= 2x floor, bandwidth >= 0.9x floor")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: table.py RAW.csv")
    main(sys.argv[1])
