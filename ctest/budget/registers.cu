/* Register budget of the device API: one kernel per routine and scope, each compiled as a user
 * would (no -rdc). A CTA of 1024 threads launches only when its kernel needs at most 64
 * registers per thread (64K registers per SM), so every routine here must fit in 64:
 * ctest/scripts/cuda_compile.sh compiles this file with `-Xptxas -v` and fails on a kernel
 * above that. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#define W NVSHMEM_TEAM_WORLD
#define K(NAME, T, CALL) \
    __global__ void NAME(T *d, const T *s, size_t n, int pe) { CALL; }

/* Collectives: every scope, the types whose code differs (size 1, 2, 4, 8; integer / float). */
#define COLL(SUF, PRE, X)                                                                          \
    K(bcast##SUF, int, PRE##int32_broadcast##X(W, d, s, n, pe))                                   \
    K(fcollect##SUF, int, PRE##int32_fcollect##X(W, d, s, n))                                     \
    K(alltoall##SUF, int, PRE##int32_alltoall##X(W, d, s, n))                                     \
    K(rsum_i32##SUF, int, PRE##int32_sum_reduce##X(W, d, s, n))                                   \
    K(rmax_f32##SUF, float, PRE##float_max_reduce##X(W, d, s, n))                                 \
    K(rsum_f64##SUF, double, PRE##double_sum_reduce##X(W, d, s, n))                               \
    K(rsum_i8##SUF, int8_t, PRE##int8_sum_reduce##X(W, d, s, n))                                  \
    K(rsum_h##SUF, half, PRE##half_sum_reduce##X(W, d, s, n))                                     \
    K(rmax_bf##SUF, __nv_bfloat16, PRE##bfloat16_max_reduce##X(W, d, s, n))                       \
    K(rand_u64##SUF, uint64_t, PRE##uint64_and_reduce##X(W, d, s, n))                             \
    K(rs_i32##SUF, int, PRE##int32_sum_reducescatter##X(W, d, s, n))                              \
    K(rs_f32##SUF, float, PRE##float_min_reducescatter##X(W, d, s, n))                            \
    K(rs_f64##SUF, double, PRE##double_sum_reducescatter##X(W, d, s, n))                          \
    K(barrier##SUF, int, PRE##barrier_all##X())                                                   \
    K(sync##SUF, int, PRE##sync_all##X())                                                         \
    K(put##SUF, int, PRE##int_put##X(d, s, n, pe))                                                \
    K(get##SUF, int, PRE##int_get##X(d, s, n, pe))                                                \
    K(put_nbi##SUF, int, PRE##int_put_nbi##X(d, s, n, pe))                                        \
    K(put_signal##SUF, int, PRE##int_put_signal##X(d, s, n, (uint64_t *)d, 1, NVSHMEM_SIGNAL_ADD, pe))

COLL(_t, nvshmem_, )
COLL(_w, nvshmemx_, _warp)
COLL(_b, nvshmemx_, _block)

/* Thread-scope only. */
K(p, int, nvshmem_int_p(d, (int)n, pe))
K(g, int, d[0] = nvshmem_int_g(s, pe))
K(fadd, int, d[0] = nvshmem_int_atomic_fetch_add(d, 1, pe))
K(cswap, uint64_t, d[0] = nvshmem_uint64_atomic_compare_swap(d, 1, 2, pe))
K(signal_op, uint64_t, nvshmemx_signal_op(d, 1, NVSHMEM_SIGNAL_SET, pe))
K(wait_until, uint64_t, d[0] = nvshmem_signal_wait_until(d, NVSHMEM_CMP_GE, n))
K(wait_any, int, d[0] = (int)nvshmem_int_wait_until_any(d, n, nullptr, NVSHMEM_CMP_EQ, 1))
K(quiet, int, nvshmem_quiet())
/* A transfer and its completion in one kernel, as latency loops write them. */
K(put_quiet_w, int, { nvshmemx_int_put_warp(d, s, n, pe); nvshmem_quiet(); })
K(put_quiet_b, int, { nvshmemx_int_put_block(d, s, n, pe); nvshmem_quiet(); })
K(get_quiet_b, int, { nvshmemx_int_get_block(d, s, n, pe); nvshmem_quiet(); })
K(fence, int, nvshmem_fence())
