/* Register budget of the device API: one kernel per routine and scope, each compiled as a user
 * would (no -rdc). A CTA of 1024 threads launches only when its kernel needs at most 64
 * registers per thread (64K registers per SM), so every routine here must fit in 64:
 * ctest/scripts/cuda_compile.sh compiles this file with `-Xptxas -v` and fails on a kernel
 * above that; then again with -DRSHMEM_PROXY_ROUTE, where the RMA, AMO, signal, barrier and
 * sync kernels, loop_amo_signal and NVIDIA's moe_shuffle two-step push (moe_two_step_[bw])
 * must fit too. */
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

/* NVSHMEM-style kernels as user programs write them (its perftests, its MoE example): no
 * __launch_bounds__, a loop around the transfers with the loop's own counters and grid-wide
 * bookkeeping live across the calls, RMA, AMOs and signals of one scope together. Each must fit
 * 64 registers to launch with 1024 threads (the perftests' `-t 1024`); with the group copies
 * inlined, NVSHMEM's put_bw/get_bw kernels took 72-78. */
#define GRID_STEP(i)                                                   \
    __syncthreads();                                                   \
    if (threadIdx.x == 0) {                                            \
        __threadfence();                                               \
        unsigned c = atomicInc((unsigned *)counter, ~0u);              \
        if (c == gridDim.x * ((i) + 1) - 1) counter[1] += 1;           \
        while (counter[1] != (unsigned)((i) + 1)) {                    \
        }                                                              \
    }                                                                  \
    __syncthreads();
