#!/usr/bin/env bash
# Installs nvcc (CUDA 13.0) from PyPI into a virtual environment, for compile checks of the
# CUDA sources on machines without a GPU or a CUDA toolkit (CI). Every package is pinned: an
# unpinned nvidia-cuda-nvcc pulls newer crt/runtime/nvvm headers and then every compile fails
# with "CUDA compiler and CUDA toolkit headers are incompatible".
#   scripts/install-nvcc.sh [PREFIX]     default PREFIX=/opt/cuda13
# Prints the CUDA_HOME to use (PREFIX/.../nvidia/cu13); does nothing when it is already there.
set -euo pipefail

prefix="${1:-/opt/cuda13}"
pins=(
  nvidia-cuda-nvcc==13.0.88
  nvidia-cuda-crt==13.0.88
  nvidia-cuda-runtime==13.0.96
  nvidia-nvvm==13.0.88
  nvidia-cuda-cccl==13.0.85
  nvidia-cuda-nvrtc==13.0.88
  nvidia-nvml-dev==13.0.87
)

cuda_home() {
  "$prefix/bin/python" -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])' 2>/dev/null
}

# nvml.h (NVIDIA's perftests include it: scripts/build-nvshmem-programs.sh) came later: an
# older install gets it added.
if [ -x "$prefix/bin/python" ] && home="$(cuda_home)" && [ -x "$home/bin/nvcc" ]; then
  [ -f "$home/include/nvml.h" ] || "$prefix/bin/pip" install -q --no-cache-dir "${pins[@]}"
else
  python3 -m venv "$prefix"
  "$prefix/bin/pip" install -q --no-cache-dir "${pins[@]}"
  home="$(cuda_home)"
fi

# nvcc.profile looks for lib64; the wheels ship lib/.
[ -e "$home/lib64" ] || ln -s lib "$home/lib64"
"$home/bin/nvcc" --version | tail -2 >&2
echo "$home"
