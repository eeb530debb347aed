#!/usr/bin/env bash
# nvbench, session 23, one call (staged as /work/main/.gpu/nvbench/go.sh with pack.tar.xz from
# build.sh): 2 PEs, one per GPU on a 2-GPU machine, else both on one GPU under MPS (50 % of the
# SMs each: numbers are then a proxy). Libraries side by side, alternating:
#   old  = main (session 22's warm-up on init's thread: coll + ll, no reduction module);
#   new  = branch nvbench (warm-up on a thread of its own, plus the u32/f32 reduction modules);
#   sync = new with RSHMEM_COLL_WARM=init (the same warm-up on init's thread, init waits);
#   lazy = new with RSHMEM_COLL_WARM=0 (everything loads with the first call);
#   NVSHMEM 3.4.5 (pip, with NCCL, as the earlier folders), under mpirun --bind-to none.
# Steps: phase traces (RSHMEM_DEBUG=INFO) of new; perftest/gpu init rounds; the collective
# CTests at 2 PEs with new; first_probe (this folder) rounds; the device warp broadcast rows
# (perftest/gpu coll) when they were built. Each step checks the deadline DL (s).
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvb-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/nvb-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
T0=$(date +%s); DL=${DL:-120}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { [ "${NGPU:-1}" -ge 2 ] || echo quit | nvidia-cuda-mps-control 2>/dev/null; cp $W/progress.txt $W/env.txt $OUT/ 2>/dev/null
  for f in $W/init-*.txt; do echo "== $(basename $f)"; cat $f; done > $OUT/init-all.txt 2>/dev/null
  for f in $W/probe-*.txt; do echo "== $(basename $f)"; cat $f; done > $OUT/probe-all.txt 2>/dev/null
  cat $W/trace-*.txt > $OUT/traces.txt 2>/dev/null; cat $W/coll-*.txt > $OUT/coll-all.txt 2>/dev/null
  tar czf $OUT/nvb23.tgz -C $W . ; exit 0; }
trap fin EXIT TERM
P=/tmp/nvbp; rm -rf $P; mkdir -p $P; tar xJf $G/pack.tar.xz -C $P
chmod +x $P/bench/*/* $P/tests/* $P/rshmemrun
for v in old new; do mkdir -p $P/$v/lib $P/$v/bin; mv $P/$v.so $P/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $P/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $P/$v/lib/librshmem.so; cp $P/rshmemrun $P/$v/bin/; done
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv; nvidia-smi topo -m | head -4; } > $W/env.txt 2>&1
NGPU=$(nvidia-smi -L | grep -c '^GPU')
if [ "$NGPU" -ge 2 ]; then unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; el "unpacked, $NGPU GPUs: one PE per GPU, no MPS"
else mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d; el "unpacked, 1 GPU: MPS up (proxy numbers)"; fi
for py in /opt/torch/.venv/bin/python3 python3 /opt/cuda13/bin/python; do
  NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; [ -d "$NVL/lib" ] && break; done
MPSX=$( [ "$NGPU" -ge 2 ] || echo -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE )
# rs TAG LIB PROG ARGS... (env before: VAR=VAL via env)
rs() { local out=$1 v=$2 prog=$3; shift 3
  ( cd $W && env "${E[@]}" LD_LIBRARY_PATH=$P/$v/lib timeout 20 $P/$v/bin/rshmemrun -n 2 $P/bench/rshmem/$prog "$@" > $W/$out.txt 2> $W/err-$out.txt ); }
nv() { local out=$1 prog=$2; shift 2
  ( cd $W && LD_LIBRARY_PATH=$NVL/lib timeout 25 mpirun --allow-run-as-root -np 2 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
    -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE $MPSX $P/bench/nvshmem/$prog "$@" > $W/$out.txt 2> $W/err-$out.txt ); }
row() { grep -h "$2," $W/$1.txt | head -1 | cut -d, -f6; }
init_run() { local tag=$1 v=$2; late && { el "skip $tag"; return; }
  if [ "$v" = nvshmem ]; then nv init-$tag init; else rs init-$tag $v init; fi
  el "init $tag rc=$? init=$(row init-$tag nvshmem_init) b64=$(row init-$tag first_bcast_64B) b64k=$(row init-$tag first_bcast_64KiB) red=$(row init-$tag first_sum_reduce_int)"; }
# 1. traces of new (warm thread's phases, the first calls' phases)
E=(RSHMEM_DEBUG=INFO); rs trace-new new init; grep -h "first on-stream\|warm-up" $W/err-trace-new.txt > $W/trace-new.txt; el "trace new: $(grep -c . $W/trace-new.txt) lines"
# 2. init rounds, alternating
for r in 1 2 3; do
  E=(X=1); init_run old-$r old; init_run new-$r new; E=(RSHMEM_COLL_WARM=init); init_run sync-$r new
  E=(RSHMEM_COLL_WARM=0); init_run lazy-$r new; init_run nvshmem-$r nvshmem
done
# 3. the collective tests, new library
E=(X=1)
for t in first_coll coll_fresh team coll_misuse coll_host reinit coll_sizes coll graphs ring_bcast ring_reduce collective_launch; do
  late && { el "skip test $t"; continue; }; [ -x $P/tests/$t ] || { el "not built: $t"; continue; }
  ( cd $P/tests && COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$P/new/lib timeout 25 $P/new/bin/rshmemrun -n 2 ./$t $P/tests > $W/test-$t.log 2>&1 )
  el "test $t rc=$? $(grep -E '^(PASS|FAIL|ok|OK)' $W/test-$t.log | head -1 | cut -c1-100)"; done
# 4. first_probe rounds
for r in 1 2; do for m in seq big; do
  late && { el "skip probe $m-$r"; continue; }
  E=(X=1); rs probe-$m-old-$r old first_probe $m; el "probe $m old-$r rc=$?"
  rs probe-$m-new-$r new first_probe $m; el "probe $m new-$r rc=$?"
  late || { nv probe-$m-nvshmem-$r first_probe $m; el "probe $m nvshmem-$r rc=$?"; }
done; done
# 5. device warp broadcast (perftest/gpu coll), when built
if [ -x $P/bench/rshmem/coll ] && [ -x $P/bench/nvshmem/coll ]; then
  A="--only coll_broadcast/int32_warp --min 8 --max 2048 --reps 5"
  for r in 1 2; do late && break
    E=(X=1); rs coll-new-$r new coll $A; el "coll new-$r rc=$?"; nv coll-nvshmem-$r coll $A; el "coll nvshmem-$r rc=$?"; done
fi
el done
