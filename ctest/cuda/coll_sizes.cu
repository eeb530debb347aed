/* rshmem-cuda-test: pes=2
 * Device collectives across both protocols: sizes below, at and above the low-latency limit
 * (2 KiB per member), odd byte counts, thread / warp / block scope, many calls back to back on
 * the same buffers with new data each time (slot reuse, parities), broadcast roots that change
 * every call, reductions in place and out of place, reducescatter in place, and calls on two
 * teams interleaved. Every call's result is checked on the device by every thread for its
 * share; the first mismatch is recorded with what was expected. */
#include "cuda_test.h"

#include <stdlib.h>
#include <string.h>

#define ITERS 6
#define MAXN 20000 /* int32 elements per member */

struct Bufs {
    int *src, *dst, *inplace;    /* MAXN * npes each */
    char *csrc, *cdst;           /* bytes */
    float *fsrc, *fdst;
    int *err;                    /* [0] count, [1..5] first: what, iter, index, got, want */
};

__device__ int value(int pe, int iter, long i) { return (int)(pe * 1000003 + iter * 7919 + i * 31); }

__device__ void report(int *err, int what, int iter, long i, long long got, long long want) {
    if (atomicAdd(&err[0], 1) == 0) {
        err[1] = what;
        err[2] = iter;
        err[3] = (int)i;
        err[4] = (int)got;
        err[5] = (int)want;
    }
}

/* Group-level helpers: the calls of one scope. */
template <int SCOPE>
__device__ void sync_group() {
    if (SCOPE == 1) __syncwarp();
    if (SCOPE == 2) __syncthreads();
}
template <int SCOPE>
__device__ bool in_group() {
    return SCOPE == 2 || (SCOPE == 1 ? threadIdx.x < 32 : threadIdx.x == 0);
}
template <int SCOPE>
__device__ void tid_size(int *tid, int *size) {
    *tid = SCOPE == 0 ? 0 : threadIdx.x;
    *size = SCOPE == 0 ? 1 : SCOPE == 1 ? 32 : blockDim.x;
}

#define CALL(SCOPE, THREAD, WARP, BLOCK) \
    do {                                 \
        if (SCOPE == 0) THREAD;          \
        else if (SCOPE == 1) WARP;       \
        else BLOCK;                      \
    } while (0)
/* Every member's dest is ready before anyone calls fcollect, alltoall or broadcast: their
 * precondition in OpenSHMEM and NVSHMEM (members write each other's dest without waiting), so a
 * PE still checking the last result must not be overtaken. */
#define READY(SCOPE) CALL(SCOPE, nvshmem_barrier_all(), nvshmemx_barrier_all_warp(), nvshmemx_barrier_all_block())

