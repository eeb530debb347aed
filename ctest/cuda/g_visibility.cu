/* rshmem-cuda-test: pes=2
 * nvshmem_g is a weak load (it may be served by the L1), as NVSHMEM's contract allows: what a
 * PE stored before a barrier the reader has passed must still be what g returns, even when the
 * reader cached the old value just before. Each round: g the neighbour's word (the old value,
 * now in the reader's cache), barrier, the neighbour stores the next value, barrier, g again:
 * it must see the new value. Device barriers (thread, warp and block scope) and the
 * on-stream barrier between two kernels. */
#include <vector>
#include "cuda_test.h"

constexpr int kRounds = 2000;

template <int SCOPE>
__device__ void barrier() {
    if (SCOPE == 0) nvshmem_barrier_all();
    else if (SCOPE == 1) nvshmemx_barrier_all_warp();
    else nvshmemx_barrier_all_block();
}

/* Thread 0 of the group reads and writes; the whole group takes part in the barriers. */
template <int SCOPE>
__global__ void rounds(int *x, int *stale, int peer) {
    int bad = 0;
    for (int i = 1; i <= kRounds; i++) {
        if (threadIdx.x == 0 && nvshmem_int_g(x, peer) != i - 1) bad++;
        barrier<SCOPE>();
        if (threadIdx.x == 0) *x = i;
        barrier<SCOPE>();
        if (threadIdx.x == 0 && nvshmem_int_g(x, peer) != i) bad++;
    }
    if (threadIdx.x == 0) *stale = bad;
}

__global__ void read(int *x, int *seen, int peer) { *seen = nvshmem_int_g(x, peer); }
__global__ void write(int *x, int value) { *x = value; }

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), peer = (me + 1) % npes;
    int *x = (int *)nvshmem_calloc(1, sizeof(int)), *stale, *seen;
    CUDA_CHECK(cudaMalloc(&stale, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&seen, 2 * sizeof(int)));
    const int threads[3] = {1, 32, 256};
    for (int scope = 0; scope < 3; scope++) {
        CUDA_CHECK(cudaMemset(x, 0, sizeof(int)));
        ready();
        if (scope == 0) rounds<0><<<1, threads[scope]>>>(x, stale, peer);
        if (scope == 1) rounds<1><<<1, threads[scope]>>>(x, stale, peer);
        if (scope == 2) rounds<2><<<1, threads[scope]>>>(x, stale, peer);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        int bad = -1;
        CUDA_CHECK(cudaMemcpy(&bad, stale, sizeof(int), cudaMemcpyDeviceToHost));
        if (bad != 0) FAIL("scope %d: %d of %d g calls after a barrier returned an old value", scope, bad, 2 * kRounds);
        nvshmem_barrier_all();
    }
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    CUDA_CHECK(cudaMemset(x, 0, sizeof(int)));
    ready();
    for (int i = 1; i <= 200; i++) {
        read<<<1, 1, 0, s>>>(x, seen, peer); /* the old value, now cached */
        nvshmemx_barrier_all_on_stream(s);
        write<<<1, 1, 0, s>>>(x, i);
        nvshmemx_barrier_all_on_stream(s);
        read<<<1, 1, 0, s>>>(x, seen + 1, peer);
        int h[2];
        CUDA_CHECK(cudaMemcpyAsync(h, seen, sizeof h, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        if (h[0] != i - 1 || h[1] != i) FAIL("on-stream round %d: g saw %d then %d, want %d then %d", i, h[0], h[1], i - 1, i);
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(seen));
    CUDA_CHECK(cudaFree(stale));
    nvshmem_free(x);
    return test_pass("g_visibility");
}
