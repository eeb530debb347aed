/* rshmem-cuda-test: pes=2
 * A device wait that lasts 10 s says so, naming the PE it waits for, and still completes when
 * that PE arrives: PE 1 reaches a device barrier, then a small alltoall, 11 s after PE 0. PE 0's
 * kernels must print the reports (the barrier names PE 1; the collective names PE 1 and both
 * PEs' counts of the team's small collectives) and every result must still be right. */
#include "cuda_test.h"

#define N 4

__global__ void barrier_kernel(void) { nvshmem_barrier_all(); }
__global__ void alltoall_kernel(int *dst, const int *src) { nvshmem_int32_alltoall(NVSHMEM_TEAM_WORLD, dst, src, N); }

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), np = nvshmem_n_pes();
    int *src = (int *)nvshmem_malloc(N * np * sizeof(int)), *dst = (int *)nvshmem_malloc(N * np * sizeof(int));
    int host[64];
    CHECK(N * np <= 64, "too many PEs for this test");
    for (int i = 0; i < N * np; i++) host[i] = me * 1000 + i;
    CUDA_CHECK(cudaMemcpy(src, host, N * np * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dst, 0xff, N * np * sizeof(int)));
    ready();

    /* The barrier: PE 0 waits for PE 1. */
    if (me == 0) capture_begin();
    else sleep(11);
    barrier_kernel<<<1, 1>>>();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (me == 0) {
        char *said = capture_end();
        CHECK(strstr(said, "device barrier: still waiting for PE 1 after 10 s"), "no stall report from the barrier; printed: \"%s\"", said);
        free(said);
    }
    nvshmem_barrier_all();

    /* A small alltoall: PE 0 waits for PE 1's data. */
    if (me == 0) capture_begin();
    else sleep(11);
    alltoall_kernel<<<1, 1>>>(dst, src);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (me == 0) {
        char *said = capture_end();
        CHECK(strstr(said, "device collective: still waiting after 10 s for PE 1's data"), "no stall report from the alltoall; printed: \"%s\"", said);
        CHECK(strstr(said, "this PE has started 1 of them, PE 1"), "the report does not give the counts; printed: \"%s\"", said);
        free(said);
    }
    CUDA_CHECK(cudaMemcpy(host, dst, N * np * sizeof(int), cudaMemcpyDeviceToHost));
    for (int p = 0; p < np; p++)
        for (int i = 0; i < N; i++) CHECK_EQ(host[p * N + i], p * 1000 + me * N + i);
    return test_pass("stall_report");
}