template <int SCOPE>
__global__ void sizes_kernel(Bufs b, long n, nvshmem_team_t team2) {
    const int me = nvshmem_my_pe(), np = nvshmem_n_pes();
    if (!in_group<SCOPE>()) return;
    int tid, gs;
    tid_size<SCOPE>(&tid, &gs);
    for (int it = 0; it < ITERS; it++) {
        /* fcollect */
        for (long i = tid; i < n; i += gs) b.src[i] = value(me, it, i);
        READY(SCOPE);
        CALL(SCOPE, nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, b.dst, b.src, n),
             nvshmemx_int_fcollect_warp(NVSHMEM_TEAM_WORLD, b.dst, b.src, n),
             nvshmemx_int_fcollect_block(NVSHMEM_TEAM_WORLD, b.dst, b.src, n));
        for (long i = tid; i < n * np; i += gs)
            if (b.dst[i] != value((int)(i / n), it, i % n)) report(b.err, 1, it, i, b.dst[i], value((int)(i / n), it, i % n));
        sync_group<SCOPE>();

        /* alltoall: block j of PE p's source is value(p, it, j * n + i) */
        for (long i = tid; i < n * np; i += gs) b.src[i] = value(me, it + 100, i);
        READY(SCOPE);
        CALL(SCOPE, nvshmem_int_alltoall(NVSHMEM_TEAM_WORLD, b.dst, b.src, n),
             nvshmemx_int_alltoall_warp(NVSHMEM_TEAM_WORLD, b.dst, b.src, n),
             nvshmemx_int_alltoall_block(NVSHMEM_TEAM_WORLD, b.dst, b.src, n));
        for (long i = tid; i < n * np; i += gs) {
            int want = value((int)(i / n), it + 100, (long)me * n + i % n);
            if (b.dst[i] != want) report(b.err, 2, it, i, b.dst[i], want);
        }
        sync_group<SCOPE>();

        /* broadcast, the root moving every call */
        int root = it % np;
        for (long i = tid; i < n; i += gs) {
            b.src[i] = value(me, it + 200, i);
            b.dst[i] = -1;
        }
        READY(SCOPE);
        CALL(SCOPE, nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, b.dst, b.src, n, root),
             nvshmemx_int_broadcast_warp(NVSHMEM_TEAM_WORLD, b.dst, b.src, n, root),
             nvshmemx_int_broadcast_block(NVSHMEM_TEAM_WORLD, b.dst, b.src, n, root));
        for (long i = tid; i < n; i += gs)
            if (b.dst[i] != value(root, it + 200, i)) report(b.err, 3, it, i, b.dst[i], value(root, it + 200, i));
        sync_group<SCOPE>();

        /* sum reduce out of place, then in place */
        for (long i = tid; i < n; i += gs) {
            b.src[i] = value(me, it + 300, i);
            b.inplace[i] = value(me, it + 400, i);
        }
        sync_group<SCOPE>();
        CALL(SCOPE, nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, b.dst, b.src, n),
             nvshmemx_int_sum_reduce_warp(NVSHMEM_TEAM_WORLD, b.dst, b.src, n),
             nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, b.dst, b.src, n));
        CALL(SCOPE, nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, b.inplace, b.inplace, n),
             nvshmemx_int_sum_reduce_warp(NVSHMEM_TEAM_WORLD, b.inplace, b.inplace, n),
             nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, b.inplace, b.inplace, n));
        for (long i = tid; i < n; i += gs) {
            unsigned s1 = 0, s2 = 0;
            for (int p = 0; p < np; p++) {
                s1 += (unsigned)value(p, it + 300, i);
                s2 += (unsigned)value(p, it + 400, i);
            }
            if (b.dst[i] != (int)s1) report(b.err, 4, it, i, b.dst[i], (int)s1);
            if (b.inplace[i] != (int)s2) report(b.err, 5, it, i, b.inplace[i], (int)s2);
        }
        sync_group<SCOPE>();

        /* max reducescatter in place: PE me gets max over p of block me of p's source */
        for (long i = tid; i < n * np; i += gs) b.inplace[i] = value(me, it + 500, i) ^ (me << 3);
        sync_group<SCOPE>();
        CALL(SCOPE, nvshmem_int_max_reducescatter(NVSHMEM_TEAM_WORLD, b.inplace, b.inplace, n),
             nvshmemx_int_max_reducescatter_warp(NVSHMEM_TEAM_WORLD, b.inplace, b.inplace, n),
             nvshmemx_int_max_reducescatter_block(NVSHMEM_TEAM_WORLD, b.inplace, b.inplace, n));
        for (long i = tid; i < n; i += gs) {
            int want = 0;
            for (int p = 0; p < np; p++) {
                int v = value(p, it + 500, (long)me * n + i) ^ (p << 3);
                want = p == 0 || v > want ? v : want;
            }
            if (b.inplace[i] != want) report(b.err, 6, it, i, b.inplace[i], want);
        }
        sync_group<SCOPE>();

        /* bytes: an odd count through fcollect and broadcast (unaligned ends) */
        long cn = n * 4 - 1 > 0 ? n * 4 - 1 : 1;
        for (long i = tid; i < cn; i += gs) b.csrc[i] = (char)(me * 37 + it * 11 + i);
        READY(SCOPE);
        CALL(SCOPE, nvshmem_char_fcollect(NVSHMEM_TEAM_WORLD, b.cdst, b.csrc, cn),
             nvshmemx_char_fcollect_warp(NVSHMEM_TEAM_WORLD, b.cdst, b.csrc, cn),
             nvshmemx_char_fcollect_block(NVSHMEM_TEAM_WORLD, b.cdst, b.csrc, cn));
        for (long i = tid; i < cn * np; i += gs) {
            char want = (char)((i / cn) * 37 + it * 11 + i % cn);
            if (b.cdst[i] != want) report(b.err, 7, it, i, b.cdst[i], want);
        }
        sync_group<SCOPE>();

        /* float prod on a second team (interleaved with the world's calls) */
        for (long i = tid; i < n; i += gs) b.fsrc[i] = 1.0f + 0.25f * (float)((me + it + i) % 3);
        sync_group<SCOPE>();
        CALL(SCOPE, nvshmem_float_prod_reduce(team2, b.fdst, b.fsrc, n),
             nvshmemx_float_prod_reduce_warp(team2, b.fdst, b.fsrc, n),
             nvshmemx_float_prod_reduce_block(team2, b.fdst, b.fsrc, n));
        for (long i = tid; i < n; i += gs) {
            float want = 1.0f;
            for (int p = 0; p < np; p++) want *= 1.0f + 0.25f * (float)((p + it + i) % 3);
            if (b.fdst[i] != want) report(b.err, 8, it, i, (long long)(b.fdst[i] * 1000), (long long)(want * 1000));
        }
        sync_group<SCOPE>();
    }
}

