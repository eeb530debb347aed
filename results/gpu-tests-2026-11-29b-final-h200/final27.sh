#!/usr/bin/env bash
# Session 27 final GPU check (one H200: 2 PEs under MPS, a proxy): 1) the malloc growth A/B
# (results/gpu-compare-2026-11-29b-malloc/ab.sh, old = fin27 f1b92c0, new = fin28 main);
# 2) the one-host CUDA suite; 3) the suite (route builds with main's headers) and NVIDIA's programs
# across 2 namespaced hosts.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
R=/tmp/R; rm -rf $R; mkdir -p $R $R/suite $R/xh $R/ab
ROOT=$PWD; G=$ROOT/.gpu
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/progress.txt 2>&1
cd $G && tar -xJf fin28.tar.xz && rm -rf fin && mv fin28 fin && tar -xJf fin27.tar.xz && tar -xJf nvx.tar.xz && tar -xJf x26.tar.xz && cp x26/b/moe_shuffle nvx/moe_shuffle
rm -rf xh && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf xhcuda27.tar.xz -C xh/build
N=$(nvidia-smi -L | wc -l)
case $N in 1) NP=2 MPS=1 RUN=1 FOUR=0 ;; 2|3) NP=2 MPS=0 RUN=2 FOUR=0 ;; *) NP=4 MPS=0 RUN=3 FOUR=1 ;; esac
cd $ROOT; el "gpus=$N NP=$NP MPS=$MPS"; el "unpacked: fin $(ls $G/fin/build/cuda | wc -l), xh $(ls $G/xh/build/cuda | wc -l), nvx $(ls $G/nvx | wc -l)"
if [ "$MPS" = 1 ]; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/ab-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ab-mps-log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
fi
OUT=$R/ab DL=${ABDL:-40} timeout 90 bash $ROOT/results/gpu-compare-2026-11-29b-malloc/ab.sh $G/fin27 $G/fin > $R/ab.log 2>&1; el "ab rc=$?"
if [ "$MPS" = 1 ]; then echo quit | nvidia-cuda-mps-control; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; fi
cp $R/ab.log "$OUT/"
OUT=$R/suite NP=$NP MPS=$MPS LIMIT=30 timeout ${SUITE_LIMIT:-150} bash $G/fin/run.sh > $R/suite.log 2>&1; el "suite rc=$?"
cp $R/suite.log "$OUT/"
OUT=$R/xh RUNNERS=$RUN BENCH=0 FOUR=$FOUR NV=$G/nvx ALL_LIMIT=${XL:-240} DEADLINE2=${D2:-130} DEADLINE4=${D4:-60} LIMIT4=20 LIMIT2=20 NV_LIMIT=20 NV_DEADLINE=${NVD:-90} \
  NV_LONG="${NV_LONG-shmem_p_latency}" NV_LONG_LIMIT=45 timeout $(( ${XL:-240} + 8 )) bash $G/xh/ctest/cuda/crosshost_all.sh > $R/xh.log 2>&1; el "xh rc=$?"
cp $R/xh/summary.txt "$OUT/xh_summary.txt" 2>/dev/null; cp $R/xh/failures-*.txt "$OUT/" 2>/dev/null
el done
cp $R/progress.txt "$OUT/"
tar czf "$OUT/all.tgz" -C /tmp R 2>/dev/null
