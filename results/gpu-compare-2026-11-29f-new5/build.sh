#!/usr/bin/env bash
# nvbench30 (session 30): builds pkg5.tar.xz = put_bw and five CUDA tests against main's install
# with device/rshmem_rma.cuh replaced by new5's (the worktree's) and by new6's.
# usage: bash build.sh STAGE WORKTREE NEW6_HEADER DEST   (nvcc 13 on PATH)
set -eu
S="$(cd "$1" && pwd)"; R="$(cd "$2" && pwd)"; N6="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"; D="$(mkdir -p "$4" && cd "$4" && pwd)"
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
for v in new5 new6; do
  mkdir -p "$T/$v"; cp -a "$S/include" "$S/lib" "$T/$v/"
done
cp "$R/device/rshmem_rma.cuh" "$T/new5/include/rshmem/device/rshmem_rma.cuh"
cp "$N6" "$T/new6/include/rshmem/device/rshmem_rma.cuh"
for v in new5 new6; do
  nice make -s -C "$R/perftest/gpu" NVCC="$(command -v nvcc)" ARCH=sm_90 LIB=rshmem RSHMEM_PREFIX="$T/$v" BUILD="$T/pkg/pb-$v/rshmem" put_bw
  mkdir -p "$T/pkg/tests/$v"
  for t in rma put_block tma_put moe_shuffle_pattern signal; do
    nice nvcc -arch=sm_90 -std=c++17 -I"$T/$v/include" -I"$R/ctest/cuda" "$R/ctest/cuda/$t.cu" -o "$T/pkg/tests/$v/$t" \
      -L"$T/$v/lib" -lrshmem -L"$(dirname "$(command -v nvcc)")/../lib"
  done
done
(cd "$T/pkg" && tar cJf "$D/pkg5.tar.xz" .)
ls -la "$D"
