/* rshmem-cuda-test: pes=2
 * rshmem-expect: nvshmemx_long_wait_until_all_vector_on_stream: cmp_values is NULL: pass one compare value per variable
 * The vector form of the on-stream wait needs one compare value per variable: NULL is refused
 * with the routine's name, not read on the GPU. */
#include "cuda_test.h"

int main(void) {
    test_init();
    long *ivars = (long *)nvshmem_calloc(4, sizeof(long));
    CHECK(ivars != nullptr, "nvshmem_calloc failed");
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    ready();
    nvshmemx_long_wait_until_all_vector_on_stream(ivars, 4, nullptr, NVSHMEM_CMP_EQ, nullptr, stream);
    fprintf(stderr, "FAIL: the vector wait without compare values was accepted\n");
    nvshmem_finalize();
    return 0;
}