static const char *what_name[] = {"", "fcollect", "alltoall", "broadcast", "sum reduce", "in-place sum reduce",
                                  "in-place max reducescatter", "char fcollect", "float prod reduce (team)"};

int main(void) {
    nvshmem_init();
    test_pe = nvshmem_my_pe();
    int np = nvshmem_n_pes();
    Bufs b;
    b.src = (int *)nvshmem_malloc(sizeof(int) * MAXN * np);
    b.dst = (int *)nvshmem_malloc(sizeof(int) * MAXN * np);
    b.inplace = (int *)nvshmem_malloc(sizeof(int) * MAXN * np);
    b.csrc = (char *)nvshmem_malloc(4 * MAXN);
    b.cdst = (char *)nvshmem_malloc(4 * MAXN * np);
    b.fsrc = (float *)nvshmem_malloc(sizeof(float) * MAXN);
    b.fdst = (float *)nvshmem_malloc(sizeof(float) * MAXN);
    CHECK(b.src && b.dst && b.inplace && b.csrc && b.cdst && b.fsrc && b.fdst, "nvshmem_malloc");
    CUDA_CHECK(cudaMalloc(&b.err, 8 * sizeof(int)));
    /* A second team with the world's members (its own slots and call numbers). */
    nvshmem_team_t team2;
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 1, np, NULL, 0, &team2), 0);
    CHECK(team2 != NVSHMEM_TEAM_INVALID, "split");

    /* int32 elements per member: at and around the low-latency limits (a thread: 16 B, 32 B for
     * broadcasts; 2 KiB), and large. */
    const long sizes[] = {1, 2, 7, 8, 64, 255, 511, 512, 513, 1000, 4099, MAXN};
    int checked = 0;
    const bool verbose = getenv("COLL_SIZES_VERBOSE") != NULL;
    for (int scope = 0; scope < 3; scope++) {
        for (long n : sizes) {
            if (scope == 0 && n > 4099) continue; /* one thread: keep the run short */
            CUDA_CHECK(cudaMemset(b.err, 0, 8 * sizeof(int)));
            ready();
            if (verbose) printf("PE %d: scope %d, %ld elements\n", test_pe, scope, n), fflush(stdout);
            if (scope == 0) sizes_kernel<0><<<1, 32>>>(b, n, team2);
            else if (scope == 1) sizes_kernel<1><<<1, 64>>>(b, n, team2);
            else sizes_kernel<2><<<1, 256>>>(b, n, team2);
            step_done();
            int err[8];
            CUDA_CHECK(cudaMemcpy(err, b.err, sizeof(err), cudaMemcpyDeviceToHost));
            if (err[0])
                FAIL("scope %d, %ld elements per member: %d wrong elements; first: %s, call %d, element %d: got %d, want %d",
                     scope, n, err[0], what_name[err[1]], err[2], err[3], err[4], err[5]);
            checked++;
        }
    }
    nvshmem_team_destroy(team2);
    printf("coll_sizes: %d (scope, size) rounds of %d calls of 8 collectives checked on PE %d\n", checked, ITERS, test_pe);
    nvshmem_free(b.src);
    nvshmem_free(b.dst);
    nvshmem_free(b.inplace);
    nvshmem_free(b.csrc);
    nvshmem_free(b.cdst);
    nvshmem_free(b.fsrc);
    nvshmem_free(b.fdst);
    cudaFree(b.err);
    nvshmem_finalize();
    printf("PASS coll_sizes (%d PEs)\n", np);
    return 0;
}
