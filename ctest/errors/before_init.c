/* rshmem-expect: shmem_putmem: called before shmem_init.*call shmem_init
   rshmem-test: pes=1,2
   A put before shmem_init must be refused with a message naming the routine and the fix. */
#include <shmem.h>

static long target;

int main(void) {
    long v = 1;
    shmem_putmem(&target, &v, sizeof v, 0);
    shmem_init();
    return 0;
}
