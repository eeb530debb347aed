/* rshmem-cuda-test: pes=2
 * A device collective given overlapping dest and source arrays that are not the same array
 * (which NVSHMEM leaves undefined: the result would be garbage) stops instead: the kernel prints
 * the routine and what is wrong, then traps, and the host sees the launch fail. Always on (one
 * pointer comparison per call), not only under RSHMEM_DEVICE_CHECKS. */
#include "cuda_test.h"

__global__ void overlapping_reduce(int *buf) { nvshmem_int32_sum_reduce(NVSHMEM_TEAM_WORLD, buf + 1, buf, 4); }

int main(void) {
    test_init();
    int *buf = (int *)nvshmem_malloc(8 * sizeof(int));
    CUDA_CHECK(cudaMemset(buf, 0, 8 * sizeof(int)));
    ready();
    /* PE 0 alone makes the bad call: the check comes before any communication, so it stops
     * without waiting for anyone, and no other PE's kernel is cut short by the trap (PEs sharing
     * a GPU under MPS lose their running kernels when one of them traps). */
    if (test_pe == 0) {
        capture_begin();
        overlapping_reduce<<<1, 1>>>(buf);
        cudaError_t e = cudaDeviceSynchronize();
        char *said = capture_end();
        CHECK(e != cudaSuccess, "the reduce with overlapping dest and source was not stopped");
        CHECK(strstr(said, "nvshmem_int32_sum_reduce") && strstr(said, "dest and source overlap"),
              "the device did not name the routine and the overlap; it printed: \"%s\"", said);
        printf("PE 0: kernel stopped as expected (%s)\n", cudaGetErrorString(e));
        printf("PASS coll_misuse\n");
    }
    fflush(stdout);
    /* The context is unusable after a trap: leave without the collective finalize. */
    _exit(0);
}
