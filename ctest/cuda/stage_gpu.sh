#!/usr/bin/env bash
# Stages what the GPU run needs into /work/main/.gpu (git-ignored there).
set -euo pipefail
wt="$(cd "$(dirname "$0")/../.." && pwd)"
dst=/work/main/.gpu
cd "$wt"
cargo build --release --locked 2>&1 | tail -1
rm -rf "$dst"; mkdir -p "$dst"
make --no-print-directory install PREFIX="$dst/stage" >/dev/null
mkdir -p "$dst/ctest/scripts"
cp -r ctest/cuda "$dst/ctest/"
cp ctest/scripts/cuda_compile.sh ctest/scripts/cuda_lazy.sh "$dst/ctest/scripts/"
cp ctest/cuda/run_gpu.sh "$dst/run.sh"
du -sh "$dst"
