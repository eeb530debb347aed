#!/usr/bin/env bash
# A/B of two rshmem installs on the CPU benchmark (perftest/host/shmem_bench, shm rows), in one run:
#   bash ab.sh <install A> <install B> <rounds> <out.csv> [row ...]   (rows: as shmem_bench takes them)
# Each round runs the floor, then A and B with 2 PEs, the order of A and B swapped every round,
# so both see the same machine load. shmem_bench is built from this tree's source against each
# install (perftest/host/Makefile, BUILD=/tmp/ab-<name>).
set -u -o pipefail
A=$(realpath "$1"); B=$(realpath "$2"); ROUNDS=$3; OUT=$4
shift 4
ROWS=("$@")
HERE=$(cd "$(dirname "$0")/../.." && pwd)
for s in A B; do
    make --no-print-directory -s -C "$HERE/perftest/host" STAGE="${!s}" BUILD=/tmp/ab-$s >/dev/null || exit 1
done
echo "impl,round,name,size,value,unit" > "$OUT"
rows() { grep -E '^[a-z][a-z0-9_]*,[0-9]+,[-0-9.eE+]+,[A-Za-z/]+$' | sed "s/^/$1,$2,/"; }
for r in $(seq 1 "$ROUNDS"); do
    timeout 120 /tmp/ab-A/floor --csv "${ROWS[@]}" 2>/dev/null | rows floor "$r" >> "$OUT"
    order="A B"; [ $((r % 2)) -eq 0 ] && order="B A"
    for s in $order; do
        stage=${!s}
        timeout 300 "$stage/bin/rshmemrun" -n 2 /tmp/ab-$s/shmem_bench --csv "${ROWS[@]}" 2>&1 | rows "$s" "$r" >> "$OUT"
    done
    echo "round $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
