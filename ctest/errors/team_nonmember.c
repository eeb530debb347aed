/* rshmem-test: pes=2,4 */
/* rshmem-expect: shmem_team_sync: the team is SHMEM_TEAM_INVALID: this PE is not a member */
/* A PE left out of a split gets SHMEM_TEAM_INVALID; using it in a collective is an error that
 * names the routine (not a hang). */
#include <shmem.h>

int main(void) {
    shmem_init();
    shmem_team_t first;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &first);
    shmem_team_sync(first); /* PE 0 is alone in it; the others pass SHMEM_TEAM_INVALID */
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
