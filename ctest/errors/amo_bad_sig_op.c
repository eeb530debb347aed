/* rshmem-expect: shmem_putmem_signal: sig_op = 7 is not a signal operator
 * rshmem-test: pes=1,2
 * put-with-signal takes SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD only. */
#include "check.h"

static uint64_t sig;
static char data[16];

int main(void) {
    shmem_init();
    char src[16] = "payload";
    shmem_putmem_signal(data, src, sizeof src, &sig, 1, 7, 0);
    fprintf(stderr, "the bad signal operation returned\n");
    shmem_finalize();
    return 0;
}
