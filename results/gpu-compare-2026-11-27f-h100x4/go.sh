#!/usr/bin/env bash
# nvbench, session 17, one call: on-stream collectives before (main 95fc22d) and after (branch
# nvbench: member-parallel loads in reductions, gathers split over members, relaxed exit) beside
# NVSHMEM 3.4.5 (NCCL and no-NCCL) at 4 and 2 PEs; the collective tests with "after"; then
# launch-constant variants (knobs: the branch's library + RSHMEM_X_* host variables) and the
# small-size (fixed cost) rows.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb17.tgz -C $W . ; exit 0; }
trap fin EXIT
for v in before after knobs; do mkdir -p $G/$v/lib $G/$v/bin; xz -dc $G/$v.so.xz > $G/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $G/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $G/$v/lib/librshmem.so
  xz -dc $G/rshmemrun.xz > $G/$v/bin/rshmemrun; chmod +x $G/$v/bin/rshmemrun; done
B=$G/bench; chmod +x $B/*/* $G/tests/*
el "unpacked"
DL=${DL:-215}
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
ARGS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll,stream_sync"
# bc NP NAME LIB [VAR=VALUE ...] [-- bench_compare options]
bc() { local np=$1 name=$2 S=$G/$3; shift 3; local envs=(X=1); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  env "${envs[@]}" LD_LIBRARY_PATH=$S/lib timeout 100 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 40 --args "${A:-$ARGS}" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name ${envs[*]} rc=$?"; }
tests() { local np=$1; for t in coll coll_sizes coll_host first_coll team graphs ring_bcast ring_reduce; do
  ( cd $G/tests && LD_LIBRARY_PATH=$G/after/lib timeout 60 $G/after/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$?"
  done; }
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi --query-gpu=index,name,driver_version --format=csv > $W/driver.txt
bc 4 np4-before before
bc 4 np4-after after -- --no-nvshmem
tests 4
bc 2 np2-before before
bc 2 np2-after after -- --no-nvshmem
tests 2
late || bc 4 np4-b8k knobs RSHMEM_X_BLOCK=8192 -- --no-nvshmem
late || bc 4 np4-bsplit1m knobs RSHMEM_X_BSPLIT=1048576 -- --no-nvshmem
late || A="--reps 3 --target-ms 1 --min 4 --max 16384 --only stream_coll,stream_sync" bc 4 np4-small-after after -- --no-nvshmem
late || A="--reps 3 --target-ms 1 --min 4 --max 16384 --only stream_coll,stream_sync" bc 4 np4-small-before before -- --no-nvshmem
late || bc 2 np2-b8k knobs RSHMEM_X_BLOCK=8192 -- --no-nvshmem
late || bc 4 np4-b16k knobs RSHMEM_X_BLOCK=16384 -- --no-nvshmem
late || bc 4 np4-after-2 after -- --no-nvshmem
el done
