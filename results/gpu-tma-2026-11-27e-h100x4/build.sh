set -e
cd /work/wt/tma
NVCC=$(/opt/cuda13/bin/python -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])')/bin/nvcc
L=$(dirname $NVCC)/../lib
NVH=/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem
G=/work/main/.gpu/tma; D=$G/bench; S=$G/stage
mkdir -p $G/build/cuda
for t in tma_put put_block rma; do nice $NVCC -arch=sm_90 -std=c++17 -I$S/include -Ictest/cuda -Xcompiler -Wall ctest/cuda/$t.cu -o $G/build/cuda/$t -L$S/lib -lrshmem -Xlinker -rpath=$S/lib -L$L; done
mk() { nice make -s -C perftest/gpu NVCC=$NVCC "$@"; }
mk LIB=nvshmem NVSHMEM_HOME=$NVH BUILD=$D/bulk/nvshmem put_bw
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/bulk/rshmem put_bw
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/sm/rshmem OPT="-O3 -lineinfo -DRSHMEM_BULK=0" put_bw
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/all/rshmem OPT="-O3 -lineinfo -DRSHMEM_BULK_MIN_WARP=16" put_bw
mk LIB=rshmem RSHMEM_PREFIX=$S BUILD=$D/all4/rshmem OPT="-O3 -lineinfo -DRSHMEM_BULK_MIN_WARP=16 -DRSHMEM_BULK_STAGES=4" put_bw
strip $D/*/*/* $G/build/cuda/*
echo BUILD-DONE
