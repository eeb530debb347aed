/* rshmem-cuda-test: pes=2
 * NVSHMEM_SYMMETRIC_SIZE is what the program may allocate, as NVSHMEM's collective perftests
 * assume (they set it to exactly what they allocate): for 8 KiB, 512 KiB and 1 MiB the job
 * starts, allocates the whole size in one nvshmem_malloc, then in 4 aligned blocks; each block
 * is written by the neighbour (nvshmem_putmem) and read back. An allocation far beyond the heap
 * returns NULL on every PE (a warning, not the end of the job), and the heap stays usable;
 * nvshmem_align gives absolute alignment. Last, a heap larger than the GPU: an allocation whose
 * backing no GPU can provide returns NULL on every PE together. */
#include "cuda_test.h"

static void put_and_check(char *block, size_t n, int me, int npes) {
    char *host = (char *)malloc(n);
    for (size_t i = 0; i < n; i++) host[i] = (char)(me * 31 + i * 7);
    nvshmem_putmem(block, host, n, (me + 1) % npes);
    nvshmem_barrier_all();
    CUDA_CHECK(cudaMemcpy(host, block, n, cudaMemcpyDeviceToHost));
    int left = (me + npes - 1) % npes;
    for (size_t i = 0; i < n; i++) CHECK(host[i] == (char)(left * 31 + i * 7), "byte %zu of a %zu-byte block", i, n);
    free(host);
    nvshmem_barrier_all();
}

int main(void) {
    static const char *sizes[] = {"8K", "512K", "1M"};
    static const size_t bytes[] = {8 << 10, 512 << 10, 1 << 20};
    unsetenv("RSHMEM_SYMMETRIC_SIZE");
    unsetenv("RSHMEM_ABORT_ON_OOM");
    for (int s = 0; s < 3; s++) {
        setenv("NVSHMEM_SYMMETRIC_SIZE", sizes[s], 1);
        test_init();
        int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
        size_t n = bytes[s];
        char *one = (char *)nvshmem_malloc(n);
        CHECK(one != NULL, "NVSHMEM_SYMMETRIC_SIZE=%s: nvshmem_malloc(%zu) returned NULL", sizes[s], n);
        put_and_check(one, n, me, npes);
        nvshmem_free(one);
        char *four[4];
        for (int i = 0; i < 4; i++) {
            four[i] = (char *)nvshmem_align(512, n / 4);
            CHECK(four[i] != NULL, "NVSHMEM_SYMMETRIC_SIZE=%s: block %d of %zu bytes returned NULL", sizes[s], i, n / 4);
            put_and_check(four[i], n / 4, me, npes);
        }
        for (int i = 0; i < 4; i++) nvshmem_free(four[i]);

        capture_stderr_begin();
        void *huge = nvshmem_malloc((size_t)1 << 40);
        char *text = capture_end();
        CHECK(huge == NULL, "a 1 TiB nvshmem_malloc returned %p, want NULL", huge);
        CHECK(strstr(text, "nvshmem_malloc: cannot allocate 1099511627776 bytes") != NULL, "no warning: %s", text);
        free(text);
        char *aligned = (char *)nvshmem_align(1 << 20, 4096);
        CHECK(aligned != NULL && (uintptr_t)aligned % (1 << 20) == 0, "nvshmem_align(1 MiB) returned %p", (void *)aligned);
        put_and_check(aligned, 4096, me, npes);
        nvshmem_free(aligned);
        nvshmem_finalize();
    }

    /* A heap larger than the GPU: growing it fails on every PE (no physical memory), every PE
     * gets NULL together, and the heap stays usable. */
    setenv("NVSHMEM_SYMMETRIC_SIZE", "1T", 1);
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    capture_stderr_begin();
    void *big = nvshmem_malloc((size_t)768 << 30);
    char *text = capture_end();
    CHECK(big == NULL, "a 768 GiB nvshmem_malloc returned %p, want NULL", big);
    CHECK(strstr(text, "GPU memory for") != NULL && strstr(text, "returning NULL") != NULL, "no warning: %s", text);
    free(text);
    char *after = (char *)nvshmem_malloc(1 << 20);
    CHECK(after != NULL, "nvshmem_malloc(1 MiB) after the failed growth returned NULL");
    put_and_check(after, 1 << 20, me, npes);
    nvshmem_free(after);
    return test_pass("heap_exact");
}
