#!/usr/bin/env bash
# One device call (nvidia-h100-x4) for this folder (session 19; 27g's call.sh, with NVIDIA's
# moe_shuffle run on its own with `-c`, its cudaMalloc option: without it the example hands
# malloc'ed host arrays to its kernel, which needs HMM). Run from the stage:
#   PREBUILD=0 GPU_STAGE=/work/main/.gpu/gpux bash ctest/cuda/stage_gpu.sh               (here)
#   git archive v3.4.5-0 examples perftest of NVIDIA/nvshmem, its perftest CMakeLists pruned to
#   the perftests below, examples/gemm_allreduce removed, into .gpu/gpux/nv/;
#   cp this file and scripts/build-nvshmem-programs.sh to .gpu/gpux/
#   OUT=$OUT ALL=215 bash .gpu/gpux/call.sh                                              (there)
# Build (64 cores): the CUDA tests (crosshost_all.sh's builder) beside NVIDIA's programs.
# Phase A, side by side, 2 PEs = 2 namespaced hosts on one GPU under MPS:
#   GPUs 0, 1  the CUDA suite split in two (crosshost_all.sh, FOUR=0, RUNNERS=2)
#   GPU 2      proxy_bench, then the host-to-host floor (net_bench, tcp_floor)
#   GPU 3      NVIDIA's examples and perftests, then moe_shuffle -c
# Phase B, 4 PEs = 2 hosts x 2 GPUs: the CUDA suite, then NVIDIA's programs.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; X="$G/ctest/cuda/crosshost.sh"
O="${OUT:-/tmp/gpux-out}"; W=/tmp/gpux-work; rm -rf "$W"; mkdir -p "$O" "$W"
T0=$(date +%s); left() { echo $(( ${ALL:-215} - ($(date +%s) - T0) )); }
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
export LIBRARY_PATH=/usr/local/cuda/lib64/stubs${LIBRARY_PATH:+:$LIBRARY_PATH}
exec > >(tee "$O/call.log") 2>&1
nvidia-smi -L; nproc
printf '#!/bin/sh\nexec /usr/local/cuda/bin/nvcc -DRSHMEM_PROXY_ROUTE "$@"\n' >"$W/nvcc"; chmod +x "$W/nvcc"
( NVCC="$W/nvcc" RSHMEM_PREFIX="$G/stage" MPI=off JOBS=24 bash "$G/build-nvshmem-programs.sh" "$G/nv" "$W/nvb" >"$O/nv-build.txt" 2>&1
  echo "build rc=$? at $(( $(date +%s) - T0 )) s" >>"$O/nv-build.txt"
  mkdir -p "$W/nvx"; cp "$W"/nvb/examples/* "$W"/nvb/perftest/* "$W/nvx/" 2>/dev/null ) &
build=$!
NV="collective-launch dev-guide-ring hello on-stream put-block ring-bcast ring-reduce shmem-based-init thread-group user-buffer shmem_put_ping_pong_latency shmem_signal_ping_pong_latency shmem_atomic_ping_pong_latency shmem_p_ping_pong_latency shmem_put_signal_ping_pong_latency barrier_latency latency"
run() { local d=$1; shift; env OUT="$W/$d" "$@" bash "$X" >/dev/null 2>&1; }
( OUT="$O/xh" RUNNERS=2 FOUR=0 LIMIT2=20 DEADLINE2=$(( $(left) - 120 )) ALL_LIMIT=$(( $(left) - 100 )) BENCH_LIMIT=60 \
    timeout $(( $(left) - 95 )) bash "$G/ctest/cuda/crosshost_all.sh" >/dev/null 2>&1
  echo "phase A suite done at $(( $(date +%s) - T0 )) s" ) &
a=$!
( wait $build 2>/dev/null; while [ ! -d "$W/nvx" ]; do sleep 1; done
  echo "NVIDIA programs built at $(( $(date +%s) - T0 )) s"
  run a3 XH_PREFIX=rx3 XH_GPU=3 PROGRAMS="$W/nvx" TESTS="$NV" LIMIT=15 DEADLINE=$(( $(left) - 120 ))
  run a3m XH_PREFIX=rx3 XH_GPU=3 PROGRAMS="$W/nvx" TESTS=moe_shuffle PROGRAM_ARGS=-c LIMIT=15 DEADLINE=$(( $(left) - 100 ))
  echo "phase A NVIDIA done at $(( $(date +%s) - T0 )) s" ) &
n=$!
wait $a $n
# Phase B: 4 PEs (2 hosts x 2 GPUs).
ALLT="rma amo host host_typed host_amo strided stream signal wait put_block two_tu two_tu_rdc buffer_register user_buffer cumodule nvrtc ring_bcast ring_reduce pipeline jacobi coll_host sync team coll coll_sizes collective_launch"
l=$(left); [ "$l" -gt 50 ] && run b4 PES_PER_HOST=2 XH_PREFIX=rx4 TESTS="$ALLT" LIMIT=12 DEADLINE=$(( l - 35 ))
echo "phase B suite done at $(( $(date +%s) - T0 )) s"
l=$(left); [ "$l" -gt 12 ] && run b4m PES_PER_HOST=2 XH_PREFIX=rx4 PROGRAMS="$W/nvx" TESTS=moe_shuffle PROGRAM_ARGS=-c LIMIT=12 DEADLINE=$(( l - 4 ))
l=$(left); [ "$l" -gt 12 ] && run b4x PES_PER_HOST=2 XH_PREFIX=rx4 PROGRAMS="$W/nvx" TESTS="$NV" LIMIT=12 DEADLINE=$(( l - 4 ))
echo "phase B NVIDIA done at $(( $(date +%s) - T0 )) s"
for d in "$W"/*/; do
  [ -f "$d/crosshost.log" ] || continue
  echo "### $(basename "$d")"; grep -E "^(PASS|FAIL|MISSING|STOP|RESULT|NOT RUN)" "$d/crosshost.log"
  [ -f "$d/failures.txt" ] && cp "$d/failures.txt" "$O/failures-$(basename "$d").txt"
done | tee "$O/summary-mine.txt"
tar czf "$O/mine-logs.tgz" -C "$W" --exclude=nvb --exclude=nvx . 2>/dev/null
echo "call done at $(( $(date +%s) - T0 )) s"
