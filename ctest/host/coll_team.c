/* rshmem-test: pes=1,2,4,7 */
/* Collectives on split teams: the even and odd PEs run different collectives at the same
 * time; a 2-D grid sums over its rows then over its columns (= the world sum); a nested team
 * broadcasts; everything interleaves with world collectives without crossing wires. */
#include <shmem.h>
#include "check.h"

#define MAXPE 64

static long src[MAXPE], dst[MAXPE], tmp[MAXPE];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs");

    shmem_team_t evens, odds = SHMEM_TEAM_INVALID;
    int neven = (npes + 1) / 2, nodd = npes / 2;
    CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, neven, NULL, 0, &evens), 0);
    if (nodd) CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, nodd, NULL, 0, &odds), 0);

    for (int it = 0; it < 50; it++) {
        if (me % 2 == 0) {
            /* evens: sum of (pe + it) over the even PEs, then fcollect of their numbers */
            src[0] = me + it;
            CHECK_EQ_LONG(shmem_long_sum_reduce(evens, dst, src, 1), 0);
            long want = 0;
            for (int k = 0; k < neven; k++) want += 2 * k + it;
            CHECK_EQ_LONG(dst[0], want);
            src[1] = me * 3;
            CHECK_EQ_LONG(shmem_long_fcollect(evens, tmp, src + 1, 1), 0);
            for (int k = 0; k < neven; k++) CHECK_EQ_LONG(tmp[k], 6 * k);
        } else {
            /* odds: broadcast from a rotating root, then max */
            int root = it % nodd;
            src[0] = 1000 * me + it;
            CHECK_EQ_LONG(shmem_long_broadcast(odds, dst, src, 1, root), 0);
            CHECK_EQ_LONG(dst[0], 1000 * (2 * root + 1) + it);
            src[1] = (me * 5 + it) % 7;
            CHECK_EQ_LONG(shmem_long_max_reduce(odds, tmp, src + 1, 1), 0);
            long want = 0;
            for (int k = 0; k < nodd; k++) want = ((2 * k + 1) * 5 + it) % 7 > want ? ((2 * k + 1) * 5 + it) % 7 : want;
            CHECK_EQ_LONG(tmp[0], want);
        }
        /* and a world collective between rounds */
        src[2] = 1;
        CHECK_EQ_LONG(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst + 2, src + 2, 1), 0);
        CHECK_EQ_LONG(dst[2], npes);
    }

    /* 2-D grid, rows of 3 (7 PEs: rows of 3, 3, 1; columns of 3, 2, 2). */
    shmem_team_t row, col;
    CHECK_EQ_LONG(shmem_team_split_2d(SHMEM_TEAM_WORLD, 3, NULL, 0, &row, NULL, 0, &col), 0);
    src[0] = me + 1;
    CHECK_EQ_LONG(shmem_long_sum_reduce(row, tmp, src, 1), 0); /* row total on every row member */
    /* Column 0 holds one PE per row: summing the row totals over column 0 gives the world sum. */
    if (shmem_team_my_pe(row) == 0) {
        CHECK_EQ_LONG(shmem_long_sum_reduce(col, dst, tmp, 1), 0);
        CHECK_EQ_LONG(dst[0], (long)npes * (npes + 1) / 2);
    }
    /* Column 0's members hand the world sum to their rows. */
    CHECK_EQ_LONG(shmem_long_broadcast(row, dst + 1, dst, 1, 0), 0);
    CHECK_EQ_LONG(dst[1], (long)npes * (npes + 1) / 2);
    /* Every column: collect the world numbers of its members. */
    src[3] = me;
    CHECK_EQ_LONG(shmem_long_collect(col, tmp, src + 3, 1), 0);
    for (int j = 0; j < shmem_team_n_pes(col); j++) CHECK_EQ_LONG(tmp[j], me % 3 + 3 * j);

    /* Nested: the evens' evens broadcast from their last member. */
    if (me % 2 == 0) {
        shmem_team_t q;
        int nq = (neven + 1) / 2;
        CHECK_EQ_LONG(shmem_team_split_strided(evens, 0, 2, nq, NULL, 0, &q), 0);
        if (q != SHMEM_TEAM_INVALID) {
            src[0] = -me;
            CHECK_EQ_LONG(shmem_long_broadcast(q, dst, src, 1, nq - 1), 0);
            CHECK_EQ_LONG(dst[0], -4 * (nq - 1));
            CHECK_EQ_LONG(shmem_team_sync(q), 0);
            shmem_team_destroy(q);
        }
    }

    shmem_team_destroy(row);
    shmem_team_destroy(col);
    shmem_team_destroy(evens);
    if (odds != SHMEM_TEAM_INVALID) shmem_team_destroy(odds);
    shmem_barrier_all();
    if (me == 0) printf("coll_team: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
