#!/usr/bin/env bash
# Spare-use variants A/B: fin28 (spare used for the memory of now) vs fin29 (spare only for the chunk ahead), and fin27 (before).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$PWD/.gpu; cd $G && tar -xJf fin28.tar.xz && tar -xJf fin27.tar.xz && tar -xJf fin29.tar.xz; cd ..
export CUDA_MPS_PIPE_DIRECTORY=/tmp/ab-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ab-mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
mkdir -p $OUT/a $OUT/b
OUT=$OUT/a DL=40 REPS=5 timeout 80 bash results/gpu-compare-2026-11-29b-malloc/ab.sh $G/fin28 $G/fin29 > $OUT/a.log 2>&1; echo "a rc=$?"
OUT=$OUT/b DL=40 REPS=5 timeout 80 bash results/gpu-compare-2026-11-29b-malloc/ab.sh $G/fin27 $G/fin29 > $OUT/b.log 2>&1; echo "b rc=$?"
echo quit | nvidia-cuda-mps-control
head -14 $OUT/a.log; head -14 $OUT/b.log
