# (results/net-2026-11-29g-target/) Medians over rounds of modes_ab.sh's raw CSV: GB/s, the ratio to the floor
# and to mode 0 of the same round, and in how many rounds a mode beat mode 0.
#   python3 modes_table.py RAW.csv
import csv,sys,statistics as st,collections
rows=list(csv.DictReader(open(sys.argv[1])))
d=collections.defaultdict(lambda: collections.defaultdict(dict))
for r in rows: d[r['round']][r['impl']][int(r['size'])]=float(r['value'])
impls=[]
for r in rows:
    if r['impl'] not in impls: impls.append(r['impl'])
print("rounds",len(d),"loads",min(float(r['load']) for r in rows),"-",max(float(r['load']) for r in rows))
for size in (262144,1048576,4194304):
    print(f"size {size>>10} KiB")
    for im in impls:
        v=[d[k][im][size] for k in d if size in d[k].get(im,{})]
        f=[d[k][im][size]/d[k]['floor'][size] for k in d if size in d[k].get(im,{}) and size in d[k].get('floor',{})]
        b=[d[k][im][size]/d[k]['RSHMEM_X_INPLACE=0'][size] for k in d if size in d[k].get(im,{}) and size in d[k].get('RSHMEM_X_INPLACE=0',{})]
        if v: print(f"  {im:28s} n={len(v):3d} med {st.median(v):.3f} GB/s  /floor med {st.median(f) if f else 0:.3f}  /mode0 med {st.median(b) if b else 0:.3f}  better {sum(x>1 for x in b)}/{len(b)}")
