#!/usr/bin/env bash
# nvbench, session 19, one call: on-stream collectives before (main 843b1a4) and the branch's
# library (pipelined two phases; the call's build reads RSHMEM_X_* launch constants, an
# experiment build only) beside NVSHMEM 3.4.5 (NCCL and no-NCCL) at 4 and 2 PEs; the
# collective tests with the branch's library forced onto the new code paths.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb19.tgz -C $W . ; exit 0; }
trap fin EXIT TERM
for v in before after; do mkdir -p $G/$v/lib $G/$v/bin; xz -dc $G/$v.so.xz > $G/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $G/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $G/$v/lib/librshmem.so
  xz -dc $G/rshmemrun.xz > $G/$v/bin/rshmemrun; chmod +x $G/$v/bin/rshmemrun; done
B=$G/bench; chmod +x $B/*/* 2>/dev/null; mkdir -p $G/tests
TESTS="coll coll_sizes coll_host coll_misuse first_coll team graphs ring_bcast ring_reduce collective_launch coll_fresh"
for t in $TESTS; do
  nice nvcc -arch=sm_90 -std=c++17 -I$G/include -I$R/ctest/cuda $R/ctest/cuda/$t.cu -o $G/tests/$t -L$G/after/lib -lrshmem > $W/build-$t.log 2>&1 &
done
el "unpacked"
DL=${DL:-240}
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
ARGS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll/reduce,stream_coll/broadcast"
V="--reps 3 --target-ms 1 --min 131072 --max 4194304 --only stream_coll/reduce_int32_sum,stream_coll/reduce_bf16_sum,stream_coll/broadcast"
VS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll/reduce_int32_sum,stream_coll/reduce_bf16_sum,stream_coll/broadcast"
NO=1000000000000
PUSH="RSHMEM_X_PUSHR=0 RSHMEM_X_PUSHB=0"
# bc NP NAME LIB [VAR=VALUE ...] [-- bench_compare options]
bc() { local np=$1 name=$2 S=$G/$3; shift 3; local envs=(X=1); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  env "${envs[@]}" LD_LIBRARY_PATH=$S/lib timeout 100 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 40 --args "${A:-$ARGS}" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name ${envs[*]} rc=$?"; }
# Tests with the new kernel paths at every size: pushed (from 0 bytes, at 2 PEs too), or two
# phases pipelined in 8 blocks (several chunks per block).
FPUSH="$PUSH RSHMEM_X_PUSH2=1"
FPIPE="RSHMEM_X_RED2=0 RSHMEM_X_BSPLIT=0 RSHMEM_X_PIPE=1 RSHMEM_X_TPG=8"
tests() { local np=$1 tag=$2; shift 2; for t in $TESTS; do
  ( cd $G/tests && env "$@" COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$G/after/lib timeout 60 $G/after/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np-$tag.log 2>&1 ); el "test $t np$np $tag rc=$?"
  done; }
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi --query-gpu=index,name,driver_version --format=csv > $W/driver.txt
bc 4 np4-before before
bc 4 np4-push after $PUSH -- --no-nvshmem
A="$V" bc 4 v-base after -- --no-nvshmem
A="$V" bc 4 v-push-8k after $PUSH RSHMEM_X_PBLK=8192 RSHMEM_X_BPBLK=8192 -- --no-nvshmem
A="$V" bc 4 v-push-32k after $PUSH RSHMEM_X_PBLK=32768 RSHMEM_X_BPBLK=32768 -- --no-nvshmem
A="$V" bc 4 v-pipe32 after RSHMEM_X_PIPE=1 RSHMEM_X_TPG=32 -- --no-nvshmem
A="$V" bc 4 v-pipe16 after RSHMEM_X_PIPE=1 RSHMEM_X_TPG=16 -- --no-nvshmem
A="$V" bc 4 v-direct-blk8k after RSHMEM_X_RED2=$NO RSHMEM_X_BSPLIT=$NO RSHMEM_X_RBLK=8192 RSHMEM_X_BBLK=8192 -- --no-nvshmem
wait; el "test programs built"
tests 4 push $FPUSH
tests 4 pipe $FPIPE
bc 2 np2-before before
bc 2 np2-after after -- --no-nvshmem
A="$VS" bc 2 np2-push after $FPUSH -- --no-nvshmem
tests 2 push $FPUSH
late || A="$VS" bc 4 v-all2 after RSHMEM_X_RED2=0 RSHMEM_X_BSPLIT=0 -- --no-nvshmem
late || A="$VS" bc 4 v-all2-gpufence after RSHMEM_X_RED2=0 RSHMEM_X_BSPLIT=0 RSHMEM_X_GPUF=1 -- --no-nvshmem
late || A="$V" bc 4 v-push-2 after $PUSH -- --no-nvshmem
late || A="$V" bc 4 v-before-2 before -- --no-nvshmem
el done
