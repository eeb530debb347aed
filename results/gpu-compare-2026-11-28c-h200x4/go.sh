#!/usr/bin/env bash
# nvbench, session 21, one call (4 x H100). Libraries side by side: before = main 2f85f86's
# librshmem (39a1ef9's code), after = branch nvbench (collective kernels loaded at init, fully;
# a lone thread's reductions take the low-latency protocol up to 32 B per member). Rows:
# first on-stream collectives (init, 3 runs each, 4 PEs; 2 at 2 PEs) beside NVSHMEM 3.4.5;
# device thread reduce/reducescatter int32 8 B-2 KiB (before + NVSHMEM, after = 32 B, and a
# 64 B crossover build) at 2 and 4 PEs; on-stream reduce/broadcast 128 KiB-1 MiB at 4 PEs
# (main + NVSHMEM: the committed grid e7ad6c5 re-timed); the collective CTests at 4 and 2 PEs.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s); DL=${DL:-180}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; cat $W/init-*.txt > $OUT/init-all.txt 2>/dev/null
  grep -h "int32_sum_thread" $W/dev-*/*.md > $OUT/dev-rows.txt 2>/dev/null; tar czf $OUT/nvb21.tgz -C $W . ; exit 0; }
trap fin EXIT TERM
P=/tmp/nvbp; rm -rf $P; mkdir -p $P; tar xJf $G/pack.tar.xz -C $P
for v in before after; do mkdir -p $P/$v/lib $P/$v/bin; mv $P/$v.so $P/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $P/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $P/$v/lib/librshmem.so
  cp $P/rshmemrun $P/$v/bin/rshmemrun; chmod +x $P/$v/bin/rshmemrun; done
chmod +x $P/bench/*/* $P/tests/* 2>/dev/null
for v in before after32 after64; do mkdir -p $P/b-$v/rshmem $P/b-$v/nvshmem; ln -sf $P/bench/rshmem/coll_$v $P/b-$v/rshmem/coll; done
ln -sf $P/bench/nvshmem/coll $P/b-before/nvshmem/coll
mkdir -p $P/b-st/rshmem $P/b-st/nvshmem; ln -sf $P/bench/rshmem/stream_team $P/b-st/rshmem/; ln -sf $P/bench/nvshmem/stream_team $P/b-st/nvshmem/
{ date -u; nvidia-smi -L; nvidia-smi topo -m | head -6; nvidia-smi --query-gpu=name,driver_version --format=csv; } > $W/env.txt 2>&1
el "unpacked"
TESTS="coll coll_sizes coll_host coll_misuse first_coll team graphs ring_bcast ring_reduce collective_launch coll_fresh"
tests() { local np=$1; for t in $TESTS; do
  ( cd $P/tests && COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$P/after/lib timeout 40 $P/after/bin/rshmemrun -n $np ./$t $P/tests > $W/test-$t-np$np.log 2>&1 )
  el "test $t np$np rc=$? $(grep -E '^(PASS|FAIL)' $W/test-$t-np$np.log | head -1 | cut -c1-100)"; done; }
probe() { local np=$1 v=$2 r=$3
  ( cd $W && LD_LIBRARY_PATH=$P/$v/lib timeout 20 $P/$v/bin/rshmemrun -n $np $P/bench/rshmem/init > $W/init-np$np-$v-$r.txt 2>&1 ); el "init np$np $v $r rc=$?"; }
for py in /opt/torch/.venv/bin/python3 python3 /opt/cuda13/bin/python; do
  NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)"; [ -d "$NVL/lib" ] && break; done
nvprobe() { local np=$1
  ( cd $W && LD_LIBRARY_PATH=$NVL/lib timeout 25 mpirun --allow-run-as-root -np $np --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
    -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE $P/bench/nvshmem/init > $W/init-np$np-nvshmem-1.txt 2>&1 ); el "init np$np nvshmem rc=$?"; }
bc() { local np=$1 name=$2 lib=$3 bench=$4 prog=$5 args=$6; shift 6
  late && { el "skip $name"; return; }
  LD_LIBRARY_PATH=$P/$lib/lib timeout 60 bash $R/scripts/bench_compare.sh --np $np --rshmem $P/$lib --prebuilt $P/$bench --progs $prog \
    --timeout 30 --args "$args" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name rc=$?"; }
DEV="--reps 3 --target-ms 1 --min 8 --max 2048 --only coll_reduce/int32_sum_thread,coll_reducescatter/int32_sum_thread"
ST="--reps 3 --target-ms 1 --min 131072 --max 1048576 --only stream_coll/reduce,stream_coll/broadcast"
tests 4
for r in 1 2 3; do probe 4 before $r; probe 4 after $r; done
nvprobe 4
bc 2 dev-np2-before before b-before coll "$DEV"
bc 2 dev-np2-after32 after b-after32 coll "$DEV" --no-nvshmem
bc 2 dev-np2-after64 after b-after64 coll "$DEV" --no-nvshmem
bc 4 dev-np4-before before b-before coll "$DEV"
bc 4 dev-np4-after32 after b-after32 coll "$DEV" --no-nvshmem
bc 4 dev-np4-after64 after b-after64 coll "$DEV" --no-nvshmem
tests 2
for r in 1 2; do probe 2 before $r; probe 2 after $r; done
late || nvprobe 2
bc 4 st-np4-main before b-st stream_team "$ST"
el done
