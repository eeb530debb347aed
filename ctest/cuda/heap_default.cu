/* rshmem-cuda-test: pes=2
 * The default GPU heap holds what NVSHMEM's does. NVSHMEM (CUDA VMM, its default) grows its heap
 * past NVSHMEM_SYMMETRIC_SIZE up to NVSHMEM_MAX_MEMORY_PER_GPU; its ring-reduce example takes
 * 2 x 512 MiB of the default 1 GiB and then callocs its signals, which rshmem refused while it
 * capped the heap at SYMMETRIC_SIZE. Here: that sequence under the default sizes, the calloc'd
 * block zeroed and written by the neighbour's kernel, as is the end of the second buffer; with
 * NVSHMEM_SYMMETRIC_SIZE=8K a 64 MiB allocation; and NVSHMEM_MAX_MEMORY_PER_GPU=1G as the
 * limit: 2 GiB returns NULL with a warning naming the setting, the heap stays usable. */
#include <stdint.h>
#include "cuda_test.h"

/* Each PE tells its right neighbour who it is: one signal word and the last word of `big`. */
__global__ void mark_right(uint64_t *signal, uint64_t *big_last) {
    int me = nvshmem_my_pe(), right = (me + 1) % nvshmem_n_pes();
    nvshmem_uint64_p(signal + threadIdx.x, 1000 + me * 32 + threadIdx.x, right);
    if (threadIdx.x == 0) nvshmem_uint64_p(big_last, 77 + me, right);
    nvshmem_quiet();
}

static void ring_reduce_allocations(void) {
    const size_t half = (size_t)512 << 20;
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), left = (me + npes - 1) % npes;
    char *dst = (char *)nvshmem_malloc(half);
    char *src = (char *)nvshmem_malloc(half);
    CHECK(dst != NULL && src != NULL, "2 x 512 MiB of the default heap: %p %p", (void *)dst, (void *)src);
    uint64_t *signal = (uint64_t *)nvshmem_calloc(32, sizeof(uint64_t));
    CHECK(signal != NULL, "nvshmem_calloc(32, 8) after 2 x 512 MiB returned NULL (the ring-reduce failure)");
    uint64_t host[32];
    CUDA_CHECK(cudaMemcpy(host, signal, sizeof host, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 32; i++) CHECK_EQ(host[i], 0);
    nvshmem_barrier_all();

    uint64_t *big_last = (uint64_t *)(src + half) - 1;
    mark_right<<<1, 32>>>(signal, big_last);
    step_done();
    CUDA_CHECK(cudaMemcpy(host, signal, sizeof host, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 32; i++) CHECK_EQ(host[i], 1000 + left * 32 + i);
    uint64_t last = 0;
    CUDA_CHECK(cudaMemcpy(&last, big_last, sizeof last, cudaMemcpyDeviceToHost));
    CHECK_EQ(last, 77 + left);
    nvshmem_free(signal);
    nvshmem_free(src);
    nvshmem_free(dst);
}

int main(void) {
    unsetenv("RSHMEM_SYMMETRIC_SIZE");
    unsetenv("NVSHMEM_SYMMETRIC_SIZE");
    unsetenv("RSHMEM_MAX_MEMORY_PER_GPU");
    unsetenv("NVSHMEM_MAX_MEMORY_PER_GPU");
    unsetenv("RSHMEM_ABORT_ON_OOM");
    test_init();
    ring_reduce_allocations();
    nvshmem_finalize();

    setenv("NVSHMEM_SYMMETRIC_SIZE", "8K", 1);
    test_init();
    char *past = (char *)nvshmem_malloc((size_t)64 << 20);
    CHECK(past != NULL, "64 MiB with NVSHMEM_SYMMETRIC_SIZE=8K returned NULL (NVSHMEM grows its heap past it)");
    CUDA_CHECK(cudaMemset(past, 0x5a, (size_t)64 << 20));
    ready();
    unsigned char peer_byte = 0;
    nvshmem_getmem(&peer_byte, past + ((size_t)64 << 20) - 1, 1, (nvshmem_my_pe() + 1) % nvshmem_n_pes());
    CHECK_EQ(peer_byte, 0x5a);
    nvshmem_free(past);
    nvshmem_finalize();

    unsetenv("NVSHMEM_SYMMETRIC_SIZE");
    setenv("NVSHMEM_MAX_MEMORY_PER_GPU", "1G", 1);
    test_init();
    capture_stderr_begin();
    void *over = nvshmem_malloc((size_t)2 << 30);
    char *text = capture_end();
    CHECK(over == NULL, "2 GiB with NVSHMEM_MAX_MEMORY_PER_GPU=1G returned %p, want NULL", over);
    CHECK(strstr(text, "nvshmem_malloc: cannot allocate 2147483648 bytes") != NULL && strstr(text, "NVSHMEM_MAX_MEMORY_PER_GPU") != NULL,
          "no warning naming the setting: %s", text);
    free(text);
    void *after = nvshmem_malloc((size_t)256 << 20);
    CHECK(after != NULL, "256 MiB after the refused 2 GiB returned NULL");
    nvshmem_free(after);
    return test_pass("heap_default");
}
