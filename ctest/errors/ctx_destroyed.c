/* rshmem-expect: shmem_ctx_long_g: invalid context 0x[0-9a-f]+: it was destroyed
 * rshmem-test: pes=1,2
 * Using a context after shmem_ctx_destroy is a named error, even when its slot was reused. */
#include <shmem.h>

int main(void) {
    static long x;
    shmem_ctx_t a, b;
    shmem_init();
    shmem_ctx_create(0, &a);
    shmem_ctx_destroy(a);
    shmem_ctx_create(0, &b); /* reuses a's slot under a new generation */
    shmem_ctx_long_g(b, &x, 0);
    shmem_ctx_long_g(a, &x, 0);
    shmem_finalize();
    return 0;
}
