#!/usr/bin/env bash
# nvbench, session 23: builds, off the GPU machine, what the one GPU call (go.sh) runs and packs
# it into /work/main/.gpu/nvbench/pack.tar.xz:
#   first_probe (this folder) against rshmem (the installed headers) and NVSHMEM 3.4.5 (pip);
#   perftest/gpu init for both sides (unchanged since session 22: its binaries are reused from
#   that call's pack, PACK22);
#   the collective CUDA tests, built by the coordinator's session-22 final stage (FIN: same
#   device headers as this branch; only the library changes here);
#   the libraries: old = main (the session-22 final stage's, same code as main d7172cd),
#   new = this branch (target/release, stripped), and rshmemrun.
set -eu
cd "$(dirname "$0")/../.."
F=/work/main/.gpu/fin; PACK22=${PACK22:-/tmp/nvb_pack22}; P=/tmp/nvb_pack; OUTF=/work/main/.gpu/nvbench/pack.tar.xz
NVCC=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
L=$(dirname $NVCC)/../lib
NVH=/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem
rm -rf $P; mkdir -p $P/bench/rshmem $P/bench/nvshmem $P/tests
src=results/gpu-compare-2026-11-28e-first/first_probe.cu
nice $NVCC -arch=sm_90 -std=c++17 -O2 -I$F/stage/include $src -o $P/bench/rshmem/first_probe -L$F/stage/lib -lrshmem -L$L
nice $NVCC -arch=sm_90 -std=c++17 -O2 -rdc=true -I$NVH/include $src -o $P/bench/nvshmem/first_probe \
  -L$NVH/lib -lnvshmem_device -l:libnvshmem_host.so.3 -L$L
cp $PACK22/bench/rshmem/init $P/bench/rshmem/; cp $PACK22/bench/nvshmem/init $P/bench/nvshmem/
# perftest/gpu coll for the device warp broadcast rows, when built in time (COLL=/tmp/nvb_coll:
# make -C perftest/gpu LIB=rshmem|nvshmem BUILD=$COLL/<lib> $COLL/<lib>/coll).
COLL=${COLL:-/tmp/nvb_coll}
[ -x $COLL/rshmem/coll ] && [ -x $COLL/nvshmem/coll ] && cp $COLL/rshmem/coll $P/bench/rshmem/ && cp $COLL/nvshmem/coll $P/bench/nvshmem/
for t in first_coll coll_fresh coll_sizes team coll coll_misuse coll_host graphs ring_bcast ring_reduce collective_launch reinit; do
  cp $F/build/cuda/$t $P/tests/ 2>/dev/null || echo "no prebuilt $t"
done
cp -L $F/stage/lib/librshmem.so.0.1.0 $P/old.so; cp -L target/release/librshmem.so $P/new.so; cp -L $F/stage/bin/rshmemrun $P/rshmemrun
strip $P/new.so $P/old.so $P/rshmemrun $P/bench/*/* 2>/dev/null || true
mkdir -p "$(dirname $OUTF)"; tar -cf - -C $P . | xz -T2 -4 > $OUTF
ls -la $OUTF
