/* rshmem-expect: shmem_barrier_all: has waited 1 s for PE 1 \(PE 1 is not waiting in any SHMEM routine.*ending the job \(RSHMEM_HANG_ACTION=abort\)
   rshmem-test: pes=2
   PE 1 skips a barrier and computes: with RSHMEM_HANG_TIMEOUT=1 and RSHMEM_HANG_ACTION=abort,
   PE 0's barrier must name PE 1 and say that PE 1 is not in any SHMEM routine, then end the
   job (it used to hang without a word). */
#include <shmem.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    setenv("RSHMEM_HANG_TIMEOUT", "1", 1);
    setenv("RSHMEM_HANG_ACTION", "abort", 1);
    shmem_init();
    if (shmem_my_pe() == 1)
        sleep(25); /* "computing", never reaching the barrier in time */
    else
        shmem_barrier_all();
    shmem_finalize();
    return 0;
}
