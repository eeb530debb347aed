/* rshmem-test: pes=1,2,4,7
 * The handoff of tests-mellanox data.tc38 (which failed once at 2 PEs on 2 hosts in session 31,
 * results/suites-2026-11-29g/): each round every PE fills its block with -1, a barrier, then
 * each puts a block to its right neighbour, fences, sets the neighbour's flag with p and waits
 * for its own; the block must hold the whole round's data. Sizes grow from 1 KiB to 127 KiB
 * by 1 KiB, so the rounds cross the fabric transport's packed puts and its in-place ones. */
#include <shmem.h>
#include <stdlib.h>
#include "check.h"

#define ROUNDS 127
#define WORDS (ROUNDS * 128) /* longs: 1 KiB per round */

static int flag;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *block = shmem_malloc(WORDS * sizeof(long));
    long *src = malloc(WORDS * sizeof(long));
    CHECK(block && src, "allocation failed");

    for (long r = 1; r <= ROUNDS; r++) {
        long words = r * 128;
        for (long i = 0; i < words; i++) block[i] = -1;
        shmem_barrier_all();
        for (long i = 0; i < words; i++) src[i] = r * 1000003L + me * 7919L + i;
        shmem_long_put(block, src, (size_t)words, right);
        shmem_fence();
        shmem_int_p(&flag, 1, right);
        shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1);
        flag = 0;
        for (long i = 0; i < words; i++)
            CHECK(block[i] == r * 1000003L + left * 7919L + i, "round %ld (%ld KiB): element %ld is %ld after the flag", r, r,
                  i, block[i]);
    }
    shmem_barrier_all();
    shmem_free(block);
    free(src);
    shmem_finalize();
    return 0;
}
