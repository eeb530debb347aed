/* rshmem-test: pes=1,2,4,7 */
/* Broadcasts with every root and reductions, each with data that fits a message and data the
 * members read from each other (1, 41 and 5000 elements), on the world team and on a team of
 * every other PE, reductions in place and not. Over namespaced hosts (ctest/multihost: 7 PEs
 * as 3+2+2, 4 as 2+1+1) these run hierarchically (src/runtime/coll/hosts.rs): trees and
 * recursive doubling between hosts, relays inside them. Every value is checked on every PE;
 * reductions of doubles use whole numbers, so the sum is exact whatever the order, and every
 * PE must get the same bits. */
#include <string.h>
#include <shmem.h>
#include "check.h"

#define MAXN 5000
static const int sizes[] = {1, 41, MAXN};

static long lsrc[MAXN], ldst[MAXN];
static double dsrc[MAXN], ddst[MAXN];
static int isrc[MAXN], idst[MAXN];

/* What member m of a team contributes at element i. */
static long lval(int m, int i) { return (long)m * 100003 + i; }
static double dval(int m, int i) { return (double)(m * 7 + i % 13); }

static void broadcasts(shmem_team_t team, const char *what) {
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int len = sizes[s];
        for (int root = 0; root < n; root++) {
            for (int i = 0; i < len; i++) {
                lsrc[i] = lval(me, i);
                ldst[i] = -1;
            }
            shmem_team_sync(team);
            CHECK_EQ_LONG(shmem_long_broadcast(team, ldst, lsrc, len, root), 0);
            for (int i = 0; i < len; i++)
                CHECK(ldst[i] == lval(root, i) && lsrc[i] == lval(me, i), "%s broadcast of %d from root %d: ldst[%d] = %ld",
                      what, len, root, i, ldst[i]);
            shmem_team_sync(team);
        }
    }
}

static void reductions(shmem_team_t team, const char *what) {
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int len = sizes[s];
        for (int in_place = 0; in_place < 2; in_place++) {
            long *ld = in_place ? lsrc : ldst;
            double *dd = in_place ? dsrc : ddst;
            for (int i = 0; i < len; i++) {
                lsrc[i] = lval(me, i);
                dsrc[i] = dval(me, i);
                isrc[i] = (me + i) % n;
                ldst[i] = ddst[i] = idst[i] = -1;
            }
            shmem_team_sync(team);
            CHECK_EQ_LONG(shmem_long_sum_reduce(team, ld, lsrc, len), 0);
            CHECK_EQ_LONG(shmem_double_sum_reduce(team, dd, dsrc, len), 0);
            CHECK_EQ_LONG(shmem_int_max_reduce(team, idst, isrc, len), 0);
            long msum = (long)n * (n - 1) / 2;
            for (int i = 0; i < len; i++) {
                double dwant = 0;
                for (int m = 0; m < n; m++) dwant += dval(m, i);
                CHECK(ld[i] == msum * 100003 + (long)n * i, "%s sum of %d%s: [%d] = %ld", what, len,
                      in_place ? " in place" : "", i, ld[i]);
                CHECK(dd[i] == dwant, "%s double sum of %d%s: [%d] = %g, want %g", what, len, in_place ? " in place" : "",
                      i, dd[i], dwant);
                CHECK_EQ_LONG(idst[i], n - 1);
            }
            shmem_team_sync(team);
        }
    }
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    broadcasts(SHMEM_TEAM_WORLD, "world");
    reductions(SHMEM_TEAM_WORLD, "world");

    /* Every other PE (on hosts spread 3+2+2 that is members 0, 2, 4, 6 on hosts 1, 1, 2, 3). */
    shmem_team_t evens, odds = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds);
    shmem_team_t half = me % 2 ? odds : evens;
    broadcasts(half, "half");
    reductions(half, "half");

    shmem_barrier_all();
    if (me == 0) printf("coll_roots_sizes: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
