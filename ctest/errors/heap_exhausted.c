/* rshmem-expect: shmem_malloc: cannot allocate 2097152 bytes.*set RSHMEM_SYMMETRIC_SIZE
   rshmem-test: pes=1,2
   With a 1 MiB symmetric heap, a 2 MiB shmem_malloc must fail naming the size and the
   variable that sets the heap size. */
#include <shmem.h>
#include <stdlib.h>

int main(void) {
    setenv("RSHMEM_SYMMETRIC_SIZE", "1M", 1);
    shmem_init();
    void *p = shmem_malloc(2 << 20);
    shmem_free(p);
    shmem_finalize();
    return 0;
}
