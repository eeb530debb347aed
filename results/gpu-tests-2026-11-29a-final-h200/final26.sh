#!/usr/bin/env bash
# Session 26 final GPU check: 1) the one-host CUDA suite (4 PEs on 4+ GPUs, else 2);
# 2) the suite and NVIDIA's programs across 2 namespaced hosts (2 PEs; 4 PEs as 2 hosts x 2 GPUs on 4+ GPUs).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
R=/tmp/R; rm -rf $R; mkdir -p $R $R/suite $R/xh
ROOT=$PWD; G=$ROOT/.gpu
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/progress.txt 2>&1
cd $G && tar -xJf fin27.tar.xz && rm -rf fin && mv fin27 fin && tar -xJf nvx.tar.xz && tar -xJf x26.tar.xz && cp x26/b/moe_shuffle nvx/moe_shuffle
rm -rf xh && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf xhcuda.tar.xz -C xh/build && tar -xJf xhcoll.tar.xz -C xh/build/cuda
N=$(nvidia-smi -L | wc -l)
case $N in 1) NP=2 MPS=1 RUN=1 FOUR=0 ;; 2|3) NP=2 MPS=0 RUN=2 FOUR=0 ;; *) NP=4 MPS=0 RUN=3 FOUR=1 ;; esac
cd $ROOT; el "gpus=$N NP=$NP MPS=$MPS"; el "unpacked: fin $(ls $G/fin/build/cuda | wc -l), xh $(ls $G/xh/build/cuda | wc -l), nvx $(ls $G/nvx | wc -l)"
OUT=$R/suite NP=$NP MPS=$MPS LIMIT=30 timeout ${SUITE_LIMIT:-200} bash $G/fin/run.sh > $R/suite.log 2>&1; el "suite rc=$?"
cp $R/suite.log "$OUT/"
OUT=$R/xh RUNNERS=$RUN BENCH=0 FOUR=$FOUR NV=$G/nvx ALL_LIMIT=${XL:-330} DEADLINE2=${D2:-150} DEADLINE4=${D4:-110} LIMIT4=20 LIMIT2=20 NV_LIMIT=20 NV_DEADLINE=${NVD:-120} \
  timeout $(( ${XL:-330} + 8 )) bash $G/xh/ctest/cuda/crosshost_all.sh > $R/xh.log 2>&1; el "xh rc=$?"
cp $R/xh/summary.txt "$OUT/xh_summary.txt" 2>/dev/null; cp $R/xh/failures-*.txt "$OUT/" 2>/dev/null
tar czf "$OUT/all.tgz" -C /tmp R 2>/dev/null
el done
cp $R/progress.txt "$OUT/"
