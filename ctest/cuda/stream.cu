/* rshmem-cuda-test: pes=2
 * On-stream signalling: putmem_signal_on_stream (SET and ADD), signal_op_on_stream,
 * signal_wait_until_on_stream with every comparison; a producer/consumer pipeline between
 * the PEs' streams where the host never waits in between. */
#include "cuda_test.h"

__global__ void fill(int *x, int n, int value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value + i;
}

__global__ void verify(const int *x, int n, int value, int *errors) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] != value + i) atomicAdd(errors, 1);
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    const int N = 1 << 18, STEPS = 25;
    int *src = (int *)nvshmem_malloc(N * sizeof(int));
    int *inbox = (int *)nvshmem_calloc(2 * N, sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(4, sizeof(uint64_t));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    nvshmem_barrier_all();

    /* sig[0]: data ready (ADD, counts steps); sig[1]: slot consumed (SET to the step). */
    for (int step = 1; step <= STEPS; step++) {
        int *slot = inbox + (step % 2) * N;
        if (step > 2) nvshmemx_signal_wait_until_on_stream(&sig[1], NVSHMEM_CMP_GE, (uint64_t)(step - 2), s);
        fill<<<N / 256, 256, 0, s>>>(src, N, 1000 * step + me);
        if (step % 2)
            nvshmemx_putmem_signal_on_stream(slot, src, N * sizeof(int), &sig[0], 1, NVSHMEM_SIGNAL_ADD, right, s);
        else
            nvshmemx_putmem_signal_nbi_on_stream(slot, src, N * sizeof(int), &sig[0], 1, NVSHMEM_SIGNAL_ADD, right, s);
        nvshmemx_signal_wait_until_on_stream(&sig[0], NVSHMEM_CMP_GE, (uint64_t)step, s);
        verify<<<N / 256, 256, 0, s>>>(slot, N, 1000 * step + left, errors);
        nvshmemx_signal_op_on_stream(&sig[1], (uint64_t)step, NVSHMEM_SIGNAL_SET, left, s);
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    int e = 0;
    CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    CHECK(e == 0, "%d words wrong in the pipeline", e);
    nvshmem_barrier_all();
    CHECK_EQ(nvshmem_signal_fetch(&sig[0]), STEPS);
    CHECK_EQ(nvshmem_signal_fetch(&sig[1]), STEPS);

    /* Every comparison of signal_wait_until_on_stream: sig[2] on each PE becomes 10. */
    nvshmemx_signal_op_on_stream(&sig[2], 10, NVSHMEM_SIGNAL_SET, right, s);
    nvshmemx_signal_wait_until_on_stream(&sig[2], NVSHMEM_CMP_EQ, 10, s);
    nvshmemx_signal_wait_until_on_stream(&sig[2], NVSHMEM_CMP_NE, 9, s);
    nvshmemx_signal_wait_until_on_stream(&sig[2], NVSHMEM_CMP_GT, 9, s);
    nvshmemx_signal_wait_until_on_stream(&sig[2], NVSHMEM_CMP_LE, 10, s);
    nvshmemx_signal_wait_until_on_stream(&sig[2], NVSHMEM_CMP_LT, 11, s);
    nvshmemx_signal_wait_until_on_stream(&sig[2], NVSHMEM_CMP_GE, 10, s);
    /* ADD from the stream, then the host's own signal_op ADD (an atomic kernel). */
    nvshmemx_signal_op_on_stream(&sig[3], 5, NVSHMEM_SIGNAL_ADD, right, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    nvshmemx_signal_op(&sig[3], 7, NVSHMEM_SIGNAL_ADD, right);
    nvshmem_barrier_all();
    CHECK_EQ(nvshmem_signal_fetch(&sig[3]), 12);
    CUDA_CHECK(cudaStreamDestroy(s));
    return test_pass("stream");
}
