#!/usr/bin/env bash
# nvbench, session 20, one call. Libraries: before843 (main 843b1a4, before the pushed
# collectives), main122 (122e104: the pushed collectives, as on main), exp (branch nvbench:
# main + unnamed errors; an experiment build whose direct-reduction bytes per block come from
# RSHMEM_X_RBLK, default 32 KiB = main's), oldptx (exp's host code with 843b1a4's kernel PTX:
# 2 PEs only, where no pushed mode is used). Rows: on-stream reduce/broadcast (stream_team)
# beside NVSHMEM 3.4.5; first-call probe (init); collective tests with exp at 4 and 2 PEs.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
R="$(cd "$G/../.." && pwd)"
OUT=${OUT:-/tmp/out}; W=/tmp/nvb; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $W/progress.txt; }
fin() { cp $W/progress.txt $OUT/ 2>/dev/null; tar czf $OUT/nvb20.tgz -C $W . ; exit 0; }
trap fin EXIT TERM
for v in before843 main122 exp oldptx; do mkdir -p $G/$v/lib $G/$v/bin; xz -dc $G/$v.so.xz > $G/$v/lib/librshmem.so.0.1.0
  ln -sf librshmem.so.0.1.0 $G/$v/lib/librshmem.so.0; ln -sf librshmem.so.0 $G/$v/lib/librshmem.so
  xz -dc $G/rshmemrun.xz > $G/$v/bin/rshmemrun; chmod +x $G/$v/bin/rshmemrun; done
B=$G/bench; chmod +x $B/*/* 2>/dev/null; rm -rf $G/tests; mkdir -p $G/tests
TESTS="coll coll_sizes coll_host coll_misuse first_coll team graphs ring_bcast ring_reduce collective_launch coll_fresh"
for t in $TESTS; do
  nice nvcc -arch=sm_90 -std=c++17 -I$G/include -I$R/ctest/cuda $R/ctest/cuda/$t.cu -o $G/tests/$t -L$G/exp/lib -lrshmem > $W/build-$t.log 2>&1 &
done
el "unpacked"
A_ALL="--reps 3 --target-ms 1 --min 32768 --max 4194304 --only stream_coll/reduce,stream_coll/broadcast"
A_RED="--reps 3 --target-ms 1 --min 32768 --max 262144 --only stream_coll/reduce"
bc() { local np=$1 name=$2 S=$G/$3 args=$4; shift 4
  LD_LIBRARY_PATH=$S/lib timeout 60 bash $R/scripts/bench_compare.sh --np $np --rshmem $S --prebuilt $B --progs stream_team \
    --timeout 30 --args "$args" --out $W/$name "$@" > $W/$name.log 2>&1
  el "$name rc=$?"; }
tests() { local np=$1; for t in $TESTS; do
  ( cd $G/tests && COLL_HOST_NO_TIMING=1 LD_LIBRARY_PATH=$G/exp/lib timeout 40 $G/exp/bin/rshmemrun -n $np ./$t $G/tests > $W/test-$t-np$np.log 2>&1 ); el "test $t np$np rc=$?"
  done; }
probe() { local np=$1 tag=$2; shift 2
  ( cd $W && env "$@" LD_LIBRARY_PATH=$G/exp/lib timeout 20 $G/exp/bin/rshmemrun -n $np $B/rshmem/init > $W/init-np$np-$tag.txt 2>&1 ); el "init np$np $tag rc=$?"; }
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m > $W/topo.txt 2>&1; nvidia-smi --query-gpu=index,name,driver_version --format=csv > $W/driver.txt
bc 4 np4-main main122 "$A_ALL"
bc 4 np4-exp exp "$A_ALL" --no-nvshmem
RSHMEM_X_RBLK=8192 bc 4 np4-exp8k exp "$A_RED" --no-nvshmem
wait; el "test programs built"
tests 4
bc 2 np2-main main122 "$A_ALL"
bc 2 np2-exp exp "$A_ALL" --no-nvshmem
bc 2 np2-oldptx oldptx "$A_ALL" --no-nvshmem
bc 2 np2-before843 before843 "$A_ALL" --no-nvshmem
RSHMEM_X_RBLK=8192 bc 2 np2-exp8k exp "$A_RED" --no-nvshmem
tests 2
probe 4 default
probe 4 eager CUDA_MODULE_LOADING=EAGER

for py in /opt/torch/.venv/bin/python3 python3 /opt/cuda13/bin/python; do
  NVL="$($py -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)/lib"; [ -d "$NVL" ] && break; done
( cd $W && LD_LIBRARY_PATH=$NVL timeout 25 mpirun --allow-run-as-root -np 4 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x PATH -x LD_LIBRARY_PATH \
  -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE $B/nvshmem/init > $W/init-np4-nvshmem.txt 2>&1 ); el "init np4 nvshmem rc=$?"
el done
