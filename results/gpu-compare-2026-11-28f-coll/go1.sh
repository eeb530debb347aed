#!/usr/bin/env bash
# nvbench, session 24, call 1 (4 x H200): the collective part of `make bench-compare`
# (perftest/gpu coll, sync, stream_team, init) at 4 PEs, then coll + sync at 2, NVSHMEM 3.4.5
# (pip, as installed: NCCL where it uses it) vs rshmem, 3 rounds, the builds alternating within
# each round: nvshmem, main (3c2ae7d's headers), new (the branch's device headers; coll and sync
# only: the library is main's in both). Pack .gpu/nvbench/nvb24.tar.xz (pack.sh): /tmp/nvb_pre/{main,new} (installs,
# unpacked where they were built so that rpaths hold) and b/{nvshmem,main,new}/<prog>.
# raw CSV as scripts/bench_compare.sh writes it, one per (PEs, program): lib,round,bench,...
set -u
R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); DL=${DL:-140}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { cp $W/progress.txt $W/env.txt $OUT/ 2>/dev/null; tar czf $OUT/raw.tgz -C $W $(cd $W && ls raw-*.csv) 2>/dev/null
  tar czf $OUT/err.tgz -C $W errs 2>/dev/null; exit 0; }
trap fin EXIT TERM
P=/tmp/nvbp; rm -rf $P /tmp/nvb_pre; mkdir -p $P; tar xJf $R/.gpu/nvbench/nvb24.tar.xz -C $P; mv $P/nvb_pre /tmp/; chmod +x $P/b/*/* /tmp/nvb_pre/*/bin/*
mkdir -p $W/errs
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvidia-smi topo -m | head -6; } > $W/env.txt 2>&1
for py in /opt/torch/.venv/bin/python3 python3; do NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)" && [ -d "$NVL/lib" ] && break; done
el "unpacked; NVSHMEM at $NVL"
one() { # one NP PROG LIB ROUND ARGS... -> appends rows to raw-npNP-PROG.csv
  local np=$1 prog=$2 lib=$3 r=$4; shift 4; local f=$W/out.csv rc
  if [ $lib = nvshmem ]; then
    LD_LIBRARY_PATH=$NVL/lib timeout -k 5 40 mpirun --allow-run-as-root -np $np --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
      -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x NVSHMEM_REDUCE_SCRATCH_SIZE=16777216 $P/b/nvshmem/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  else
    timeout -k 5 40 /tmp/nvb_pre/main/bin/rshmemrun -n $np $P/b/$lib/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  fi; rc=$?
  grep -E '^[a-z_0-9]+,' $f | grep -v '^bench,variant,' | sed "s/^/$lib,$r,/" >> $W/raw-np$np-$prog.csv
  echo "$(grep -cE '^[a-z_0-9]+,' $f) rows rc=$rc"; }
alt() { # alt NP PROG "LIBS" ARGS...
  local np=$1 prog=$2 libs=$3; shift 3
  echo "lib,round,bench,variant,size,ctas,threads,value,unit" > $W/raw-np$np-$prog.csv
  for r in 1 2 3; do for lib in $libs; do late && { el "skip np$np $prog $lib r$r"; return; }
    el "np$np $prog $lib r$r: $(one $np $prog $lib $r "$@")"; done; done; }
Q="--quick --reps 3 --target-ms 1"
alt 4 coll "nvshmem main new" $Q --only int32
alt 4 sync "nvshmem main new" $Q
alt 4 stream_team "nvshmem main" $Q
alt 4 init "nvshmem main"
alt 2 coll "nvshmem main new" $Q --only int32
alt 2 sync "nvshmem main new" $Q
el done
