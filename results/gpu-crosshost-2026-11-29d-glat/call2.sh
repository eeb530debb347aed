#!/usr/bin/env bash
# gpux-lat call 2: NVIDIA's shmem_g_latency with its default arguments (4 B..4 MiB, 256 threads,
# 10 iterations + 5 warm-up) across the 2 namespaced hosts on the prototype library (g merging,
# RSHMEM_PROTO_G_BATCH=256); on main it never finished in 150 s.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; D=$ROOT/.gpu/glat; W=/tmp/gl2; rm -rf $W; mkdir -p $W
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $OUT/progress2.txt; }
cd $W && tar -xJf $D/fin31.tar.xz && tar -xJf $D/progs.tar.xz && mv fin31 new && cp librshmem-new.so new/stage/lib/librshmem.so.0.1.0
md5sum new/stage/lib/librshmem.so.0.1.0 >> $OUT/progress2.txt
mkdir -p P; chmod +x bin/*
printf '#!/bin/sh\nRSHMEM_PROTO_G_BATCH=256 exec %s/bin/shmem_g_latency\n' $W > P/gfull; chmod +x P/gfull
RSHMEM_DEBUG=INFO XH_PREFIX=rg2 OUT=$W/o PROGRAMS=$W/P TESTS=gfull LIMIT=${LIM:-140} timeout 160 bash $W/new/ctest/cuda/crosshost.sh > $W/x.log 2>&1
el "rc=$?: $(grep -E '^(PASS|FAIL)' $W/o/crosshost.log | tr '\n' ' ')"
mkdir -p $W/l && tar xzf $W/o/crosshost-logs.tgz -C $W/l 2>/dev/null
grep -v "^TIME" $W/l/gfull.log | grep -E "^[0-9]|^#|proxy profile|rror|stopped|trap|min_size" > $OUT/gfull.txt
cat $OUT/progress2.txt $OUT/gfull.txt
