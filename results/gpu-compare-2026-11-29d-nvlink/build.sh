#!/usr/bin/env bash
# Builds what run.sh carries (pkg.tar.xz, pkg2.tar.xz) on the build VM, no GPU needed.
# usage: bash build.sh STAGE REPO DEST
#   STAGE  an rshmem install of main (lib/librshmem.so*, bin/rshmemrun, include/)
#   REPO   a checkout whose perftest/gpu and ctest/cuda are built (main)
#   DEST   where pkg.tar.xz and pkg2.tar.xz go (e.g. REPO/.gpu/nvb29, beside run.sh)
# NVSHMEM: the pip wheel's 3.4.5 (-rdc + libnvshmem_device.a); nvcc 13 (sm_90) on PATH.
# "new3" = main's headers + new3.patch (the two-word block-put fast path); "new2" = main's
# headers built with -DRSHMEM_PUT_DEEP_CTAS=1024 (every grid keeps four loads in flight).
set -eu
S="$(cd "$1" && pwd)"; R="$(cd "$2" && pwd)"; D="$(mkdir -p "$3" && cd "$3" && pwd)"
NV="${NVSHMEM_HOME:-/opt/cuda13/lib/python3.11/site-packages/nvidia/nvshmem}"
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
mk() { nice make -s -j2 -C "$R/perftest/gpu" NVCC="$(command -v nvcc)" ARCH=sm_90 "$@"; }
mk LIB=nvshmem NVSHMEM_HOME="$NV" BUILD="$T/pkg/pb/nvshmem" all
mk LIB=rshmem RSHMEM_PREFIX="$S" BUILD="$T/pkg/pb/rshmem" all
mkdir -p "$T/pkg/stage/bin" "$T/pkg/stage/lib"
cp "$S"/bin/rshmemrun "$T/pkg/stage/bin/"; cp -a "$S"/lib/librshmem.so* "$T/pkg/stage/lib/"
(cd "$T/pkg" && tar cJf "$D/pkg.tar.xz" .)
# new3: a copy of the install with the patched header.
mkdir -p "$T/new3"; cp -a "$S/include" "$S/lib" "$T/new3/"
patch -d "$T/new3/include/rshmem" -p1 < "$(dirname "$0")/new3.patch"
mk LIB=rshmem RSHMEM_PREFIX="$T/new3" BUILD="$T/pkg2/pb-new3/rshmem" put_bw
mk LIB=rshmem RSHMEM_PREFIX="$S" BUILD="$T/pkg2/pb-new2/rshmem" OPT="-O3 -lineinfo -DRSHMEM_PUT_DEEP_CTAS=1024" put_bw
mkdir -p "$T/pkg2/tests/new3"
for t in rma put_block tma_put moe_shuffle_pattern; do
  nice nvcc -arch=sm_90 -std=c++17 -I"$T/new3/include" -I"$R/ctest/cuda" "$R/ctest/cuda/$t.cu" -o "$T/pkg2/tests/new3/$t" \
    -L"$T/new3/lib" -lrshmem -L"$(dirname "$(command -v nvcc)")/../lib"
done
(cd "$T/pkg2" && tar cJf "$D/pkg2.tar.xz" .)
[ "$(cd "$(dirname "$0")" && pwd)" = "$D" ] || cp "$(dirname "$0")/run.sh" "$D/run.sh"
ls -la "$D"
