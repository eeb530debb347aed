#!/usr/bin/env bash
# nvrows, session 20, one GPU call (4 x H100): why CUDA context creation (init/ctx) costs more
# under rshmemrun than under mpirun. ctx_probe (perftest/gpu/ctx_probe.cu: cuInit, set device,
# primary context, no SHMEM library; also linked with -lrshmem / -lnvshmem_host) under each
# launcher and binding, 2 and 4 PEs; then init (perftest/gpu/init.cu) for rshmem (bind core,
# none) and NVSHMEM (mpirun --bind-to none) side by side. Results at the top level of $OUT
# (a call brings back 8 files at most: tar them, as call B did).
# Staged beside it (GPU_STAGE folder, carried): stage.tar.xz = bin/ and lib/ of an rshmem install
# (`make install PREFIX=...`); bins.tar.xz = ctx_probe, ctx_probe.rshmem, ctx_probe.nvshmem
# (`make -C perftest/gpu LIB=... ctx_probe`, the plain one with nvcc alone) and rshmem/init,
# nvshmem/init (`make -C perftest/gpu LIB=... init`).
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/out}; W=$OUT
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
S=/tmp/nvr-stage; B=/tmp/nvr-b
mkdir -p $S $B && tar xJf $G/stage.tar.xz -C $S && tar xJf $G/bins.tar.xz -C $B
NVH=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null || /opt/cuda13/bin/python -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)
T0=$(date +%s); DL=${DL:-170}
el() { echo "[$(( $(date +%s) - T0 )) s] $*" >> $W/progress.txt; }
late() { [ $(( $(date +%s) - T0 )) -gt $DL ]; }
{ date -u; echo "NVH=$NVH"; nproc; nvidia-smi -L; nvidia-smi topo -m | head -8; nvidia-smi --query-gpu=name,driver_version,persistence_mode,compute_mode --format=csv;
  env | grep -E '^(CUDA|NV|OMPI_MCA)' | sort; mpirun --version | head -1; numactl -H 2>/dev/null | head -4; } > $W/env.txt 2>&1
root=(); [ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
LP=$S/lib:$NVH/lib
P=$W/probe.csv; echo "config,np,rep,probe,rank,cpus,start,exec_ms,count_ms,set_ms,free_ms,ctx_ms" > $P
probe() { # probe CONFIG NP REP PROG launcher...
  local cfg=$1 np=$2 rep=$3 prog=$4; shift 4
  late && { el "skip $cfg np$np"; return; }
  LD_LIBRARY_PATH=$LP timeout 20 "$@" $B/$prog > $W/tmp.out 2>> $W/probe-stderr.txt
  el "$cfg np$np rep$rep $prog rc=$?"
  grep '^ctx_probe,' $W/tmp.out | sed "s/^ctx_probe,/$cfg,$np,$rep,$prog,/" >> $P; }
par() { local np=$1 gap=$2; for r in $(seq 0 $((np-1))); do CTX_PROBE_RANK=$r $B/$3 & sleep $gap; done; wait; }
export -f par; export B
for rep in 1 2; do for np in 4 2; do
  probe alone $np $rep ctx_probe env CTX_PROBE_RANK=1
  probe rs-core $np $rep ctx_probe $S/bin/rshmemrun -n $np
  probe rs-none $np $rep ctx_probe $S/bin/rshmemrun -n $np --bind-to none
  probe rs-numa $np $rep ctx_probe $S/bin/rshmemrun -n $np --bind-to numa
  probe mpi-none $np $rep ctx_probe mpirun "${root[@]}" -np $np --bind-to none -x LD_LIBRARY_PATH
  probe mpi-core $np $rep ctx_probe mpirun "${root[@]}" -np $np --bind-to core -x LD_LIBRARY_PATH
  probe bash-par $np $rep ctx_probe bash -c "par $np 0 ctx_probe" --
  probe bash-stag $np $rep ctx_probe bash -c "par $np 0.15 ctx_probe" --
  probe rs-core $np $rep ctx_probe.rshmem $S/bin/rshmemrun -n $np
  probe mpi-none $np $rep ctx_probe.rshmem mpirun "${root[@]}" -np $np --bind-to none -x LD_LIBRARY_PATH
  probe mpi-none $np $rep ctx_probe.nvshmem mpirun "${root[@]}" -np $np --bind-to none -x LD_LIBRARY_PATH
  probe rs-core $np $rep ctx_probe.nvshmem $S/bin/rshmemrun -n $np
done; done
rm -f $W/tmp.out
init() { # init NAME NP launcher... (program last)
  local name=$1 np=$2; shift 2
  late && { el "skip init $name np$np"; return; }
  timeout 40 "$@" --reps 1 > $W/init-$name-np$np.txt 2>&1; el "init $name np$np rc=$?"; }
for rep in 1 2; do for np in 4 2; do
  init rs-core-$rep $np env LD_LIBRARY_PATH=$S/lib $S/bin/rshmemrun -n $np $B/rshmem/init
  init rs-none-$rep $np env LD_LIBRARY_PATH=$S/lib $S/bin/rshmemrun -n $np --bind-to none $B/rshmem/init
  init nv-$rep $np env LD_LIBRARY_PATH=$NVH/lib mpirun "${root[@]}" -np $np --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH $B/nvshmem/init
done; done
el done
