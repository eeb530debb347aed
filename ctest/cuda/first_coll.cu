/* rshmem-cuda-test: pes=2
 * The job's first collective is a small on-stream broadcast, its second a large one, its third
 * a reduction: each loads library kernel modules on the spot (the small one also loads the
 * general module when that is machine code). Loading once deadlocked on the library's own
 * lock when the first collective was a small one; this test keeps that order, and checks the
 * data each call delivers. */
#include "cuda_test.h"

static void check_bytes(const char *what, const unsigned char *dev, size_t n, unsigned char (*want)(size_t)) {
    unsigned char *h = (unsigned char *)malloc(n);
    CUDA_CHECK(cudaMemcpy(h, dev, n, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) CHECK(h[i] == want(i), "%s: byte %zu is %d, want %d", what, i, h[i], want(i));
    free(h);
}

static unsigned char pattern(size_t i) { return (unsigned char)(7 + 13 * i); }

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const size_t small = 64, large = 1 << 16;
    unsigned char *src = (unsigned char *)nvshmem_malloc(large);
    unsigned char *dst = (unsigned char *)nvshmem_malloc(large);
    int *isrc = (int *)nvshmem_malloc(16 * sizeof(int)), *idst = (int *)nvshmem_malloc(16 * sizeof(int));
    CHECK(src && dst && isrc && idst, "nvshmem_malloc failed");
    unsigned char *h = (unsigned char *)malloc(large);
    for (size_t i = 0; i < large; i++) h[i] = me == 0 ? pattern(i) : 0;
    CUDA_CHECK(cudaMemcpy(src, h, large, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dst, 0, large));
    int hi[16];
    for (int i = 0; i < 16; i++) hi[i] = (me + 1) * (i + 1);
    CUDA_CHECK(cudaMemcpy(isrc, hi, sizeof hi, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    nvshmem_barrier_all(); /* host barrier: no library kernel yet */

    CHECK_EQ(nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, dst, src, small, 0, s), 0);
    CUDA_CHECK(cudaStreamSynchronize(s));
    check_bytes("first (small) broadcast", dst, small, pattern);

    CHECK_EQ(nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, dst, src, large, 0, s), 0);
    CUDA_CHECK(cudaStreamSynchronize(s));
    check_bytes("second (large) broadcast", dst, large, pattern);

    CHECK_EQ(nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, idst, isrc, 16, s), 0);
    CUDA_CHECK(cudaStreamSynchronize(s));
    int got[16];
    CUDA_CHECK(cudaMemcpy(got, idst, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; i++) CHECK_EQ(got[i], npes * (npes + 1) / 2 * (i + 1));

    nvshmem_barrier_all();
    free(h);
    CUDA_CHECK(cudaStreamDestroy(s));
    nvshmem_free(idst);
    nvshmem_free(isrc);
    nvshmem_free(dst);
    nvshmem_free(src);
    return test_pass("first_coll");
}
