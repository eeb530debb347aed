#!/usr/bin/env bash
# nvbench, session 24, call 4 (4 x H200): ll_send-once.patch (rshmemi_ll_send loads each unit
# once for a lone thread or when the pairs take more than one round) against main 587630d.
# Device rows: broadcast, fcollect, int32 sum reduce, int32 sum reducescatter, thread/warp/block
# (256), 8 B-16 KiB; on-stream rows: stream_team 8 B-16 KiB. NVSHMEM 3.4.5 beside (device rows
# NVSHMEM_DISABLE_NCCL=1; on-stream as installed, NCCL). 3 rounds alternating, 4 then 2 PEs.
# Pack .gpu/nvbench3/nvb24c.tar.xz (pack4.sh): nvb3_pre/{m3,p3} (each its own librshmem: main's
# and the patched ll.ptx one, both with ELF images), b/{nvshmem,m3,p3}/{coll,stream_team}.
set -u
R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W/errs
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); DL=${DL:-160}; el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { cp $W/progress.txt $W/env.txt $OUT/ 2>/dev/null; tar czf $OUT/raw.tgz -C $W $(cd $W && ls raw-*.csv) 2>/dev/null
  tar czf $OUT/err.tgz -C $W errs 2>/dev/null; exit 0; }; trap fin EXIT TERM
P=/tmp/nvbp; rm -rf $P /tmp/nvb3_pre; mkdir -p $P; tar xJf $R/.gpu/nvbench3/nvb24c.tar.xz -C $P; mv $P/nvb3_pre /tmp/; chmod +x $P/b/*/* /tmp/nvb3_pre/*/bin/*
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  for v in m3 p3; do echo "== rshmem-info with $v's library"; LD_LIBRARY_PATH=/tmp/nvb3_pre/$v/lib timeout 20 /tmp/nvb3_pre/m3/bin/rshmem-info 2>&1 | grep -i 'machine code\|ptx\|version' | head -5; done; } > $W/env.txt 2>&1
for py in /opt/torch/.venv/bin/python3 python3; do NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)" && [ -d "$NVL/lib" ] && break; done
el "unpacked; NVSHMEM at $NVL"
one() { # one NP PROG LIB ROUND ARGS... -> appends rows to raw-npNP-PROG.csv; lib nvshmem|nvnccl|m3|p3
  local np=$1 prog=$2 lib=$3 r=$4; shift 4; local f=$W/out.csv rc nccl=1
  if [ $lib = nvshmem ] || [ $lib = nvnccl ]; then [ $lib = nvnccl ] && nccl=0
    LD_LIBRARY_PATH=$NVL/lib timeout -k 5 30 mpirun --allow-run-as-root -np $np --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
      -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NCCL=$nccl -x NVSHMEM_REDUCE_SCRATCH_SIZE=16777216 $P/b/nvshmem/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  else
    timeout -k 5 30 /tmp/nvb3_pre/m3/bin/rshmemrun -n $np $P/b/$lib/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  fi; rc=$?
  grep -E '^[a-z_0-9]+,' $f | grep -v '^bench,variant,' | sed "s/^/$lib,$r,/" >> $W/raw-np$np-$prog.csv
  echo "$(grep -cE '^[a-z_0-9]+,' $f) rows rc=$rc"; }
alt() { # alt NP PROG "LIBS" ARGS...
  local np=$1 prog=$2 libs=$3; shift 3
  echo "lib,round,bench,variant,size,ctas,threads,value,unit" > $W/raw-np$np-$prog.csv
  for r in 1 2 3; do for lib in $libs; do late && { el "skip np$np $prog $lib r$r"; return; }
    el "np$np $prog $lib r$r: $(one $np $prog $lib $r "$@")"; done; done; }
C="--reps 3 --target-ms 1 --min 8 --max 16384 --threads 256 --no-floor --only coll_broadcast/int32,coll_fcollect/int32,coll_reduce/int32_sum,coll_reducescatter/int32_sum"
S="--reps 3 --target-ms 1 --min 8 --max 16384"
alt 4 coll "nvshmem m3 p3" $C
alt 4 stream_team "nvnccl m3 p3" $S
alt 2 coll "nvshmem m3 p3" $C
alt 2 stream_team "nvnccl m3 p3" $S
el done
