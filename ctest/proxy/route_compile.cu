// Compile check: the device library with the proxy route compiled in (-DRSHMEM_PROXY_ROUTE),
// every kind of routine that can reach a PE on another host. Built by tests/proxy_channel.rs
// with nvcc when one is available; run across hosts by ctest/cuda/crosshost.sh.
#include <nvshmem.h>
#include <nvshmemx.h>

#ifndef RSHMEM_PROXY_ROUTE
#error "compile with -DRSHMEM_PROXY_ROUTE"
#endif

__global__ void every_remote_kind(int *sym, uint64_t *sig, long long *out, int pe) {
    nvshmem_int_p(sym, 1, pe);
    out[0] = nvshmem_int_g(sym, pe);
    nvshmem_putmem(sym + 8, sym, 16, pe);
    nvshmem_getmem_nbi(sym + 16, sym, 16, pe);
    nvshmemx_putmem_warp(sym + 8, sym, 64, pe);
    nvshmemx_getmem_block(sym + 16, sym, 64, pe);
    out[1] = nvshmem_int_atomic_fetch_add(sym, 1, pe);
    nvshmem_int_atomic_add(sym, 1, pe);
    out[2] = nvshmem_int_atomic_compare_swap(sym, 1, 2, pe);
    out[3] = nvshmem_int_atomic_swap(sym, 3, pe);
    nvshmem_putmem_signal_nbi(sym + 8, sym, 8, sig, 1, NVSHMEM_SIGNAL_ADD, pe);
    nvshmemx_signal_op(sig, 5, NVSHMEM_SIGNAL_SET, pe);
    nvshmem_fence();
    nvshmem_quiet();
    nvshmem_barrier_all();
    nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, sym + 32, sym, 4);
}
