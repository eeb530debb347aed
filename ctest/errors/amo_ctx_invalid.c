/* rshmem-expect: shmem_ctx_long_atomic_fetch_add: invalid context
 * rshmem-test: pes=1,2
 * An AMO through SHMEM_CTX_INVALID is a named error. */
#include "check.h"

static long x;

int main(void) {
    shmem_init();
    shmem_ctx_long_atomic_fetch_add(SHMEM_CTX_INVALID, &x, 1, 0);
    fprintf(stderr, "the AMO through SHMEM_CTX_INVALID returned\n");
    shmem_finalize();
    return 0;
}
