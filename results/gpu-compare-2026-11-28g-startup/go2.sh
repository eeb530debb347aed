#!/usr/bin/env bash
# nvbench session 25, call 2: where init/ctx's extra time comes from. ctx_plain (CUDA start-up
# steps timed, no rshmem) and ctx_rsh (same, linked to librshmem) under mpirun --bind-to none,
# rshmemrun (default binding) and alone; then init (rshmem) with CUDA_MODULE_LOADING=EAGER/LAZY.
set -u; NP=${NP:-2}; R="$(pwd)"; OUT=${OUT:-/tmp/out}; W=/tmp/nvb25b; rm -rf $W; mkdir -p $W
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30 PATH=/usr/local/cuda/bin:$PATH
P=/tmp/nvb25p; rm -rf $P; mkdir -p $P; tar xJf $R/.gpu/nvbench25/p.tar.xz -C $P; chmod +x $P/b/*/* $P/new/bin/*
cp $R/.gpu/nvbench25/ctx_* $P/; chmod +x $P/ctx_*; L=$P/new/lib; export LD_LIBRARY_PATH=$L
fin() { cd $W && tar czf $OUT/nvb25b.tgz . 2>/dev/null; exit 0; }; trap fin EXIT TERM
{ ldd $P/b/main/init; ldd $P/b/nvshmem/init; ldd $P/ctx_rsh; } > $W/ldd.txt 2>&1
for r in 1 2 3; do for p in ctx_plain ctx_rsh; do
  echo "== r$r mpirun $p"; timeout -k 5 30 mpirun --allow-run-as-root -np $NP --bind-to none -x LD_LIBRARY_PATH $P/$p
  echo "== r$r rshmemrun $p"; timeout -k 5 30 $P/new/bin/rshmemrun -n $NP $P/$p
  echo "== r$r alone $p"; timeout 30 $P/$p
done
for m in EAGER LAZY; do echo "== r$r init CUDA_MODULE_LOADING=$m"; CUDA_MODULE_LOADING=$m timeout -k 5 40 $P/new/bin/rshmemrun -n $NP $P/b/main/init | grep -E 'ctx|nvshmem_init|malloc_1GiB|first_bcast_64KiB'; done
echo "== r$r nvshmem init"; LD_LIBRARY_PATH=$(/opt/torch/.venv/bin/python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])')/lib timeout -k 5 40 mpirun --allow-run-as-root -np $NP --bind-to none -x NVSHMEM_BOOTSTRAP=MPI -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NVSHMEM_DISABLE_NCCL=1 $P/b/nvshmem/init | grep -E 'ctx|nvshmem_init|malloc_1GiB|first_bcast_64KiB'
done > $W/log.txt 2>&1
