#!/usr/bin/env bash
# Session 31, coordinator, x2: IBGDA route on the software NIC model, route-built tests (ibr33) with
# fin33's library and coll with fin32's (before c458dba), two PEs on two GPUs (no MPS), then under MPS on GPU 0.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; G=$ROOT/.gpu; R=/tmp/R31a; rm -rf $R; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/summary.txt; }
nvidia-smi -L > $R/summary.txt
cd $G && tar -xJf fin33.tar.xz && tar -xJf ibr33.tar.xz -C $R && mkdir -p $R/l32 && xz -dc x31a/lib32.xz > $R/l32/librshmem.so.0.1.0 && ln -sf librshmem.so.0.1.0 $R/l32/librshmem.so.0 && cp fin33/stage/lib/libnvshmem_host.so.3 $R/l32/ 2>/dev/null
cd $ROOT; S=$G/fin33/stage; chmod +x $S/bin/* $R/b/*
one() { local tag=$1 lib=$2 t=$3
  ( cd $R/b && LD_LIBRARY_PATH=$lib NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model RSHMEM_DEBUG=INFO RSHMEM_BOOTSTRAP_TIMEOUT=20 timeout -s INT -k 5 ${T:-40} $S/bin/rshmemrun -n 2 ./$t > $R/$tag-$t.log 2>&1 )
  el "$tag $t rc=$?: $(grep -E 'PASS|FAIL' $R/$tag-$t.log | head -2 | tr '\n' ' ')"; }
for t in rma amo signal wait coll; do one g2-fin33 $S/lib $t; done
one g2-fin32 $R/l32 coll
export CUDA_MPS_PIPE_DIRECTORY=/tmp/a31-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/a31-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 CUDA_VISIBLE_DEVICES=0
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d
one mps-fin33 $S/lib coll; one mps-fin32 $R/l32 coll
echo quit | nvidia-cuda-mps-control
el done
for f in $R/*coll.log; do echo "### $f"; tail -25 $f; done > $R/coll-tails.txt
cp $R/summary.txt $R/coll-tails.txt $OUT/; tar czf $OUT/all.tgz --exclude=R31a/b -C /tmp R31a
cat $R/summary.txt
