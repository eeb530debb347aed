/* rshmem-test: pes=2,4 */
/* rshmem-expect: PE [0-9]+ is in shmem_[a-z]+_(sum_reduce|broadcast) while this PE \([0-9]+\) is in shmem_[a-z]+_(sum_reduce|broadcast) */
/* Members of a team calling different collectives get an error naming both. */
#include <shmem.h>

static long a[4], b[4];

int main(void) {
    shmem_init();
    if (shmem_my_pe() == 0)
        shmem_long_broadcast(SHMEM_TEAM_WORLD, a, b, 4, 0);
    else
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, a, b, 4);
    shmem_finalize();
    return 0;
}
