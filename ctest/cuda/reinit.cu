/* rshmem-cuda-test: pes=2
 * nvshmem_init, work, nvshmem_finalize, then nvshmem_init again in the same processes (under
 * the launcher's bootstrap), three times: NVSHMEM itself cannot do this. */
#include <time.h>
#include "cuda_test.h"

__global__ void ring(int *box, int round) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(box, round * 100 + me, (me + 1) % n);
    nvshmem_barrier_all();
}

int main(void) {
    for (int round = 1; round <= 3; round++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        test_init();
        clock_gettime(CLOCK_MONOTONIC, &b);
        if (nvshmem_my_pe() == 0)
            printf("reinit: round %d nvshmem_init took %.1f ms\n", round, (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
        int me = nvshmem_my_pe(), n = nvshmem_n_pes();
        int *box = (int *)nvshmem_calloc(1, sizeof(int));
        ring<<<1, 1>>>(box, round);
        step_done();
        int got = 0;
        CUDA_CHECK(cudaMemcpy(&got, box, sizeof got, cudaMemcpyDeviceToHost));
        CHECK_EQ(got, round * 100 + (me + n - 1) % n);
        if (round < 3) {
            nvshmem_barrier_all();
            nvshmem_finalize();
            CHECK_EQ(nvshmemx_init_status(), NVSHMEM_STATUS_NOT_INITIALIZED);
        }
    }
    return test_pass("reinit");
}
