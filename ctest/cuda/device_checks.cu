/* rshmem-cuda-test: pes=2
 * RSHMEM_DEVICE_CHECKS=1: a device call with a PE out of range prints the routine and the
 * value, then traps the kernel (the host sees the launch fail). Without the checks the same
 * library costs nothing (one constant-cache flag test per call). */
#include <unistd.h>
#include "cuda_test.h"

__global__ void bad_pe(int *x, int pe) { nvshmem_int_p(x, 1, pe); }

int main(void) {
    setenv("RSHMEM_DEVICE_CHECKS", "1", 1);
    test_init();
    int *x = (int *)nvshmem_malloc(sizeof(int));
    nvshmem_barrier_all();
    bad_pe<<<1, 1>>>(x, nvshmem_n_pes() + 3);
    cudaError_t e = cudaDeviceSynchronize();
    /* The device printed "rshmem: nvshmem_int_p: PE <n+3> is out of range" and trapped. */
    CHECK(e != cudaSuccess, "the kernel with a bad PE was not stopped");
    printf("PE %d: kernel stopped as expected: %s\n", nvshmem_my_pe(), cudaGetErrorString(e));
    fflush(stdout);
    /* The context is unusable after a trap: leave without the collective finalize. */
    _exit(0);
}
