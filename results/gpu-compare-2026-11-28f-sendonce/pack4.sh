#!/usr/bin/env bash
# nvbench, session 24: packs what go4.sh runs into /work/main/.gpu/nvbench3/nvb24c.tar.xz (built on
# the build VM). /tmp/nvb3_pre/{m3,p3}: main's install (bin, lib, include) with include/rshmem/device
# from 587630d (m3) or with ll_send-once.patch (p3), and lib/librshmem.so.0.1.0 = the crate built
# with ptxas (ELF images) from 587630d (/tmp/nvb3_lib/m3.so) or with the patch and its regenerated
# ll.ptx (/tmp/nvb3_lib/p3.so); b/<v>/<prog>: make -C perftest/gpu LIB=rshmem
# RSHMEM_PREFIX=/tmp/nvb3_pre/<v> BUILD=/tmp/nvb3_b/<v> coll stream_team; NVSHMEM's from /tmp/nvb_b.
set -eu
S=/tmp/nvb_pack4; rm -rf $S; mkdir -p $S/b/nvshmem $S/nvb3_pre
cp /tmp/nvb_b/nvshmem/{coll,stream_team} $S/b/nvshmem/
for v in m3 p3; do mkdir -p $S/nvb3_pre/$v/lib $S/b/$v; cp /tmp/nvb3_b/$v/{coll,stream_team} $S/b/$v/
  cp /tmp/nvb3_lib/$v.so $S/nvb3_pre/$v/lib/librshmem.so.0.1.0; ln -s librshmem.so.0.1.0 $S/nvb3_pre/$v/lib/librshmem.so.0; done
mkdir -p $S/nvb3_pre/m3/bin; cp /tmp/nvb3_lib/rshmemrun /tmp/nvb3_lib/rshmem-info $S/nvb3_pre/m3/bin/
strip $S/b/*/* $S/nvb3_pre/*/lib/librshmem.so.0.1.0 $S/nvb3_pre/m3/bin/*
mkdir -p /work/main/.gpu/nvbench3; tar -cf - -C $S . | xz -T2 -4 > /work/main/.gpu/nvbench3/nvb24c.tar.xz
cp /work/wt/nvbench/results/gpu-compare-2026-11-28f-sendonce/go4.sh /work/main/.gpu/nvbench3/; ls -la /work/main/.gpu/nvbench3/
