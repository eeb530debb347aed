/* IBGDA and nvshmemx_buffer_register (built with -DRSHMEM_IBGDA_ROUTE; run with
 * NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model, 2 PEs: ctest/ibgda/run_gpu.sh).
 * A device put from, or get into, ordinary cudaMalloc memory cannot name it to the NIC, so its
 * bytes travel inline (192 per WQE) or through the landing slots. Registered, the same buffer is
 * named in one RDMA WRITE or READ. Checked by the data that arrives and by the WQE blocks this PE
 * reserved: hundreds before registering, a handful after, hundreds again after unregistering;
 * and the device's table of registered buffers lists exactly the live ones. */
#include <string.h>
#include <vector>
#include "ibgda_test.h"

static const size_t N = 64 << 10;

__global__ void put_thread(char *dest, const char *src, size_t n, int pe) { nvshmem_putmem(dest, src, n, pe); }
__global__ void put_block(char *dest, const char *src, size_t n, int pe) { nvshmemx_putmem_block(dest, src, n, pe); }
__global__ void get_thread(char *dest, const char *src, size_t n, int pe) { nvshmem_getmem(dest, src, n, pe); }

/* Live entries of this PE's table of registered buffers. */
static uint32_t table_count(void) {
    rshmem_ibgda_state st = ibgda_state(NULL);
    CHECK(st.regs != 0, "the IBGDA state has no registration table");
    rshmem_ibgda_regs t;
    CUDA_CHECK(cudaMemcpy(&t, (const void *)(uintptr_t)st.regs, sizeof t, cudaMemcpyDeviceToHost));
    return t.count;
}

/* Runs one kernel step and returns the WQE blocks it reserved on this PE. */
template <typename K>
static uint64_t blocks_of(K kernel, int threads, char *dest, const char *src, int pe) {
    uint64_t before = ibgda_blocks();
    kernel<<<1, threads>>>(dest, src, N, pe);
    step_done();
    return ibgda_blocks() - before;
}

/* The N bytes of symmetric `sym` here (written by the left PE) equal the left PE's pattern. */
static void expect_from(const char *what, const char *sym, int from, int salt) {
    std::vector<char> h(N);
    CUDA_CHECK(cudaMemcpy(h.data(), sym, N, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < N; i++)
        if (h[i] != (char)(i * 13 + from + salt)) FAIL("%s: byte %zu is %d, want %d", what, i, h[i], (char)(i * 13 + from + salt));
}

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    char *sym = (char *)nvshmem_calloc(N, 1), *local = nullptr;
    CHECK(sym != nullptr, "nvshmem_calloc failed");
    CUDA_CHECK(cudaMalloc(&local, 2 * N));
    std::vector<char> pattern(N);
    auto fill = [&](int salt) {
        for (size_t i = 0; i < N; i++) pattern[i] = (char)(i * 13 + me + salt);
        CUDA_CHECK(cudaMemcpy(local, pattern.data(), N, cudaMemcpyHostToDevice));
        ready();
    };
    CHECK_EQ(table_count(), 0);

    fill(1);
    const uint64_t inline_blocks = blocks_of(put_thread, 1, sym, local, right);
    expect_from("put from an unregistered buffer", sym, left, 1);
    CHECK(inline_blocks >= N / 192, "unregistered: %llu WQE blocks, expected inline chunks", (unsigned long long)inline_blocks);

    CHECK_EQ(nvshmemx_buffer_register(local, 2 * N), 0);
    CHECK_EQ(table_count(), 1);
    fill(2);
    uint64_t b = blocks_of(put_thread, 1, sym, local, right);
    expect_from("put from a registered buffer", sym, left, 2);
    CHECK(b <= 4, "registered: %llu WQE blocks for one put (inline: %llu)", (unsigned long long)b, (unsigned long long)inline_blocks);
    fill(3);
    b = blocks_of(put_block, 256, sym, local, right);
    expect_from("block put from a registered buffer", sym, left, 3);
    CHECK(b <= 4 * 256, "registered block put: %llu WQE blocks", (unsigned long long)b);
    /* A get into the registered buffer's second half: the right PE's sym holds my pattern 3. */
    b = blocks_of(get_thread, 1, local + N, sym, right);
    std::vector<char> got(N);
    CUDA_CHECK(cudaMemcpy(got.data(), local + N, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(got.data(), pattern.data(), N) == 0, "get into a registered buffer: wrong bytes");
    CHECK(b <= 4, "registered get: %llu WQE blocks", (unsigned long long)b);

    CHECK_EQ(nvshmemx_buffer_unregister(local), 0);
    CHECK_EQ(table_count(), 0);
    fill(4);
    b = blocks_of(put_thread, 1, sym, local, right);
    expect_from("put after unregistering", sym, left, 4);
    CHECK(b >= N / 192, "after unregister: %llu WQE blocks, expected inline chunks again", (unsigned long long)b);

    nvshmem_barrier_all();
    CUDA_CHECK(cudaFree(local));
    nvshmem_free(sym);
    if (me == 0)
        printf("PASS gpu_register (put of %zu bytes: %llu WQE blocks inline, a few registered)\n", N,
               (unsigned long long)inline_blocks);
    nvshmem_finalize();
    return 0;
}
