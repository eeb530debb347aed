/* rshmem-cuda-test: pes=2
 * Many blocks each put their slice of a large array to the right neighbour with
 * nvshmemx_float_put_block (blocking) and nvshmemx_float_put_nbi_block + nvshmem_quiet, then
 * a device-wide step end (kernel boundary) and nvshmem_barrier_all; every element is checked.
 * Grids of 64, 8 and 3 blocks: up to RSHMEM_PUT_DEEP_CTAS blocks a block put keeps four loads in
 * flight per thread (rshmem_rma.cuh), beyond it one; 3 blocks give slices of odd lengths at
 * unaligned starts (the narrow copies' heads and tails).
 * Also warp-scope puts into a strided layout, and a get_block back of the neighbour's data. */
#include <vector>
#include "cuda_test.h"

__global__ void put_slices(float *dst, const float *src, size_t n, int peer, int nbi) {
    size_t per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
    if (lo >= hi) return;
    if (nbi) {
        nvshmemx_float_put_nbi_block(dst + lo, src + lo, hi - lo, peer);
        if (threadIdx.x == 0) nvshmem_quiet();
    } else {
        nvshmemx_float_put_block(dst + lo, src + lo, hi - lo, peer);
    }
}

__global__ void put_warps(int *dst, const int *src, int rows, int cols, int peer) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, nwarps = gridDim.x * blockDim.x / 32;
    for (int r = warp; r < rows; r += nwarps) nvshmemx_int_put_warp(dst + (size_t)r * cols, src + (size_t)r * cols, cols, peer);
}

__global__ void get_back(float *dst, const float *src, size_t n, int peer) {
    size_t per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
    if (lo < hi) nvshmemx_float_get_block(dst + lo, src + lo, hi - lo, peer);
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const size_t N = (8 << 20) + 13;
    float *src = (float *)nvshmem_malloc(N * sizeof(float)), *dst = (float *)nvshmem_malloc(N * sizeof(float));
    std::vector<float> h(N);
    const int grids[] = {3, 8, 64};
    for (int grid : grids) {
        for (int nbi = 0; nbi < 2; nbi++) {
            for (size_t i = 0; i < N; i++) h[i] = (float)(me * 3 + nbi + grid) + (float)(i % 4096) * 0.25f;
            CUDA_CHECK(cudaMemcpy(src, h.data(), N * sizeof(float), cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemset(dst, 0, N * sizeof(float)));
            ready(); /* the fill of dst lands before the neighbour's puts */
            put_slices<<<grid, 1024>>>(dst, src, N, right, nbi);
            step_done();
            CUDA_CHECK(cudaMemcpy(h.data(), dst, N * sizeof(float), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < N; i++) {
                float want = (float)(left * 3 + nbi + grid) + (float)(i % 4096) * 0.25f;
                CHECK(h[i] == want, "%s, %d blocks: dst[%zu] = %g, want %g", nbi ? "put_nbi_block" : "put_block", grid, i, h[i],
                      want);
            }
        }
    }
    /* get_block: read the right neighbour's dst (which holds this PE's data from the last put). */
    float *back = (float *)nvshmem_malloc(N * sizeof(float));
    get_back<<<32, 512>>>(back, dst, N, right);
    step_done();
    CUDA_CHECK(cudaMemcpy(h.data(), back, N * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < N; i++) CHECK(h[i] == (float)(me * 3 + 1 + 64) + (float)(i % 4096) * 0.25f, "get_block: back[%zu] = %g", i, h[i]);
    /* Warp-scope rows. */
    const int ROWS = 4096, COLS = 129;
    int *isrc = (int *)nvshmem_malloc(ROWS * COLS * sizeof(int)), *idst = (int *)nvshmem_calloc(ROWS * COLS, sizeof(int));
    std::vector<int> hi(ROWS * COLS);
    for (int i = 0; i < ROWS * COLS; i++) hi[i] = me * 10000000 + i;
    CUDA_CHECK(cudaMemcpy(isrc, hi.data(), hi.size() * sizeof(int), cudaMemcpyHostToDevice));
    ready();
    put_warps<<<16, 256>>>(idst, isrc, ROWS, COLS, right);
    step_done();
    CUDA_CHECK(cudaMemcpy(hi.data(), idst, hi.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < ROWS * COLS; i++) CHECK(hi[i] == left * 10000000 + i, "put_warp: idst[%d] = %d", i, hi[i]);
    nvshmem_free(idst);
    nvshmem_free(isrc);
    nvshmem_free(back);
    nvshmem_free(dst);
    nvshmem_free(src);
    return test_pass("put_block");
}
