/* rshmem-expect: shmem_long_atomic_fetch_add: address 0x[0-9a-f]+ is misaligned.*8 bytes
 * rshmem-test: pes=1,2
 * An AMO on an address that is not aligned to its type's size is a named error on every PE. */
#include "check.h"

int main(void) {
    shmem_init();
    char *buf = shmem_malloc(64);
    long *bad = (long *)(buf + 4);
    shmem_long_atomic_fetch_add(bad, 1, shmem_n_pes() - 1);
    fprintf(stderr, "the misaligned AMO returned\n");
    shmem_finalize();
    return 0;
}
