#!/usr/bin/env bash
# Compile check of the GPU benchmarks (perftest/gpu/*.cu) against NVSHMEM's headers, with nvcc:
# every program's device and host code is compiled by the CUDA front end to PTX (-rdc, as the
# NVSHMEM build needs; no ptxas, no host compiler: that is what keeps it fast), and the lightest
# program (init.cu) is compiled and linked for real against libnvshmem_device.a and
# libnvshmem_host.so.3. Results are cached by content in BUILD_DIR/perftest_compile, so a rerun
# after no change costs nothing.
#   perftest_compile.sh [PREFIX] [BUILD_DIR]
# PREFIX (an rshmem install) is used only with PERFTEST_COMPILE_RSHMEM=1: then every program is
# also compiled (PTX, no -rdc) against rshmem's nvshmem.h.
# Skipped, with a message saying so, when nvcc or NVSHMEM's headers cannot be found. NVSHMEM is
# looked for in $NVSHMEM_HOME, then as the pip package nvidia-nvshmem-cu13 (python3,
# /opt/cuda13/bin/python, /opt/torch/.venv/bin/python3).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../../perftest/gpu" && pwd)"
prefix="${1:-}"
if [ -n "${2:-}" ]; then out="$2/perftest_compile"; else out="$(mktemp -d)/perftest_compile"; fi
mkdir -p "$out"


. "$(cd "$(dirname "$0")" && pwd)/../common/find_cuda.sh"
nvcc="$(find_nvcc)"
if [ -z "$nvcc" ]; then
  echo "SKIPPED: nvcc not found (set NVCC, or run scripts/install-nvcc.sh); GPU benchmarks not compiled"
  exit 0
fi
nv="$(find_nvshmem)"
if [ -z "$nv" ]; then
  echo "SKIPPED: NVSHMEM headers not found (set NVSHMEM_HOME, or pip install nvidia-nvshmem-cu13==3.4.5 into"
  echo "         /opt/cuda13); GPU benchmarks not compiled"
  exit 0
fi
cuda_home="$(cd "$(dirname "$nvcc")/.." && pwd)"
arch="${CUDA_ARCH:-sm_90}"
echo "nvcc: $nvcc; NVSHMEM: $nv"

jobs="$(nproc 2>/dev/null || echo 2)"
key_of() {  # content key of a compile: source, common headers, flags
  cat "$src/$1.cu" "$src/bench.cuh" "$src/floors.cuh" | cksum | cut -d' ' -f1
}
fail=0
compile_ptx() {  # compile_ptx <lib> <prog> <flags...>
  local lib="$1" p="$2"; shift 2
  local key stamp
  key="$(key_of "$p")-$(echo "$*" | cksum | cut -d' ' -f1)"
  stamp="$out/$lib-$p.$key.ok"
  if [ -e "$stamp" ]; then echo "ok   $p ($lib, cached)"; return 0; fi
  if "$nvcc" -arch="$arch" -std=c++17 "$@" -ptx "$src/$p.cu" -o "$out/$lib-$p.ptx" > "$out/$lib-$p.log" 2>&1; then
    rm -f "$out/$lib-$p".*.ok
    touch "$stamp"
    echo "ok   $p ($lib, PTX)"
  else
    echo "FAILED: $p against $lib"
    sed 's/^/    /' "$out/$lib-$p.log" | head -40
    return 1
  fi
}

progs="$(cd "$src" && ls *.cu | sed 's/\.cu$//')"
pids=()
for p in $progs; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
  compile_ptx nvshmem "$p" -rdc=true -I"$nv/include" > "$out/status-$p" 2>&1 &
  pids+=($!)
done
for i in "${!pids[@]}"; do wait "${pids[$i]}" || fail=1; done
for p in $progs; do cat "$out/status-$p"; done

# One real build and link against NVSHMEM (the smallest program).
link_key="$(key_of init)"
if [ -e "$out/init-link.$link_key.ok" ]; then
  echo "ok   init (linked against NVSHMEM, cached)"
elif "$nvcc" -arch="$arch" -std=c++17 -rdc=true -I"$nv/include" "$src/init.cu" -o "$out/init" \
       -L"$nv/lib" -lnvshmem_device -l:libnvshmem_host.so.3 -L"$cuda_home/lib" > "$out/init-link.log" 2>&1; then
  rm -f "$out"/init-link.*.ok
  touch "$out/init-link.$link_key.ok"
  echo "ok   init (linked against NVSHMEM)"
else
  echo "FAILED: init, build and link against NVSHMEM"
  sed 's/^/    /' "$out/init-link.log" | head -40
  fail=1
fi

if [ "${PERFTEST_COMPILE_RSHMEM:-0}" = 1 ] && [ -n "$prefix" ] && [ -f "$prefix/include/nvshmem.h" ]; then
  for p in $progs; do compile_ptx rshmem "$p" -I"$prefix/include" || fail=1; done
fi

if [ "$fail" -ne 0 ]; then echo "GPU benchmark compile check FAILED"; exit 1; fi
echo "GPU benchmark compile check passed ($(echo $progs | wc -w) programs)"
