#!/usr/bin/env bash
# nvbench, session 24: packs what go1.sh / go2.sh run into .gpu/nvb24.tar.xz (built on the build
# VM, nothing compiled on the GPU machine): /tmp/nvb_pre/<v> = rshmem installs (scripts/install.sh
# into that prefix: main = main's library and headers, new = the branch's), /tmp/nvb_b/<lib>/<prog>
# = perftest/gpu programs (make -C perftest/gpu LIB=nvshmem|rshmem RSHMEM_PREFIX=/tmp/nvb_pre/<v>
# BUILD=/tmp/nvb_b/<v> ...), stripped; the installs' .debug files are left out.
set -eu
cd "$(dirname "$0")/../.."
S=/tmp/nvb_packdir; rm -rf $S; mkdir -p $S/b
cp -a /tmp/nvb_pre $S/; find $S/nvb_pre -name '*.debug' -delete; rm -rf $S/nvb_pre/*/share
for d in /tmp/nvb_b/*/; do v=$(basename $d); [ $v = rshmem ] && v=main; mkdir -p $S/b/$v; cp $d/* $S/b/$v/; done
strip $S/b/*/* $S/nvb_pre/*/lib/librshmem.so.* $S/nvb_pre/*/bin/* 2>/dev/null || true
mkdir -p .gpu; tar -cf - -C $S . | xz -T2 -4 > .gpu/nvb24.tar.xz; ls -la .gpu/nvb24.tar.xz
# The run tool carries from /work/main: cp .gpu/nvb24.tar.xz go1.sh go2.sh /work/main/.gpu/nvbench/ (carry .gpu/nvbench).
