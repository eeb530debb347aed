#!/usr/bin/env bash
# nvbench, session 24, call 3 (4 x H200). (A) the mailbox broadcast: device broadcast, thread and
# warp, 8 B-16 KiB, NVSHMEM 3.4.5 (NVSHMEM_DISABLE_NCCL=1) vs m2 (main 098b9ad's headers) vs ll1
# (rshmemi_ll_send loads each unit once when the source stride is 0) vs ll2 (ll1 + broadcast
# mailbox limit ll_bcast_max * 2 / members above 2 PEs), 3 rounds alternating, 4 then 2 PEs;
# (B) init first-call rows at 4 PEs, NVSHMEM (as installed) vs main with a library that carries
# ELF images (rshmem-info); (C) every int32 device collective (--quick) at 4 and 2 PEs, m2/ll1/ll2,
# and on-stream rows at 4 PEs with the main and ll1 libraries (LL1LIB set when ll.ptx changed).
# Pack .gpu/nvbench2/nvb24b.tar.xz (pack3.sh): /tmp/nvb_pre/{main,m2,ll1,ll2}, b/<v>/<prog>.
set -u
R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W/errs
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); DL=${DL:-175}; el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { cp $W/progress.txt $W/env.txt $OUT/ 2>/dev/null; tar czf $OUT/raw.tgz -C $W $(cd $W && ls raw-*.csv) 2>/dev/null
  tar czf $OUT/err.tgz -C $W errs 2>/dev/null; exit 0; }; trap fin EXIT TERM
P=/tmp/nvbp; rm -rf $P /tmp/nvb_pre; mkdir -p $P; tar xJf $R/.gpu/nvbench2/nvb24b.tar.xz -C $P; mv $P/nvb_pre /tmp/; chmod +x $P/b/*/* /tmp/nvb_pre/*/bin/*
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvidia-smi topo -m | head -6
  echo "== rshmem-info main"; timeout 20 /tmp/nvb_pre/main/bin/rshmem-info 2>&1 | head -40; } > $W/env.txt 2>&1
for py in /opt/torch/.venv/bin/python3 python3; do NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)" && [ -d "$NVL/lib" ] && break; done
el "unpacked; NVSHMEM at $NVL"
one() { # one NP PROG LIB ROUND ARGS... -> appends rows to raw-npNP-PROG.csv; lib nvshmem|nvnccl|<v>|<v>@ll1lib
  local np=$1 prog=$2 lib=$3 r=$4; shift 4; local f=$W/out.csv rc nccl=1 v=${lib%@*}
  if [ $lib = nvshmem ] || [ $lib = nvnccl ]; then [ $lib = nvnccl ] && nccl=0
    LD_LIBRARY_PATH=$NVL/lib timeout -k 5 30 mpirun --allow-run-as-root -np $np --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
      -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NCCL=$nccl -x NVSHMEM_REDUCE_SCRATCH_SIZE=16777216 $P/b/nvshmem/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  elif [ "$v" != "$lib" ]; then
    LD_LIBRARY_PATH=/tmp/nvb_pre/ll1lib timeout -k 5 30 /tmp/nvb_pre/main/bin/rshmemrun -n $np $P/b/$v/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  else
    timeout -k 5 30 /tmp/nvb_pre/main/bin/rshmemrun -n $np $P/b/$lib/$prog "$@" < /dev/null > $f 2> $W/errs/np$np-$prog-$lib-$r.err
  fi; rc=$?
  grep -E '^[a-z_0-9]+,' $f | grep -v '^bench,variant,' | sed "s/^/$lib,$r,/" >> $W/raw-np$np-$prog$SUF.csv
  echo "$(grep -cE '^[a-z_0-9]+,' $f) rows rc=$rc"; }
alt() { # alt NP PROG "LIBS" ARGS...
  local np=$1 prog=$2 libs=$3; shift 3
  echo "lib,round,bench,variant,size,ctas,threads,value,unit" > $W/raw-np$np-$prog$SUF.csv
  for r in 1 2 3; do for lib in $libs; do late && { el "skip np$np $prog $lib r$r"; return; }
    el "np$np $prog$SUF $lib r$r: $(one $np $prog $lib $r "$@")"; done; done; }
A="--reps 3 --target-ms 1 --min 8 --max 16384 --only coll_broadcast/int32_thread,coll_broadcast/int32_warp"
Q="--quick --reps 3 --target-ms 1"
SUF=-bcast alt 4 coll "nvshmem m2 ll1 ll2" $A
SUF= alt 4 init "nvnccl main"
SUF=-bcast alt 2 coll "nvshmem m2 ll1 ll2" $A
SUF=-all alt 4 coll "m2 ll1 ll2" $Q --only int32
[ -d /tmp/nvb_pre/ll1lib ] && SUF= alt 4 stream_team "main main@ll1lib" $Q
SUF=-all alt 2 coll "m2 ll1 ll2" $Q --only int32
el done
