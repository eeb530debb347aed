#!/usr/bin/env bash
# nvrows, session 18, one GPU call (4 x H100): tests of the changed device paths, then
# block puts at 8/32/132 CTAs and thread-scope reducescatter/reduce, before (main's headers)
# and after (this branch), NVSHMEM 3.4.5 in the same call. Writes everything under $OUT.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=$OUT/nvr; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
S=$G/stage; B=/tmp/nvr-bench
[ -f $S/lib/librshmem.so.0.1.0 ] || xz -dk $S/lib/librshmem.so.0.1.0.xz
mkdir -p $B && tar xJf $G/bench.tar.xz -C $B --strip-components=1
chmod +x $S/bin/* $G/build/cuda/* $B/*/*/* 2>/dev/null
export LD_LIBRARY_PATH=$S/lib
T0=$(date +%s); DL=${DL:-200}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { find $W -name "*.png" -delete; exit 0; }
trap fin EXIT
{ date -u; nvidia-smi -L; nvidia-smi topo -m | head -6; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $W/env.txt 2>&1
tests() { local np=$1; shift; for t in "$@"; do
  ( cd $G/build/cuda && timeout 40 $S/bin/rshmemrun -n $np ./$t $G/build/cuda > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$? $(grep -E '^(PASS|FAIL)' $W/test-$t-np$np.log | head -1 | cut -c1-200)"
  done; }
# bc NP NAME VARIANT PROG ARGS [bench_compare options]
bc() { local np=$1 name=$2 v=$3 prog=$4 args=$5; shift 5
  late && { el "skip $name"; return; }
  timeout 70 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B/$v --progs $prog --timeout 40 --args "$args" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name rc=$?"; }
PB="--ctas 8,32,132 --min 1M --max 64M --reps 3 --warm 1 --target-ms 1 --only put_nbi_block,put_block,floor"
CA="--min 8 --max 8192 --reps 3 --target-ms 1 --only coll_reducescatter/int32_sum_thread,coll_reduce/int32_sum_thread"
tests 4 coll_fresh put_block coll coll_sizes rma
tests 2 coll_fresh
bc 2 np2-put-new new put_bw "$PB"
bc 2 np2-put-main main put_bw "$PB" --no-nvshmem
bc 4 np4-rs-new new coll "$CA"
bc 4 np4-rs-main main coll "$CA" --no-nvshmem
bc 2 np2-rs-new new coll "$CA"
bc 2 np2-rs-main main coll "$CA" --no-nvshmem
bc 2 np2-put-deepall deepall put_bw "$PB" --no-nvshmem
el done
