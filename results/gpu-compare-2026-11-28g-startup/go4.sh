#!/usr/bin/env bash
# nvbench session 25, call 4: whole-launch wall time of init (rshmem under rshmemrun) with a
# cuInit holder started: never (none), and waited for before the launch (before), started at the
# same moment as the launch (same); NVSHMEM under mpirun beside. Wall = date before/after, ms.
set -u; NP=${NP:-2}; R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb25d; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
P=/tmp/nvb25p; rm -rf $P; mkdir -p $P; tar xJf $R/.gpu/nvbench25/p.tar.xz -C $P; chmod +x $P/b/*/* $P/new/bin/*
fin() { cd $W && tar czf $OUT/nvb25d.tgz . 2>/dev/null; exit 0; }; trap fin EXIT TERM
PY=python3; NVL=$(/opt/torch/.venv/bin/python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])')/lib
ms() { echo $(( $(date +%s%N) / 1000000 )); }
for r in 1 2 3; do
  for h in none before same; do
    t0=$(ms)
    if [ $h != none ]; then ( exec timeout 20 $PY -c "import ctypes,time,sys; l=ctypes.CDLL('libcuda.so.1'); l.cuInit(0); open('$W/held','w').close(); time.sleep(20)" ) & HP=$!; fi
    [ $h = before ] && while [ ! -e $W/held ]; do sleep 0.01; done
    t1=$(ms); LD_LIBRARY_PATH=$P/new/lib timeout -k 5 40 $P/new/bin/rshmemrun -n $NP $P/b/main/init > $W/o.txt 2>&1; t2=$(ms)
    echo "r$r rshmem holder=$h holder_wait_ms=$((t1-t0)) launch_ms=$((t2-t1)) total_ms=$((t2-t0)) $(grep -E 'init,ctx|init,nvshmem_init' $W/o.txt | cut -d, -f2,6 | tr '\n' ' ')"
    [ $h != none ] && { kill $HP; wait $HP 2>/dev/null; rm -f $W/held; }
  done
  t1=$(ms); LD_LIBRARY_PATH=$NVL timeout -k 5 40 mpirun --allow-run-as-root -np $NP --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NVSHMEM_DISABLE_NCCL=1 $P/b/nvshmem/init > $W/o.txt 2>&1; t2=$(ms)
  echo "r$r nvshmem mpirun launch_ms=$((t2-t1)) $(grep -E 'init,ctx|init,nvshmem_init' $W/o.txt | cut -d, -f2,6 | tr '\n' ' ')"
done > $W/log.txt 2>&1
