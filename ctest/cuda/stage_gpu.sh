#!/usr/bin/env bash
# Stages what the GPU run needs into /work/main/.gpu/rt (git-ignored there; other runs use
# other folders under .gpu, e.g. GPU_STAGE=/work/main/.gpu/gpu2). Then: device run
# `bash .gpu/<name>/run.sh` with carry [".gpu/<name>"].
# The CUDA programs are built here, with the same nvcc (13.0.88) the GPU machine has, so the
# GPU run spends its time running tests, not compiling; run.sh builds them only if missing.
# mpi_init is built against this machine's Open MPI (libmpi.so.40, as on the GPU machine).
set -euo pipefail
wt="$(cd "$(dirname "$0")/../.." && pwd)"
dst="${GPU_STAGE:-/work/main/.gpu/rt}"
cd "$wt"
cargo build --release --locked 2>&1 | tail -1
rm -rf "$dst"; mkdir -p "$dst"
make --no-print-directory install PREFIX="$dst/stage" >/dev/null
mkdir -p "$dst/ctest/scripts"
cp -r ctest/cuda ctest/budget "$dst/ctest/"
cp ctest/scripts/cuda_compile.sh ctest/scripts/cuda_lazy.sh "$dst/ctest/scripts/"
cp -r ctest/common "$dst/ctest/"
cp ctest/expect_failure.sh "$dst/ctest/"
cp ctest/cuda/run_gpu.sh "$dst/run.sh"
# ctest/cuda/crosshost.sh: the namespaced hosts and their launch agent, at the same relative paths.
mkdir -p "$dst/scripts" "$dst/ctest/multihost"
cp scripts/netns-hosts.sh "$dst/scripts/"
cp ctest/multihost/netns-agent.sh "$dst/ctest/multihost/"
# The GPU machine has no iproute2 (`ip`), which netns-hosts.sh needs: take this machine's, with
# the libraries it needs that Ubuntu's base image lacks (tools/ip sets their path for it alone).
if ip="$(command -v ip)"; then
  mkdir -p "$dst/tools/lib" && cp "$ip" "$dst/tools/ip.bin"
  ldd "$ip" | awk '/=> \// {print $3}' | grep -E 'lib(bpf|elf|mnl|bsd|cap|md)\.so' | xargs -r -I{} cp -L {} "$dst/tools/lib/"
  printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")\nLD_LIBRARY_PATH="$d/lib" exec "$d/ip.bin" "$@"\n' > "$dst/tools/ip"
  chmod +x "$dst/tools/ip"
fi
if [ "${PREBUILD:-1}" = 1 ]; then
  # With CUDA_TEST_FLAGS=-DRSHMEM_PROXY_ROUTE the register budget check fails by design.
  bash ctest/scripts/cuda_compile.sh "$dst/stage" "$dst/build" | tail -2 || echo "(the compile check reported a failure; programs that built are staged)"
  nvcc="${NVCC:-$(command -v nvcc || true)}"
  if [ -z "$nvcc" ] && [ -x /opt/cuda13/bin/python ]; then
    nvcc="$(/opt/cuda13/bin/python -c 'import nvidia.cu13 as m; print(list(m.__path__)[0])')/bin/nvcc"
  fi
  mpi_inc=/usr/lib/x86_64-linux-gnu/openmpi/include
  if [ -n "$nvcc" ] && [ -f "$mpi_inc/mpi.h" ]; then
    "$nvcc" -arch=sm_90 -std=c++17 -I"$dst/stage/include" -Ictest/cuda -I"$mpi_inc" ctest/cuda/mpi_init.cu -o "$dst/build/cuda/mpi_init" \
      -L"$dst/stage/lib" -lrshmem -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi && echo "ok   mpi_init (Open MPI)"
  fi
  rm -f "$dst/build/cuda/"*.o "$dst/build/cuda/last.log" "$dst/build/cuda/"*.c "$dst/build/cuda/"*.build.*
fi
# ctest/cuda/crosshost_all.sh: proxy_bench's source, and the host-to-host floor (rshmem's CPU-PE
# net_bench and a plain TCP probe, perftest/net/) built here.
mkdir -p "$dst/perftest" "$dst/build/net"
cp -r perftest/proxy "$dst/perftest/"
cc -O2 -std=gnu11 -I"$dst/stage/include" perftest/net/net_bench.c -o "$dst/build/net/net_bench" -L"$dst/stage/lib" -lrshmem
cc -O2 -o "$dst/build/net/tcp_floor" perftest/net/tcp_floor.c
rm -f "$dst/stage/bin/rshmem-info" # not run there; 8 MB of the 64 MiB that may travel
# `carry` takes 64 MiB at most: no debug info.
rm -f "$dst/stage/lib/"*.debug
find "$dst/stage/lib" "$dst/stage/bin" "$dst/build/cuda" -type f -perm -u+x -exec strip {} + 2>/dev/null || true
du -sh "$dst"
