#!/usr/bin/env bash
# Session 29 final GPU check on nvidia-h200-x2 (2 H200, NVLink; one PE per GPU, no MPS):
# 1) the one-host CUDA suite at NP=2; 2) NVIDIA's programs on one host (drop-in, NVLink);
# 3) proxy_bench across 2 namespaced hosts, each host its own GPU (OWN_GPUS=1);
# 4) the suite (route builds, xh) and NVIDIA's programs across the 2 hosts (OWN_GPUS=1).
# Env: FIN=<stage tarball base> (default fin32), XHC=<route-build tarball> (default xhcuda28).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
R=/tmp/R; rm -rf $R; mkdir -p $R $R/suite $R/xh $R/pb $R/nv1
NG=$(nvidia-smi -L | grep -c "^GPU"); if [ "$NG" -ge 2 ]; then MPS1=0; OWN=1; else MPS1=1; OWN=0; fi
ROOT=$PWD; G=$ROOT/.gpu; FIN=${FIN:-fin32}; XHC=${XHC:-xhcuda28}
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; nvidia-smi topo -m | head -4; } > $R/progress.txt 2>&1
cd $G && tar -xJf $FIN.tar.xz && rm -rf fin && mv $FIN fin && tar -xJf nvx.tar.xz && tar -xJf x26.tar.xz && cp x26/b/moe_shuffle nvx/moe_shuffle
rm -rf xh && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf $XHC.tar.xz -C xh/build
cd $ROOT; el "unpacked: fin $(ls $G/fin/build/cuda | wc -l), xh $(ls $G/xh/build/cuda | wc -l), nvx $(ls $G/nvx | wc -l)"
OUT=$R/suite NP=2 MPS=$MPS1 LIMIT=30 timeout ${SUITE_LIMIT:-150} bash $G/fin/run.sh > $R/suite.log 2>&1; el "suite rc=$?"
cp $R/suite.log "$OUT/"
# NVIDIA's programs on one host (NVLink): each with rshmemrun -n 2, its own limit.
S=$G/fin/stage; export LD_LIBRARY_PATH=$S/lib; chmod +x $S/bin/* $G/nvx/*
nvp=0; nvf=""; nvn=0
if [ $MPS1 = 1 ]; then export CUDA_MPS_PIPE_DIRECTORY=/tmp/f29-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/f29-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d; fi
for p in $(ls $G/nvx | grep -v -x -e sync_latency -e shmem_g_latency -e shmem_p_latency -e moe_shuffle); do
  [ $(( $(date +%s) - t0 )) -lt ${NV1_END:-260} ] || { echo "NOT RUN $p" >> $R/nv1/summary.txt; continue; }
  a=""
  ( cd $G/nvx && RSHMEM_BOOTSTRAP_TIMEOUT=20 timeout 20 $S/bin/rshmemrun -n 2 ./$p $a > $R/nv1/$p.log 2>&1 ); rc=$?
  nvn=$((nvn+1)); if [ $rc = 0 ]; then nvp=$((nvp+1)); echo "PASS $p" >> $R/nv1/summary.txt; else nvf="$nvf $p"; echo "FAIL $p rc=$rc" >> $R/nv1/summary.txt; fi
done
( cd $G/nvx && timeout 20 $S/bin/rshmemrun -n 2 ./moe_shuffle -c > $R/nv1/moe_shuffle.log 2>&1 ); echo "moe_shuffle -c rc=$?" >> $R/nv1/summary.txt
[ $MPS1 = 1 ] && { echo quit | nvidia-cuda-mps-control; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; }
el "nvidia one-host: $nvp/$nvn pass; fail:$nvf"; cp $R/nv1/summary.txt "$OUT/nv1_summary.txt"
unset LD_LIBRARY_PATH
OWN_GPUS=$OWN RSHMEM_DEBUG=INFO XH_PREFIX=rxb XH_GPU=0 OUT=$R/pb TESTS=proxy_bench LIMIT=60 timeout 80 bash $G/xh/ctest/cuda/crosshost.sh > $R/pb.log 2>&1; el "proxy_bench rc=$?"
( cd $R/pb && mkdir -p l && tar xzf crosshost-logs.tgz -C l && cp l/proxy_bench.log "$OUT/proxy_bench.log" ) 2>/dev/null
OWN_GPUS=$OWN OUT=$R/xh RUNNERS=1 BENCH=0 FOUR=0 NV=$G/nvx ALL_LIMIT=${XL:-220} DEADLINE2=${D2:-120} LIMIT2=20 NV_LIMIT=20 NV_DEADLINE=${NVD:-80} \
  NV_LONG="${NV_LONG-shmem_p_latency}" NV_LONG_LIMIT=45 timeout $(( ${XL:-220} + 8 )) bash $G/xh/ctest/cuda/crosshost_all.sh > $R/xh.log 2>&1; el "xh rc=$?"
cp $R/xh/summary.txt "$OUT/xh_summary.txt" 2>/dev/null; cp $R/xh/failures-*.txt "$OUT/" 2>/dev/null
el done
cp $R/progress.txt "$OUT/"
tar czf "$OUT/all.tgz" -C /tmp R 2>/dev/null
cat $R/progress.txt; tail -3 $R/suite.log; cat $R/nv1/summary.txt | grep -v PASS; grep -E "^RESULT" $R/xh/summary.txt
