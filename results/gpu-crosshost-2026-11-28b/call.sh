#!/usr/bin/env bash
# One device call (nvidia-h100-x4), session 20: the CUDA suite across 2 namespaced hosts with
# the proxy route (-DRSHMEM_PROXY_ROUTE, compiled on the device by crosshost_all.sh's builder)
# at 2 PEs (MPS) and 4 PEs (2 hosts x 2 GPUs), proxy_bench beside its floors. Results at $OUT's top level.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; O="${OUT:-/tmp/gpux-out}"; mkdir -p "$O"
exec > >(tee "$O/call.log") 2>&1
T0=$(date +%s); nvidia-smi -L; nproc
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
OUT="$O" RUNNERS=2 LIMIT2=20 DEADLINE2="${D2:-105}" LIMIT4=12 DEADLINE4=80 ALL_LIMIT="${ALL:-195}" BENCH_LIMIT=45 \
  timeout "$(( ${ALL:-195} + 5 ))" bash "$G/ctest/cuda/crosshost_all.sh"
echo "call done at $(( $(date +%s) - T0 )) s"
