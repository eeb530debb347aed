/* rshmem-expect: shmem_int_wait_until_any: cmp = 9 is not a comparison operator
 * rshmem-test: pes=1,2
 * A comparison constant outside SHMEM_CMP_EQ..SHMEM_CMP_GE is a named error, not a hang. */
#include "check.h"

static int flags[4];

int main(void) {
    shmem_init();
    shmem_int_wait_until_any(flags, 4, NULL, 9, 1);
    fprintf(stderr, "the wait with a bad cmp returned\n");
    shmem_finalize();
    return 0;
}
