#!/usr/bin/env bash
# nvrows, session 25: RMA rows, NVSHMEM 3.4.5 vs rshmem "main" (e0cfbc0 device headers) vs
# "new" (block puts of a word per thread inline), alternating per round; p_bw placement probe;
# CUDA tests of the changed path. pkg.tar.xz: stage/ (6132b1d library + rshmemrun; device code is
# compiled into each program), pb/{nv,main,new}/, tests/new/. Device: bash run.sh (OUT set).
set -u
G="$(cd "$(dirname "$0")" && pwd)"; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=/tmp/nvr25; rm -rf "$R"; mkdir -p "$R"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
cd "$G" && tar xJf pkg.tar.xz || exit 1
NVH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem
S="$G/stage"; chmod +x "$S"/bin/* pb/*/* tests/*/*
P="$R/progress.txt"; nvidia-smi -L > "$P"; nvidia-smi topo -m | head -6 >> "$P"
LIMIT=${LIMIT:-230}; NG=$(nvidia-smi -L | wc -l)
run1() { # run1 tag np lib prog args...
  local tag=$1 np=$2 b=$3 prog=$4; shift 4
  local f="$R/$tag-np$np-$b.csv"
  [ "$SECONDS" -lt "$LIMIT" ] || { echo "skip $tag np$np $b (time)" >> "$P"; return; }
  [ "$np" -le "$NG" ] || { echo "skip $tag np$np $b ($NG GPUs)" >> "$P"; return; }
  if [ "$b" = nv ]; then
    LD_LIBRARY_PATH="$NVH/lib" timeout -k 5 40 mpirun --allow-run-as-root -np "$np" --bind-to none -x NVSHMEM_BOOTSTRAP=MPI \
      -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE "pb/nv/$prog" "$@" >> "$f" 2>> "$f.err"
  else
    LD_LIBRARY_PATH="$S/lib" timeout -k 5 40 "$S/bin/rshmemrun" -n "$np" "pb/$b/$prog" "$@" >> "$f" 2>> "$f.err"
  fi
  echo "$tag np$np $b rc=$? at $SECONDS s" >> "$P"
}
rounds() { # rounds tag np "libs" prog args...: 3 rounds, order rotating
  local tag=$1 np=$2 libs=($3) prog=$4; shift 4
  local n=${#libs[@]} r i
  for r in 0 1 2; do for i in $(seq 0 $((n - 1))); do run1 "$tag" "$np" "${libs[$(( (i + r) % n ))]}" "$prog" "$@"; done; done
}
# CUDA tests of the changed path (new headers), 2 then 4 PEs
for np in 2 4; do [ "$np" -le "$NG" ] || continue; for t in rma put_block tma_put signal moe_shuffle_pattern; do
  LD_LIBRARY_PATH="$S/lib" timeout -k 5 60 "$S/bin/rshmemrun" -n $np "tests/new/$t" > "$R/test-$t-np$np.log" 2>&1
  echo "test $t np$np rc=$? at $SECONDS s" >> "$P"; done; done
# block/warp puts at 32 CTAs (quick sizes 8 B-64 MiB)
for np in 2 4; do rounds putq $np "nv main new" put_bw --quick --ctas 32 --only put_bw/put_block,put_bw/put_nbi_block,put_bw/put_warp --no-floor; done
# put_nbi_block 2-8 MiB (never measured: --quick skips it)
for np in 2 4; do rounds nbi2m $np "nv main new" put_bw --min 2M --max 8M --ctas 8,32,132 --only put_bw/put_nbi_block --no-floor; done
# put latency, block scope (the inline path) and get_warp
rounds lat 2 "nv main new" lat --quick --only put_quiet_block,get_warp
# p: rows and floors, window at the buffer's start and 1 MiB / 2 MiB + 64 KiB into it
for o in 0 1M 2162688; do rounds pbw-o$o 2 "nv main" p_bw --ctas 8,32 --min 64K --max 1M --only p_8B,floor_store_8B --offset $o; done
rounds pbw4 4 "nv main" p_bw --ctas 8,32 --min 64K --max 1M --only p_8B,floor_store_8B
find "$R" -name '*.err' -size 0 -delete
tar czf "$OUT/res.tgz" -C "$R" . ; cp "$P" "$OUT/"
