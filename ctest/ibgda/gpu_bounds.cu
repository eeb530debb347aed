/* IBGDA route in CTAs of 1024 threads (built with -DRSHMEM_IBGDA_ROUTE; run with
 * NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model, 2 PEs: ctest/ibgda/run_gpu.sh).
 * With the route compiled in, a kernel needs more than 64 registers per thread (the posting path
 * and what its callers keep live; ctest/budget/registers.cu measures 54-76 for RMA and AMOs,
 * 94-130 for collectives), so 1024 threads no longer fit in an SM's 64K registers. Such a kernel
 * says so with __launch_bounds__(1024): the compiler then fits it into 64 registers.
 * The test runs one kernel body twice: with __launch_bounds__(1024) it must launch with 1024
 * threads and move every element right (p, quiet, block barrier, block put, block barrier,
 * block sum reduce, all through WQEs); without the bound, when the compiler gave it more than 64
 * registers, CUDA must refuse the launch with its out-of-resources error (what the README tells
 * users to expect and how to fix). */
#include "ibgda_test.h"

#define N 1024

__device__ __forceinline__ void body(int *a, int *b, int *sum, int right) {
    const int me = nvshmem_my_pe(), i = threadIdx.x;
    nvshmem_int_p(a + i, me * 100000 + i, right); /* a on the right PE = my values */
    nvshmem_quiet();
    nvshmemx_barrier_all_block();                 /* my a = my left neighbour's values */
    nvshmemx_int_put_block(b, a, N, right);       /* b on the right PE = my a */
    nvshmemx_barrier_all_block();
    nvshmemx_int32_sum_reduce_block(NVSHMEM_TEAM_WORLD, sum, b, N);
}
__global__ void __launch_bounds__(N) bounded(int *a, int *b, int *sum, int right) { body(a, b, sum, right); }
__global__ void unbounded(int *a, int *b, int *sum, int right) { body(a, b, sum, right); }

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    (void)ibgda_state(NULL); /* the route is on */
    int *a = (int *)nvshmem_calloc(N, sizeof(int)), *b = (int *)nvshmem_calloc(N, sizeof(int));
    int *sum = (int *)nvshmem_calloc(N, sizeof(int));

    cudaFuncAttributes with, without;
    CUDA_CHECK(cudaFuncGetAttributes(&with, bounded));
    CUDA_CHECK(cudaFuncGetAttributes(&without, unbounded));
    if (me == 0)
        printf("registers per thread: %d with __launch_bounds__(1024) (%zu bytes local memory), %d without (up to %d "
               "threads per CTA)\n",
               with.numRegs, with.localSizeBytes, without.numRegs, without.maxThreadsPerBlock);
    CHECK(with.numRegs <= 64 && with.maxThreadsPerBlock >= N, "bounded kernel: %d registers, %d threads at most",
          with.numRegs, with.maxThreadsPerBlock);

    nvshmem_barrier_all();
    bounded<<<1, N>>>(a, b, sum, right);
    step_done();
    int h[N];
    const int left = (me + n - 1) % n, left2 = (me + 2 * n - 2) % n, pes_sum = n * (n - 1) / 2;
    CUDA_CHECK(cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) CHECK_EQ(h[i], left * 100000 + i);
    CUDA_CHECK(cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) CHECK_EQ(h[i], left2 * 100000 + i);
    CUDA_CHECK(cudaMemcpy(h, sum, sizeof h, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) CHECK_EQ(h[i], pes_sum * 100000 + n * i);

    if (without.numRegs > 64) {
        /* Every PE's launch is refused at once, so none waits in the kernel's barriers. */
        unbounded<<<1, N>>>(a, b, sum, right);
        cudaError_t e = cudaGetLastError();
        CHECK(e == cudaErrorLaunchOutOfResources, "launch of a %d-register kernel with %d threads: %s, want %s",
              without.numRegs, N, cudaGetErrorName(e), cudaGetErrorName(cudaErrorLaunchOutOfResources));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    nvshmem_barrier_all();
    if (me == 0) printf("ibgda bounds: 1024-thread CTA with __launch_bounds__ moved and reduced every element\n");
    return test_pass("gpu_bounds");
}
