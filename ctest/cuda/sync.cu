/* rshmem-cuda-test: pes=2
 * Barriers: device barrier_all / sync_all at thread, warp and block scope in tight loops (a
 * value put before the barrier must be visible after it), host barrier_all, and the on-stream
 * path: putmem_on_stream + barrier_all_on_stream + getmem_on_stream without host syncs. */
#include "cuda_test.h"

#define ITERS 200

/* kind: 0 barrier_all, 1 sync_all+quiet, 2 barrier_all_warp, 3 barrier_all_block, 4 sync_all_block, 5 barrier(team) */
__global__ void loop_kernel(int *box, int kind, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int it = 1; it <= ITERS; it++) {
        if (threadIdx.x == 0) nvshmem_int_p(&box[it % 2], it * 10 + me, right);
        switch (kind) {
            case 0: if (threadIdx.x == 0) nvshmem_barrier_all(); __syncthreads(); break;
            case 1: if (threadIdx.x == 0) { nvshmem_quiet(); nvshmem_sync_all(); } __syncthreads(); break;
            case 2: if (threadIdx.x < 32) nvshmemx_barrier_all_warp(); __syncthreads(); break;
            case 3: nvshmemx_barrier_all_block(); break;
            case 4: if (threadIdx.x == 0) nvshmem_quiet(); nvshmemx_sync_all_block(); break;
            case 5: if (threadIdx.x == 0) nvshmem_barrier(NVSHMEM_TEAM_WORLD); __syncthreads(); break;
        }
        if (threadIdx.x == 0) {
            int v = *(volatile int *)&box[it % 2];
            if (v != it * 10 + left) atomicAdd(errors, 1);
        }
        __syncthreads();
    }
}

__global__ void add_kernel(int *x, int n, int delta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += delta;
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    int *box = (int *)nvshmem_calloc(2, sizeof(int));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    for (int kind = 0; kind < 6; kind++) {
        CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
        nvshmem_barrier_all();
        loop_kernel<<<1, 128>>>(box, kind, errors);
        step_done();
        int e = 0;
        CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
        CHECK(e == 0, "barrier kind %d: %d stale reads in %d iterations", kind, e, ITERS);
    }

    /* On-stream pipeline: each step a kernel changes my buffer, I put it to the right,
     * barrier on the stream, the right PE's next kernel sees it. No host sync in between. */
    const int N = 1 << 16, STEPS = 30;
    int *a = (int *)nvshmem_calloc(N, sizeof(int));
    int *inbox = (int *)nvshmem_calloc(N, sizeof(int));
    int *back;
    CUDA_CHECK(cudaMalloc(&back, N * sizeof(int)));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int step = 1; step <= STEPS; step++) {
        add_kernel<<<N / 256, 256, 0, s>>>(a, N, me + 1);
        nvshmemx_putmem_on_stream(inbox, a, N * sizeof(int), right, s);
        nvshmemx_quiet_on_stream(s);
        nvshmemx_barrier_all_on_stream(s);
        /* Fetch the left PE's copy of what I sent it (its inbox) back: must be my a. */
        nvshmemx_getmem_on_stream(back, inbox, N * sizeof(int), right, s);
        nvshmemx_barrier_all_on_stream(s);
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    int *h = (int *)malloc(N * sizeof(int)), *hb = (int *)malloc(N * sizeof(int));
    CUDA_CHECK(cudaMemcpy(h, inbox, N * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hb, back, N * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        CHECK_EQ(h[i], STEPS * (left + 1));
        CHECK_EQ(hb[i], STEPS * (me + 1));
    }
    /* Many on-stream barriers back to back, interleaved with sync_all_on_stream. */
    for (int i = 0; i < 100; i++) {
        nvshmemx_barrier_all_on_stream(s);
        nvshmemx_sync_all_on_stream(s);
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaStreamDestroy(s));
    nvshmem_sync_all();
    nvshmem_team_sync(NVSHMEM_TEAM_WORLD);
    CHECK_EQ(nvshmem_barrier(NVSHMEMX_TEAM_NODE), 0);
    return test_pass("sync");
}
