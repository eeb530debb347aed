/* rshmem-test: pes=2 */
/* rshmem-expect: shmem_barrier: invalid active set \(PE_start 0, logPE_stride 1, PE_size 2\) in a job of 2 PEs: its last PE would be 2 */
/* An active set reaching past the last PE is refused by name. */
#include <shmem.h>

static long pSync[SHMEM_BARRIER_SYNC_SIZE] = {SHMEM_SYNC_VALUE};

int main(void) {
    shmem_init();
    shmem_barrier(0, 1, 2, pSync);
    shmem_finalize();
    return 0;
}
