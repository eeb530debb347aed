#!/usr/bin/env bash
# gpux-lat (session 29, issue 19): where a remote nvshmem_g across 2 namespaced hosts spends its
# time. One H200, 2 PEs under MPS (a proxy), each PE in its own namespaced host. NVIDIA's
# shmem_g_latency (route-built, nvx) at 1, 32 and 256 threads with small size ranges, and
# proxy_bench (xhcuda28), with RSHMEM_DEBUG=INFO (proxy profile at finalize); old = fin31's
# librshmem (main 2a3da42), new = the g-merging prototype (not landed).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; D=$ROOT/.gpu/glat; W=/tmp/gl; rm -rf $W; mkdir -p $W
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $OUT/progress.txt; }
nvidia-smi -L >> $OUT/progress.txt
cd $W && tar -xJf $D/fin31.tar.xz && tar -xJf $D/progs.tar.xz && mv fin31 old && cp -a old new && cp librshmem-new.so new/stage/lib/librshmem.so.0.1.0
md5sum old/stage/lib/librshmem.so.0.1.0 new/stage/lib/librshmem.so.0.1.0 >> $OUT/progress.txt
mkdir -p P; chmod +x bin/*
w() { printf '#!/bin/sh\n%sexec %s/bin/%s\n' "$2" "$W" "$3" > P/$1; chmod +x P/$1; }
w g1 "" "shmem_g_latency -t 1 -b 4 -e 64 -n 200 -w 20"
w g32 "" "shmem_g_latency -t 32 -b 128 -e 16K -n 20 -w 5"
w g256 "" "shmem_g_latency -t 256 -b 1K -e 64K -n 10 -w 5"
w g256b "RSHMEM_PROTO_G_BATCH=256 " "shmem_g_latency -t 256 -b 1K -e 64K -n 10 -w 5"
w pb "" proxy_bench
el unpacked
run() {
  local lib=$1; shift
  RSHMEM_DEBUG=INFO XH_PREFIX=rgl OUT=$W/o-$lib PROGRAMS=$W/P TESTS="$*" LIMIT=${LIM:-30} timeout ${TL:-100} bash $W/$lib/ctest/cuda/crosshost.sh > $W/$lib.log 2>&1
  el "$lib rc=$?: $(grep -E '^(PASS|FAIL)' $W/o-$lib/crosshost.log | tr '\n' ' ')"
  mkdir -p $W/l-$lib && tar xzf $W/o-$lib/crosshost-logs.tgz -C $W/l-$lib 2>/dev/null
  for t in "$@"; do echo "== $lib $t"; grep -v "^TIME" $W/l-$lib/$t.log 2>/dev/null | grep -E "^[0-9]|^#|proxy profile|^post|^putq|^pingpong|^bw|^floor|rror|stopped|trap"; done >> $OUT/$lib.txt
}
run old g1 g32 g256 pb
run new g1 g32 g256 g256b pb
el done
tar czf $OUT/logs.tgz -C $W o-old o-new l-old l-new old.log new.log P 2>/dev/null
cat $OUT/old.txt $OUT/new.txt | grep -v "proxy thread started"
