#!/usr/bin/env bash
# nvrows session 21: the malloc A/B (malloc_ab.sh) then heap tests at 2 and 4 PEs with the new library.
G="$(cd "$(dirname "$0")" && pwd)"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
OUT=$OUT DL=${DL:-75} timeout 110 bash "$G/malloc_ab.sh"
cd "$G/t"
for np in ${NPS:-2 4}; do
  for n in heap_ahead heap_exact heap_default rma; do
    LD_LIBRARY_PATH=$G/new/lib timeout 40 "$G/bin/rshmemrun" -n $np ./$n > "$OUT/t.log" 2>&1
    rc=$?
    echo "np$np $n rc=$rc" >> "$OUT/tests.txt"
    grep -E "heap_ahead:|PASS|FAIL|error" "$OUT/t.log" | tail -n 8 | sed 's/^/    /' >> "$OUT/tests.txt"
  done
done
rm -f "$OUT/t.log"
