/* rshmem-expect: shmem_ctx_int_put: invalid context: SHMEM_CTX_INVALID
 * rshmem-test: pes=1,2
 * RMA through SHMEM_CTX_INVALID (e.g. an unchecked failed shmem_ctx_create) is a named error. */
#include <shmem.h>

int main(void) {
    static int x[4];
    int src[4] = {0};
    shmem_init();
    shmem_ctx_int_put(SHMEM_CTX_INVALID, x, src, 4, 0);
    shmem_finalize();
    return 0;
}
