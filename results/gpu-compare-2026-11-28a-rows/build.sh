#!/usr/bin/env bash
# nvrows, session 19: stage the library and build, off the GPU machine, every program of the one
# GPU call (run.sh): perftest/gpu coll (this branch's headers as they are = main's constants, and
# the candidate constants through -D), init, NVSHMEM's builds of both, NVIDIA's shmem_g_latency,
# shmem_p_bw and host/pt-to-pt/bw against both libraries, CUDA tests with the candidate constants.
#   NV=/tmp/nvrows/nv (NVIDIA/nvshmem v3.4.5's perftest/, never committed) bash build.sh
# At the time of the calls the headers read -DRSHMEMI_X_{TW,BW,BT,TSMALL} knobs (defaults: main's
# constants); the committed headers have the new constants and no knobs, so rerunning this needs
# main's device/rshmem_p2p.cuh + rshmem_coll.cuh for the "main" build.
set -u
cd "$(dirname "$0")/../.."
G=/work/main/.gpu/nvrows; S=$G/stage; D=$G/bench; NV=${NV:-/tmp/nvrows/nv}
NVCC=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
L=$(dirname $NVCC)/../lib
NVH=/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem
X="-DRSHMEMI_X_BW=2 -DRSHMEMI_X_BT=true -DRSHMEMI_X_TW=4"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
if [ -z "${NVONLY:-}" ]; then
GPU_STAGE=$G PREBUILD=0 nice bash ctest/cuda/stage_gpu.sh 2>&1 | tail -1; el staged
rm -rf $D; mkdir -p $G/build/cuda $D/nv
mk() { nice make -s -C perftest/gpu NVCC=$NVCC "$@"; }
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/main/rshmem coll init && el "coll init main"
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/x/rshmem OPT="-O3 -lineinfo $X" coll && el "coll x"
mk LIB=nvshmem NVSHMEM_HOME=$NVH BUILD=$D/main/nvshmem coll init && el "coll init nvshmem"
for t in coll_fresh coll coll_sizes; do
  nice $NVCC -arch=sm_90 -std=c++17 $X -I$S/include -Ictest/cuda ctest/cuda/$t.cu -o $G/build/cuda/$t \
    -L$S/lib -lrshmem -Xlinker -rpath=$S/lib -L$L && el "test $t"
done
fi
mkdir -p $D/nv
# NVIDIA's programs: plain nvcc against rshmem (as scripts/build-nvshmem-programs.sh), -rdc against NVSHMEM.
P=$NV/perftest; C="-arch=sm_90 -std=c++17 -O2 -I$P/common"
nice $NVCC $C -I$S/include -c $P/common/utils.cu -o /tmp/nvrows/utils-r.o
nice $NVCC $C -rdc=true -I$NVH/include -c $P/common/utils.cu -o /tmp/nvrows/utils-n.o
# Objects first; no libcuda here, so the programs link against an empty stand-in of the driver
# entries the objects name (soname libcuda.so.1; the GPU machine's driver library is loaded at
# run time).
F="device/pt-to-pt/shmem_g_latency.cu device/pt-to-pt/shmem_p_bw.cu host/pt-to-pt/bw.cpp"
for f in $F; do
  n=$(basename ${f%.*}); o=/tmp/nvrows/$n
  nice $NVCC $C -I$S/include -I$P/$(dirname $f) -x cu -c $P/$f -o $o-r.o
  nice $NVCC $C -rdc=true -I$NVH/include -I$P/$(dirname $f) -x cu -c $P/$f -o $o-n.o
done
mkdir -p /tmp/nvrows/stub
nm -u /tmp/nvrows/*-[rn].o | awk '$2 ~ /^cu[A-Z]/ {print "void " $2 "(void) {}"}' | sort -u > /tmp/nvrows/stub/cuda_stub.c
cc -shared -fPIC -o /tmp/nvrows/stub/libcuda.so /tmp/nvrows/stub/cuda_stub.c -Wl,-soname,libcuda.so.1
for f in $F; do
  n=$(basename ${f%.*}); o=/tmp/nvrows/$n
  $NVCC -arch=sm_90 $o-r.o /tmp/nvrows/utils-r.o -o $D/nv/$n.rshmem -L$S/lib -lrshmem -L/tmp/nvrows/stub -lcuda \
    -Xlinker -rpath=$S/lib -L$L && el "nv $n rshmem"
  $NVCC -arch=sm_90 -rdc=true $o-n.o /tmp/nvrows/utils-n.o -o $D/nv/$n.nvshmem -L$NVH/lib -lnvshmem_device \
    -l:libnvshmem_host.so.3 -L/tmp/nvrows/stub -lcuda -Xlinker -rpath=$NVH/lib -L$L && el "nv $n nvshmem"
done
# Call 2's "y" build: coll with -DRSHMEMI_X_TSMALL=128 added (2 words below 128 B per member),
# and coll_fresh/coll with the same flags into build/cuda-y, packed as benchy.tar.xz.
cp results/gpu-compare-2026-11-28a-rows/run.sh $G/; patch -o $G/run2.sh results/gpu-compare-2026-11-28a-rows/run.sh results/gpu-compare-2026-11-28a-rows/run2.patch
(cd $D && tar cf - .) | xz -T2 -3 > $G/bench.tar.xz && rm -rf $D   # carry: 64 MiB at most
xz -T2 -3 $S/lib/librshmem.so.0.1.0; rm -rf $G/tools
strip $D/*/*/* $D/nv/* $G/build/cuda/* 2>/dev/null
du -sh $G $D; el BUILD-DONE
