#!/usr/bin/env bash
# gpux session 23: sync_latency diagnosis (probe/fixed-args variants) and batched g (old vs new lib)
# across 2 namespaced hosts; old lib = main d8a73aa stage (fin.tar.xz) on GPU 0, new = same stage
# with this branch's librshmem on GPU 1, side by side, each 2 PEs under MPS on its own GPU.
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
ROOT=$PWD; G=$ROOT/.gpu/gpux23; R=/tmp/R; rm -rf $R; mkdir -p $R
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" >> $R/progress.txt; }
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $R/progress.txt 2>&1
cd /tmp && rm -rf fin old new && tar -xJf $ROOT/.gpu/fin.tar.xz && mv fin old && cp -a old new \
  && tar -xJf $G/newlib.tar.xz -C new/stage/lib && rm -rf new/build/cuda && tar -xJf $ROOT/.gpu/xhcuda.tar.xz -C new/build
el "unpacked"; N=$(nvidia-smi -L | wc -l); G1=$([ "$N" -ge 2 ] && echo 1 || echo 0)
NV=$G/nv; chmod +x $NV/*
x() { # x TAG STAGE GPU LIMIT ARGS TESTS...
  local tag=$1 st=$2 gpu=$3 lim=$4 args=$5; shift 5
  local left=$(( ${BUDGET:-205} - ($(date +%s) - t0) )); [ "$left" -gt 15 ] || { el "$tag skipped"; return; }
  local cap=$(( lim * $# + 25 )); [ "$cap" -gt "$left" ] && cap=$left
  OUT=$R/$tag PROGRAMS=$NV TESTS="$*" PROGRAM_ARGS="$args" LIMIT=$lim XH_PREFIX=g$tag XH_GPU=$gpu \
    timeout $cap bash /tmp/$st/ctest/cuda/crosshost.sh > /dev/null 2>&1; el "$tag rc=$?"
}
old() { x o1 old 0 25 "" sync_probe sync_fixed; x o2 old 0 40 "-e 8192" shmem_g_latency; }
new() { x n1 new $G1 25 "" sync_fixed; x n2 new $G1 40 "-e 8192" shmem_g_latency; x n3 new $G1 50 "" shmem_g_latency
  local left=$(( ${BUDGET:-205} - ($(date +%s) - t0) )); [ "$left" -gt 20 ] || { el "nsuite skipped"; return; }
  OUT=$R/nsuite TESTS="rma amo sync team" LIMIT=25 XH_PREFIX=gns XH_GPU=$G1 timeout $left bash /tmp/new/ctest/cuda/crosshost.sh >/dev/null 2>&1; el "nsuite rc=$?"; }
if [ "$G1" = 1 ]; then old & new & wait; else old; new; fi
el done
for d in $R/*/; do t=$(basename $d); cp $d/crosshost.log $R/$t.crosshost.log 2>/dev/null; mkdir -p $d/logs; tar xzf $d/crosshost-logs.tgz -C $d/logs 2>/dev/null; done
cat $R/*.crosshost.log > "$OUT/results.txt" 2>/dev/null
for t in o1 o2 n1 n2 n3; do grep -h -v "^TIME" $R/$t/logs/*.log 2>/dev/null | grep -v "^Runtime options\|^min_size\|^Note:" | head -150 > "$OUT/$t.txt"; done
cat $R/*/failures.txt > "$OUT/failures.txt" 2>/dev/null
cp $R/progress.txt "$OUT/"
tar czf "$OUT/all.tgz" -C /tmp R 2>/dev/null
