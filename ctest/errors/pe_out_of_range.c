/* rshmem-expect: shmem_putmem: PE [0-9]+ is out of range: this job has [0-9]+ PEs
   rshmem-test: pes=1,2
   A put to PE n_pes (one past the last) must name the bad PE and the valid range. */
#include <shmem.h>

static long target;

int main(void) {
    shmem_init();
    long v = 1;
    shmem_putmem(&target, &v, sizeof v, shmem_n_pes());
    shmem_finalize();
    return 0;
}
