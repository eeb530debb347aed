#!/usr/bin/env bash
# nvbench, session 24: packs what go3.sh runs into /work/main/.gpu/nvbench2/nvb24b.tar.xz (built
# on the build VM). /tmp/nvb_pre/main: main's install with target/release's librshmem.so and
# rshmem-info (built with ptxas on PATH: ELF images); m2, ll1, ll2: its bin and lib (a link to
# main's) with the device headers under test; ll1lib (when present): the library built with ll1's
# regenerated ll.ptx. b/<v>/<prog>: perftest/gpu programs (make -C perftest/gpu LIB=rshmem
# RSHMEM_PREFIX=/tmp/nvb_pre/<v> BUILD=/tmp/nvb_b/<v> coll), b/main = /tmp/nvb_b/rshmem.
set -eu
T=/work/wt/nvbench/target/release
S=/tmp/nvb_pack3; rm -rf $S; mkdir -p $S/b/nvshmem $S/b/main $S/nvb_pre
cp -a /tmp/nvb_pre/main /tmp/nvb_pre/m2 /tmp/nvb_pre/ll1 /tmp/nvb_pre/ll2 $S/nvb_pre/
[ -d /tmp/nvb_pre/ll1lib ] && cp -a /tmp/nvb_pre/ll1lib $S/nvb_pre/
cp $T/librshmem.so $S/nvb_pre/main/lib/librshmem.so.0.1.0; cp $T/rshmem-info $S/nvb_pre/main/bin/rshmem-info
find $S/nvb_pre -name '*.debug' -delete; rm -rf $S/nvb_pre/*/share $S/nvb_pre/*/lib/cmake
for v in m2 ll1 ll2; do rm -rf $S/nvb_pre/$v/bin $S/nvb_pre/$v/include/rshmem/device/ibgda; mkdir -p $S/b/$v; cp /tmp/nvb_b/$v/coll $S/b/$v/; done
cp /tmp/nvb_b/nvshmem/{coll,init} $S/b/nvshmem/; cp /tmp/nvb_b/rshmem/{init,stream_team} $S/b/main/
strip $S/b/*/* $S/nvb_pre/*/lib/librshmem.so.0.1.0 $S/nvb_pre/main/bin/* $S/nvb_pre/ll1lib/* 2>/dev/null || true
mkdir -p /work/main/.gpu/nvbench2; tar -cf - -C $S . | xz -T2 -4 > /work/main/.gpu/nvbench2/nvb24b.tar.xz
cp /work/wt/nvbench/results/gpu-compare-2026-11-28f-mailbox/go3.sh /work/main/.gpu/nvbench2/; ls -la /work/main/.gpu/nvbench2/
