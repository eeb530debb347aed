/* rshmem-cuda-test: pes=2,4
 * CUDA graphs: one step of a program — a kernel that puts with the device API, quiet and
 * barrier on the stream, a sum reduction, a broadcast, and a put-with-signal followed by a wait
 * on the signal — captured once (global capture mode: nothing in it may synchronize or
 * allocate) and replayed many times. Every replay changes the data (a replay counter kept on
 * the device), and kernels inside the graph check what arrived, so a replay that reused stale
 * data, or a step that ran out of order, is counted as an error. */
#include "cuda_test.h"

const int N = 4096;      /* ints per buffer */
const int REPLAYS = 200; /* graph launches */

/* The replay counter: each replay's first kernel advances it. */
__global__ void next_replay(int *replay) { *replay += 1; }

/* Each thread puts one int to the right neighbour with nvshmem_int_p, and fills the reduce
 * and broadcast sources of this PE for this replay. */
__global__ void produce(int *ring, int *rsrc, int *bsrc, int *sigsrc, const int *replay, int me, int right) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    int r = *replay;
    nvshmem_int_p(ring + i, r * 1000 + me * 100 + i % 100, right);
    rsrc[i] = r * (me + 1) + i;
    bsrc[i] = r * 7 + i;
    sigsrc[i] = r * 3 + me + i;
}

/* Checks what every step of this replay delivered; counts wrong words. */
__global__ void verify(const int *ring, const int *rdst, const int *bdst, const int *inbox, const int *replay, int left,
                       int npes, int *errors) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    int r = *replay;
    int bad = 0;
    bad += ring[i] != r * 1000 + left * 100 + i % 100;
    bad += rdst[i] != r * npes * (npes + 1) / 2 + npes * i;
    bad += bdst[i] != r * 7 + i;
    bad += inbox[i] != r * 3 + left + i;
    if (bad) atomicAdd(errors, bad);
}

/* Keeps the stream busy for about `ns` nanoseconds: a PE that starts its replay late. */
__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__global__ void linger(unsigned long long ns) {
    unsigned long long t0 = now_ns();
    while (now_ns() - t0 < ns) __nanosleep(1000);
}

/* The signal is consumed: reset it for the next replay (the barrier after this keeps the
 * left neighbour's next signal from arriving before the reset). */
__global__ void consume(uint64_t *sig) { *sig = 0; }

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    int *ring = (int *)nvshmem_calloc(N, sizeof(int));
    int *rsrc = (int *)nvshmem_calloc(N, sizeof(int));
    int *rdst = (int *)nvshmem_calloc(N, sizeof(int));
    int *bsrc = (int *)nvshmem_calloc(N, sizeof(int));
    int *bdst = (int *)nvshmem_calloc(N, sizeof(int));
    int *sigsrc = (int *)nvshmem_calloc(N, sizeof(int));
    int *inbox = (int *)nvshmem_calloc(N, sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    CHECK(ring && rsrc && rdst && bsrc && bdst && sigsrc && inbox && sig, "nvshmem_calloc failed");
    int *replay, *errors;
    CUDA_CHECK(cudaMalloc(&replay, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMemset(replay, 0, sizeof(int)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ready();

    /* Capture one step, with no warm-up call of any routine before (a first call that set
     * something up lazily would have to do it without synchronizing). */
    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    next_replay<<<1, 1, 0, s>>>(replay);
    produce<<<N / 256, 256, 0, s>>>(ring, rsrc, bsrc, sigsrc, replay, me, right);
    nvshmemx_quiet_on_stream(s);
    nvshmemx_barrier_all_on_stream(s);
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, rdst, rsrc, N, s);
    nvshmemx_int_broadcast_on_stream(NVSHMEM_TEAM_WORLD, bdst, bsrc, N, 0, s);
    nvshmemx_putmem_signal_on_stream(inbox, sigsrc, N * sizeof(int), sig, 1, NVSHMEM_SIGNAL_ADD, right, s);
    nvshmemx_signal_wait_until_on_stream(sig, NVSHMEM_CMP_EQ, 1, s);
    verify<<<N / 256, 256, 0, s>>>(ring, rdst, bdst, inbox, replay, left, npes, errors);
    consume<<<1, 1, 0, s>>>(sig);
    nvshmemx_barrier_all_on_stream(s);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

    /* Replays back to back: the host never waits in between. */
    for (int k = 0; k < REPLAYS; k++) CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    int e = -1, r = -1;
    CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&r, replay, sizeof r, cudaMemcpyDeviceToHost));
    CHECK_EQ(r, REPLAYS);
    CHECK(e == 0, "%d words wrong over %d replays", e, REPLAYS);

    /* The last replay's data, read by the host: the graph really moved it. */
    int last[2];
    CUDA_CHECK(cudaMemcpy(last, ring + 5, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(last + 1, rdst + 5, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK_EQ(last[0], REPLAYS * 1000 + left * 100 + 5);
    CHECK_EQ(last[1], REPLAYS * npes * (npes + 1) / 2 + npes * 5);

    /* The same graph still works after host-side SHMEM calls between replays, also when one
     * PE starts its replay 20 ms after the others: the graph's on-stream barriers and
     * collectives must wait for it at every replay, not only at the first (their step counts
     * were once launch arguments, fixed at capture, and a later replay did not wait at all). */
    for (int late = 0; late < npes; late++) {
        nvshmem_barrier_all();
        if (me == late) linger<<<1, 1, 0, s>>>(20 * 1000 * 1000);
        CUDA_CHECK(cudaGraphLaunch(exec, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
        CHECK(e == 0, "%d words wrong in the replay after a host barrier with PE %d late", e, late);
    }

    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(s));
    nvshmem_free(sig);
    nvshmem_free(inbox);
    nvshmem_free(sigsrc);
    nvshmem_free(bdst);
    nvshmem_free(bsrc);
    nvshmem_free(rdst);
    nvshmem_free(rsrc);
    nvshmem_free(ring);
    return test_pass("graphs");
}
