/* rshmem-test: pes=1,2,4,7
 * Ordering: a producer puts a data block, then shmem_fence (or ctx fence, or quiet), then sets a
 * flag with p. The consumer spins on the flag with volatile loads, calls shmem_quiet, and must
 * find the whole block of that round. Every PE produces for its right neighbour and consumes
 * from its left; an acknowledgement flag keeps the producer one round at a time. */
#include <sched.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

#define SMALL 1024              /* longs per small round */
#define LARGE (8u << 20)        /* bytes per large round (big enough for streaming copies) */
#define ROUNDS 120

static long flag;               /* round number the left neighbour announced */
static long ack;                /* round number the right neighbour has verified */

static void wait_for(volatile long *v, long want) {
    while (*v < want) sched_yield();
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *small = shmem_malloc(SMALL * sizeof(long));
    unsigned char *large = shmem_malloc(LARGE);
    long *src = malloc(SMALL * sizeof(long));
    unsigned char *lsrc = malloc(LARGE);
    shmem_ctx_t ctx;
    CHECK(small && large && src && lsrc, "allocation failed");
    CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    shmem_barrier_all();

    for (long r = 1; r <= ROUNDS; r++) {
        int big = r % 40 == 0;
        int how = r % 3; /* 0: shmem_fence, 1: ctx put + ctx fence, 2: shmem_quiet */
        if (big) {
            memset(lsrc, (int)(r + me), LARGE);
            shmem_putmem(large, lsrc, LARGE, right);
        } else {
            for (int i = 0; i < SMALL; i++) src[i] = r * 1000003L + me * 1009L + i;
            if (how == 1) shmem_ctx_long_put_nbi(ctx, small, src, SMALL, right);
            else shmem_long_put(small, src, SMALL, right);
        }
        if (how == 0) shmem_fence();
        else if (how == 1) shmem_ctx_fence(ctx);
        else shmem_quiet();
        if (how == 1) shmem_ctx_long_p(ctx, &flag, r, right);
        else shmem_long_p(&flag, r, right);

        /* Consume the left neighbour's round r. */
        wait_for(&flag, r);
        shmem_quiet();
        if (big) {
            for (size_t j = 0; j < LARGE; j += 4093)
                CHECK(large[j] == (unsigned char)(r + left), "round %ld: large byte %zu is stale", r, j);
            CHECK(large[LARGE - 1] == (unsigned char)(r + left), "round %ld: last large byte is stale", r);
        } else {
            for (int i = 0; i < SMALL; i++)
                CHECK(small[i] == r * 1000003L + left * 1009L + i, "round %ld: element %d arrived after the flag", r, i);
        }
        shmem_long_p(&ack, r, left);
        /* Wait until the right neighbour has verified this round before overwriting its data. */
        wait_for(&ack, r);
    }
    shmem_barrier_all();
    CHECK_EQ_LONG(flag, ROUNDS);
    CHECK_EQ_LONG(ack, ROUNDS);
    shmem_ctx_destroy(ctx);
    shmem_free(small);
    shmem_free(large);
    free(src);
    free(lsrc);
    if (me == 0) printf("rma_order: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
