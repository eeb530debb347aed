#!/usr/bin/env bash
# nvbench, session 22, one call: 2 PEs, one per GPU on a 2-GPU machine, else both on one GPU under
# MPS (50 % of the SMs each). Libraries side
# by side: old = main 7b6f98e's librshmem, new = branch nvbench (on-stream collective kernels
# warmed at init: RSHMEM_COLL_WARM=1), new with RSHMEM_COLL_WARM=0 (lazy, as main), new with
# RSHMEM_HEAP_MAP_AHEAD=0 (no background mapping after the probe's 256 MiB growth), NVSHMEM 3.4.5
# (pip, with NCCL as the earlier folders); perftest/gpu init, 3 rounds alternating. First the phase
# traces (RSHMEM_DEBUG=INFO) of the new library, warmed and lazy; last the collective CTests.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvb-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/nvb-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
T0=$(date +%s); DL=${DL:-140}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { [ "${NGPU:-1}" -ge 2 ] || echo quit | nvidia-cuda-mps-control 2>/dev/null; cp $W/progress.txt $W/env.txt $OUT/ 2>/dev/null
  for f in $W/init-*.txt; do echo "== $(basename $f)"; cat $f; done > $OUT/init-all.txt 2>/dev/null
  cat $W/trace-*.txt > $OUT/traces.txt 2>/dev/null; tar czf $OUT/nvb22.tgz -C $W . ; exit 0; }
trap fin EXIT TERM
P=/tmp/nvbp; rm -rf $P; mkdir -p $P; tar xJf $G/pack.tar.xz -C $P
chmod +x $P/bench/*/* $P/tests/* $P/rshmemrun
for v in old new; do mkdir -p $P/$v/lib $P/$v/bin; mv $P/$v.so $P/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $P/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $P/$v/lib/librshmem.so; cp $P/rshmemrun $P/$v/bin/; done
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $W/env.txt 2>&1
NGPU=$(nvidia-smi -L | grep -c '^GPU')
if [ "$NGPU" -ge 2 ]; then unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; el "unpacked, $NGPU GPUs: one PE per GPU, no MPS"
else mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d; el "unpacked, 1 GPU: MPS up"; fi
probe() { local tag=$1 v=$2; shift 2
  late && { el "skip $tag"; return; }
  ( cd $W && env "$@" LD_LIBRARY_PATH=$P/$v/lib timeout 20 $P/$v/bin/rshmemrun -n 2 $P/bench/rshmem/init > $W/init-$tag.txt 2> $W/err-$tag.txt ); el "init $tag rc=$? $(grep -h first_bcast_64B, $W/init-$tag.txt)"; }
for py in /opt/torch/.venv/bin/python3 python3 /opt/cuda13/bin/python; do
  NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; [ -d "$NVL/lib" ] && break; done
nvprobe() { local r=$1; late && { el "skip nvshmem $r"; return; }
  ( cd $W && LD_LIBRARY_PATH=$NVL/lib timeout 25 mpirun --allow-run-as-root -np 2 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
    -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE $( [ "$NGPU" -ge 2 ] || echo -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) $P/bench/nvshmem/init > $W/init-nvshmem-$r.txt 2> $W/err-nvshmem-$r.txt ); el "init nvshmem $r rc=$? $(grep -h first_bcast_64B, $W/init-nvshmem-$r.txt)"; }
probe trace-warm new RSHMEM_DEBUG=INFO; grep -h "first on-stream\|warm-up\|GPU heap" $W/err-trace-warm.txt > $W/trace-warm.txt
probe trace-lazy new RSHMEM_DEBUG=INFO RSHMEM_COLL_WARM=0; grep -h "first on-stream\|warm-up\|GPU heap" $W/err-trace-lazy.txt > $W/trace-lazy.txt
for r in 1 2 3; do
  probe old-$r old X=1; probe new-$r new X=1; probe lazy-$r new RSHMEM_COLL_WARM=0; probe noahead-$r new RSHMEM_HEAP_MAP_AHEAD=0; nvprobe $r
done
probe trace-noahead new RSHMEM_DEBUG=INFO RSHMEM_HEAP_MAP_AHEAD=0; grep -h "first on-stream\|warm-up\|GPU heap" $W/err-trace-noahead.txt > $W/trace-noahead.txt
TESTS="first_coll coll_fresh coll_sizes team coll coll_misuse coll_host"
for t in $TESTS; do late && { el "skip test $t"; continue; }; [ -x $P/tests/$t ] || { el "not built: $t"; continue; }
  ( cd $P/tests && COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$P/new/lib timeout 25 $P/new/bin/rshmemrun -n 2 ./$t $P/tests > $W/test-$t.log 2>&1 )
  el "test $t rc=$? $(grep -E '^(PASS|FAIL)' $W/test-$t.log | head -1 | cut -c1-100)"; done
el done
