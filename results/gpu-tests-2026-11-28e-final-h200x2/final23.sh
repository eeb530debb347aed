#!/usr/bin/env bash
# Session 23 final GPU check. 0) device warp broadcast 8 B-2 KiB, rshmem (ll_bcast_max 512) vs
# NVSHMEM 3.4.5, 3 rounds alternating, 2 PEs one per GPU (MPS on one GPU); 1) one-host suite;
# 2) suite + NVIDIA's programs across 2 namespaced hosts (4 PEs as 2x2 on 4+ GPUs).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
R=/tmp/R; rm -rf $R; mkdir -p $R $R/suite $R/xh $R/wb
ROOT=$PWD; G=$ROOT/.gpu
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/progress.txt 2>&1
cd $G && tar -xJf fin.tar.xz && tar -xJf nvx.tar.xz && tar -xJf wb.tar.xz
rm -rf xh && cp -a fin xh && rm -rf xh/build/cuda && tar -xJf xhcuda.tar.xz -C xh/build
N=$(nvidia-smi -L | wc -l)
case $N in 1) NP=2 MPS=1 RUN=1 FOUR=0 ;; 2|3) NP=2 MPS=0 RUN=2 FOUR=0 ;; *) NP=4 MPS=0 RUN=3 FOUR=1 ;; esac
cd $ROOT; el "gpus=$N NP=$NP MPS=$MPS"; el "unpacked: fin $(ls $G/fin/build/cuda | wc -l), xh $(ls $G/xh/build/cuda | wc -l), nvx $(ls $G/nvx | wc -l)"
# 0) warp broadcast rows (only with 2+ GPUs: NVLink rows)
if [ $N -ge 2 ]; then
  for py in /opt/torch/.venv/bin/python3 python3 /opt/cuda13/bin/python; do
    NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; [ -d "$NVL/lib" ] && break; done
  A="--only coll_broadcast/int32_warp --min 8 --max 2048 --reps 5"; S=$G/fin/stage
  for r in 1 2 3; do
    ( cd $R/wb && LD_LIBRARY_PATH=$S/lib timeout 25 $S/bin/rshmemrun -n 2 $G/wb/coll_rshmem $A > rs-$r.txt 2>&1 ); el "wb rshmem-$r rc=$?"
    ( cd $R/wb && LD_LIBRARY_PATH=$NVL/lib timeout 25 mpirun --allow-run-as-root -np 2 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
      -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE $G/wb/coll_nvshmem $A > nv-$r.txt 2>&1 ); el "wb nvshmem-$r rc=$?"
  done
  for f in $R/wb/*.txt; do echo "== $(basename $f)"; cat $f; done > "$OUT/warp_bcast.txt"
fi
OUT=$R/suite NP=$NP MPS=$MPS LIMIT=30 timeout ${SUITE_LIMIT:-200} bash $G/fin/run.sh > $R/suite.log 2>&1; el "suite rc=$?"
cp $R/suite.log "$OUT/"
OUT=$R/xh RUNNERS=$RUN BENCH=0 FOUR=$FOUR NV=$G/nvx ALL_LIMIT=${XL:-330} DEADLINE2=${D2:-190} DEADLINE4=90 LIMIT4=15 LIMIT2=20 NV_LIMIT=15 NV_DEADLINE=${NVD:-150} \
  timeout $(( ${XL:-330} + 8 )) bash $G/xh/ctest/cuda/crosshost_all.sh > $R/xh.log 2>&1; el "xh rc=$?"
cp $R/xh/summary.txt "$OUT/xh_summary.txt" 2>/dev/null; cp $R/xh/failures-*.txt "$OUT/" 2>/dev/null
tar czf "$OUT/all.tgz" -C /tmp R 2>/dev/null
el done
cp $R/progress.txt "$OUT/"
