# Medians per row of raw/np*-{nvshmem,base,A}-r*.csv (put_bw CSV rows); prints the README table.
import csv, glob, os, statistics as st, collections
here = os.path.dirname(os.path.abspath(__file__))
d = collections.defaultdict(list)
for f in glob.glob(os.path.join(here, 'raw', 'np*-*-r*.csv')):
    np_, lib, _ = os.path.basename(f)[:-4].split('-')
    for row in csv.reader(l for l in open(f) if not l.startswith('#')):
        if row[0] == 'put_bw':
            d[(np_, row[1], int(row[2]), lib)].append(float(row[5]))
print('| PEs | variant | size | NVSHMEM | base | A | base/NV | A/NV | A/base | spread A |')
print('|---|---|---|---|---|---|---|---|---|---|')
for k in sorted({k[:3] for k in d}):
    m = {lib: st.median(d[k + (lib,)]) for lib in ('nvshmem', 'base', 'A')}
    sp = (max(d[k + ('A',)]) - min(d[k + ('A',)])) / m['A'] * 100
    print(f"| {k[0][2:]} | {k[1]} | {k[2]} | {m['nvshmem']:.4g} | {m['base']:.4g} | {m['A']:.4g} | "
          f"{m['base']/m['nvshmem']:.3f} | {m['A']/m['nvshmem']:.3f} | {m['A']/m['base']:.3f} | {sp:.0f}% |")
