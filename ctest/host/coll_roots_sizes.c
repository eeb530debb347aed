/* rshmem-test: pes=1,2,4,7 */
/* Broadcasts with every root, reductions, fcollect, collect (a different count per member)
 * and alltoall, each with data that fits a message and data the members read from each other
 * (1, 41 and 5000 elements), on the world team and on a team of every other PE, reductions in
 * place and not. Over namespaced hosts (ctest/multihost: 7 PEs as 3+2+2, 4 as 2+1+1) these run
 * hierarchically (src/runtime/coll/hosts.rs): trees and recursive doubling between hosts,
 * blocks aggregated per host, relays inside them. Every value is checked on every PE;
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

/* Element i of the block member m gives member j in an alltoall (j < 0: in a collect). */
static long gval(int m, int j, int i) { return (long)m * 1000003 + (long)(j + 1) * 10007 + i; }
/* Member m's count in a collect of about len elements. */
static int ccount(int m, int len) { return len + m % 3 * 7; }

static void gathers(shmem_team_t team, const char *what, long *src, long *dst) {
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int len = sizes[s];
        /* fcollect: len each, in member order */
        for (int i = 0; i < len; i++) src[i] = gval(me, -1, i);
        for (int i = 0; i < n * len; i++) dst[i] = -1;
        shmem_team_sync(team);
        CHECK_EQ_LONG(shmem_long_fcollect(team, dst, src, len), 0);
        for (int m = 0; m < n; m++)
            for (int i = 0; i < len; i++)
                CHECK(dst[m * len + i] == gval(m, -1, i), "%s fcollect of %d: member %d's [%d] = %ld", what, len, m, i,
                      dst[m * len + i]);
        shmem_team_sync(team);
        /* collect: member m gives ccount(m, len) */
        int mine = ccount(me, len), total = 0;
        for (int i = 0; i < mine; i++) src[i] = gval(me, -1, i);
        for (int m = 0; m < n; m++) total += ccount(m, len);
        for (int i = 0; i < total; i++) dst[i] = -1;
        shmem_team_sync(team);
        CHECK_EQ_LONG(shmem_long_collect(team, dst, src, mine), 0);
        for (int m = 0, at = 0; m < n; at += ccount(m, len), m++)
            for (int i = 0; i < ccount(m, len); i++)
                CHECK(dst[at + i] == gval(m, -1, i), "%s collect of about %d: member %d's [%d] = %ld", what, len, m, i,
                      dst[at + i]);
        shmem_team_sync(team);
        /* alltoall: block j of src goes to member j */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < len; i++) src[j * len + i] = gval(me, j, i);
        for (int i = 0; i < n * len; i++) dst[i] = -1;
        shmem_team_sync(team);
        CHECK_EQ_LONG(shmem_long_alltoall(team, dst, src, len), 0);
        for (int m = 0; m < n; m++)
            for (int i = 0; i < len; i++)
                CHECK(dst[m * len + i] == gval(m, me, i), "%s alltoall of %d: block from member %d [%d] = %ld", what, len,
                      m, i, dst[m * len + i]);
        shmem_team_sync(team);
    }
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    broadcasts(SHMEM_TEAM_WORLD, "world");
    reductions(SHMEM_TEAM_WORLD, "world");
    /* (room for every member's largest collect count) */
    size_t room = (size_t)npes * (MAXN + 16) * sizeof(long);
    long *gsrc = shmem_malloc(room), *gdst = shmem_malloc(room);
    CHECK(gsrc && gdst, "shmem_malloc of %zu bytes failed", room);
    gathers(SHMEM_TEAM_WORLD, "world", gsrc, gdst);

    /* Every other PE (on hosts spread 3+2+2 that is members 0, 2, 4, 6 on hosts 1, 1, 2, 3). */
    shmem_team_t evens, odds = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds);
    shmem_team_t half = me % 2 ? odds : evens;
    broadcasts(half, "half");
    reductions(half, "half");
    gathers(half, "half", gsrc, gdst);
    shmem_free(gdst);
    shmem_free(gsrc);

    shmem_barrier_all();
    if (me == 0) printf("coll_roots_sizes: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
