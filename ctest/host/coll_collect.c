/* rshmem-test: pes=1,2,4,7 */
/* collect (a different element count per PE, zero included), fcollect, and their mem forms,
 * on the world team and on the odd PEs' team. */
#include <shmem.h>
#include "check.h"

#define MAXPE 64
#define F 5

/* PE p contributes count(p) elements; some contribute none. */
static int count(int p) { return (p * 5 + 2) % 4; }

static void check_collect(shmem_team_t team) {
    int me = shmem_my_pe();
    int n = shmem_team_n_pes(team);
    int mine = count(me);
    long *src = shmem_malloc(4 * sizeof(long));
    long *dst = shmem_malloc(4 * MAXPE * sizeof(long) + sizeof(long));
    for (int i = 0; i < mine; i++) src[i] = me * 100 + i;
    int total = 0;
    for (int k = 0; k < n; k++) total += count(shmem_team_translate_pe(team, k, SHMEM_TEAM_WORLD));
    for (int i = 0; i <= total; i++) dst[i] = -1;
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_long_collect(team, dst, src, mine), 0);
    int at = 0;
    for (int k = 0; k < n; k++) {
        int pe = shmem_team_translate_pe(team, k, SHMEM_TEAM_WORLD);
        for (int i = 0; i < count(pe); i++, at++) CHECK_EQ_LONG(dst[at], pe * 100 + i);
    }
    CHECK_EQ_LONG(dst[total], -1); /* nothing written past the end */

    /* collectmem: bytes */
    char *bsrc = shmem_malloc(4), *bdst = shmem_malloc(4 * MAXPE + 1);
    for (int i = 0; i < mine; i++) bsrc[i] = (char)('a' + me + i);
    bdst[total] = '#';
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_collectmem(team, bdst, bsrc, mine), 0);
    at = 0;
    for (int k = 0; k < n; k++) {
        int pe = shmem_team_translate_pe(team, k, SHMEM_TEAM_WORLD);
        for (int i = 0; i < count(pe); i++, at++) CHECK_EQ_LONG(bdst[at], (char)('a' + pe + i));
    }
    CHECK_EQ_LONG(bdst[total], '#');

    /* fcollect: F each */
    int *fsrc = shmem_malloc(F * sizeof(int)), *fdst = shmem_malloc(F * MAXPE * sizeof(int));
    for (int i = 0; i < F; i++) fsrc[i] = me * 10 + i;
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_int_fcollect(team, fdst, fsrc, F), 0);
    for (int k = 0; k < n; k++) {
        int pe = shmem_team_translate_pe(team, k, SHMEM_TEAM_WORLD);
        for (int i = 0; i < F; i++) CHECK_EQ_LONG(fdst[k * F + i], pe * 10 + i);
    }
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_fcollectmem(team, fdst, fsrc, 3), 0); /* 3 bytes each */
    for (int k = 0; k < n; k++) {
        int pe = shmem_team_translate_pe(team, k, SHMEM_TEAM_WORLD);
        int want = pe * 10;
        for (int b = 0; b < 3; b++) CHECK_EQ_LONG(((unsigned char *)fdst)[k * 3 + b], ((unsigned char *)&want)[b]);
    }
    /* Zero elements everywhere: a no-op that still synchronises. */
    CHECK_EQ_LONG(shmem_int_fcollect(team, fdst, fsrc, 0), 0);
    CHECK_EQ_LONG(shmem_int_collect(team, fdst, fsrc, 0), 0);

    shmem_team_sync(team);
    shmem_free(fdst);
    shmem_free(fsrc);
    shmem_free(bdst);
    shmem_free(bsrc);
    shmem_free(dst);
    shmem_free(src);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs");

    check_collect(SHMEM_TEAM_WORLD);

    /* Odd PEs on their own team; even PEs on theirs, concurrently. */
    shmem_team_t evens, odds = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds);
    /* shmem_malloc is collective over the world: both halves allocate the same amounts in
     * check_collect, so the heaps stay symmetric. */
    check_collect(me % 2 ? odds : evens);

    shmem_barrier_all();
    if (me == 0) printf("coll_collect: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
