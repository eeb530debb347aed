#!/usr/bin/env bash
# nvbench session 25, call 3: does a process that holds the driver open make the PEs' CUDA start-up
# as quick as under mpirun? holders: none, cuInit (python ctypes libcuda), open /dev/nvidia* only.
set -u; NP=${NP:-2}; R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb25c; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
P=/tmp/nvb25p; rm -rf $P; mkdir -p $P; tar xJf $R/.gpu/nvbench25/p.tar.xz -C $P; chmod +x $P/b/*/* $P/new/bin/*
cp $R/.gpu/nvbench25/ctx_* $P/; chmod +x $P/ctx_*; export LD_LIBRARY_PATH=$P/new/lib
fin() { cd $W && tar czf $OUT/nvb25c.tgz . 2>/dev/null; exit 0; }; trap fin EXIT TERM
PY=python3; command -v python3 >/dev/null || PY=/opt/torch/.venv/bin/python3
{ nvidia-smi -q | grep -i persistence; ls -la /dev/nvidia*; } > $W/env.txt 2>&1
hold() { case $1 in
  none) exec sleep 30 ;;
  cuinit) exec timeout 30 $PY -c "import ctypes,time; l=ctypes.CDLL('libcuda.so.1'); print('cuInit', l.cuInit(0), flush=True); time.sleep(30)" ;;
  devopen) exec timeout 30 $PY -c "import os,glob,time; fds=[os.open(f, os.O_RDWR) for f in sorted(glob.glob('/dev/nvidia[0-9]*'))+['/dev/nvidiactl']]; print('open', len(fds), flush=True); time.sleep(30)" ;;
  esac; }
for r in 1 2 3; do for h in none cuinit devopen; do
  hold $h > $W/hold-$h-$r.txt 2>&1 & HP=$!; sleep 1.5
  echo "== r$r holder=$h ctx_plain"; timeout -k 5 30 $P/new/bin/rshmemrun -n $NP $P/ctx_plain
  echo "== r$r holder=$h init"; timeout -k 5 40 $P/new/bin/rshmemrun -n $NP $P/b/main/init | grep -E 'init,ctx|nvshmem_init'
  kill $HP 2>/dev/null; wait $HP 2>/dev/null; sleep 0.5
done; done > $W/log.txt 2>&1
