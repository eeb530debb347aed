#!/usr/bin/env bash
# nvbench session 25: init rows (ctx, nvshmem_init, first barrier, malloc 256 MiB / 1 GiB, first
# on-stream bcast) at 4 PEs: NVSHMEM 3.4.5 (mpirun --bind-to none) vs rshmem e0cfbc0 under
# rshmemrun with --bind-to default/none/numa; 3 alternating rounds; then traces (RSHMEM_DEBUG=INFO,
# nsys cuda API summary if nsys exists) of one rshmem and one NVSHMEM run.
set -u; NP=${NP:-2}; R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb25; rm -rf $W; mkdir -p $W/errs
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
fin() { cd $W && tar czf $OUT/nvb25.tgz progress.txt env.txt raw.csv errs trace 2>/dev/null; exit 0; }; trap fin EXIT TERM
P=/tmp/nvb25p; rm -rf $P; mkdir -p $P; tar xJf $R/.gpu/nvbench25/p.tar.xz -C $P; chmod +x $P/b/*/* $P/new/bin/*
for py in /opt/torch/.venv/bin/python3 python3; do NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)" && [ -d "$NVL/lib" ] && break; done
{ date -u; nvidia-smi -L; nproc; lscpu | grep -i 'numa\|model name'; nvidia-smi topo -m; which nsys; } > $W/env.txt 2>&1
mkdir -p $W/trace; echo "lib,round,bench,variant,size,ctas,threads,value,unit" > $W/raw.csv
one() { local lib=$1 r=$2 f=$W/o.txt; shift 2
  if [ $lib = nvshmem ]; then
    LD_LIBRARY_PATH=$NVL/lib timeout -k 5 40 mpirun --allow-run-as-root -np $NP --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NCCL=1 "$@" $P/b/nvshmem/init < /dev/null > $f 2> $W/errs/$lib-$r.err
  else
    LD_LIBRARY_PATH=$P/new/lib timeout -k 5 40 $P/new/bin/rshmemrun -n $NP "$@" $P/b/main/init < /dev/null > $f 2> $W/errs/$lib-$r.err
  fi; echo "rc=$?" >> $W/errs/$lib-$r.err
  grep -E '^[a-z_0-9]+,' $f | grep -v '^bench,' | sed "s/^/$lib,$r,/" >> $W/raw.csv; }
for r in 1 2 3; do
  el "r$r nvshmem"; one nvshmem $r
  el "r$r new default"; one new $r
  el "r$r new none"; one newnone $r --bind-to none
  el "r$r new numa"; one newnuma $r --bind-to numa
done
el "trace new INFO"; RSHMEM_DEBUG=INFO LD_LIBRARY_PATH=$P/new/lib timeout -k 5 40 $P/new/bin/rshmemrun -n $NP --report-bindings $P/b/main/init > $W/trace/new-info.out 2> $W/trace/new-info.err < /dev/null
if command -v nsys >/dev/null; then
  el "nsys new"; LD_LIBRARY_PATH=$P/new/lib timeout -k 5 60 $P/new/bin/rshmemrun -n $NP nsys profile -t cuda,osrt -o /tmp/nsn%p --stats=false $P/b/main/init > $W/trace/nsys-new.out 2>&1 < /dev/null
  for f in /tmp/nsn*.nsys-rep; do timeout 60 nsys stats -r cuda_api_sum,osrt_sum $f > $W/trace/$(basename $f).txt 2>&1; break; done
fi
el done
