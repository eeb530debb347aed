/* rshmem-test: pes=1,2,4,7 */
/* alltoall, alltoalls (strided) and their mem forms, on the world team and on a 2-D split's
 * row teams. */
#include <shmem.h>
#include "check.h"

#define MAXPE 64
#define NE 3
#define DST 2
#define SST 3

static void run(shmem_team_t team) {
    int me = shmem_my_pe();
    int n = shmem_team_n_pes(team), t = shmem_team_my_pe(team);
    long *src = shmem_malloc(SST * NE * MAXPE * sizeof(long));
    long *dst = shmem_malloc(DST * NE * MAXPE * sizeof(long));

    /* Block j of PE i's source is for member j. */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < NE; i++) src[j * NE + i] = me * 10000 + j * 100 + i;
    for (int i = 0; i < NE * n + 1; i++) dst[i] = -1;
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_long_alltoall(team, dst, src, NE), 0);
    for (int j = 0; j < n; j++) {
        int pe = shmem_team_translate_pe(team, j, SHMEM_TEAM_WORLD);
        for (int i = 0; i < NE; i++) CHECK_EQ_LONG(dst[j * NE + i], pe * 10000 + t * 100 + i);
    }
    CHECK_EQ_LONG(dst[NE * n], -1);

    /* alltoallmem: 2 bytes per member */
    unsigned char *bs = (unsigned char *)src, *bd = (unsigned char *)dst;
    for (int j = 0; j < n; j++) {
        bs[2 * j] = (unsigned char)(me * 7 + j);
        bs[2 * j + 1] = (unsigned char)(200 - j);
    }
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_alltoallmem(team, bd, bs, 2), 0);
    for (int j = 0; j < n; j++) {
        int pe = shmem_team_translate_pe(team, j, SHMEM_TEAM_WORLD);
        CHECK_EQ_LONG(bd[2 * j], (unsigned char)(pe * 7 + t));
        CHECK_EQ_LONG(bd[2 * j + 1], (unsigned char)(200 - t));
    }

    /* alltoalls: source element m of block j at index SST*(j*NE+m); dest element m of block
     * j at DST*(j*NE+m); the gaps stay untouched. */
    for (int i = 0; i < SST * NE * n; i++) src[i] = -7;
    for (int j = 0; j < n; j++)
        for (int m = 0; m < NE; m++) src[SST * (j * NE + m)] = me * 10000 + j * 100 + m;
    for (int i = 0; i < DST * NE * n; i++) dst[i] = -1;
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_long_alltoalls(team, dst, src, DST, SST, NE), 0);
    for (int j = 0; j < n; j++) {
        int pe = shmem_team_translate_pe(team, j, SHMEM_TEAM_WORLD);
        for (int m = 0; m < NE; m++) {
            CHECK_EQ_LONG(dst[DST * (j * NE + m)], pe * 10000 + t * 100 + m);
            CHECK_EQ_LONG(dst[DST * (j * NE + m) + 1], -1);
        }
    }
    /* alltoallsmem: contiguous dest, stride-2 source bytes */
    for (int j = 0; j < n; j++) bs[2 * j] = (unsigned char)(me + 16 * j);
    shmem_team_sync(team);
    CHECK_EQ_LONG(shmem_alltoallsmem(team, bd, bs, 1, 2, 1), 0);
    for (int j = 0; j < n; j++) {
        int pe = shmem_team_translate_pe(team, j, SHMEM_TEAM_WORLD);
        CHECK_EQ_LONG(bd[j], (unsigned char)(pe + 16 * t));
    }
    /* int32 alltoall with nelems 0 is a no-op */
    CHECK_EQ_LONG(shmem_int32_alltoall(team, (int32_t *)dst, (int32_t *)src, 0), 0);

    shmem_team_sync(team);
    shmem_free(dst);
    shmem_free(src);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs");
    run(SHMEM_TEAM_WORLD);

    /* Rows of 3: with 7 PEs the last row has one PE. Each row allocates the same (the
     * allocator is collective over the world), so every PE runs run() exactly once. */
    shmem_team_t row, col;
    CHECK_EQ_LONG(shmem_team_split_2d(SHMEM_TEAM_WORLD, 3, NULL, 0, &row, NULL, 0, &col), 0);
    run(row);
    shmem_team_destroy(row);
    shmem_team_destroy(col);

    shmem_barrier_all();
    if (me == 0) printf("coll_alltoall: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
