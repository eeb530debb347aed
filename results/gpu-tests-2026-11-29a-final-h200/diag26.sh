#!/usr/bin/env bash
# Session 26 diagnosis: NVIDIA's sync_latency / shmem_p_latency across 2 namespaced hosts timed out
# (20 s) with main's library (fin27 = f1b92c0) but passed with session 25's (fin26 = 3d060d4): run
# both libraries alternately, same programs (session 24's route builds in nvx). Then moe_shuffle -c
# (new headers, route build) across the hosts with each PE allowed the whole GPU under MPS.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$PWD/.gpu; R=/tmp/RD; rm -rf $R; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
cd $G && tar -xJf fin27.tar.xz && tar -xJf fin26.tar.xz && tar -xJf nvx.tar.xz && tar -xJf x26.tar.xz && cp x26/b/moe_shuffle nvx/moe_shuffle
for v in fin27 fin26; do rm -rf xh-$v && cp -a $v xh-$v && rm -rf xh-$v/build/cuda && tar -xJf xhcuda.tar.xz -C xh-$v/build; done
el unpacked
for round in 1 2; do for v in fin27 fin26; do
  OUT=$R/$v-$round PROGRAMS=$G/nvx TESTS="sync_latency shmem_p_latency sync_latency_fixed" LIMIT=40 XH_PREFIX=rxd XH_GPU=0 \
    timeout 130 bash $G/xh-$v/ctest/cuda/crosshost.sh > $R/$v-$round.log 2>&1; el "$v round $round rc=$? $(grep RESULT $R/$v-$round.log)"
done; done
OUT=$R/moe PROGRAMS=$G/nvx TESTS=moe_shuffle PROGRAM_ARGS=-c MPS_PERCENT=100 LIMIT=30 XH_PREFIX=rxd XH_GPU=0 \
  timeout 60 bash $G/xh-fin27/ctest/cuda/crosshost.sh > $R/moe.log 2>&1; el "moe -c 100% rc=$? $(grep RESULT $R/moe.log)"
tar czf "$OUT/diag.tgz" -C /tmp RD; cp $R/progress.txt $OUT/
