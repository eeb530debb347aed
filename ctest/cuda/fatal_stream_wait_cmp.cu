/* rshmem-cuda-test: pes=2
 * rshmem-expect: nvshmemx_int_wait_until_on_stream: comparison 9 is not one of NVSHMEM_CMP_EQ..NVSHMEM_CMP_GE
 * An on-stream wait with a comparison outside NVSHMEM_CMP_EQ..GE is refused when it is called,
 * naming the routine and the valid range, not enqueued as a kernel that would never return. */
#include "cuda_test.h"

int main(void) {
    test_init();
    int *ivar = (int *)nvshmem_calloc(1, sizeof(int));
    CHECK(ivar != nullptr, "nvshmem_calloc failed");
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    ready();
    nvshmemx_int_wait_until_on_stream(ivar, 9, 1, stream);
    fprintf(stderr, "FAIL: the wait with comparison 9 was accepted\n");
    nvshmem_finalize();
    return 0;
}
