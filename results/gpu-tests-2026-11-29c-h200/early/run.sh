#!/usr/bin/env bash
# Session 28 early check (1 x H200, 2 PEs under MPS, a proxy): the one-host CUDA suite with main
# 6a27e59's library (fin30: fin28's programs, librshmem.so of f108327 = same machine code), then
# proxy_bench across 2 namespaced hosts with the proxy profile (RSHMEM_DEBUG=INFO) and the floors.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; G=$ROOT/.gpu; t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $OUT/progress.txt; }
cd $G && tar -xJf fin30.tar.xz && rm -rf xh && cp -a fin30 xh && rm -rf xh/build/cuda && tar -xJf xhcuda27.tar.xz -C xh/build; cd $ROOT
el "unpacked fin30 $(ls $G/fin30/build/cuda | wc -l), xh $(ls $G/xh/build/cuda | wc -l)"
OUT=$OUT/suite NP=2 MPS=1 LIMIT=30 timeout ${SUITE_LIMIT:-150} bash $G/fin30/run.sh > $OUT/suite.log 2>&1; el "suite rc=$?"
tail -4 $OUT/suite.log
mkdir -p $OUT/pb
RSHMEM_DEBUG=INFO XH_PREFIX=rxb XH_GPU=0 OUT=$OUT/pb TESTS=proxy_bench LIMIT=60 timeout 80 bash $G/xh/ctest/cuda/crosshost.sh > $OUT/pb.log 2>&1; el "proxy_bench rc=$?"
ls $OUT/pb; cp $OUT/pb/logs/proxy_bench.log $OUT/ 2>/dev/null
( cd $OUT/pb && [ -f crosshost-logs.tgz ] && mkdir -p l && tar xzf crosshost-logs.tgz -C l && cp l/*proxy_bench* $OUT/ 2>/dev/null; ls l ) 
command -v ip >/dev/null || export PATH="$G/xh/tools:$PATH"
N="$G/xh/scripts/netns-hosts.sh"; nb="$G/xh/build/net"; S=$G/xh/stage
export RSHMEM_NETNS_PREFIX=rxn; $N up 2 >/dev/null
$N exec 2 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" server 17718 & sv=$!; sleep 0.3
timeout 15 $N exec 1 env -u RSHMEM_NETNS_PREFIX "$nb/tcp_floor" client "$($N addr 2)" 17718 20000 > $OUT/net_floor.csv 2>&1; kill $sv 2>/dev/null
timeout 40 $N exec 1 env -u RSHMEM_NETNS_PREFIX RSHMEM_LAUNCH_AGENT=$G/xh/ctest/multihost/netns-agent.sh RSHMEM_BOOTSTRAP_IFNAME=eth0 \
  LD_LIBRARY_PATH=$S/lib $S/bin/rshmemrun --hosts rxn-h1:1,rxn-h2:1 $nb/net_bench --reps 3 --time 0.25 >> $OUT/net_floor.csv 2>&1
$N down >/dev/null 2>&1; el done
cat $OUT/net_floor.csv; cat $OUT/progress.txt
