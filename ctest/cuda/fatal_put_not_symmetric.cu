/* rshmem-cuda-test: pes=2
 * rshmem-expect: nvshmem_putmem: address 0x[0-9a-f]+ \(64 bytes\) is not inside the GPU symmetric heap.*allocate it with nvshmem_malloc
 * A host put whose destination is ordinary cudaMalloc memory (not from nvshmem_malloc) is the
 * CPU runtime's named error, in GPU terms: the job stops with the routine, the address and the
 * fix, instead of writing somewhere on the peer. */
#include "cuda_test.h"

int main(void) {
    test_init();
    char *not_symmetric = nullptr, src[64] = {0};
    CUDA_CHECK(cudaMalloc(&not_symmetric, 64));
    ready();
    nvshmem_putmem(not_symmetric, src, 64, (test_pe + 1) % nvshmem_n_pes());
    fprintf(stderr, "FAIL: nvshmem_putmem to a non-symmetric address returned\n");
    nvshmem_finalize();
    return 0;
}
