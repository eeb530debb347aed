#!/usr/bin/env bash
set -u
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0
G=$PWD/.gpu; cd $G && tar -xJf fin.tar.xz; S=$G/fin/stage
export LD_LIBRARY_PATH=$S/lib RSHMEM_BOOTSTRAP_TIMEOUT=30
chmod +x $G/ha1
{ echo "### AHEAD=1 first in a fresh process (INFO)"; RSHMEM_DEBUG=INFO timeout 40 $S/bin/rshmemrun -n 2 $G/ha1 2>&1 | grep -E 'heap|rror|PASS|FAIL|ahead' | cut -c1-330; echo "rc=${PIPESTATUS[0]}"
  echo "### AHEAD=0 then AHEAD=1"; HA_ZERO_FIRST=1 timeout 40 $S/bin/rshmemrun -n 2 $G/ha1 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
  echo "### AHEAD=1 first, again, no debug"; timeout 40 $S/bin/rshmemrun -n 2 $G/ha1 2>&1 | tail -6; echo "rc=${PIPESTATUS[0]}"
} > "$OUT/heapdbg2.txt" 2>&1
