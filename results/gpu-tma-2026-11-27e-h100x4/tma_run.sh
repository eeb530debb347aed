#!/usr/bin/env bash
# tma helper's GPU call: the bulk-copy tests, then put_bw (NVSHMEM, rshmem bulk / SM / all-bulk)
# and the host/on-stream put rows, side by side. Run from the repository root.
set -u
G="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-/tmp/tma-out}"; mkdir -p "$OUT"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
export PATH=/usr/local/cuda/bin:$PATH
S="$G/stage"; chmod +x "$S/bin/"* "$G/build/cuda/"* "$G"/bench/*/*/* 2>/dev/null
export LD_LIBRARY_PATH="$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{ date -u; nvidia-smi -L; nvidia-smi topo -m | head -6; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$OUT/env.txt" 2>&1
T0=$(date +%s)
for t in ${TESTS:-tma_put put_block rma}; do
  (cd "$G/build/cuda" && timeout 25 "$S/bin/rshmemrun" -n 2 "./$t" > "$OUT/test-$t.log" 2>&1); rc=$?
  echo "test $t rc=$rc ($(( $(date +%s) - T0 )) s)"; tail -n 4 "$OUT/test-$t.log" | sed 's/^/    /'
done
A="--args"
PB="--ctas 8,132 --min 1M --max 64M --reps 3 --warm 1 --target-ms 1 --only _block,floor"
bc() { timeout "$1" bash scripts/bench_compare.sh --np 2 --rshmem "$S" --timeout 60 "${@:2}" 2>&1 | grep -E "round|FAIL|rror" | tail -n 20; echo "  bench ${*:2:4}: $(( $(date +%s) - T0 )) s"; }
bc 45 --prebuilt "$G/bench/bulk" --progs put_bw --out "$OUT/put_bw-bulk" $A "$PB"
bc 20 --prebuilt "$G/bench/sm" --no-nvshmem --progs put_bw --out "$OUT/put_bw-sm" $A "$PB"
bc 20 --prebuilt "$G/bench/all" --no-nvshmem --progs put_bw --out "$OUT/put_bw-all" $A "$PB"
bc 20 --prebuilt "$G/bench/all4" --no-nvshmem --progs put_bw --out "$OUT/put_bw-all4" $A "$PB"
echo "done $(( $(date +%s) - T0 )) s"
# Only a few files may come back: one tarball of the tables and CSVs, the logs beside them.
cd "$OUT" && tar czf results.tgz --exclude='*.png' */ && find . -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
ls -la "$OUT"
