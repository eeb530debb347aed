#!/usr/bin/env bash
# Stages what perftest/nvshmem/gpu-run.sh needs into a git-ignored folder of the session's
# checkout (default /work/main/.gpu/nvdrop), for a device call with carry [".gpu/nvdrop"]:
# an rshmem install (stage/), the heap CUDA tests built here (build/cuda/), NVIDIA's examples and
# perftests sources (nv/: never committed), Open MPI's headers, the nvshmem4py wheel, the scripts.
#   NV_SRC=/tmp/nv WHEELS=/tmp/nvdrop-pack/wheels perftest/nvshmem/stage.sh [DEST]
set -euo pipefail
wt="$(cd "$(dirname "$0")/../.." && pwd)"
dst="${1:-/work/main/.gpu/nvdrop}"
nv="${NV_SRC:-/tmp/nv}"
cd "$wt"
. ctest/common/find_cuda.sh
nvcc="$(find_nvcc)"
[ -n "$nvcc" ] || { echo "stage.sh: no nvcc (scripts/install-nvcc.sh)"; exit 1; }
make --no-print-directory build >/dev/null
rm -rf "$dst"; mkdir -p "$dst/build/cuda" "$dst/nv" "$dst/wheels"
make --no-print-directory install PREFIX="$dst/stage" >/dev/null
rm -f "$dst/stage/lib/"*.debug
strip "$dst/stage/lib/"*.so* "$dst/stage/bin/"* 2>/dev/null || true
for t in heap_default heap_exact heap_ahead; do
    "$nvcc" -arch=sm_90 -std=c++17 -O2 -I"$dst/stage/include" -Ictest/cuda "ctest/cuda/$t.cu" -o "$dst/build/cuda/$t" \
        -L"$dst/stage/lib" -lrshmem -Xlinker -rpath="$dst/stage/lib"
done
cp -r "$nv/examples" "$nv/perftest" "$dst/nv/"
cp -r /usr/lib/x86_64-linux-gnu/openmpi/include "$dst/mpi-include"
cp "${WHEELS:-/tmp/nvdrop-pack/wheels}"/nvshmem4py*.whl "$dst/wheels/"
cp scripts/build-nvshmem-programs.sh perftest/nvshmem/run-programs.sh perftest/nvshmem/gpu-run.sh ctest/python/nvshmem4py_demo.py "$dst/"
du -sh "$dst"
