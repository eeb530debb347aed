/* rshmem-test: pes=1,2,4
 * SHMEM_SYMMETRIC_SIZE is what the program may allocate: the runtime's own area and the
 * allocator's bookkeeping come on top. For each size (8 KiB, 512 KiB, 1 MiB) the job starts
 * with exactly that heap, allocates all of it in one block, then again in 4 page-aligned
 * blocks and in 16 blocks, each written by a neighbour to show it is symmetric. */
#include <shmem.h>
#include <stdlib.h>
#include "check.h"

static void fill_and_check(char *p, size_t n, int me, int npes) {
    /* The left neighbour writes the first and the last byte of our block. */
    char mark = (char)(me + 1);
    shmem_char_p(p, mark, (me + 1) % npes);
    shmem_char_p(p + n - 1, mark, (me + 1) % npes);
    shmem_barrier_all();
    char want = (char)((me + npes - 1) % npes + 1);
    CHECK(p[0] == want && p[n - 1] == want, "block of %zu bytes: read %d/%d, want %d", n, p[0], p[n - 1], want);
    shmem_barrier_all();
}

int main(void) {
    static const char *sizes[] = {"8K", "512K", "1M"};
    static const size_t bytes[] = {8 << 10, 512 << 10, 1 << 20};
    unsetenv("RSHMEM_SYMMETRIC_SIZE");
    for (int s = 0; s < 3; s++) {
        setenv("SHMEM_SYMMETRIC_SIZE", sizes[s], 1);
        shmem_init();
        int me = shmem_my_pe(), npes = shmem_n_pes();
        size_t n = bytes[s];
        char *one = shmem_malloc(n);
        CHECK(one != NULL, "SHMEM_SYMMETRIC_SIZE=%s: shmem_malloc(%zu) returned NULL", sizes[s], n);
        fill_and_check(one, n, me, npes);
        shmem_free(one);
        char *four[4];
        for (int i = 0; i < 4; i++) {
            four[i] = shmem_align(4096, n / 4);
            CHECK(four[i] != NULL, "SHMEM_SYMMETRIC_SIZE=%s: aligned block %d of %zu bytes returned NULL", sizes[s], i, n / 4);
            fill_and_check(four[i], n / 4, me, npes);
        }
        for (int i = 0; i < 4; i++) shmem_free(four[i]);
        char *sixteen[16];
        for (int i = 0; i < 16; i++) {
            sixteen[i] = shmem_malloc(n / 16);
            CHECK(sixteen[i] != NULL, "SHMEM_SYMMETRIC_SIZE=%s: block %d of %zu bytes returned NULL", sizes[s], i, n / 16);
        }
        fill_and_check(sixteen[15], n / 16, me, npes);
        for (int i = 0; i < 16; i++) shmem_free(sixteen[i]);
        shmem_finalize();
    }
    return 0;
}
