#!/usr/bin/env bash
# nvbench, session 16, call 2: on-stream collectives, before (stage/: call 1's library with its
# RSHMEM_X_* knobs unset = main's kernels and constants) and after (final/stage: the branch's
# commits, no knobs) beside NVSHMEM 3.4.5 (NCCL and no-NCCL) in one call; then the collective
# tests with the branch's library at 4, 2 and 8 PEs.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
tar xJf $G/libs.tar.xz -C $G || echo "libs: extract failed"
A=$G/stage; F=$G/final/stage; B=$G/bench
chmod +x $A/bin/* $F/bin/* $B/*/* $G/tests/* 2>/dev/null
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
ARGS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll,stream_sync"
bc() { local np=$1 name=$2 S=$3; shift 3
  LD_LIBRARY_PATH=$S/lib timeout 100 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 40 --args "$ARGS" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name rc=$?"; }
tests() { local np=$1; shift; for t in "$@"; do
  ( cd $G/tests && LD_LIBRARY_PATH=$F/lib timeout 60 $F/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$?"
  done; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb2.tgz -C $W . ; exit 0; }
trap fin EXIT
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi --query-gpu=index,name,driver_version --format=csv > $W/driver.txt
bc 4 np4-before $A
bc 4 np4-after $F --no-nvshmem
tests 4 coll coll_sizes coll_host first_coll team graphs
bc 2 np2-before $A
bc 2 np2-after $F --no-nvshmem
tests 2 coll coll_sizes coll_host first_coll team graphs
COLL_HOST_NO_TIMING=1 tests 8 coll_host team
bc 4 np4-after-2 $F --no-nvshmem
el done
