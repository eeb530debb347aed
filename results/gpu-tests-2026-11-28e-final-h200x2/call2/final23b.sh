#!/usr/bin/env bash
# Session 23 second GPU check: main's library after 01e2640 (+ what landed after) across 2
# namespaced hosts: the cross-host suite, NVIDIA's p/g/sync latency programs with a 45 s limit
# (new, then session 22's library d8a73aa for shmem_p_latency), and gpux's NVSHMEM libfabric attempt.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
R=/tmp/R; rm -rf $R; mkdir -p $R
ROOT=$PWD; G=$ROOT/.gpu
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
nvidia-smi -L > $R/progress.txt 2>&1
cd $G && tar -xJf fin.tar.xz && tar -xJf nvx.tar.xz && tar -xJf gpux23b.tar.xz
rm -rf xh && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf xhcuda.tar.xz -C xh/build
rm -rf xho && cp -a xh xho && xz -dc oldlib.so.xz > xho/stage/lib/librshmem.so.0.1.0
cd $ROOT; N=$(nvidia-smi -L | wc -l); el "gpus=$N"
# 1) p_latency old vs new, g_latency and sync_latency new (one GPU each side, MPS)
OUT=$R/pnew PROGRAMS=$G/nvx TESTS="shmem_p_latency shmem_g_latency sync_latency" LIMIT=45 XH_PREFIX=rxn XH_GPU=0 \
  timeout 160 bash $G/xh/ctest/cuda/crosshost.sh > $R/pnew.out 2>&1 &
OUT=$R/pold PROGRAMS=$G/nvx TESTS="shmem_p_latency" LIMIT=45 XH_PREFIX=rxo XH_GPU=$((N - 1)) \
  timeout 70 bash $G/xho/ctest/cuda/crosshost.sh > $R/pold.out 2>&1
el "p old rc=$?"; wait; el "p/g/sync new done"
for o in pnew pold; do echo "##### $o"; cat $R/$o/crosshost.log; mkdir -p $R/$o/L; tar xzf $R/$o/crosshost-logs.tgz -C $R/$o/L 2>/dev/null
  grep -h -v "^TIME\|^Runtime options\|^Note:\|^min_size" $R/$o/L/*.log 2>/dev/null | head -120; done > "$OUT/platency.txt" 2>&1
# 2) the cross-host suite with the new library
OUT=$R/xh RUNNERS=$N BENCH=0 FOUR=0 ALL_LIMIT=150 DEADLINE2=140 LIMIT2=20 \
  timeout 158 bash $G/xh/ctest/cuda/crosshost_all.sh > $R/xh.log 2>&1; el "xh rc=$?"
cp $R/xh/summary.txt "$OUT/xh_summary.txt" 2>/dev/null; cp $R/xh/failures-*.txt "$OUT/" 2>/dev/null
# 3) NVSHMEM's libfabric transport across the hosts (gpux's script; ours beside it)
mkdir -p $R/nvs; OUT=$R/nvs timeout 170 bash $G/gpux23b/run.sh > $R/nvs.log 2>&1; el "nvshmem rc=$?"
cp $R/nvs/nvshmem.txt $R/nvs/ours.txt "$OUT/" 2>/dev/null
tar czf "$OUT/all.tgz" -C /tmp R R23b 2>/dev/null
el done; cp $R/progress.txt "$OUT/"
