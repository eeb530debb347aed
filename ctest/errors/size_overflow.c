/* rshmem-expect: shmem_calloc: [0-9]+ elements of 8 bytes overflow size_t
   rshmem-test: pes=1,2
   count * size that does not fit in size_t must be reported as an overflow, not wrap around
   into a small allocation. */
#include <shmem.h>
#include <stdint.h>

int main(void) {
    shmem_init();
    void *p = shmem_calloc(SIZE_MAX / 4, 8);
    shmem_free(p);
    shmem_finalize();
    return 0;
}
