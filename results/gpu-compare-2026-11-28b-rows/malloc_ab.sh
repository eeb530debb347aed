#!/usr/bin/env bash
# nvrows, session 20: nvshmem_malloc(1 GiB) growth, old library (main 9f78bb7) vs new (branch
# nvrows: the chunk mapped ahead of need starts mapping only after the allocation's closing
# barrier) vs NVSHMEM, side by side in one call. perftest/gpu/init.cu (`--reps 1`), old / new /
# NVSHMEM alternating, 3 launches each at 2 and 4 PEs, plus one RSHMEM_DEBUG=INFO launch of old
# and new at 4 and 2 PEs (the growth's timing breakdown, heap/gpu.rs `log_growth`).
# Unpacked beside it (mallocab.tar.xz): old/lib, new/lib (stripped librshmem), bin/rshmemrun
# (main's), b/rshmem/init, b/nvshmem/init (`make -C perftest/gpu LIB=rshmem|nvshmem init`).
# Writes 6 files at $OUT's top level: rows.csv, summary.txt, debug.txt, progress.txt, env.txt,
# stderr.txt. Usage: OUT=$OUT timeout 90 bash malloc_ab.sh   (DL=seconds: no launch starts after)
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
T0=$(date +%s)
DL=${DL:-65}
el() { echo "[$(($(date +%s) - T0)) s] $*" >> "$OUT/progress.txt"; }
late() { [ $(($(date +%s) - T0)) -gt "$DL" ]; }
NVH=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2> /dev/null ||
  /opt/cuda13/bin/python -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2> /dev/null)
{
  date -u
  echo "NVH=$NVH"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv
  mpirun --version | head -1
  md5sum "$G"/old/lib/librshmem.so.0.1.0 "$G"/new/lib/librshmem.so.0.1.0
} > "$OUT/env.txt" 2>&1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
ROWS=$OUT/rows.csv
echo "config,np,rep,bench,variant,size,ctas,threads,value,unit" > "$ROWS"
# one CONFIG NP REP: one launch of init; its CSV rows go to rows.csv tagged with the launch.
one() {
  local cfg=$1 np=$2 rep=$3 rc
  late && { el "skip $cfg np$np rep$rep"; return; }
  case $cfg in
    old | new) LD_LIBRARY_PATH=$G/$cfg/lib timeout 20 "$G/bin/rshmemrun" -n "$np" "$G/b/rshmem/init" --reps 1 > "$OUT/tmp.out" 2>> "$OUT/stderr.txt" ;;
    nv) LD_LIBRARY_PATH=$NVH/lib timeout 25 mpirun "${root[@]}" -np "$np" --bind-to none -x NVSHMEM_BOOTSTRAP=MPI \
      -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH "$G/b/nvshmem/init" --reps 1 > "$OUT/tmp.out" 2>> "$OUT/stderr.txt" ;;
  esac
  rc=$?
  el "$cfg np$np rep$rep rc=$rc"
  grep -E '^(init|mem),' "$OUT/tmp.out" | sed "s/^/$cfg,$np,$rep,/" >> "$ROWS"
}
# debug CONFIG NP: one launch with the growth's timing breakdown (every PE's log lines).
debug() {
  local cfg=$1 np=$2
  late && { el "skip debug $cfg np$np"; return; }
  echo "=== $cfg np$np RSHMEM_DEBUG=INFO" >> "$OUT/debug.txt"
  RSHMEM_DEBUG=INFO LD_LIBRARY_PATH=$G/$cfg/lib timeout 20 "$G/bin/rshmemrun" -n "$np" "$G/b/rshmem/init" --reps 1 > "$OUT/tmp.out" 2> "$OUT/tmp.err"
  el "debug $cfg np$np rc=$?"
  grep -hE 'GPU heap|malloc_1GiB|malloc_256MiB' "$OUT/tmp.out" "$OUT/tmp.err" >> "$OUT/debug.txt"
}
for rep in 1 2 3; do
  for np in 2 4; do
    for cfg in old new nv; do one $cfg $np $rep; done
  done
  if [ "$rep" = 1 ]; then
    for np in 4 2; do for cfg in new old; do debug $cfg $np; done; done
  fi
done
rm -f "$OUT/tmp.out" "$OUT/tmp.err"
# Per config and PE count: every malloc_1GiB / malloc_256MiB value (PE 0's) and the median.
awk -F, 'NR > 1 && ($5 == "malloc_1GiB" || $5 == "malloc_256MiB" || $5 == "nvshmem_init") {
  k = $5 " np" $2 " " $1; v[k] = v[k] " " $9; n[k]++ }
  END { for (k in v) print k ":" v[k] " (" n[k] " runs)" }' "$ROWS" | sort > "$OUT/summary.txt"
for row in malloc_1GiB malloc_256MiB; do
  for np in 2 4; do
    for cfg in old new nv; do
      awk -F, -v r=$row -v p=$np -v c=$cfg 'NR > 1 && $5 == r && $2 == p && $1 == c { print $9 }' "$ROWS" | sort -g |
        awk -v r=$row -v p=$np -v c=$cfg '{ a[NR] = $1 } END { if (NR) printf "median %s np%s %s: %s ms (%d runs)\n", r, p, c, (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), NR }'
    done
  done
done >> "$OUT/summary.txt"
el done
