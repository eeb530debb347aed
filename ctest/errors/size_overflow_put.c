/* rshmem-expect: shmem_putmem: address 0x[0-9a-f]+ \(18446744073709551615 bytes\) is not symmetric
   rshmem-test: pes=1,2
   A put of SIZE_MAX bytes to a symmetric address runs past every symmetric object: the
   message names the size. */
#include <shmem.h>
#include <stdint.h>

static long target;

int main(void) {
    shmem_init();
    long v = 1;
    shmem_putmem(&target, &v, SIZE_MAX, 0);
    shmem_finalize();
    return 0;
}
