#!/usr/bin/env bash
# Session 26: cross-host sync_latency hang with RSHMEM_DEBUG=TRACE (fresh route build only).
# headers (d6707a8, -DRSHMEM_PROXY_ROUTE), both against main's library (fin27), alternating.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$PWD/.gpu; R=/tmp/RF; rm -rf $R; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
cd $G && tar -xJf fin27.tar.xz && tar -xJf nvx.tar.xz && tar -xJf xs.tar.xz && mkdir -p xs/old && cp nvx/sync_latency xs/old/
rm -rf xh && cp -a fin27 xh && rm -rf xh/build/cuda && tar -xJf xhcuda.tar.xz -C xh/build
for round in 1 2 3; do for v in new; do
  RSHMEM_DEBUG=TRACE OUT=$R/$v-$round PROGRAMS=$G/xs/$v TESTS=sync_latency LIMIT=25 XH_PREFIX=rxf XH_GPU=0 \
    timeout 60 bash $G/xh/ctest/cuda/crosshost.sh > $R/$v-$round.log 2>&1; el "$v round $round: $(grep -h '^PASS\|^FAIL' $R/$v-$round/crosshost.log)"
done; done
tar czf "$OUT/diagc.tgz" -C /tmp RF; cp $R/progress.txt $OUT/
