#!/usr/bin/env bash
# nvbench, session 22: builds, off the GPU machine, every program of the one GPU call (go.sh):
# perftest/gpu init against rshmem (the branch's stage) and NVSHMEM 3.4.5 (pip), and the
# collective CUDA tests against the branch's stage; packs them with the branch's and main's
# librshmem (main built from `git archive main` in /tmp/nvb_main) into pack.tar.xz.
set -u
cd "$(dirname "$0")/../.."
G=/work/main/.gpu/nvbench; S=$G/stage; P=/tmp/nvb_pack
NVCC=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
L=$(dirname $NVCC)/../lib
NVH=/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
rm -rf $P; mkdir -p $P/bench/rshmem $P/bench/nvshmem $P/tests
mk() { nice make -s -C perftest/gpu NVCC=$NVCC "$@"; }
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$P/bench/rshmem init && el "init rshmem"
mk LIB=nvshmem NVSHMEM_HOME=$NVH BUILD=$P/bench/nvshmem init && el "init nvshmem"
TESTS=${TESTS:-"first_coll coll_fresh coll_sizes team coll_misuse coll_host coll"}
for t in $TESTS; do
  nice $NVCC -arch=sm_90 -std=c++17 -I$S/include -Ictest/cuda ctest/cuda/$t.cu -o $P/tests/$t \
    -L$S/lib -lrshmem -L$L && el "test $t" || el "test $t FAILED to build"
done
# The two libraries (stripped) and the launcher; main's library from /tmp/nvb_main (built there
# with `cargo build --release --locked --lib`).
cp -L $S/lib/librshmem.so.0.1.0 $P/new.so; cp -L /tmp/nvb_main/target/release/librshmem.so $P/old.so
cp -L $S/bin/rshmemrun $P/rshmemrun; strip $P/new.so $P/old.so $P/rshmemrun $P/bench/*/* $P/tests/* 2>/dev/null
tar -cf - -C $P . | xz -T2 -4 > results/gpu-compare-2026-11-28d-first/pack.tar.xz
ls -la results/gpu-compare-2026-11-28d-first/pack.tar.xz; el packed
