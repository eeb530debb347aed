#!/usr/bin/env bash
# Issue 20, nvshmem_malloc growth rows: one rshmem library against another, 2 PEs, interleaved.
#   OUT=$OUT bash ab.sh OLD NEW
# OLD, NEW: staged installs as ctest/cuda/stage_gpu.sh makes them (stage/lib, stage/bin/rshmemrun,
# build/cuda/). The program is ctest/cuda/heap_grow from NEW's build (host API only, so it runs
# with either library); every launch checks the grown memory with puts and gets between the PEs
# and fails loudly otherwise. The caller starts MPS when both PEs share one GPU.
# Writes $OUT/rows.csv (lib,rep,row,value,unit: PE 0's), $OUT/summary.txt (medians, printed),
# $OUT/debug.txt (one NVSHMEM_DEBUG=INFO launch per library: every growth's stages on both PEs,
# printed), $OUT/progress.txt. Stops starting launches after DL seconds (default 45; each
# launch has a 15 s timeout). Exit status 1 if any launch failed its checks.
set -u
OLD=$(cd "$1" && pwd) NEW=$(cd "$2" && pwd)
OUT=${OUT:-/tmp/ab-out}; mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
T0=$(date +%s) DL=${DL:-45} REPS=${REPS:-4} PAUSE=${PAUSE:-20}
el() { echo "[$(($(date +%s) - T0)) s] $*" >> "$OUT/progress.txt"; }
late() { [ $(($(date +%s) - T0)) -gt "$DL" ]; }
BIN=$NEW/build/cuda/heap_grow
[ -x "$BIN" ] || { echo "ab.sh: no $BIN (stage NEW with ctest/cuda/stage_gpu.sh)"; exit 2; }
md5sum "$OLD/stage/lib/librshmem.so.0" "$NEW/stage/lib/librshmem.so.0" > "$OUT/progress.txt" 2>&1
fails=0
# launch LIB TAG [ENV...]: one 2-PE launch of heap_grow with LIB's library; PE 0's rows to rows.csv.
launch() {
  local lib=$1 tag=$2; shift 2
  local p=$OLD; [ "$lib" = new ] && p=$NEW
  env "$@" LD_LIBRARY_PATH="$p/stage/lib" timeout 15 "$p/stage/bin/rshmemrun" -n 2 "$BIN" "$PAUSE" > "$OUT/t.out" 2> "$OUT/t.err"
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^PASS heap_grow' "$OUT/t.out"; then
    fails=$((fails + 1))
    { echo "=== FAILED: $lib $tag rc=$rc"; tail -n 20 "$OUT/t.out" "$OUT/t.err"; } | tee -a "$OUT/failures.txt"
  fi
  el "$lib $tag rc=$rc"
  grep '^heap_grow,' "$OUT/t.out" | sed "s/^heap_grow,/$lib,$tag,/" >> "$OUT/rows.csv"
}
echo "lib,rep,row,value,unit" > "$OUT/rows.csv"
for rep in $(seq "$REPS"); do
  for lib in old new; do late && { el "skip $lib $rep"; continue; }; launch $lib "$rep"; done
done
# Where each growth's time goes (both PEs), and the on-demand path of NEW (no spare, no chunk ahead).
: > "$OUT/debug.txt"
for cfg in old new new-noahead; do
  late && { el "skip debug $cfg"; continue; }
  lib=${cfg%%-*}; extra=(NVSHMEM_DEBUG=INFO); [ "$cfg" = new-noahead ] && extra+=(RSHMEM_HEAP_MAP_AHEAD=0)
  launch "$lib" "debug-$cfg" "${extra[@]}"
  { echo "=== $cfg (NVSHMEM_DEBUG=INFO${extra[1]:+, ${extra[1]}})"; grep '^heap_grow,' "$OUT/t.out"
    grep -hE 'GPU heap|spare' "$OUT/t.err" | sed 's/^.*rshmem: //' | head -c 8000; } >> "$OUT/debug.txt"
done
{
  echo "PE 0, ms or MiB: median (min-max) of the numbered launches; new/old = ratio of medians"
  printf '%-16s %-28s %-28s %s\n' row old new new/old
  for row in init mem_after_init malloc_256MiB malloc_1GiB mem_after_1GiB malloc_64MiB malloc_2MiB mem_at_end; do
    med() { awk -F, -v l="$1" -v r="$row" '$1 == l && $2 ~ /^[0-9]+$/ && $3 == r { print $4 }' "$OUT/rows.csv" | sort -g |
      awk '{ a[NR] = $1 } END { if (!NR) { print "-"; exit } m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.4g (%.4g-%.4g) n=%d\n", m, a[1], a[NR], NR }'; }
    o=$(med old) n=$(med new)
    printf '%-16s %-28s %-28s %s\n' "$row" "$o" "$n" "$(awk -v a="${o%% *}" -v b="${n%% *}" 'BEGIN { if (a + 0 > 0 && b != "-") printf "%.2f", b / a; else print "-" }')"
  done
  echo "failed launches: $fails"
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"; echo; cat "$OUT/debug.txt"
rm -f "$OUT/t.out" "$OUT/t.err"
el done
[ "$fails" = 0 ]
