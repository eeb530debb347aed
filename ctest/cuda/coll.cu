/* rshmem-cuda-test: pes=2
 * Device collectives at thread, warp and block scope: fcollect, alltoall, broadcast, reduce
 * (sum/max/prod/xor over int, long long, uint64, float, half, bfloat16; in place across several
 * scratch chunks) and reducescatter. Every result is checked element by element on the host. */
#include "cuda_test.h"

#define N 4000
#define BIG 40000 /* in-place int reduction larger than the scratch buffer */

struct Bufs {
    int *isrc, *idst, *ibig;
    long long *lsrc, *ldst;
    double *dsrc, *ddst;
    float *fsrc, *fdst;
    uint64_t *usrc, *udst;
    half *hsrc, *hdst;
    __nv_bfloat16 *bsrc, *bdst;
    /* The broadcast's root: its member index in the team broadcast over (TEAM_NODE at thread
     * scope: the PEs of this host, which across hosts is not the world), and its world PE. */
    int bcast_root, bcast_src;
};

__global__ void coll_kernel(Bufs b, int scope, int root) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        b.isrc[i] = me * 1000 + i;
        for (int j = 0; j < n; j++) b.lsrc[j * N + i] = me * 1000000LL + j * 10000LL + i;
        b.dsrc[i] = me == b.bcast_src ? 0.5 * i : -1.0;
        b.fsrc[i] = 1.0f + 0.5f * me;
        b.usrc[i] = (1ull << (me % 64)) | ((uint64_t)i << 32);
        b.hsrc[i] = __float2half((float)(me + 1));
        b.bsrc[i] = __float2bfloat16((float)(me * 3 + (i % 7)));
    }
    for (int i = threadIdx.x; i < BIG; i += blockDim.x) b.ibig[i] = me + i;
    __syncthreads();
    if (scope == 0) {
        if (threadIdx.x == 0) {
            nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, b.idst, b.isrc, N);
            nvshmem_longlong_alltoall(NVSHMEM_TEAM_WORLD, b.ldst, b.lsrc, N);
            nvshmem_double_broadcast(NVSHMEMX_TEAM_NODE, b.ddst, b.dsrc, N, b.bcast_root);
            nvshmem_float_prod_reduce(NVSHMEM_TEAM_WORLD, b.fdst, b.fsrc, N);
            nvshmem_uint64_xor_reduce(NVSHMEM_TEAM_WORLD, b.udst, b.usrc, N);
            nvshmem_half_sum_reduce(NVSHMEM_TEAM_WORLD, b.hdst, b.hsrc, N);
            nvshmem_bfloat16_max_reduce(NVSHMEM_TEAM_WORLD, b.bdst, b.bsrc, N);
            nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, b.ibig, b.ibig, BIG);
        }
    } else if (scope == 1) {
        if (threadIdx.x < 32) {
            nvshmemx_int_fcollect_warp(NVSHMEM_TEAM_WORLD, b.idst, b.isrc, N);
            nvshmemx_longlong_alltoall_warp(NVSHMEM_TEAM_WORLD, b.ldst, b.lsrc, N);
            nvshmemx_double_broadcast_warp(NVSHMEM_TEAM_WORLD, b.ddst, b.dsrc, N, root);
            nvshmemx_float_prod_reduce_warp(NVSHMEM_TEAM_WORLD, b.fdst, b.fsrc, N);
            nvshmemx_uint64_xor_reduce_warp(NVSHMEM_TEAM_WORLD, b.udst, b.usrc, N);
            nvshmemx_half_sum_reduce_warp(NVSHMEM_TEAM_WORLD, b.hdst, b.hsrc, N);
            nvshmemx_bfloat16_max_reduce_warp(NVSHMEM_TEAM_WORLD, b.bdst, b.bsrc, N);
            nvshmemx_int_sum_reduce_warp(NVSHMEM_TEAM_WORLD, b.ibig, b.ibig, BIG);
        }
    } else {
        nvshmemx_int_fcollect_block(NVSHMEM_TEAM_WORLD, b.idst, b.isrc, N);
        nvshmemx_longlong_alltoall_block(NVSHMEM_TEAM_WORLD, b.ldst, b.lsrc, N);
        nvshmemx_double_broadcast_block(NVSHMEM_TEAM_WORLD, b.ddst, b.dsrc, N, root);
        nvshmemx_float_prod_reduce_block(NVSHMEM_TEAM_WORLD, b.fdst, b.fsrc, N);
        nvshmemx_uint64_xor_reduce_block(NVSHMEM_TEAM_WORLD, b.udst, b.usrc, N);
        nvshmemx_half_sum_reduce_block(NVSHMEM_TEAM_WORLD, b.hdst, b.hsrc, N);
        nvshmemx_bfloat16_max_reduce_block(NVSHMEM_TEAM_WORLD, b.bdst, b.bsrc, N);
        nvshmemx_int_sum_reduce_block(NVSHMEM_TEAM_WORLD, b.ibig, b.ibig, BIG);
    }
}

/* reducescatter: PE me gets sum over PEs of source[me*N + i]. */
__global__ void scatter_kernel(int *dst, int *src, int scope) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    for (int i = threadIdx.x; i < n * N; i += blockDim.x) src[i] = me * 7 + i;
    __syncthreads();
    if (scope == 0 && threadIdx.x == 0) nvshmem_int_sum_reducescatter(NVSHMEM_TEAM_WORLD, dst, src, N);
    if (scope == 1 && threadIdx.x < 32) nvshmemx_int_sum_reducescatter_warp(NVSHMEM_TEAM_WORLD, dst, src, N);
    if (scope == 2) nvshmemx_int_max_reducescatter_block(NVSHMEM_TEAM_WORLD, dst, src, N);
}

