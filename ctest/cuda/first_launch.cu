/* rshmem-cuda-test: pes=2
 * A kernel's first launch while another kernel of this PE waits in a device barrier for its
 * peer: the host launches `late` (never launched before) right behind `waiter` without
 * synchronizing, as ctest/cuda/coll.cu does with its two kernels. Over P2P nothing on the host
 * takes part in the barrier. On a route served by a host thread (the proxy; the IBGDA model
 * NIC, NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model) that thread's CUDA calls must not wait
 * for the load of `late`: with CUDA_MODULE_LOADING=LAZY a load waits for the GPU to go idle
 * and holds up other threads' driver calls meanwhile, so the barrier never ends (run with
 * CUDA_MODULE_LOADING=EAGER there; docs/ARCHITECTURE.md "Lazy module loading").
 * Argument "preload": cudaFuncGetAttributes(late) before `waiter` starts loads `late` first.
 * Checked: the peer's value arrived before the barrier ended, and `late` ran after `waiter`. */
#include <string.h>
#include "cuda_test.h"

__global__ void waiter(int *box, int *seen, long long spin) {
    if (threadIdx.x != 0) return;
    const int me = nvshmem_my_pe(), peer = (me + 1) % nvshmem_n_pes();
    /* Long enough for the host to be inside the launch of `late` before the barrier starts. */
    long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
    nvshmem_int_p(box, 100 + me, peer);
    nvshmem_barrier_all(); /* quiet, then the arrival: the peer's p has landed on return */
    seen[0] = *(volatile int *)box;
}

__global__ void late(const int *seen, int *after) { after[0] = seen[0] + 1; }

int main(int argc, char **argv) {
    test_init();
    const int me = nvshmem_my_pe(), peer = (me + 1) % nvshmem_n_pes();
    int *box = (int *)nvshmem_calloc(1, sizeof(int));
    int *seen = NULL, *after = NULL;
    CHECK(box != NULL, "nvshmem_calloc");
    CUDA_CHECK(cudaMalloc(&seen, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&after, sizeof(int)));
    CUDA_CHECK(cudaMemset(seen, 0, sizeof(int)));
    CUDA_CHECK(cudaMemset(after, 0, sizeof(int)));
    if (argc > 1 && strcmp(argv[1], "preload") == 0) {
        cudaFuncAttributes a;
        CUDA_CHECK(cudaFuncGetAttributes(&a, late));
    }
    int rate_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
    ready();
    waiter<<<1, 32>>>(box, seen, (long long)rate_khz * 50); /* ~50 ms */
    late<<<1, 1>>>(seen, after);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    int got_seen = 0, got_after = 0;
    CUDA_CHECK(cudaMemcpy(&got_seen, seen, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&got_after, after, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK_EQ(got_seen, 100 + peer);
    CHECK_EQ(got_after, 101 + peer);
    nvshmem_free(box);
    CUDA_CHECK(cudaFree(seen));
    CUDA_CHECK(cudaFree(after));
    return test_pass("first_launch");
}
