#!/usr/bin/env bash
# nvbench, session 19, second call (confirm): main 843b1a4 ("before") and the committed branch
# ("after": pushed reductions and broadcasts, no experiment knobs) beside NVSHMEM 3.4.5 (NCCL
# and no-NCCL) at 4 PEs (2 PEs: before and after only; NVSHMEM at 2 PEs is in the first call),
# reduce and broadcast rows; the collective tests with "after" at 4 and 2 PEs.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb19b.tgz -C $W . ; exit 0; }
trap fin EXIT TERM
for v in before after; do mkdir -p $G/$v/lib $G/$v/bin; xz -dc $G/$v.so.xz > $G/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $G/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $G/$v/lib/librshmem.so
  xz -dc $G/rshmemrun.xz > $G/$v/bin/rshmemrun; chmod +x $G/$v/bin/rshmemrun; done
B=$G/bench; chmod +x $B/*/* 2>/dev/null; rm -rf $G/tests; mkdir -p $G/tests
TESTS="coll coll_sizes coll_host coll_misuse first_coll team graphs ring_bcast ring_reduce collective_launch coll_fresh"
for t in $TESTS; do
  nice nvcc -arch=sm_90 -std=c++17 -I$G/include -I$R/ctest/cuda $R/ctest/cuda/$t.cu -o $G/tests/$t -L$G/after/lib -lrshmem > $W/build-$t.log 2>&1 &
done
el "unpacked"
DL=${DL:-150}
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
ARGS="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll/reduce,stream_coll/broadcast"
bc() { local np=$1 name=$2 S=$G/$3; shift 3
  LD_LIBRARY_PATH=$S/lib timeout 100 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 40 --args "$ARGS" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name rc=$?"; }
tests() { local np=$1; for t in $TESTS; do
  ( cd $G/tests && COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$G/after/lib timeout 60 $G/after/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$?"
  done; }
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi --query-gpu=index,name,driver_version --format=csv > $W/driver.txt
bc 4 np4-before before
bc 4 np4-after after --no-nvshmem
wait; el "test programs built"
tests 4
bc 2 np2-before before --no-nvshmem
bc 2 np2-after after --no-nvshmem
tests 2
el done
