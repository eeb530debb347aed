/* rshmem-test: pes=2,3 */
/* rshmem-expect: shmem_long_broadcast.*PE_root */
/* Members that name different roots for one (small) broadcast get an error naming the
 * broadcast and PE_root, not a hang. */
#include <shmem.h>

static long a[4], b[4];

int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    /* PE 0 and PE 1 each think they are the root; a third PE follows PE 1. */
    shmem_long_broadcast(SHMEM_TEAM_WORLD, a, b, 4, me == 0 ? 0 : 1);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
