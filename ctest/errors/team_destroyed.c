/* rshmem-test: pes=1,2 */
/* rshmem-expect: shmem_int_sum_reduce: team #[0-9]+ is not a live team on this PE */
/* A destroyed team's handle is refused by name. */
#include <shmem.h>

static int src, dst;

int main(void) {
    shmem_init();
    shmem_team_t t;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &t);
    shmem_team_destroy(t);
    shmem_int_sum_reduce(t, &dst, &src, 1);
    shmem_finalize();
    return 0;
}
