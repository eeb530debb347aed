/* rshmem-expect: PE (0 is in shmem_malloc while this PE \(1\) is in shmem_barrier_all|1 is in a barrier or sync .* while this PE \(0\) is in shmem_malloc)
   rshmem-test: pes=2
   shmem_malloc on PE 0 against shmem_barrier_all on PE 1: the barrier inside shmem_malloc
   used to pair with the user's barrier and the job hung later without a word; now each side
   is named. */
#include <shmem.h>

int main(void) {
    shmem_init();
    if (shmem_my_pe() == 0)
        shmem_malloc(64);
    else
        shmem_barrier_all();
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
