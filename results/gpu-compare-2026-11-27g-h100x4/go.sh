#!/usr/bin/env bash
# nvbench, session 18, one call: on-stream collectives before (main 70cbd91) and after (branch
# nvbench: two phases with a flag per chunk, broadcasts split among the non-roots, smaller
# gather blocks) beside NVSHMEM 3.4.5 (NCCL and no-NCCL) at 4 and 2 PEs; the collective tests
# with "after"; then launch-constant variants (the after library reads RSHMEM_X_* in this
# experiment build only) and before/after barriers alternating in one call.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb18.tgz -C $W . ; exit 0; }
trap fin EXIT
for v in before after; do mkdir -p $G/$v/lib $G/$v/bin; xz -dc $G/$v.so.xz > $G/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $G/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $G/$v/lib/librshmem.so
  xz -dc $G/rshmemrun.xz > $G/$v/bin/rshmemrun; chmod +x $G/$v/bin/rshmemrun; done
B=$G/bench; chmod +x $B/*/* $G/tests/* 2>/dev/null
# Test programs not built off the machine: built here against the staged headers, in parallel
# with the first benchmarks (64 cores; the tests wait for them).
for t in coll coll_sizes coll_host coll_misuse first_coll team graphs ring_bcast ring_reduce collective_launch; do
  [ -x $G/tests/$t ] || nvcc -arch=sm_90 -std=c++17 -I$G/include -I$R/ctest/cuda $R/ctest/cuda/$t.cu -o $G/tests/$t -L$G/after/lib -lrshmem > $W/build-$t.log 2>&1 &
done
el "unpacked"
DL=${DL:-200}
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
ARGS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll,stream_sync"
RC="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll"
SY="--reps 3 --target-ms 1 --only stream_sync"
NO=1000000000000
# bc NP NAME LIB [VAR=VALUE ...] [-- bench_compare options]
bc() { local np=$1 name=$2 S=$G/$3; shift 3; local envs=(X=1); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  env "${envs[@]}" LD_LIBRARY_PATH=$S/lib timeout 100 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 40 --args "${A:-$ARGS}" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name ${envs[*]} rc=$?"; }
tests() { local np=$1; for t in coll coll_sizes coll_host coll_misuse first_coll team graphs ring_bcast ring_reduce collective_launch; do
  ( cd $G/tests && COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$G/after/lib timeout 60 $G/after/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$?"
  done; }
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi --query-gpu=index,name,driver_version --format=csv > $W/driver.txt
bc 4 np4-before before
bc 4 np4-after after -- --no-nvshmem
A="$RC" bc 4 np4-all2 after RSHMEM_X_RED2=0 RSHMEM_X_BSPLIT=0 -- --no-nvshmem
A="$RC" bc 4 np4-direct after RSHMEM_X_RED2=$NO RSHMEM_X_BSPLIT=$NO RSHMEM_X_GSMALL=0 -- --no-nvshmem
A="$RC" bc 4 np4-c16k after RSHMEM_X_RED2=0 RSHMEM_X_BSPLIT=0 RSHMEM_X_CHUNK=16384 -- --no-nvshmem
A="$RC" bc 4 np4-c4k after RSHMEM_X_RED2=0 RSHMEM_X_BSPLIT=0 RSHMEM_X_CHUNK=4096 -- --no-nvshmem
wait; el "test programs built"
tests 4
bc 2 np2-before before
bc 2 np2-after after -- --no-nvshmem
tests 2
late || A="$SY" bc 4 np4-sync-before-1 before -- --no-nvshmem
late || A="$SY" bc 4 np4-sync-after-1 after -- --no-nvshmem
late || A="$SY" bc 4 np4-sync-before-2 before -- --no-nvshmem
late || A="$SY" bc 4 np4-sync-after-2 after -- --no-nvshmem
late || A="$RC" bc 2 np2-gs0 after RSHMEM_X_GSMALL=0 -- --no-nvshmem
late || bc 4 np4-after-2 after -- --no-nvshmem
el done
