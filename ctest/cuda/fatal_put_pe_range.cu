/* rshmem-cuda-test: pes=2
 * rshmem-expect: nvshmem_int_p: PE 7 is out of range: this job has [0-9]+ PEs
 * A host `p` to a PE the job does not have stops the job with the routine and the PE count. */
#include "cuda_test.h"

int main(void) {
    test_init();
    int *dest = (int *)nvshmem_malloc(sizeof(int));
    CHECK(dest != nullptr, "nvshmem_malloc failed");
    ready();
    nvshmem_int_p(dest, 1, 7);
    fprintf(stderr, "FAIL: nvshmem_int_p to PE 7 returned\n");
    nvshmem_finalize();
    return 0;
}
