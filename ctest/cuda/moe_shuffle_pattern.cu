/* rshmem-cuda-test: pes=2
 * The pattern of NVIDIA's examples/moe_shuffle.cu (a mixture-of-experts token shuffle), which
 * died with an illegal address on rshmem:
 *  1. the offset exchange: 16 * npes threads fetch expert counts with nvshmem_int64_g from PE
 *     threadIdx.x / npes, i.e. PEs 0..15 whatever the job size (the example is written for 16
 *     PEs). The g from a PE the job does not have faulted; it now reads as 0, said once.
 *  2. the shuffle: 1024-thread blocks push rows to the PE of the row's expert with
 *     put_nbi_block, warp slices with put_nbi_warp, then put_signal_nbi_block adds to the
 *     receiver's per-source signal, which the receiver waits for before it checks the data. */
#include <string.h>
#include <vector>
#include "cuda_test.h"

constexpr int kExperts = 16;

__global__ void exchange(const int64_t *counts, int64_t *out, int npes) {
    int src_rank = threadIdx.x / npes, expert = threadIdx.x % npes; /* as the example computes them */
    if (threadIdx.x < npes * kExperts) out[threadIdx.x] = nvshmem_int64_g(counts + expert, src_rank);
}

/* Row r of this PE goes to PE r % npes, slot me * rows_per_pe + r / npes there. Blocks take
 * rows by turns; odd rows travel as 32 warp slices, even rows as one block put. */
__global__ void shuffle(float *recv, const float *send, int rows, int hidden, int me, int npes) {
    const int warps = blockDim.x / 32, warp = threadIdx.x / 32, per_warp = hidden / warps;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        int peer = r % npes;
        float *to = recv + ((size_t)me * (rows / npes) + r / npes) * hidden;
        const float *from = send + (size_t)r * hidden;
        if (r & 1) nvshmemx_float_put_nbi_warp(to + warp * per_warp, from + warp * per_warp, per_warp, peer);
        else nvshmemx_float_put_nbi_block(to, from, hidden, peer);
    }
}

/* The same rows with a signal each: the receiver knows a row from PE s arrived when
 * sig[s] counts it. */
__global__ void shuffle_signal(float *recv, const float *send, uint64_t *sig, int rows, int hidden, int me, int npes) {
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        int peer = r % npes;
        float *to = recv + ((size_t)me * (rows / npes) + r / npes) * hidden;
        nvshmemx_float_put_signal_nbi_block(to, send + (size_t)r * hidden, hidden, sig + me, 1, NVSHMEM_SIGNAL_ADD, peer);
    }
}
__global__ void wait_rows(uint64_t *sig, int npes, uint64_t per_source) {
    if (threadIdx.x < npes) nvshmem_signal_wait_until(sig + threadIdx.x, NVSHMEM_CMP_EQ, per_source);
}

static void check_rows(const float *recv, int rows, int hidden, int me, int npes, const char *what) {
    std::vector<float> h((size_t)rows * hidden);
    CUDA_CHECK(cudaMemcpy(h.data(), recv, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (int s = 0; s < npes; s++)
        for (int k = 0; k < rows / npes; k++) {
            int r = k * npes + me; /* PE s's row r came here (r % npes == me) into slot s * rows/npes + k */
            const float *row = &h[((size_t)s * (rows / npes) + k) * hidden];
            for (int c = 0; c < hidden; c++)
                if (row[c] != (float)(s * 100000 + r * 10 + c % 7))
                    FAIL("%s: row %d from PE %d, column %d: got %g, want %g", what, r, s, c, row[c], (float)(s * 100000 + r * 10 + c % 7));
        }
}

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    /* 1. The offset exchange. */
    int64_t *counts = (int64_t *)nvshmem_malloc(kExperts * sizeof(int64_t));
    int64_t *out;
    CUDA_CHECK(cudaMalloc(&out, npes * kExperts * sizeof(int64_t)));
    std::vector<int64_t> hc(kExperts);
    for (int e = 0; e < kExperts; e++) hc[e] = 1000 * me + e + 1;
    CUDA_CHECK(cudaMemcpy(counts, hc.data(), kExperts * sizeof(int64_t), cudaMemcpyHostToDevice));
    ready();
    capture_begin();
    exchange<<<1, npes * kExperts>>>(counts, out, npes);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    char *said = capture_end();
    std::vector<int64_t> got(npes * kExperts);
    CUDA_CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
    for (int t = 0; t < npes * kExperts; t++) {
        int src = t / npes, expert = t % npes;
        CHECK_EQ(got[t], src < npes ? 1000 * src + expert + 1 : 0);
    }
    if (npes < kExperts) {
        CHECK(strstr(said, "nvshmem_int64_g: PE ") && strstr(said, "is out of range") && strstr(said, "reads as 0"),
              "no notice of the g from a PE outside the job: [%s]", said);
        const char *first = strstr(said, "is out of range");
        CHECK(strstr(first + 1, "is out of range") == NULL, "the notice came more than once: [%s]", said);
    }
    free(said);
    step_done();

    /* 2. The shuffle, 1024 threads per block (kernels of more than 64 registers would not launch). */
    const int hidden = 4096, rows = 48 * npes;
    float *send = (float *)nvshmem_malloc((size_t)rows * hidden * sizeof(float));
    float *recv = (float *)nvshmem_malloc((size_t)rows * hidden * sizeof(float));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(npes, sizeof(uint64_t));
    std::vector<float> hs((size_t)rows * hidden);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < hidden; c++) hs[(size_t)r * hidden + c] = (float)(me * 100000 + r * 10 + c % 7);
    CUDA_CHECK(cudaMemcpy(send, hs.data(), hs.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(recv, 0, (size_t)rows * hidden * sizeof(float)));
    ready();
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    shuffle<<<12, 1024, 0, stream>>>(recv, send, rows, hidden, me, npes);
    CUDA_CHECK(cudaGetLastError());
    nvshmemx_barrier_all_on_stream(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check_rows(recv, rows, hidden, me, npes, "put_nbi_block/warp");

    CUDA_CHECK(cudaMemset(recv, 0, (size_t)rows * hidden * sizeof(float)));
    ready();
    shuffle_signal<<<12, 1024, 0, stream>>>(recv, send, sig, rows, hidden, me, npes);
    CUDA_CHECK(cudaGetLastError());
    wait_rows<<<1, 32, 0, stream>>>(sig, npes, (uint64_t)(rows / npes));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check_rows(recv, rows, hidden, me, npes, "put_signal_nbi_block");
    step_done();
    CUDA_CHECK(cudaStreamDestroy(stream));
    nvshmem_free(sig);
    nvshmem_free(recv);
    nvshmem_free(send);
    nvshmem_free(counts);
    CUDA_CHECK(cudaFree(out));
    return test_pass("moe_shuffle_pattern");
}
