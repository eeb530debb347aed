import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def vals(impl, size, loads=None):
    return {int(r['round']): float(r['value']) for r in rows if r['impl'] == impl and r['size'] == size
            and r['name'] in ('tcp_stream', 'put_bw') and (loads is None or loads[0] <= float(r['load']) < loads[1])}
buckets = [(0, 1), (1, 2), (2, 4), (4, 8), (8, 99)]
for lo, hi in buckets:
    n = len({r['round'] for r in rows if lo <= float(r['load']) < hi})
    if not n: continue
    print(f"load {lo}-{hi}: {n} rounds")
    print(f"  {'size':>8} {'impl':10} {'median':>7} {'min':>6} {'max':>6} {'cv':>5}   rshmem/floor (median of per-round ratios; of medians)")
    for size in ['1024', '4096', '16384', '65536', '262144', '1048576', '4194304']:
        rs = vals('rshmem', size, (lo, hi))
        for impl in ['floor_old', 'floor_new', 'rshmem']:
            v = vals(impl, size, (lo, hi))
            if not v: continue
            xs = list(v.values())
            cv = st.pstdev(xs) / st.mean(xs)
            extra = ''
            if impl != 'rshmem':
                common = [r for r in v if r in rs]
                if common:
                    extra = f"   {st.median(rs[r] / v[r] for r in common):.2f}; {st.median(rs.values()) / st.median(xs):.2f}"
            print(f"  {size:>8} {impl:10} {st.median(xs):7.3f} {min(xs):6.2f} {max(xs):6.2f} {cv:5.2f}{extra}")