template <typename T>
static T *sym(size_t count) {
    T *p = (T *)nvshmem_calloc(count, sizeof(T));
    CHECK(p != NULL, "nvshmem_calloc");
    return p;
}
template <typename T>
static T *host(const T *d, size_t count) {
    T *h = (T *)malloc(count * sizeof(T));
    CUDA_CHECK(cudaMemcpy(h, d, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    Bufs b;
    b.isrc = sym<int>(N); b.idst = sym<int>(N * n); b.ibig = sym<int>(BIG);
    b.lsrc = sym<long long>(N * n); b.ldst = sym<long long>(N * n);
    b.dsrc = sym<double>(N); b.ddst = sym<double>(N);
    b.fsrc = sym<float>(N); b.fdst = sym<float>(N);
    b.usrc = sym<uint64_t>(N); b.udst = sym<uint64_t>(N);
    b.hsrc = sym<half>(N); b.hdst = sym<half>(N);
    b.bsrc = sym<__nv_bfloat16>(N); b.bdst = sym<__nv_bfloat16>(N);
    int *rs_src = sym<int>(N * n), *rs_dst = sym<int>(N);
    for (int scope = 0; scope < 3; scope++) {
        int root = (scope + 1) % n;
        /* Thread scope broadcasts over TEAM_NODE: the root is a member index there. */
        int node_n = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE);
        b.bcast_root = scope == 0 ? root % node_n : root;
        b.bcast_src = scope == 0 ? nvshmem_team_translate_pe(NVSHMEMX_TEAM_NODE, b.bcast_root, NVSHMEM_TEAM_WORLD) : root;
        if (scope == 2) {
            /* The block-scope round goes through nvshmemx_collective_launch. */
            int grid = 0;
            CHECK_EQ(nvshmemx_collective_launch_query_gridsize((const void *)coll_kernel, dim3(128), NULL, 0, &grid), 0);
            CHECK(grid >= 1, "query_gridsize gave %d", grid);
            void *args[] = {&b, &scope, &root};
            CHECK_EQ(nvshmemx_collective_launch((const void *)coll_kernel, dim3(1), dim3(128), args, 0, 0), 0);
            CHECK(nvshmemx_collective_launch((const void *)coll_kernel, dim3(grid + 1), dim3(128), args, 0, 0) != 0,
                  "an oversized collective launch must fail");
        } else {
            coll_kernel<<<1, 128>>>(b, scope, root);
        }
        scatter_kernel<<<1, 128>>>(rs_dst, rs_src, scope);
        step_done();
        int *id = host(b.idst, N * n), *ib = host(b.ibig, BIG), *rs = host(rs_dst, N);
        long long *ld = host(b.ldst, N * n);
        double *dd = host(b.ddst, N);
        float *fd = host(b.fdst, N);
        uint64_t *ud = host(b.udst, N);
        half *hd = host(b.hdst, N);
        __nv_bfloat16 *bd = host(b.bdst, N);
        float prod = 1.0f;
        uint64_t bits = 0;
        float hsum = 0;
        for (int pe = 0; pe < n; pe++) {
            prod *= 1.0f + 0.5f * pe;
            bits ^= 1ull << (pe % 64);
            hsum += pe + 1;
        }
        for (int i = 0; i < N; i++) {
            for (int pe = 0; pe < n; pe++) {
                CHECK(id[pe * N + i] == pe * 1000 + i, "scope %d fcollect [%d][%d] = %d", scope, pe, i, id[pe * N + i]);
                CHECK(ld[pe * N + i] == pe * 1000000LL + me * 10000LL + i, "scope %d alltoall [%d][%d]", scope, pe, i);
            }
            CHECK(dd[i] == 0.5 * i, "scope %d broadcast %d: %f", scope, i, dd[i]);
            CHECK(fd[i] == prod, "scope %d prod %d: %f", scope, i, fd[i]);
            uint64_t want_u = bits ^ (n % 2 ? (uint64_t)i << 32 : 0);
            CHECK(ud[i] == want_u, "scope %d xor %d: %llx", scope, i, (unsigned long long)ud[i]);
            CHECK(__half2float(hd[i]) == hsum, "scope %d half sum %d: %f", scope, i, __half2float(hd[i]));
            float bmax = (float)((n - 1) * 3 + (i % 7));
            CHECK(__bfloat162float(bd[i]) == bmax, "scope %d bf16 max %d: %f", scope, i, __bfloat162float(bd[i]));
            long long want_rs = 0;
            for (int pe = 0; pe < n; pe++) {
                long long v = pe * 7 + me * N + i;
                want_rs = scope == 2 ? (pe == 0 || v > want_rs ? v : want_rs) : want_rs + v;
            }
            CHECK(rs[i] == want_rs, "scope %d reducescatter %d: %d, want %lld", scope, i, rs[i], want_rs);
        }
        for (int i = 0; i < BIG; i++) {
            long long want = 0;
            for (int pe = 0; pe < n; pe++) want += pe + i;
            CHECK(ib[i] == want, "scope %d in-place sum %d: %d, want %lld", scope, i, ib[i], want);
        }
        free(id); free(ib); free(rs); free(ld); free(dd); free(fd); free(ud); free(hd); free(bd);
    }
    return test_pass("coll");
}
