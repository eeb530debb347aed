#!/usr/bin/env bash
# Stages what the GPU run needs into /work/main/.gpu/rt (git-ignored there; other runs use
# other folders under .gpu). Then: device run `bash .gpu/rt/run.sh` with carry [".gpu"].
set -euo pipefail
wt="$(cd "$(dirname "$0")/../.." && pwd)"
dst="${GPU_STAGE:-/work/main/.gpu/rt}"
cd "$wt"
cargo build --release --locked 2>&1 | tail -1
rm -rf "$dst"; mkdir -p "$dst"
make --no-print-directory install PREFIX="$dst/stage" >/dev/null
mkdir -p "$dst/ctest/scripts"
cp -r ctest/cuda "$dst/ctest/"
cp ctest/scripts/cuda_compile.sh ctest/scripts/cuda_lazy.sh "$dst/ctest/scripts/"
cp ctest/cuda/run_gpu.sh "$dst/run.sh"
du -sh "$dst"
