/* rshmem-expect: shmem_ctx_destroy: the default context \(SHMEM_CTX_DEFAULT\) cannot be destroyed
 * rshmem-test: pes=1,2
 * The default context lives as long as the library. */
#include <shmem.h>

int main(void) {
    shmem_init();
    shmem_ctx_destroy(SHMEM_CTX_DEFAULT);
    shmem_finalize();
    return 0;
}
