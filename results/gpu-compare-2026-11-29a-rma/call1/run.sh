#!/usr/bin/env bash
# nvrows, session 26: device RMA rows on ONE H200, 2 PEs under MPS (a proxy, not NVLink).
# NVSHMEM 3.4.5 ("nv") vs rshmem "old" (main a499339's device headers = fin26 stage) vs "new"
# (group copy: only whole idle warps skip) vs "new2" (new + the copy's tail loads in flight
# together), alternating per round; CUDA tests of new and new2. pkg.tar.xz: stage/ (fin26
# library + rshmemrun; device code is compiled into each program), pb/{nv,old,new,new2}/,
# tests/{new,new2}/. Device: OUT=$OUT timeout -k 5 300 bash .gpu/nvrows26/run.sh
set -u
G="$(cd "$(dirname "$0")" && pwd)"; OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; R=/tmp/nvr26; rm -rf "$R"; mkdir -p "$R"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_BOOTSTRAP_TIMEOUT=30
W=/tmp/nvr26w; rm -rf "$W"; mkdir -p "$W"; cd "$W" && tar xJf "$G/pkg.tar.xz" || exit 1
NVH=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem
S="$W/stage"; chmod +x "$S"/bin/* pb/*/* tests/*/*
P="$R/progress.txt"; nvidia-smi -L > "$P"; nvidia-smi --query-gpu=name,driver_version --format=csv >> "$P"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvr26-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/nvr26-mps-log CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d; echo "mps start rc=$?" >> "$P"
finish() { echo quit | nvidia-cuda-mps-control; sleep 1; find "$R" -name '*.err' -size 0 -delete
  tar czf "$OUT/res.tgz" -C "$R" . ; cp "$P" "$OUT/"; }
trap finish EXIT
LIMIT=${LIMIT:-230}
run1() { # run1 tag lib prog args...
  local tag=$1 b=$2 prog=$3; shift 3
  local f="$R/$tag-np2-$b.csv"
  [ "$SECONDS" -lt "$LIMIT" ] || { echo "skip $tag $b (time)" >> "$P"; return; }
  if [ "$b" = nv ]; then
    LD_LIBRARY_PATH="$NVH/lib" timeout -k 5 40 mpirun --allow-run-as-root -np 2 --bind-to none -x NVSHMEM_BOOTSTRAP=MPI \
      -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS -x NCCL_NVLS_ENABLE -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY \
      -x CUDA_MPS_ACTIVE_THREAD_PERCENTAGE "pb/nv/$prog" "$@" >> "$f" 2>> "$f.err"
  else
    LD_LIBRARY_PATH="$S/lib" timeout -k 5 40 "$S/bin/rshmemrun" -n 2 "pb/$b/$prog" "$@" >> "$f" 2>> "$f.err"
  fi
  echo "$tag $b rc=$? at $SECONDS s" >> "$P"
}
rounds() { # rounds tag "libs" prog args...: 3 rounds, order rotating
  local tag=$1 libs=($2) prog=$3; shift 3
  local n=${#libs[@]} r i
  for r in 0 1 2; do for i in $(seq 0 $((n - 1))); do run1 "$tag" "${libs[$(( (i + r) % n ))]}" "$prog" "$@"; done; done
}
tst() { # tst variant test
  LD_LIBRARY_PATH="$S/lib" timeout -k 5 60 "$S/bin/rshmemrun" -n 2 "tests/$1/$2" > "$R/test-$1-$2-np2.log" 2>&1
  echo "test $1 $2 rc=$? at $SECONDS s" >> "$P"
}
for t in rma put_block signal tma_put moe_shuffle_pattern; do tst new2 $t; done
for t in rma put_block; do tst new $t; done
rounds warp "nv old new new2" put_bw --quick --max 2M --ctas 8,32 --only put_bw/put_warp,put_bw/put_nbi_warp --no-floor
rounds block "nv old new new2" put_bw --quick --max 2M --ctas 8,32,132 --only put_bw/put_block,put_bw/put_nbi_block --no-floor
rounds lat "nv old new2" lat --quick --only put_quiet_block,get_warp
echo "done at $SECONDS s" >> "$P"
