#!/usr/bin/env bash
# nvrows, session 19, one GPU call (4 x H100): CUDA tests with the candidate constants, then
# side by side with NVSHMEM 3.4.5: reducescatter thread/block rows (main's constants and the
# candidate's), NVIDIA's shmem_g_latency / shmem_p_bw / host bw built against both libraries,
# start-up rows at 4 PEs. Everything lands under $OUT/nvr; a deadline (DL s) skips what is late.
set -u
G="$(cd "$(dirname "$0")" && pwd)"; R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=$OUT/nvr; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
S=$G/stage; B=/tmp/nvr-bench
[ -f $S/lib/librshmem.so.0.1.0 ] || xz -dk $S/lib/librshmem.so.0.1.0.xz
mkdir -p $B && tar xJf $G/bench.tar.xz -C $B
NVH=$(python3 -c 'import nvidia.nvshmem, os; print(os.path.dirname(nvidia.nvshmem.__file__))' 2>/dev/null || echo /opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem)
chmod +x $S/bin/* $G/build/cuda/* $B/*/*/* $B/nv/* 2>/dev/null
T0=$(date +%s); DL=${DL:-150}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
trap 'find $W -name "*.png" -delete; exit 0' EXIT
{ date -u; nvidia-smi -L; nvidia-smi topo -m | head -6; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; echo "NVSHMEM $NVH"; } > $W/env.txt 2>&1
tests() { local np=$1; shift; for t in "$@"; do
  ( cd $G/build/cuda && LD_LIBRARY_PATH=$S/lib timeout 30 $S/bin/rshmemrun -n $np ./$t $G/build/cuda > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$? $(grep -E '^(PASS|FAIL)' $W/test-$t-np$np.log | head -1 | cut -c1-160)"
  done; }
bc() { local np=$1 name=$2 v=$3 prog=$4 args=$5; shift 5
  late && { el "skip $name"; return; }
  LD_LIBRARY_PATH=$S/lib timeout 60 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --nvshmem $NVH --prebuilt $B/$v --progs $prog --timeout 30 --args "$args" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name rc=$?"; }
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
nv() { local name=$1; shift
  late && { el "skip nv $name"; return; }
  for r in 1 2; do
    LD_LIBRARY_PATH=$NVH/lib timeout 30 mpirun "${root[@]}" -np 2 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH \
      $B/nv/$name.nvshmem "$@" > $W/nv-$name-nvshmem-$r.log 2>&1; el "nv $name nvshmem $r rc=$?"
    LD_LIBRARY_PATH=$S/lib timeout 30 $S/bin/rshmemrun -n 2 $B/nv/$name.rshmem "$@" > $W/nv-$name-rshmem-$r.log 2>&1; el "nv $name rshmem $r rc=$?"
  done; }
RS="--min 64 --max 4194304 --reps 3 --target-ms 1 --only coll_reducescatter/int32_sum_thread,coll_reducescatter/int32_sum_block,coll_reducescatter/floor_pull_add_block"
tests 2 coll_fresh coll
tests 4 coll_fresh coll_sizes
bc 2 np2-rs-main main coll "$RS"
bc 2 np2-rs-x x coll "$RS" --no-nvshmem
nv shmem_g_latency
nv shmem_p_bw
nv bw -b 65536 -e 67108864 -f 4 -n 20 -w 5
bc 4 np4-rs-main main coll "$RS"
bc 4 np4-rs-x x coll "$RS" --no-nvshmem
bc 4 np4-init main init "--reps 1"
el done
