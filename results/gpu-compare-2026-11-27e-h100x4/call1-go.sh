#!/usr/bin/env bash
# nvbench, session 16, call 1: on-stream collectives of one rshmem library, launch knobs
# RSHMEM_X_* unset (= main's constants and kernels) and set (candidates), beside NVSHMEM 3.4.5
# (NCCL and no-NCCL) in the same call; the collective tests at 4 and 2 PEs with the candidate.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
S=$G/stage; B=$G/bench
export LD_LIBRARY_PATH=$S/lib
chmod +x $S/bin/* $B/*/* $G/tests/* 2>/dev/null
T0=$(date +%s)
DL=${DL:-250}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
ARGS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll,stream_sync"
# bc NP NAME [VAR=VALUE ...] [-- bench_compare options]
bc() { local np=$1 name=$2; shift 2; local envs=(X=1); while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done; [ "${1:-}" = -- ] && shift
  late && { el "$name skipped (deadline)"; return; }
  env "${envs[@]}" timeout 100 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 40 --args "$ARGS" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name ${envs[*]} rc=$?"; }
tests() { local np=$1; for t in ${TESTS:-coll coll_sizes coll_host first_coll team graphs}; do
  ( cd $G/tests && timeout 60 $S/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$?"
  done; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb.tgz -C $W . ; exit 0; }
trap fin EXIT
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1
C="RSHMEM_X_BARRIER_RELAXED=1 RSHMEM_X_ROTATE=1"
bc 4 np4-main
bc 2 np2-main
( export $C RSHMEM_X_BLOCK=4096; tests 4 )
bc 4 np4-b4k-rot $C RSHMEM_X_BLOCK=4096 -- --no-nvshmem
bc 2 np2-b4k $C RSHMEM_X_BLOCK=4096 -- --no-nvshmem
bc 4 np4-b4k RSHMEM_X_BARRIER_RELAXED=1 RSHMEM_X_BLOCK=4096 -- --no-nvshmem
bc 4 np4-b8k-rot $C RSHMEM_X_BLOCK=8192 -- --no-nvshmem
bc 4 np4-b2k-rot $C RSHMEM_X_BLOCK=2048 -- --no-nvshmem
bc 4 np4-b4k-rot-tp1m $C RSHMEM_X_BLOCK=4096 RSHMEM_X_TWO_PHASE=1048576 -- --no-nvshmem
bc 4 np4-b4k-rot-bsnever $C RSHMEM_X_BLOCK=4096 RSHMEM_X_BSPLIT=1073741824 -- --no-nvshmem
bc 2 np2-b8k $C RSHMEM_X_BLOCK=8192 -- --no-nvshmem
bc 2 np2-b2k $C RSHMEM_X_BLOCK=2048 -- --no-nvshmem
bc 4 np4-b4k-rot-bs512k $C RSHMEM_X_BLOCK=4096 RSHMEM_X_BSPLIT=524288 -- --no-nvshmem
DL=$((DL + 40))
( export $C RSHMEM_X_BLOCK=4096; late || tests 2 )
el done
