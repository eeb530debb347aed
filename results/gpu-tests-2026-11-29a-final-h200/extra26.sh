#!/usr/bin/env bash
# Session 26 extra check (after final26.sh unpacked .gpu/fin): gpux's header change (careful flag read
# with a volatile ld.const where tested). a/ = NVIDIA programs built with main's headers, b/ = with the
# change; both run against fin's library, 2 PEs on one GPU under MPS (a proxy). moe_shuffle -c (b/,
# built with -DRSHMEM_PROXY_ROUTE) on one host; NVIDIA's p/put/get bandwidth perftests a/b alternating.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
G=$PWD/.gpu; R=/tmp/RX; rm -rf $R; mkdir -p $R
cd $G
S=$G/fin/stage; export LD_LIBRARY_PATH=$S/lib
export CUDA_MPS_PIPE_DIRECTORY=/tmp/x26-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/x26-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
for v in b a; do [ -x x26/$v/moe_shuffle ] || continue
  timeout 60 $S/bin/rshmemrun -n 2 x26/$v/moe_shuffle -c > $R/moe-$v.log 2>&1; el "moe_shuffle -c ($v) rc=$?"; done
for round in 1 2 3; do
  for v in a b; do
    for p in shmem_put_bw shmem_get_bw shmem_p_bw; do
      timeout 60 $S/bin/rshmemrun -n 2 x26/$v/$p > $R/$p-$v-$round.log 2>&1; el "$p $v round $round rc=$?"
    done
    timeout 60 $S/bin/rshmemrun -n 2 x26/$v/shmem_put_bw -t 1024 > $R/put1024-$v-$round.log 2>&1; el "put_bw -t 1024 $v $round rc=$?"
  done
done


