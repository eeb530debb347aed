/* rshmem-cuda-test: pes=2
 * An on-stream training-step pipeline, the host never waiting between steps: each step a
 * kernel makes this PE's "gradient", nvshmemx_float_sum_reduce_on_stream sums it over the PEs
 * (alternately in place), a kernel applies it to the weights, a putmem_signal_on_stream hands a
 * slice of the weights to the right neighbour which waits for it on its stream
 * (signal_wait_until_on_stream), and a fcollect_on_stream gathers every PE's step counter.
 * At the end the weights (identical on every PE), the neighbour's slice and the gathered
 * counters are checked against a CPU simulation of the same steps. */
#include <vector>
#include "cuda_test.h"

__global__ void make_grad(float *grad, int n, int me, int step) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) grad[i] = (float)((me + 1) * ((i + step) % 7));
}
__global__ void apply_grad(float *w, const float *g, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] = w[i] * 0.5f + g[i];
}
__global__ void bump(int *counter, int step) { *counter = step; }

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const int N = 1 << 20, SLICE = 4096, STEPS = 20;
    float *w = (float *)nvshmem_calloc(N, sizeof(float)), *grad = (float *)nvshmem_malloc(N * sizeof(float));
    float *gsum = (float *)nvshmem_malloc(N * sizeof(float)), *inbox = (float *)nvshmem_calloc(SLICE, sizeof(float));
    int *counter = (int *)nvshmem_calloc(1, sizeof(int)), *counters = (int *)nvshmem_calloc(npes, sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(2, sizeof(uint64_t));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    nvshmem_barrier_all();
    for (int step = 1; step <= STEPS; step++) {
        make_grad<<<N / 256, 256, 0, s>>>(grad, N, me, step);
        if (step % 2) {
            CHECK_EQ(nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, gsum, grad, N, s), 0);
            apply_grad<<<N / 256, 256, 0, s>>>(w, gsum, N);
        } else {
            CHECK_EQ(nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, grad, grad, N, s), 0);
            apply_grad<<<N / 256, 256, 0, s>>>(w, grad, N);
        }
        /* The neighbour must have consumed the previous slice before it is overwritten. */
        if (step > 1) nvshmemx_signal_wait_until_on_stream(&sig[1], NVSHMEM_CMP_GE, (uint64_t)(step - 1), s);
        nvshmemx_putmem_signal_on_stream(inbox, w + me * SLICE, SLICE * sizeof(float), &sig[0], (uint64_t)step, NVSHMEM_SIGNAL_SET, right, s);
        nvshmemx_signal_wait_until_on_stream(&sig[0], NVSHMEM_CMP_GE, (uint64_t)step, s);
        if (step < STEPS) nvshmemx_signal_op_on_stream(&sig[1], (uint64_t)step, NVSHMEM_SIGNAL_SET, left, s);
        bump<<<1, 1, 0, s>>>(counter, step * 10 + me);
        CHECK_EQ(nvshmemx_int_fcollect_on_stream(NVSHMEM_TEAM_WORLD, counters, counter, 1, s), 0);
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    /* CPU simulation. */
    std::vector<float> ref(N, 0.0f), got(N);
    for (int step = 1; step <= STEPS; step++)
        for (int i = 0; i < N; i++) {
            float g = 0;
            for (int pe = 0; pe < npes; pe++) g += (float)((pe + 1) * ((i + step) % 7));
            ref[i] = ref[i] * 0.5f + g;
        }
    CUDA_CHECK(cudaMemcpy(got.data(), w, N * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) CHECK(got[i] == ref[i], "weights[%d] = %g, want %g", i, got[i], ref[i]);
    CUDA_CHECK(cudaMemcpy(got.data(), inbox, SLICE * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < SLICE; i++) CHECK(got[i] == ref[left * SLICE + i], "inbox[%d] = %g, want %g", i, got[i], ref[left * SLICE + i]);
    std::vector<int> c(npes);
    CUDA_CHECK(cudaMemcpy(c.data(), counters, npes * sizeof(int), cudaMemcpyDeviceToHost));
    for (int pe = 0; pe < npes; pe++) CHECK_EQ(c[pe], STEPS * 10 + pe);
    CUDA_CHECK(cudaStreamDestroy(s));
    nvshmem_barrier_all();
    return test_pass("pipeline");
}
