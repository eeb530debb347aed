/* rshmem-expect: shmem_int_wait_until: has waited 1 s for the value at 0x[0-9a-f]+ to be == 7 \(it is 3\); ending the job
   rshmem-test: pes=1,2
   A wait_until that nobody satisfies names the address, the comparison and the current value
   once RSHMEM_HANG_TIMEOUT passes (here ending the job, as RSHMEM_HANG_ACTION=abort asks). */
#include <shmem.h>
#include <stdlib.h>

static int flag = 3;

int main(void) {
    setenv("RSHMEM_HANG_TIMEOUT", "1", 1);
    setenv("RSHMEM_HANG_ACTION", "abort", 1);
    shmem_init();
    shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 7);
    shmem_finalize();
    return 0;
}
