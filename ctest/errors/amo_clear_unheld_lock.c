/* rshmem-expect: shmem_clear_lock: the lock at 0x[0-9a-f]+ is not held
 * rshmem-test: pes=1,2
 * Releasing a lock nobody holds is a named error. */
#include "check.h"

static long lock;

int main(void) {
    shmem_init();
    if (shmem_my_pe() == 0) shmem_clear_lock(&lock);
    shmem_barrier_all();
    fprintf(stderr, "clearing a free lock returned\n");
    shmem_finalize();
    return 0;
}
