/* rshmem-test: pes=1,2,4
 * shmem_align returns addresses aligned in absolute terms (not only relative to the heap
 * base) for every alignment from 16 bytes to 2 MiB, at the same place on every PE: a put from
 * the left neighbour to the returned address lands in this PE's block. */
#include <shmem.h>
#include <stdint.h>
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    void *small = shmem_malloc(24); /* so the next block does not start at the heap's first byte */
    CHECK(small != NULL, "malloc");
    for (size_t align = 16; align <= (2u << 20); align *= 2) {
        long *p = shmem_align(align, 3 * sizeof(long));
        CHECK(p != NULL, "shmem_align(%zu) returned NULL", align);
        CHECK((uintptr_t)p % align == 0, "shmem_align(%zu) returned %p, which is not aligned", align, (void *)p);
        long v = (long)align * 100 + me;
        shmem_long_p(p + 1, v, (me + 1) % npes);
        shmem_barrier_all();
        long want = (long)align * 100 + (me + npes - 1) % npes;
        CHECK(p[1] == want, "alignment %zu: the left neighbour's put landed elsewhere (read %ld, want %ld)", align, p[1], want);
        shmem_barrier_all();
        shmem_free(p);
    }
    shmem_free(small);
    if (me == 0) printf("heap_align: 16 B .. 2 MiB alignments are absolute and symmetric\n");
    shmem_finalize();
    return 0;
}
