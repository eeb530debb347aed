/* rshmem-test: pes=1,2
 * The runtime's reserved area below the first heap block is not symmetric memory for the
 * program: shmem_addr_accessible says so and shmem_ptr gives NULL, while the block itself is
 * accessible. */
#include <shmem.h>
#include "check.h"

int main(void) {
    shmem_init();
    int npes = shmem_n_pes();
    char *p = shmem_malloc(64);
    for (int pe = 0; pe < npes; pe++) {
        CHECK(shmem_addr_accessible(p, pe) == 1, "the block is accessible on PE %d", pe);
        for (int back = 1; back <= 64; back *= 2) {
            CHECK(shmem_addr_accessible(p - back, pe) == 0, "%d bytes below the first block is accessible on PE %d", back, pe);
            CHECK(shmem_ptr(p - back, pe) == NULL, "shmem_ptr of %d bytes below the first block on PE %d", back, pe);
        }
    }
    shmem_free(p);
    shmem_finalize();
    return 0;
}
