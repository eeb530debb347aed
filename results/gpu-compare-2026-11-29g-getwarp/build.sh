#!/usr/bin/env bash
# nvbench31 (session 31): builds pkg31.tar.xz = perftest/gpu lat against main's install (old) and
# against the same install with the worktree's device headers (new: the inline warp get), and the
# CUDA tests that call warp gets (rma, tma_put, strided) against new.
# usage: bash build.sh STAGE WORKTREE DEST   (STAGE: main's install, e.g. the fin33 stage; nvcc 13 on PATH)
set -eu
S="$(cd "$1" && pwd)"; R="$(cd "$2" && pwd)"; D="$(mkdir -p "$3" && cd "$3" && pwd)"
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
mkdir -p "$T/new"; cp -a "$S/include" "$S/lib" "$T/new/"
cp "$R"/device/*.cuh "$T/new/include/rshmem/device/"
mk() { nice make -s -C "$R/perftest/gpu" NVCC="$(command -v nvcc)" ARCH=sm_90 LIB=rshmem "$@" lat; }
mk RSHMEM_PREFIX="$S" BUILD="$T/pkg/pb-old/rshmem"
mk RSHMEM_PREFIX="$T/new" BUILD="$T/pkg/pb-new/rshmem"
mkdir -p "$T/pkg/tests/new"
for t in rma tma_put strided; do
  nice nvcc -arch=sm_90 -std=c++17 -I"$T/new/include" -I"$R/ctest/cuda" "$R/ctest/cuda/$t.cu" -o "$T/pkg/tests/new/$t" \
    -L"$T/new/lib" -lrshmem -L"$(dirname "$(command -v nvcc)")/../lib"
done
(cd "$T/pkg" && tar cJf "$D/pkg31.tar.xz" .)
ls -la "$D"
