/* rshmem-cuda-test: pes=2
 * Host-initiated non-blocking RMA (issue 20: host putmem bandwidth): nvshmem_putmem_nbi and
 * getmem_nbi queue their copies and complete at quiet, so back-to-back calls keep the copy
 * engines busy. Checks the data of many queued puts and gets (device and host buffers, the
 * last put to a place wins), that free and barrier complete queued puts, and that a stream of
 * 1 MiB nbi puts plus one quiet reaches at least 0.8x the same copies made with
 * cudaMemcpyAsync to the peer's address (blocking calls reached ~0.5x). */
#include <string.h>
#include <time.h>
#include "cuda_test.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__global__ void fill_kernel(unsigned *p, size_t n, unsigned tag) {
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) p[k] = tag ^ (unsigned)k;
}

__global__ void count_bad_kernel(const unsigned *p, size_t n, unsigned tag, unsigned long long *bad) {
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x)
        if (p[k] != (tag ^ (unsigned)k)) atomicAdd(bad, 1ull);
}

static unsigned long long *bad_d;

/* Words of `p` (n of them) that are not tag ^ index. */
static unsigned long long count_bad(const unsigned *p, size_t n, unsigned tag) {
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemset(bad_d, 0, sizeof bad));
    count_bad_kernel<<<132, 256>>>(p, n, tag, bad_d);
    CUDA_CHECK(cudaMemcpy(&bad, bad_d, sizeof bad, cudaMemcpyDeviceToHost));
    return bad;
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    const size_t chunk = 1 << 20, words = chunk / 4, slots = 16;
    unsigned *dst = (unsigned *)nvshmem_malloc(slots * chunk);
    unsigned *src = (unsigned *)nvshmem_malloc(slots * chunk);
    CHECK(dst && src, "nvshmem_malloc");
    CUDA_CHECK(cudaMalloc(&bad_d, sizeof *bad_d));
    for (size_t s = 0; s < slots; s++) fill_kernel<<<132, 256>>>(src + s * words, words, 0x1000u * (me + 1) + (unsigned)s);
    ready();

    /* Many queued puts to distinct slots, then two to slot 0 (the later one must win). */
    for (size_t s = 0; s < slots; s++) nvshmem_putmem_nbi(dst + s * words, src + s * words, chunk, right);
    nvshmem_putmem_nbi(dst, src + 1 * words, chunk, right);
    nvshmem_putmem_nbi(dst, src + 2 * words, chunk, right);
    nvshmem_quiet();
    nvshmem_barrier_all();
    int left = (me + n - 1) % n;
    CHECK_EQ(count_bad(dst, words, 0x1000u * (left + 1) + 2), 0);
    for (size_t s = 1; s < slots; s++) CHECK_EQ(count_bad(dst + s * words, words, 0x1000u * (left + 1) + (unsigned)s), 0);

    /* Queued gets into host memory are there after quiet. */
    unsigned *host = (unsigned *)malloc(2 * chunk);
    CHECK(host, "malloc");
    memset(host, 0, 2 * chunk);
    nvshmem_getmem_nbi(host, src + 3 * words, chunk, right);
    nvshmem_uint32_get_nbi(host + words, src + 4 * words, words, right);
    nvshmem_quiet();
    for (size_t k = 0; k < words; k++) {
        CHECK(host[k] == ((0x1000u * (right + 1) + 3) ^ (unsigned)k), "getmem_nbi word %zu: %#x", k, host[k]);
        CHECK(host[words + k] == ((0x1000u * (right + 1) + 4) ^ (unsigned)k), "uint32_get_nbi word %zu: %#x", k, host[words + k]);
    }
    nvshmem_barrier_all();

    /* A queued put is complete at the barrier, without an explicit quiet. */
    nvshmem_putmem_nbi(dst + 5 * words, src + 7 * words, chunk, right);
    nvshmem_barrier_all();
    CHECK_EQ(count_bad(dst + 5 * words, words, 0x1000u * (left + 1) + 7), 0);
    nvshmem_barrier_all();

    /* Bandwidth: 1 MiB nbi puts + quiet against the same copies with cudaMemcpyAsync. */
    if (me == 0) {
        void *peer = nvshmem_ptr(dst, right);
        CHECK(peer != NULL, "nvshmem_ptr to PE %d", right);
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        const int iters = 200;
        double best_lib = 1e9, best_raw = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            double t = now_s();
            for (int i = 0; i < iters; i++) CUDA_CHECK(cudaMemcpyAsync((char *)peer + (i % slots) * chunk, src + (i % slots) * words, chunk, cudaMemcpyDefault, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
            double raw = now_s() - t;
            t = now_s();
            for (int i = 0; i < iters; i++) nvshmem_putmem_nbi(dst + (i % slots) * words, src + (i % slots) * words, chunk, right);
            nvshmem_quiet();
            double lib = now_s() - t;
            if (raw < best_raw) best_raw = raw;
            if (lib < best_lib) best_lib = lib;
        }
        double gbs_raw = iters * (double)chunk / best_raw / 1e9, gbs_lib = iters * (double)chunk / best_lib / 1e9;
        printf("host_nbi: 1 MiB putmem_nbi %.1f GB/s, cudaMemcpyAsync peer %.1f GB/s (%.2fx)\n", gbs_lib, gbs_raw, gbs_lib / gbs_raw);
        CHECK(gbs_lib >= 0.8 * gbs_raw, "nbi puts reach %.1f GB/s, under 0.8x of cudaMemcpyAsync's %.1f GB/s", gbs_lib, gbs_raw);
        CUDA_CHECK(cudaStreamDestroy(s));
    }
    nvshmem_barrier_all();

    /* free completes queued puts into the block first (they target the peer's copy of it). */
    nvshmem_putmem_nbi(dst + 6 * words, src + 6 * words, chunk, right);
    nvshmem_free(dst);
    nvshmem_free(src);
    free(host);
    CUDA_CHECK(cudaFree(bad_d));
    printf("PE %d: host_nbi passed\n", me);
    nvshmem_finalize();
    return 0;
}
