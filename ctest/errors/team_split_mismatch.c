/* rshmem-test: pes=2,4 */
/* rshmem-expect: shmem_team_split_strided: PE [0-9]+ passed size = [0-9]+ but this PE \([0-9]+\) passed size = [0-9]+ */
/* Members of the parent must pass the same triplet; a disagreement is named, not a hang. */
#include <shmem.h>

int main(void) {
    shmem_init();
    shmem_team_t t;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_my_pe() == 0 ? 1 : 2, NULL, 0, &t);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
