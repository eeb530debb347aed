/* rshmem-test: pes=2,3 */
/* rshmem-expect: PE [0-9]+ passed PE_root = [0-9]+ but this PE \([0-9]+\) passed PE_root = [0-9]+ */
/* Members that name different roots for one (small) broadcast get an error naming PE_root. */
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
