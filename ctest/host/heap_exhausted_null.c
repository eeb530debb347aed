/* rshmem-test: pes=1,2,4
 * Running out of symmetric heap is not fatal: shmem_malloc, shmem_calloc, shmem_align and
 * shmem_realloc return NULL on every PE (as OpenSHMEM specifies), with one warning naming the
 * routine, the size and the setting to raise; realloc leaves the old block intact; and the heap
 * stays usable and symmetric for the allocations that follow. */
#define _GNU_SOURCE
#include <shmem.h>
#include <stdlib.h>
#include <string.h>
#include "capture.h"

#define TOO_BIG ((size_t)64 << 20)

static void expect_warning(const char *text, const char *what) {
    CHECK(strstr(text, what) != NULL, "stderr lacks \"%s\": %s", what, text);
    CHECK(strstr(text, "RSHMEM_SYMMETRIC_SIZE") != NULL, "the warning names no setting: %s", text);
}

int main(void) {
    unsetenv("RSHMEM_ABORT_ON_OOM");
    setenv("RSHMEM_SYMMETRIC_SIZE", "1M", 1);
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *keep = shmem_malloc(16 * sizeof(long));
    CHECK(keep != NULL, "a small block");
    for (int i = 0; i < 16; i++) keep[i] = me * 100 + i;

    stderr_begin();
    void *a = shmem_malloc(TOO_BIG);
    void *b = shmem_calloc(TOO_BIG / 8, 8);
    void *c = shmem_align(4096, TOO_BIG);
    long *d = shmem_realloc(keep, TOO_BIG);
    char *text = stderr_end();
    CHECK(a == NULL && b == NULL && c == NULL && d == NULL, "got %p %p %p %p, want NULL", a, b, c, (void *)d);
    expect_warning(text, "shmem_malloc: cannot allocate 67108864 bytes");
    expect_warning(text, "shmem_calloc: cannot allocate 67108864 bytes");
    expect_warning(text, "shmem_align: cannot allocate 67108864 bytes");
    expect_warning(text, "shmem_realloc: cannot allocate 67108864 bytes");
    free(text);
    for (int i = 0; i < 16; i++) CHECK_EQ_LONG(keep[i], me * 100 + i);

    /* The heap is still symmetric: a new block gets the neighbour's put. */
    long *next = shmem_malloc(512 * 1024);
    CHECK(next != NULL, "an allocation that fits, after the failures");
    shmem_long_p(next + 7, 1000 + me, (me + 1) % npes);
    shmem_long_p(keep + 3, 2000 + me, (me + 1) % npes);
    shmem_barrier_all();
    CHECK_EQ_LONG(next[7], 1000 + (me + npes - 1) % npes);
    CHECK_EQ_LONG(keep[3], 2000 + (me + npes - 1) % npes);
    shmem_free(next);
    shmem_free(keep);
    shmem_finalize();
    return 0;
}
