/* rshmem-expect: shmem_malloc: cannot allocate 67108864 bytes.*set RSHMEM_SYMMETRIC_SIZE
   rshmem-test: pes=1,2
   With RSHMEM_ABORT_ON_OOM=1 and a 1 MiB symmetric heap, a 64 MiB shmem_malloc ends the job
   with a message naming the size and the variable that sets the heap size (without the
   setting it returns NULL: host/heap_exhausted_null.c). */
#include <shmem.h>
#include <stdlib.h>

int main(void) {
    setenv("RSHMEM_SYMMETRIC_SIZE", "1M", 1);
    setenv("RSHMEM_ABORT_ON_OOM", "1", 1);
    shmem_init();
    void *p = shmem_malloc(64 << 20);
    shmem_free(p);
    shmem_finalize();
    return 0;
}