__global__ void loop_block(double *d, volatile unsigned *counter, size_t len, int pe, int iter, uint64_t *sig) {
    const size_t per = len / gridDim.x;
    double *mine = d + blockIdx.x * per;
    for (int i = 0; i < iter; i++) {
        nvshmemx_double_put_nbi_block(mine, mine, per, pe);
        nvshmemx_double_get_block(mine, mine, per, pe);
        nvshmemx_double_put_signal_nbi_block(mine, mine, per, sig + blockIdx.x, 1, NVSHMEM_SIGNAL_ADD, pe);
        GRID_STEP(i)
    }
    if (threadIdx.x == 0) nvshmem_quiet();
}
__global__ void loop_warp(double *d, volatile unsigned *counter, size_t len, int pe, int iter, uint64_t *sig) {
    const size_t per = len / gridDim.x / (blockDim.x / 32);
    double *mine = d + (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * per;
    for (int i = 0; i < iter; i++) {
        nvshmemx_double_put_nbi_warp(mine, mine, per, pe);
        nvshmemx_double_get_warp(mine, mine, per, pe);
        nvshmemx_double_put_signal_warp(mine, mine, per, sig + threadIdx.x / 32, i, NVSHMEM_SIGNAL_SET, pe);
        GRID_STEP(i)
    }
    if (threadIdx.x == 0) nvshmem_quiet();
}
__global__ void loop_thread(double *d, volatile unsigned *counter, size_t len, int pe, int iter, uint64_t *sig) {
    const size_t per = len / gridDim.x / blockDim.x;
    double *mine = d + (blockIdx.x * blockDim.x + threadIdx.x) * per;
    for (int i = 0; i < iter; i++) {
        nvshmem_double_put_nbi(mine, mine, per, pe);
        nvshmem_double_get(mine, mine, per, pe);
        nvshmem_double_p(mine, nvshmem_double_g(mine + 1, pe), pe);
        GRID_STEP(i)
    }
    nvshmem_quiet();
}
__global__ void loop_amo_signal(uint64_t *d, volatile unsigned *counter, uint64_t *sig, int pe, int iter) {
    uint64_t acc = 0;
    for (int i = 0; i < iter; i++) {
        acc += nvshmem_uint64_atomic_fetch_add(d + threadIdx.x % 8, 1, pe);
        nvshmem_uint64_atomic_add(d + 8 + threadIdx.x % 8, acc, pe);
        acc ^= nvshmem_uint64_atomic_compare_swap(d + 16, acc, i, pe);
        nvshmemx_signal_op(sig + threadIdx.x % 32, 1, NVSHMEM_SIGNAL_ADD, pe);
        if (threadIdx.x == 0) nvshmem_signal_wait_until(sig + 32, NVSHMEM_CMP_GE, (uint64_t)(i + 1));
        nvshmem_fence();
        GRID_STEP(i)
    }
    d[32 + threadIdx.x] = acc;
    nvshmem_quiet();
}
/* The MoE token shuffle (NVSHMEM's examples/moe_shuffle.cu, block and warp forms): offsets
 * fetched with g, then one row per block or a slice per warp pushed to the expert's PE. */
__global__ void loop_moe(float *send, float *recv, const int *rows, const int *experts, const int64_t *offsets,
                         int64_t *counts, int nrows, int hidden, int npes, int mype) {
    extern __shared__ int64_t pos[];
    if (threadIdx.x < 16 * npes) pos[threadIdx.x] = nvshmem_int64_g(counts + threadIdx.x % 16, threadIdx.x / 16);
    __syncthreads();
    const int per_warp = hidden / (blockDim.x / 32), warp = threadIdx.x / 32;
    for (int r = blockIdx.x; r < nrows; r += gridDim.x) {
        int e = experts[r], peer = e / (16 / npes);
        int64_t at = (pos[mype + e * npes] + r - (e ? offsets[e - 1] : 0)) * hidden;
        nvshmemx_float_put_nbi_block(recv + at, send + (size_t)rows[r] * hidden, hidden, peer);
        nvshmemx_float_put_nbi_warp(recv + at + warp * per_warp, send + (size_t)rows[r] * hidden + warp * per_warp, per_warp, peer);
    }
}
/* NVIDIA's moe_shuffle `-c` kernel, token_shuffle_two_step_allpush<block> and <warp>, in its
 * shape: no __launch_bounds__ (the program launches 1024 threads), each block pushes a run of
 * rows, the destination offset read per row from the exchanged positions, then one put_nbi of
 * the row (block) or of the warp's slice (warp). With the careful flags word hoisted out of the
 * loop (before d6707a8) the block form took 70 registers in both builds; now 56, and 64 with
 * -DRSHMEM_PROXY_ROUTE, the limit. */
template <bool WARP>
__device__ __forceinline__ void moe_push(float *send, float *recv, int *rows, int *experts, int64_t *offsets, int k,
                                         int nrows, int mype, int npes, int hidden, int copies, int64_t *pos) {
    const int local = 16 / npes;
    const int slice = hidden / (blockDim.x * blockDim.y * blockDim.z / 32), warp = threadIdx.x / 32;
    int r = blockIdx.x * copies;
    for (int i = 0; i < copies; i++) {
        if (r >= nrows) return;
        int src = rows[r] % (nrows / k);
        int e = experts[r];
        int peer = e / local;
        int64_t first = (mype == 0 && e % local == 0) ? 0 : pos[mype + e * npes - 1];
        int64_t in_e = r - (e > 0 ? offsets[e - 1] : 0);
        if (WARP)
            nvshmemx_float_put_nbi_warp(recv + (first + in_e) * hidden + warp * slice, send + src * hidden + warp * slice,
                                        slice, peer);
        else
            nvshmemx_float_put_nbi_block(recv + (first + in_e) * hidden, send + src * hidden, hidden, peer);
        r += 1;
    }
}
#define MOE_PUSH(NAME, WARP)                                                                                 \
    __global__ void NAME(float *send, float *recv, int *rows, int *experts, int64_t *offsets, int k, int nrows, \
                         int mype, int npes, int hidden, int copies, int64_t *pos) {                          \
        moe_push<WARP>(send, recv, rows, experts, offsets, k, nrows, mype, npes, hidden, copies, pos);       \
    }
MOE_PUSH(moe_two_step_b, false)
MOE_PUSH(moe_two_step_w, true)
