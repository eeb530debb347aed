#!/usr/bin/env bash
# the start_ahead fix: heap_ahead (all 4 runs) 4 launches, ha1 (AHEAD=1 first) 4 launches, heap/rma/init tests
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$PWD/.gpu; cd $G && tar -xJf fin.tar.xz; S=$G/fin/stage B=$G/fin/build/cuda
export LD_LIBRARY_PATH=$S/lib RSHMEM_BOOTSTRAP_TIMEOUT=30
chmod +x $G/ha1; cd $B
{ for i in 1 2 3 4; do echo "### heap_ahead launch $i"; timeout 40 $S/bin/rshmemrun -n 2 ./heap_ahead $B 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"; done
  for i in 1 2 3 4; do echo "### ha1 (AHEAD=1 first) launch $i"; RSHMEM_DEBUG=INFO timeout 40 $S/bin/rshmemrun -n 2 $G/ha1 2>&1 | grep -E 'grew|rror|PASS|FAIL|heap_ahead:' | cut -c1-250; echo "rc=${PIPESTATUS[0]}"; done
  for t in heap_exact heap_default rma init; do echo "### $t"; timeout 60 $S/bin/rshmemrun -n 2 ./$t $B 2>&1 | tail -3; echo "rc=${PIPESTATUS[0]}"; done
} > "$OUT/heapfix.txt" 2>&1
