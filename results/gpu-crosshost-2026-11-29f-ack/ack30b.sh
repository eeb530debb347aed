#!/usr/bin/env bash
# Session 30, after the final call: (1) the IBGDA route on the software NIC model with tests built
# -DRSHMEM_IBGDA_ROUTE (main's library, fin33: checks ibgda/cuda.rs's buffers on cuda's, c458dba);
# (2) the candidate ack library (gpux-ack, 0ed7240) vs fin33's across 2 namespaced hosts:
# proxy_bench alternating, our cross-host suite, NVIDIA's default shmem_g_latency.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; G=$ROOT/.gpu; R=/tmp/R2; rm -rf $R; mkdir -p $R/P
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
nvidia-smi -L > $R/progress.txt
cd $G && tar -xJf fin33.tar.xz && rm -rf fin && mv fin33 fin && tar -xJf nvx.tar.xz && tar -xJf ibr33.tar.xz -C $R && mkdir -p $R/ack && tar -xJf ack33.tar.xz -C $R/ack
rm -rf xh xa fa && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf xhcuda28.tar.xz -C xh/build && cp -a xh xa && cp $R/ack/librshmem-ack.so xa/stage/lib/librshmem.so.0.1.0
md5sum xh/stage/lib/librshmem.so.0.1.0 xa/stage/lib/librshmem.so.0.1.0 >> $R/progress.txt
cd $ROOT; el unpacked
S=$G/fin/stage; chmod +x $S/bin/* $R/b/* $G/nvx/*
export CUDA_MPS_PIPE_DIRECTORY=/tmp/a30-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/a30-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
for t in rma amo signal wait coll; do
  ( cd $R/b && LD_LIBRARY_PATH=$S/lib NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model RSHMEM_BOOTSTRAP_TIMEOUT=20 timeout 40 $S/bin/rshmemrun -n 2 ./$t > $R/ibm-$t.log 2>&1 )
  echo "ibgda-model $t rc=$?: $(grep -E 'PASS|FAIL' $R/ibm-$t.log | head -2 | tr '\n' ' ')" >> $R/summary.txt
done
echo quit | nvidia-cuda-mps-control; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
el "ibgda model done"
pb() { local tag=$1 lib=$2
  RSHMEM_DEBUG=INFO XH_PREFIX=rpb OUT=$R/o-$tag TESTS=proxy_bench LIMIT=40 timeout 50 bash $G/$lib/ctest/cuda/crosshost.sh > $R/$tag.log 2>&1
  mkdir -p $R/l-$tag && tar xzf $R/o-$tag/crosshost-logs.tgz -C $R/l-$tag 2>/dev/null
  echo "== $tag $lib: $(grep -E '^(putq|pingpong|bw)' $R/l-$tag/proxy_bench.log | tr -s ' ' | tr '\n' ';')" >> $R/summary.txt; el "pb $tag"; }
pb o1 xh; pb n1 xa; pb o2 xh; pb n2 xa
XH_PREFIX=rsu OUT=$R/suite LIMIT=20 timeout ${SUITE_T:-110} bash $G/xa/ctest/cuda/crosshost.sh > $R/suite.log 2>&1
echo "ack suite rc=$?: $(grep -cE '^PASS' $R/suite/crosshost.log) pass; $(grep -E '^FAIL' $R/suite/crosshost.log | tr '\n' ' ')" >> $R/summary.txt; el suite
if [ $(( $(date +%s) - t0 )) -lt ${G_START_MAX:-190} ]; then
  printf '#!/bin/sh\nexec %s/nvx/shmem_g_latency\n' $G > $R/P/gfull; chmod +x $R/P/gfull
  XH_PREFIX=rgf OUT=$R/gf PROGRAMS=$R/P TESTS=gfull LIMIT=${GL:-90} timeout $(( ${GL:-90} + 15 )) bash $G/xa/ctest/cuda/crosshost.sh > $R/gf.log 2>&1
  echo "ack default shmem_g_latency rc=$?: $(grep -E '^(PASS|FAIL)' $R/gf/crosshost.log)" >> $R/summary.txt
  mkdir -p $R/l-gf && tar xzf $R/gf/crosshost-logs.tgz -C $R/l-gf 2>/dev/null; grep -E "^[0-9]|^#" $R/l-gf/gfull.log > $R/gfull.txt 2>/dev/null
fi
el done
cp $R/summary.txt $R/progress.txt $OUT/; tar czf $OUT/all.tgz --exclude=R2/b -C /tmp R2 2>/dev/null
cat $R/progress.txt $R/summary.txt
