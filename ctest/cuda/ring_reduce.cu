/* rshmem-cuda-test: pes=2
 * Ring allreduce written with NVSHMEM primitives, as in NVSHMEM's examples: the array is cut
 * into one chunk per PE; n-1 reduce-scatter steps (send a chunk to the right with
 * put_signal_nbi_block, wait for the left's, add it in), then n-1 all-gather steps. Each step
 * lands in its own receive slot and counts on one signal word (SIGNAL_ADD). The result is
 * compared with the sum computed on the CPU; repeated over several sizes and iterations. */
#include <math.h>
#include <vector>
#include "cuda_test.h"

__global__ void ring_allreduce(float *data, float *recv, uint64_t *sig, size_t chunk, uint64_t sig_base) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    uint64_t expected = sig_base;
    /* Reduce-scatter: after it this PE holds the full sum of chunk (me + 1) % n. */
    for (int s = 0; s < n - 1; s++) {
        int send = (me - s + n) % n, got = (me - s - 1 + n) % n;
        nvshmemx_float_put_signal_nbi_block(recv + s * chunk, data + send * chunk, chunk, sig, 1, NVSHMEM_SIGNAL_ADD, right);
        if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, ++expected);
        __syncthreads();
        for (size_t i = threadIdx.x; i < chunk; i += blockDim.x) data[got * chunk + i] += recv[s * chunk + i];
        __syncthreads();
    }
    /* All-gather of the reduced chunks. */
    for (int s = 0; s < n - 1; s++) {
        int send = (me + 1 - s + n) % n, got = (me - s + n) % n;
        size_t slot = (size_t)(n - 1 + s) * chunk;
        nvshmemx_float_put_signal_nbi_block(recv + slot, data + send * chunk, chunk, sig, 1, NVSHMEM_SIGNAL_ADD, right);
        if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, ++expected);
        __syncthreads();
        for (size_t i = threadIdx.x; i < chunk; i += blockDim.x) data[got * chunk + i] = recv[slot + i];
        __syncthreads();
    }
    if (threadIdx.x == 0) nvshmem_quiet();
}

static float value(int pe, size_t i, int iter) { return (float)((pe + 1) * (int)(i % 97) + iter); }

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const size_t MAXCHUNK = 1 << 16;
    float *data = (float *)nvshmem_malloc(MAXCHUNK * npes * sizeof(float));
    float *recv = (float *)nvshmem_malloc(2 * MAXCHUNK * npes * sizeof(float));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    uint64_t steps = 0;
    std::vector<float> h(MAXCHUNK * npes);
    for (size_t chunk : {(size_t)1, (size_t)333, MAXCHUNK}) {
        for (int iter = 0; iter < 3; iter++) {
            size_t n = chunk * npes;
            for (size_t i = 0; i < n; i++) h[i] = value(me, i, iter);
            CUDA_CHECK(cudaMemcpy(data, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
            ready();
            ring_allreduce<<<1, 256>>>(data, recv, sig, chunk, steps);
            step_done();
            steps += 2 * (npes - 1);
            CUDA_CHECK(cudaMemcpy(h.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < n; i++) {
                float want = 0;
                for (int pe = 0; pe < npes; pe++) want += value(pe, i, iter);
                CHECK(fabsf(h[i] - want) <= 1e-6f * fabsf(want), "chunk=%zu iter=%d: data[%zu] = %g, want %g", chunk, iter, i, h[i], want);
            }
        }
    }
    nvshmem_free(sig);
    nvshmem_free(recv);
    nvshmem_free(data);
    return test_pass("ring_reduce");
}
