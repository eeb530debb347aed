#!/usr/bin/env bash
# Prebuild the cross-host suite with the proxy route flag into .gpu/xh (copy of the fin stage).
set -uo pipefail
G=/work/main/.gpu/xh27; rm -rf $G; cp -a /work/main/.gpu/fin27 $G; cp /work/main/device/*.cuh $G/stage/include/rshmem/device/; rm -rf $G/build/cuda; mkdir -p $G/build/cuda
nvcc=/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
S=$G/stage B=$G/build/cuda
ALL="first_coll rma amo host host_typed host_amo strided stream signal wait put_block two_tu two_tu_rdc buffer_register user_buffer cumodule nvrtc ring_bcast ring_reduce pipeline jacobi coll_host sync team coll coll_sizes collective_launch"
one() {
  t=$1; flags=(-arch=sm_90 -std=c++17 -I"$S/include" -DRSHMEM_PROXY_ROUTE); libs=(-L"$S/lib" -lrshmem)
  src=$G/ctest/cuda/$t.cu
  case $t in
    two_tu_rdc) $nvcc "${flags[@]}" -rdc=true $G/ctest/cuda/two_tu.cu $G/ctest/cuda/two_tu.part.cu -o $B/$t "${libs[@]}" ;;
    KERNEL) $nvcc "${flags[@]}" -cubin $G/ctest/cuda/cumodule.kernel.cu -o $B/cumodule.kernel.cubin && $nvcc "${flags[@]}" -ptx $G/ctest/cuda/cumodule.kernel.cu -o $B/cumodule.kernel.ptx ;;
    BENCH) $nvcc "${flags[@]}" $G/perftest/proxy/proxy_bench.cu -o $B/proxy_bench "${libs[@]}" ;;
    *) [ -f "$src" ] || { echo "no $t"; return; }; $nvcc "${flags[@]}" $src $(ls $G/ctest/cuda/$t.part*.cu 2>/dev/null) -o $B/$t "${libs[@]}" ;;
  esac > $B/$t.build.txt 2>&1 && echo "ok $t" || { echo "FAIL $t"; tail -3 $B/$t.build.txt; }
}
export -f one; export G S B nvcc
printf '%s\n' $ALL KERNEL BENCH | PATH=$(dirname $nvcc):$PATH xargs -P1 -I{} bash -c 'one {}'
rm -f $B/*.build.txt
find $B -type f -perm -u+x -exec strip {} + 2>/dev/null
ls $B | wc -l
