#!/usr/bin/env bash
# Builds here (nvcc from scripts/install-nvcc.sh) and stages what the GPU run of the IBGDA route
# needs into $GPU_STAGE (default /work/main/.gpu/ibgda, git-ignored there): the install, the
# CUDA programs (RMA/AMO/signal/sync tests, the device collectives test, every ctest/ibgda/gpu_*.cu test, the post-rate benchmark),
# all compiled with -DRSHMEM_IBGDA_ROUTE (the device IBGDA route is opt-in, see ibgda_device.cuh),
# and run.sh. Programs find the library through an $ORIGIN rpath, so the folder can move.
# Then: device run `bash .gpu/ibgda/run.sh` with carry [".gpu/ibgda"], kind nvidia-h200-x2.
set -euo pipefail
wt="$(cd "$(dirname "$0")/../.." && pwd)"
dst="${GPU_STAGE:-/work/main/.gpu/ibgda}"
cd "$wt"
cargo build --release --locked 2>&1 | tail -1
rm -rf "$dst"; mkdir -p "$dst/bin"
make --no-print-directory install PREFIX="$dst/stage" >/dev/null
rm -rf "$dst/stage/lib/pkgconfig"

nvcc="${NVCC:-}"
[ -z "$nvcc" ] && nvcc="$(command -v nvcc || true)"
[ -z "$nvcc" ] && nvcc="$(ls /opt/cuda13/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | head -1)"
[ -x "$nvcc" ] || { echo "no nvcc (run scripts/install-nvcc.sh)"; exit 1; }
home="$(cd "$(dirname "$nvcc")/.." && pwd)"
flags=(-arch=sm_90 -std=c++17 -O2 -DRSHMEM_IBGDA_ROUTE -I"$dst/stage/include" -Xcompiler -Wall)
libs=(-L"$dst/stage/lib" -lrshmem -Xlinker '-rpath=$ORIGIN/../stage/lib')
[ -d "$home/lib" ] && libs+=(-L"$home/lib")
srcs=(ctest/cuda/rma.cu ctest/cuda/amo.cu ctest/cuda/signal.cu ctest/cuda/sync.cu ctest/cuda/coll_sizes.cu ctest/ibgda/gpu_*.cu perftest/ibgda/post_rate.cu)
pids=()
for s in "${srcs[@]}"; do
  n="$(basename "$s" .cu)"
  ( "$nvcc" "${flags[@]}" "$s" -o "$dst/bin/$n" "${libs[@]}" > "$dst/bin/$n.build.log" 2>&1 && echo "built $n" || { echo "FAILED $n"; cat "$dst/bin/$n.build.log"; exit 1; } ) &
  pids+=($!)
  if [ ${#pids[@]} -ge "${JOBS:-2}" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p"; done
rm -f "$dst"/bin/*.build.log
cp ctest/ibgda/run_gpu.sh "$dst/run.sh"
du -sh "$dst"
