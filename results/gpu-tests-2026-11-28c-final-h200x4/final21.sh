#!/usr/bin/env bash
# Session 21 final GPU check on a 2-GPU machine: one-host suite (2 PEs, default build), the suite
# across 2 namespaced hosts (2 PEs, flag build) + NVIDIA's programs across hosts, nvrows' malloc A/B.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
R=/tmp/R; rm -rf $R; mkdir -p $R $R/mab $R/suite $R/xh
ROOT=$PWD; G=$ROOT/.gpu
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/progress.txt 2>&1
cd $G && tar -xJf fin.tar.xz && tar -xJf nvx.tar.xz && mkdir -p /tmp/m && tar -xJf nvrows21.tar.xz -C /tmp/m
rm -rf xh && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf xhcuda.tar.xz -C xh/build
N=$(nvidia-smi -L | wc -l); if [ "$N" -ge 4 ]; then NP=4 RUN=3 FOUR=1 NPS="2 4" XL=265; else NP=2 RUN=2 FOUR=0 NPS=2 XL=215; fi
cd $ROOT; el "gpus=$N"; el "unpacked: fin $(ls $G/fin/build/cuda | wc -l), xh $(ls $G/xh/build/cuda | wc -l), nvx $(ls $G/nvx | wc -l)"
OUT=$R/suite NP=$NP LIMIT=30 timeout 170 bash $G/fin/run.sh > $R/suite2.log 2>&1; el "suite rc=$?"
OUT=$R/xh RUNNERS=$RUN BENCH=0 FOUR=$FOUR NV=$G/nvx ALL_LIMIT=$XL DEADLINE2=95 DEADLINE4=90 LIMIT4=15 LIMIT2=20 NV_LIMIT=15 \
  timeout $((XL + 8)) bash $G/xh/ctest/cuda/crosshost_all.sh > $R/xh.log 2>&1; el "xh rc=$?"
NPS="$NPS" REPS=3 DL=80 OUT=$R/mab timeout 95 bash /tmp/m/mab/run.sh > $R/mab.log 2>&1; el "mab rc=$?"
cp $R/progress.txt $R/suite2.log "$OUT/"
cp $R/xh/summary.txt "$OUT/xh_summary.txt" 2>/dev/null
cat $R/mab/summary.txt > "$OUT/mab_summary.txt" 2>/dev/null; cat $R/mab/tests.txt >> "$OUT/mab_summary.txt" 2>/dev/null
tar czf "$OUT/all.tgz" -C /tmp R 2>/dev/null
el done
cp $R/progress.txt "$OUT/"
