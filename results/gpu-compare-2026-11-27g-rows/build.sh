#!/usr/bin/env bash
# nvrows session 18: stage + build tests and bench programs for one GPU call.
set -u
cd /work/wt/nvrows
G=/work/main/.gpu/nvrows; S=$G/stage; D=$G/bench
NVCC=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
L=$(dirname $NVCC)/../lib
NVH=/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
GPU_STAGE=$G PREBUILD=0 nice bash ctest/cuda/stage_gpu.sh 2>&1 | tail -2
el staged
# main's device headers beside the same library
M=/tmp/nvrows/mainprefix; rm -rf $M; mkdir -p $M; cp -r $S/include $M/; ln -s $S/lib $M/lib
for f in rshmem_rma.cuh rshmem_coll.cuh; do git show 70cbd91:device/$f > $M/include/rshmem/device/$f; done
mkdir -p $G/build/cuda
mk() { nice make -s -C perftest/gpu NVCC=$NVCC "$@"; }
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/new/rshmem put_bw && el put_bw new
mk LIB=rshmem RSHMEM_PREFIX=$M BUILD=$D/main/rshmem put_bw && el put_bw main
mk LIB=nvshmem NVSHMEM_HOME=$NVH BUILD=$D/new/nvshmem put_bw && el put_bw nvshmem
for t in put_block coll_fresh; do nice $NVCC -arch=sm_90 -std=c++17 -I$S/include -Ictest/cuda -Xcompiler -Wall ctest/cuda/$t.cu -o $G/build/cuda/$t -L$S/lib -lrshmem -Xlinker -rpath=$S/lib -L$L && el test $t; done
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/new/rshmem coll && el coll new
mk LIB=rshmem RSHMEM_PREFIX=$M BUILD=$D/main/rshmem coll && el coll main
mk LIB=nvshmem NVSHMEM_HOME=$NVH BUILD=$D/new/nvshmem coll && el coll nvshmem
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/deepall/rshmem OPT="-O3 -lineinfo -DRSHMEM_PUT_DEEP_CTAS=1000000" put_bw && el put_bw deepall
for t in coll coll_sizes rma; do nice $NVCC -arch=sm_90 -std=c++17 -I$S/include -Ictest/cuda -Xcompiler -Wall ctest/cuda/$t.cu -o $G/build/cuda/$t -L$S/lib -lrshmem -Xlinker -rpath=$S/lib -L$L && el test $t; done
strip $D/*/*/* $G/build/cuda/* 2>/dev/null
du -sh $G; el BUILD-DONE
