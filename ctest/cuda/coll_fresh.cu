/* rshmem-cuda-test: pes=2
 * A lone thread's reducescatter and reduce, called round after round on the same buffers,
 * return each round's values: nothing of an earlier call (a line an L1 kept, a mailbox unit
 * of the call before) is taken for this call's data. One kernel of one thread per PE, ROUNDS
 * rounds: every round each PE rewrites its whole source with values of that round, then calls
 * nvshmem_int_sum_reducescatter and nvshmem_int_max_reduce (thread scope), and checks every
 * element against the round's sum / max. Sizes per member: 16 B and 32 B (the mailbox path,
 * at 2 and 4 PEs), 128 B and 2 KiB (the direct path; the rows measured against
 * NVSHMEM), 6000 B (a tail that is not a whole 16-byte word) and 16 KiB. Written for an L1 prefetch of the members' shares that
 * was measured and dropped (results/gpu-compare-2026-11-27g-rows): a faster path for these
 * rows must keep passing it. */
#include "cuda_test.h"

#define ROUNDS 12
#define MAXN 4096

__device__ int value(int pe, int round, int i) { return (pe + 1) * 1000003 + round * 7919 + i * 31; }

__global__ void rounds_kernel(int *src, int *dst, int *red, int n, int *errors, int *first_bad) {
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < npes * n; i++) src[i] = value(me, r, i);
        nvshmem_int_sum_reducescatter(NVSHMEM_TEAM_WORLD, dst, src, n);
        nvshmem_int_max_reduce(NVSHMEM_TEAM_WORLD, red, src, n);
        for (int i = 0; i < n; i++) {
            int want_sum = 0, want_max = value(0, r, i);
            for (int p = 0; p < npes; p++) {
                want_sum += value(p, r, me * n + i);
                want_max = max(want_max, value(p, r, i));
            }
            if (dst[i] != want_sum || red[i] != want_max) {
                if (atomicAdd(errors, 1) == 0) first_bad[0] = r, first_bad[1] = i, first_bad[2] = dst[i], first_bad[3] = want_sum,
                                              first_bad[4] = red[i], first_bad[5] = want_max;
            }
        }
        /* Every member has read this round's sources before anyone rewrites its own. */
        nvshmem_barrier_all();
    }
}

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    int *src = (int *)nvshmem_malloc((size_t)npes * MAXN * sizeof(int));
    int *dst = (int *)nvshmem_malloc(MAXN * sizeof(int)), *red = (int *)nvshmem_malloc(MAXN * sizeof(int));
    int *errors, *bad;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&bad, 6 * sizeof(int)));
    const int sizes[] = {4, 8, 32, 512, 1500, 4096};
    for (int n : sizes) {
        CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
        CUDA_CHECK(cudaMemset(bad, 0, 6 * sizeof(int)));
        ready();
        rounds_kernel<<<1, 1>>>(src, dst, red, n, errors, bad);
        step_done();
        int h_errors = 0, h_bad[6];
        CUDA_CHECK(cudaMemcpy(&h_errors, errors, sizeof(int), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(h_bad, bad, sizeof(h_bad), cudaMemcpyDeviceToHost));
        CHECK(h_errors == 0,
              "PE %d, %d ints per member: %d wrong elements over %d rounds; first: round %d element %d: reducescatter %d "
              "(want %d), max reduce %d (want %d): a value of an earlier round means a stale cached line",
              me, n, h_errors, ROUNDS, h_bad[0], h_bad[1], h_bad[2], h_bad[3], h_bad[4], h_bad[5]);
    }
    CUDA_CHECK(cudaFree(errors));
    CUDA_CHECK(cudaFree(bad));
    nvshmem_free(red);
    nvshmem_free(dst);
    nvshmem_free(src);
    return test_pass("coll_fresh");
}
