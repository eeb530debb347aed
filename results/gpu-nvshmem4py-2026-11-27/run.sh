#!/bin/bash
# nvshmem4py's tensors, arrays, on-stream collectives and unique-id init on rshmem (one device call).
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$(cd "$(dirname "$0")" && pwd) S=/tmp/rshmem-stage T=/tmp/n4p-site PY=/opt/torch/.venv/bin/python3
L=$OUT/run.log END=$(( $(date +%s) + ${BUDGET:-200} ))
mkdir -p $S $T && tar -xJf $G/lib.tar.xz -C $S
{
echo "== $(date -u +%FT%TZ) $(nvidia-smi -L | wc -l) GPUs: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
$PY -m pip install -q --no-index --no-deps --target $T $G/wheels/nvshmem4py*.whl 2>&1 | tail -2
PYTHONPATH=$T $PY -c "import torch, nvshmem, mpi4py; print('torch', torch.__version__, 'nvshmem4py', nvshmem.__version__)" 2>&1 | tail -1
PYTHONPATH=$T $PY -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
for run in "mpi 2" "uid 2" "mpi 4" "uid 4"; do
    set -- $run
    left=$(( END - $(date +%s) )); [ $left -gt 20 ] || { echo "== $1 init, $2 PEs: not run (time)"; continue; }
    echo "== $1 init, $2 PEs (mpirun, LD_PRELOAD rshmem's libnvshmem_host.so.3)"
    t0=$(date +%s.%N)
    timeout $(( left < 60 ? left : 60 )) mpirun --allow-run-as-root -np $2 --bind-to none -x LD_PRELOAD=$S/lib/libnvshmem_host.so.3 \
        -x PATH -x PYTHONPATH=$T -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE $PY $G/nvshmem4py_collectives.py $1 2>&1 |
        grep -v '^Importing\|^MPI4Py' | tail -30
    echo "rc=${PIPESTATUS[0]} after $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s"
done
} >$L 2>&1
cat $L
