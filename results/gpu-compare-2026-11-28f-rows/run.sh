#!/usr/bin/env bash
# nvrows, session 24: the point-to-point part of `make bench-compare` (put_bw p_bw lat rtt
# amo_bw) at 4 PEs, then at 2 PEs, rshmem vs NVSHMEM 3.4.5 alternating, 3 rounds, --quick sweeps,
# programs prebuilt on the build machine (.gpu/nvrows/nvrows.tar.xz: stage/ = rshmem install of
# this branch, pb/{rshmem,nvshmem}/ = perftest/gpu programs). Device: bash run.sh (OUT set).
set -u
G="$(cd "$(dirname "$0")" && pwd)"; R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
cd "$G" && tar xJf nvrows.tar.xz || exit 1
export LD_LIBRARY_PATH="$G/stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVCC=/bin/true   # nothing compiles there; bench_compare only asks nvcc for its version
N=$(nvidia-smi -L | wc -l); echo "GPUs: $N" > "$OUT/progress.txt"
for np in 4 2; do
  [ "$np" -gt "$N" ] && { echo "np $np skipped: $N GPUs" >> "$OUT/progress.txt"; continue; }
  timeout -k 5 "${TMO:-150}" bash "$R/scripts/bench_compare.sh" --np $np --rounds 3 --quick \
    --rshmem "$G/stage" --prebuilt "$G/pb" --progs "put_bw p_bw lat rtt amo_bw" --timeout 40 \
    --out "$OUT/np$np" > "$OUT/np$np.log" 2>&1
  echo "np $np rc=$? at $SECONDS s" >> "$OUT/progress.txt"
done
rm -rf "$OUT"/np*/logs/*.csv 2>/dev/null
