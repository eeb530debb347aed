/* rshmem-expect: shmem_ctx_int_p: PE -?[0-9]+ is out of range for the context's team
 * rshmem-test: pes=1,3
 * A team context numbers PEs within its team; a PE outside it is a named error. */
#include <shmem.h>

int main(void) {
    static int x;
    shmem_ctx_t ctx;
    shmem_init();
    if (shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &ctx) != 0) return 0; /* would not fail */
    shmem_ctx_int_p(ctx, &x, 1, shmem_n_pes());
    shmem_finalize();
    return 0;
}
