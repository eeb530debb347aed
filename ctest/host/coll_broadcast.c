/* rshmem-test: pes=1,2,4,7 */
/* Team broadcasts: every root in turn, typed and shmem_broadcastmem, on the world team and on
 * a split team; the root's dest is updated too (OpenSHMEM 1.5 team semantics), the source is
 * left alone, nelems 0 moves nothing. */
#include <string.h>
#include <shmem.h>
#include "check.h"

#define N 33

static int isrc[N], idst[N];
static double dsrc[N], ddst[N];
static long double lsrc[N], ldst[N];
static char bsrc[N], bdst[N];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();

    for (int root = 0; root < npes; root++) {
        for (int i = 0; i < N; i++) {
            isrc[i] = me * 1000 + i;
            idst[i] = -1;
            dsrc[i] = me + i / 4.0;
            ddst[i] = -1;
            bsrc[i] = (char)(me * 3 + i);
            bdst[i] = 0;
        }
        shmem_barrier_all();
        CHECK_EQ_LONG(shmem_int_broadcast(SHMEM_TEAM_WORLD, idst, isrc, N, root), 0);
        CHECK_EQ_LONG(shmem_double_broadcast(SHMEM_TEAM_WORLD, ddst, dsrc, N - 1, root), 0);
        CHECK_EQ_LONG(shmem_broadcastmem(SHMEM_TEAM_WORLD, bdst, bsrc, N, root), 0);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_LONG(idst[i], root * 1000 + i);
            CHECK_EQ_LONG(isrc[i], me * 1000 + i);
            CHECK_EQ_LONG(bdst[i], (char)(root * 3 + i));
            if (i < N - 1) CHECK(ddst[i] == root + i / 4.0, "ddst[%d] = %g", i, ddst[i]);
        }
        CHECK(ddst[N - 1] == -1, "nelems N-1 wrote element N-1");
        shmem_barrier_all();
    }

    /* long double moves as bytes */
    for (int i = 0; i < N; i++) {
        lsrc[i] = me + i / 3.0L;
        ldst[i] = 0;
    }
    CHECK_EQ_LONG(shmem_longdouble_broadcast(SHMEM_TEAM_WORLD, ldst, lsrc, N, npes - 1), 0);
    for (int i = 0; i < N; i++) CHECK(ldst[i] == (npes - 1) + i / 3.0L, "ldst[%d] wrong", i);

    /* nelems 0 */
    idst[0] = 77;
    CHECK_EQ_LONG(shmem_int_broadcast(SHMEM_TEAM_WORLD, idst, isrc, 0, 0), 0);
    CHECK_EQ_LONG(idst[0], 77);

    /* On a split team: odd PEs (roots are team-relative), while even PEs broadcast among themselves. */
    int odd = me % 2, nhalf = odd ? npes / 2 : (npes + 1) / 2;
    shmem_team_t evens, odds = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds);
    shmem_team_t half = odd ? odds : evens;
    long *lbuf = shmem_malloc(2 * N * sizeof(long));
    long *lsource = lbuf, *ldest = lbuf + N;
    for (int root = 0; root < nhalf; root++) {
        for (int i = 0; i < N; i++) {
            lsource[i] = (long)me << 20 | i;
            ldest[i] = -5;
        }
        shmem_team_sync(half);
        CHECK_EQ_LONG(shmem_long_broadcast(half, ldest, lsource, N, root), 0);
        int root_world = shmem_team_translate_pe(half, root, SHMEM_TEAM_WORLD);
        CHECK_EQ_LONG(root_world, odd + 2 * root);
        for (int i = 0; i < N; i++) CHECK_EQ_LONG(ldest[i], (long)root_world << 20 | i);
        shmem_team_sync(half);
    }
    shmem_free(lbuf);

    shmem_barrier_all();
    if (me == 0) printf("coll_broadcast: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
