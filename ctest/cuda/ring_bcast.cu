/* rshmem-cuda-test: pes=2
 * A ring broadcast as NVSHMEM programs write it: the root's data travels PE to PE, each PE
 * waiting for its left neighbour's signal, then forwarding data and signal to its right
 * (put_signal_nbi by one thread, then by a whole block), for every root and several sizes.
 * Every PE checks the root's data arrived intact; then the same with a fresh signal word. */
#include <vector>
#include "cuda_test.h"

__global__ void ring_bcast_thread(int *data, size_t nelem, int root, uint64_t *psync, uint64_t round) {
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), peer = (me + 1) % npes;
    if (me == root) *psync = round;
    nvshmem_signal_wait_until(psync, NVSHMEM_CMP_GE, round);
    if (peer == root) return;
    nvshmem_int_put_signal_nbi(data, data, nelem, psync, round, NVSHMEM_SIGNAL_SET, peer);
    nvshmem_quiet();
}

__global__ void ring_bcast_block(int *data, size_t nelem, int root, uint64_t *psync, uint64_t round) {
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), peer = (me + 1) % npes;
    if (threadIdx.x == 0) {
        if (me == root) *psync = round;
        nvshmem_signal_wait_until(psync, NVSHMEM_CMP_GE, round);
    }
    __syncthreads();
    if (peer == root) return;
    nvshmemx_int_put_signal_nbi_block(data, data, nelem, psync, round, NVSHMEM_SIGNAL_SET, peer);
    if (threadIdx.x == 0) nvshmem_quiet();
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    const size_t MAXN = 1 << 20;
    int *data = (int *)nvshmem_malloc(MAXN * sizeof(int));
    uint64_t *psync = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    std::vector<int> h(MAXN);
    uint64_t round = 0;
    for (size_t n : {(size_t)1, (size_t)1000, MAXN}) {
        for (int root = 0; root < npes; root++) {
            for (int block = 0; block < 2; block++) {
                round++;
                for (size_t i = 0; i < n; i++) h[i] = me == root ? (int)(round * 100000 + i) : -1;
                CUDA_CHECK(cudaMemcpy(data, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
                ready();
                if (block)
                    ring_bcast_block<<<1, 512>>>(data, n, root, psync, round);
                else
                    ring_bcast_thread<<<1, 1>>>(data, n, root, psync, round);
                step_done();
                CUDA_CHECK(cudaMemcpy(h.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost));
                for (size_t i = 0; i < n; i++)
                    CHECK(h[i] == (int)(round * 100000 + i), "n=%zu root=%d %s: data[%zu] = %d, want %d", n, root, block ? "block" : "thread", i,
                          h[i], (int)(round * 100000 + i));
            }
        }
    }
    nvshmem_free(psync);
    nvshmem_free(data);
    return test_pass("ring_bcast");
}
