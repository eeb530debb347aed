/* rshmem-cuda-test: pes=2
 * A kernel that synchronizes across PEs from inside, started with nvshmemx_collective_launch
 * so that all its blocks are resident at once: every thread puts to the right neighbour with
 * nvshmem_int_p, the grid syncs (cooperative groups), one thread completes the puts and runs
 * nvshmem_barrier_all, the grid syncs again, and every block checks what its left neighbour
 * put; repeated. Also: the grid-size query, and a grid too large to be resident is refused
 * with NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED instead of hanging. */
#include <cooperative_groups.h>
#include "cuda_test.h"
namespace cg = cooperative_groups;

__global__ void exchange(int *box, int n, int iters, int *errors) {
    cg::grid_group grid = cg::this_grid();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    size_t tid = grid.thread_rank(), nth = grid.size();
    for (int it = 1; it <= iters; it++) {
        for (size_t i = tid; i < (size_t)n; i += nth) nvshmem_int_p(box + i, it * 1000000 + me * 100000 + (int)(i % 100000), right);
        grid.sync();
        if (tid == 0) {
            nvshmem_quiet();
            nvshmem_barrier_all();
        }
        grid.sync();
        for (size_t i = tid; i < (size_t)n; i += nth)
            if (box[i] != it * 1000000 + left * 100000 + (int)(i % 100000)) atomicAdd(errors, 1);
        grid.sync();
        if (tid == 0) nvshmem_barrier_all(); /* every PE read its box before the next round's puts */
        grid.sync();
    }
}

int main(void) {
    test_init();
    int n = 1 << 20, iters = 10;
    /* Across hosts a right neighbour may be reached through the proxy, a request per p (about
     * 20 thousand a second, results/gpu-crosshost-2026-11-27c/): 4 Ki puts a round, not 1 Mi
     * (every PE picks the same size: the allocation is collective). */
    if (nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE) < nvshmem_n_pes()) n = 1 << 12;
    int *box = (int *)nvshmem_calloc(n, sizeof(int));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    int grid = 0;
    void *args[] = {&box, &n, &iters, &errors};
    CHECK_EQ(nvshmemx_collective_launch_query_gridsize((const void *)exchange, dim3(256), args, 0, &grid), NVSHMEMX_SUCCESS);
    CHECK(grid > 0, "query_gridsize gave %d", grid);
    nvshmem_barrier_all();
    CHECK_EQ(nvshmemx_collective_launch((const void *)exchange, dim3(grid), dim3(256), args, 0, 0), NVSHMEMX_SUCCESS);
    step_done();
    int bad = -1;
    CUDA_CHECK(cudaMemcpy(&bad, errors, sizeof bad, cudaMemcpyDeviceToHost));
    CHECK(bad == 0, "%d elements were not the left neighbour's at the end of a round", bad);
    CHECK_EQ(nvshmemx_collective_launch((const void *)exchange, dim3(grid * 4 + 1), dim3(256), args, 0, 0),
             NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED);
    CUDA_CHECK(cudaFree(errors));
    nvshmem_free(box);
    if (nvshmem_my_pe() == 0) printf("collective launch: %d blocks of 256 threads, %d rounds: ok\n", grid, iters);
    return test_pass("collective_launch");
}
