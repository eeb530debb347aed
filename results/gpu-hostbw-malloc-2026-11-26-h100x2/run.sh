#!/usr/bin/env bash
# dropin helper: one device call (issue 20/21): torch + nvshmem4py on rshmem's
# libnvshmem_host.so.3, host putmem bandwidth and malloc timings before/after beside NVSHMEM.
set -u
G=$(cd "$(dirname "$0")" && pwd); R=$(cd "$G/../.." && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/dropin.log") 2>&1
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
A=$G/after B=$G/before; chmod +x $G/bin/* $A/bin/* $B/bin/* 2>/dev/null
NVH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem
PY=/opt/torch/.venv/bin/python3
nvidia-smi -L; date -u
MPI="mpirun --allow-run-as-root -np 2 --bind-to none"
if [ "${STEP_BW:-1}" = 1 ]; then
echo "== host put bandwidth (GB/s), PE 0 -> PE 1"
for lib in ${BW_LIBS:-after before}; do
  echo "-- rshmem $lib"; timeout 60 $G/$lib/bin/rshmemrun -n 2 env LD_LIBRARY_PATH=$G/$lib/lib $G/bin/hostbw_$( [ $lib = after ] && echo rshmem || echo before ) 2>&1 | tail -8
done
echo "-- NVSHMEM 3.4.5"; timeout 90 $MPI -x NVSHMEM_BOOTSTRAP=MPI -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH=$NVH/lib $G/bin/hostbw_nvshmem > $OUT/hostbw_nvshmem.log 2>&1; echo "rc=$?"; grep -v "^--\|^ *$" $OUT/hostbw_nvshmem.log | head -20
echo "== CUDA tests"
for t in host_nbi host heap_exact; do timeout 60 $A/bin/rshmemrun -n 2 env LD_LIBRARY_PATH=$A/lib $G/bin/$t > $OUT/$t.log 2>&1; echo "$t rc=$?"; tail -4 $OUT/$t.log; done
[ "${OLD_TEST:-1}" = 1 ] && { timeout 60 $B/bin/rshmemrun -n 2 env LD_LIBRARY_PATH=$B/lib $G/bin/host_nbi_before > $OUT/host_nbi_before.log 2>&1; echo "host_nbi on the old library rc=$? (expected to fail)"; tail -3 $OUT/host_nbi_before.log; }
fi
if [ "${STEP_INIT:-1}" = 1 ]; then
echo "== malloc timings: init program, 3 runs each (ms / MiB, PE 0)"
for i in 1 2 3; do
  echo "-- rshmem (after)"; NVSHMEM_DEBUG=INFO timeout 60 $A/bin/rshmemrun -n 2 env LD_LIBRARY_PATH=$A/lib $G/bin/init_rshmem 2>&1 | grep -E "GPU heap \+|malloc_256|free_256|after_init|after_malloc|nvshmem_init,"
  echo "-- rshmem (before: main)"; timeout 60 $B/bin/rshmemrun -n 2 env LD_LIBRARY_PATH=$B/lib $G/bin/init_before 2>&1 | grep -E "malloc_256|after_init|after_malloc"
  echo "-- NVSHMEM"; timeout 60 $MPI -x NVSHMEM_BOOTSTRAP=MPI -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH=$NVH/lib $G/bin/init_nvshmem 2>&1 | grep -E "malloc_256|free_256|after_init|after_malloc|nvshmem_init,"
done
fi
if [ "${STEP_PY:-1}" = 1 ]; then
echo "== torch: libtorch_nvshmem.so's NVSHMEM imports against rshmem's exports"
TL=$($PY -c "import torch, os; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
ls $TL | grep -i nvshmem
nm -D --undefined-only $TL/libtorch_nvshmem.so 2>/dev/null | awk '{print $2}' | grep -i nvshmem | sort > $OUT/torch_imports.txt
nm -D --defined-only $A/lib/librshmem.so.0 | awk '{print $3}' | sort > $OUT/ours.txt
echo "imports: $(wc -l < $OUT/torch_imports.txt); missing in rshmem: $(comm -23 $OUT/torch_imports.txt $OUT/ours.txt | tr '\n' ' ')"
echo "== torch symmetric memory (NVSHMEM backend) on rshmem"
timeout 120 env LD_PRELOAD=$A/lib/libnvshmem_host.so.3 $PY -m torch.distributed.run --nproc-per-node 2 $G/torch_symm.py 2>&1 | grep -v "^W1\|OMP_NUM\|\*\*\*" | tail -25
echo "torch rc=${PIPESTATUS[0]}"
echo "== nvshmem4py on rshmem"
T=/tmp/n4p-site; rm -rf $T; mkdir -p $T
$PY -c "import cuda.core, cuda.pathfinder" 2>/dev/null || $PY -m pip install -q --no-index --no-deps --target $T "$G"/wheels/cuda_*.whl
$PY -m pip install -q --no-index --no-deps --target $T "$G"/wheels/nvshmem4py*.whl
timeout 120 $MPI -x LD_PRELOAD="$A/lib/libnvshmem_host.so.3" -x PATH -x PYTHONPATH=$T -x NVSHMEM_DISABLE_NVLS $PY "$R/ctest/python/nvshmem4py_demo.py" 2>&1 | tail -6; echo "nvshmem4py rc=$?"
echo "-- nvshmem4py with torch imported first"
timeout 120 $MPI -x LD_PRELOAD="$A/lib/libnvshmem_host.so.3" -x PATH -x PYTHONPATH=$T -x NVSHMEM_DISABLE_NVLS $PY -c "import torch, runpy; print('torch', torch.__version__); runpy.run_path('$R/ctest/python/nvshmem4py_demo.py', run_name='__main__')" 2>&1 | tail -6; echo "nvshmem4py+torch rc=$?"
fi
echo "== done"; date -u
