/* rshmem-test: pes=1,2,4,7 */
/* Team management: strided splits (even/odd), 2-D splits with xrange 2 and 3, nested splits,
 * translate_pe between arbitrary teams, config, invalid triplets, destroy and re-split. */
#define _GNU_SOURCE
#include <shmem.h>
#include "capture.h"

static int me, npes;

/* World PE of team member i for a strided set. */
static void check_strided(shmem_team_t t, int start, int stride, int size) {
    int member = me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
    if (!member) {
        CHECK(t == SHMEM_TEAM_INVALID, "non-member got a team (start %d stride %d size %d)", start, stride, size);
        CHECK_EQ_LONG(shmem_team_my_pe(t), -1);
        CHECK_EQ_LONG(shmem_team_n_pes(t), -1);
        return;
    }
    CHECK(t != SHMEM_TEAM_INVALID, "member got SHMEM_TEAM_INVALID (start %d stride %d size %d)", start, stride, size);
    CHECK_EQ_LONG(shmem_team_my_pe(t), (me - start) / stride);
    CHECK_EQ_LONG(shmem_team_n_pes(t), size);
    for (int i = 0; i < size; i++) {
        CHECK_EQ_LONG(shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD), start + i * stride);
        CHECK_EQ_LONG(shmem_team_translate_pe(SHMEM_TEAM_WORLD, start + i * stride, t), i);
    }
    CHECK_EQ_LONG(shmem_team_translate_pe(t, size, SHMEM_TEAM_WORLD), -1);
    CHECK_EQ_LONG(shmem_team_translate_pe(t, -1, SHMEM_TEAM_WORLD), -1);
    CHECK_EQ_LONG(shmem_team_sync(t), 0);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();

    /* Predefined teams. */
    CHECK_EQ_LONG(shmem_team_my_pe(SHMEM_TEAM_WORLD), me);
    CHECK_EQ_LONG(shmem_team_n_pes(SHMEM_TEAM_WORLD), npes);
    CHECK_EQ_LONG(shmem_team_n_pes(SHMEM_TEAM_SHARED), npes);
    CHECK_EQ_LONG(shmem_team_my_pe(SHMEM_TEAM_INVALID), -1);
    CHECK_EQ_LONG(shmem_team_n_pes(SHMEM_TEAM_INVALID), -1);
    CHECK_EQ_LONG(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD), -1);
    CHECK_EQ_LONG(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID), -1);

    /* Even and odd PEs. */
    shmem_team_t even, odd = SHMEM_TEAM_INVALID;
    int neven = (npes + 1) / 2, nodd = npes / 2;
    CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, neven, NULL, 0, &even), 0);
    check_strided(even, 0, 2, neven);
    if (nodd > 0) {
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, nodd, NULL, 0, &odd), 0);
        check_strided(odd, 1, 2, nodd);
    }
    /* translate_pe between two teams that share no PE: always -1. */
    if (me % 2 == 0 && odd != SHMEM_TEAM_INVALID)
        CHECK(0, "even PE holds the odd team");
    if (me % 2 == 0)
        for (int i = 0; i < neven; i++) CHECK_EQ_LONG(shmem_team_translate_pe(even, i, SHMEM_TEAM_SHARED), 2 * i);

    /* Nested: every second member of the even team (world PEs 0, 4, 8, ...), and of the odd
     * team starting at its member 1 (world 3, 7, ...). Only parent members call. */
    if (me % 2 == 0) {
        shmem_team_t quarter;
        int nq = (neven + 1) / 2;
        CHECK_EQ_LONG(shmem_team_split_strided(even, 0, 2, nq, NULL, 0, &quarter), 0);
        check_strided(quarter, 0, 4, nq);
        if (quarter != SHMEM_TEAM_INVALID) {
            /* Team-to-team translation: quarter member i is even member 2i. */
            for (int i = 0; i < nq; i++) CHECK_EQ_LONG(shmem_team_translate_pe(quarter, i, even), 2 * i);
            for (int i = 0; i < neven; i++)
                CHECK_EQ_LONG(shmem_team_translate_pe(even, i, quarter), i % 2 == 0 ? i / 2 : -1);
            shmem_team_destroy(quarter);
        }
    } else if (nodd > 1) {
        shmem_team_t sub;
        int ns = nodd / 2;
        CHECK_EQ_LONG(shmem_team_split_strided(odd, 1, 2, ns, NULL, 0, &sub), 0);
        check_strided(sub, 3, 4, ns);
        if (sub != SHMEM_TEAM_INVALID) shmem_team_destroy(sub);
    }

    /* 2-D splits with xrange 2 and 3 (3 does not divide 2, 4 or 7). */
    for (int xr = 2; xr <= 3; xr++) {
        shmem_team_t xteam, yteam;
        CHECK_EQ_LONG(shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &xteam, NULL, 0, &yteam), 0);
        int x = me % xr, y = me / xr;
        int xsize = npes - y * xr < xr ? npes - y * xr : xr;
        int ysize = (npes - x + xr - 1) / xr;
        CHECK_EQ_LONG(shmem_team_my_pe(xteam), x);
        CHECK_EQ_LONG(shmem_team_my_pe(yteam), y);
        CHECK_EQ_LONG(shmem_team_n_pes(xteam), xsize);
        CHECK_EQ_LONG(shmem_team_n_pes(yteam), ysize);
        for (int i = 0; i < xsize; i++) CHECK_EQ_LONG(shmem_team_translate_pe(xteam, i, SHMEM_TEAM_WORLD), y * xr + i);
        for (int j = 0; j < ysize; j++) CHECK_EQ_LONG(shmem_team_translate_pe(yteam, j, SHMEM_TEAM_WORLD), x + j * xr);
        /* Row and column meet only at this PE. */
        CHECK_EQ_LONG(shmem_team_translate_pe(xteam, x, yteam), y);
        CHECK_EQ_LONG(shmem_team_sync(xteam), 0);
        CHECK_EQ_LONG(shmem_team_sync(yteam), 0);
        /* A 2-D split of a split team (even PEs). */
        if (me % 2 == 0) {
            shmem_team_t ex, ey;
            CHECK_EQ_LONG(shmem_team_split_2d(even, xr, NULL, 0, &ex, NULL, 0, &ey), 0);
            int p = me / 2;
            CHECK_EQ_LONG(shmem_team_my_pe(ex), p % xr);
            CHECK_EQ_LONG(shmem_team_my_pe(ey), p / xr);
            CHECK_EQ_LONG(shmem_team_translate_pe(ey, 0, SHMEM_TEAM_WORLD), 2 * (p % xr));
            shmem_team_destroy(ex);
            shmem_team_destroy(ey);
        }
        shmem_team_destroy(xteam);
        shmem_team_destroy(yteam);
    }
    /* xrange larger than the team: one row of everyone, columns of one. */
    {
        shmem_team_t xteam, yteam;
        CHECK_EQ_LONG(shmem_team_split_2d(SHMEM_TEAM_WORLD, npes + 3, NULL, 0, &xteam, NULL, 0, &yteam), 0);
        CHECK_EQ_LONG(shmem_team_n_pes(xteam), npes);
        CHECK_EQ_LONG(shmem_team_n_pes(yteam), 1);
        shmem_team_destroy(xteam);
        shmem_team_destroy(yteam);
    }

    /* Config. */
    {
        shmem_team_config_t conf = {.num_contexts = 3}, got = {.num_contexts = -7};
        shmem_team_t t;
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &conf, SHMEM_TEAM_NUM_CONTEXTS, &t), 0);
        CHECK_EQ_LONG(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got), 0);
        CHECK_EQ_LONG(got.num_contexts, 3);
        shmem_team_destroy(t);
        /* mask 0: defaults, and config may be NULL */
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t), 0);
        CHECK_EQ_LONG(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got), 0);
        CHECK_EQ_LONG(got.num_contexts, 0);
        got.num_contexts = 11;
        CHECK_EQ_LONG(shmem_team_get_config(t, 0, &got), 0);
        CHECK_EQ_LONG(got.num_contexts, 11);
        shmem_team_destroy(t);
        CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &got) != 0, "get_config on INVALID returned 0");
    }

    /* Invalid triplets: nonzero on every PE, and SHMEM_TEAM_INVALID. (Each prints a warning.) */
    {
        shmem_team_t t = SHMEM_TEAM_WORLD;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 0, NULL, 0, &t) != 0, "size 0 accepted");
        CHECK(t == SHMEM_TEAM_INVALID, "size 0 gave a team");
        t = SHMEM_TEAM_WORLD;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &t) != 0, "size beyond parent accepted");
        CHECK(t == SHMEM_TEAM_INVALID, "oversized split gave a team");
        t = SHMEM_TEAM_WORLD;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes, 1, 1, NULL, 0, &t) != 0, "start beyond parent accepted");
        CHECK(t == SHMEM_TEAM_INVALID, "start beyond parent gave a team");
        t = SHMEM_TEAM_WORLD;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &t) != 0, "INVALID parent accepted");
        CHECK(t == SHMEM_TEAM_INVALID, "INVALID parent gave a team");
        shmem_team_t a = SHMEM_TEAM_WORLD, b = SHMEM_TEAM_WORLD;
        CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &a, NULL, 0, &b) != 0, "xrange 0 accepted");
        CHECK(a == SHMEM_TEAM_INVALID && b == SHMEM_TEAM_INVALID, "xrange 0 gave teams");
        /* stride 0 is fine with size 1 */
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 0, 1, NULL, 0, &t), 0);
        check_strided(t, npes - 1, 1, 1);
        if (t != SHMEM_TEAM_INVALID) shmem_team_destroy(t);
        shmem_team_destroy(SHMEM_TEAM_INVALID); /* no-op */
    }

    /* Destroy and re-split many times: handles are reused, nothing leaks or drifts. */
    for (int it = 0; it < 300; it++) {
        int start = it % npes, size = 1 + (it / npes) % (npes - start);
        shmem_team_t t;
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, size, NULL, 0, &t), 0);
        check_strided(t, start, 1, size);
        if (t != SHMEM_TEAM_INVALID) shmem_team_destroy(t);
    }

    /* A team has one handle on all its members, even after splits that gave the PEs different
     * teams: here the last PE and the first hold a team of one each, the others none. Device
     * collectives depend on it (they find a team's mailboxes on a peer by the handle). */
    {
        static long handle[2], all[2 * 64];
        shmem_team_t lone_last, lone_first, dup, row, col;
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 1, 1, NULL, 0, &lone_last), 0);
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &lone_first), 0);
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &dup), 0);
        CHECK_EQ_LONG(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &row, NULL, 0, &col), 0);
        handle[0] = (long)(intptr_t)dup;
        handle[1] = (long)(intptr_t)col;
        CHECK_EQ_LONG(shmem_long_fcollect(SHMEM_TEAM_WORLD, all, handle, 2), 0);
        for (int p = 0; p < npes && p < 64; p++) {
            CHECK(all[2 * p] == handle[0], "PE %d's handle of the same team is %ld, this PE's %ld", p, all[2 * p], handle[0]);
            /* Columns of xrange 2: PEs of the same parity. */
            if (p % 2 == me % 2)
                CHECK(all[2 * p + 1] == handle[1], "column teammate PE %d's handle is %ld, this PE's %ld", p, all[2 * p + 1], handle[1]);
        }
        CHECK(dup != lone_last && dup != lone_first, "a new team reused a handle that is live on a member");
        shmem_team_destroy(row);
        shmem_team_destroy(col);
        shmem_team_destroy(dup);
        if (lone_first != SHMEM_TEAM_INVALID) shmem_team_destroy(lone_first);
        if (lone_last != SHMEM_TEAM_INVALID) shmem_team_destroy(lone_last);
    }

    /* Handles are a bounded resource (256 per PE): splitting without destroying ends in an
     * error at the same split on every PE, and destroying gives the handles back. */
    {
        static shmem_team_t held[300];
        static long made, all_made[64];
        int n = 0;
        char *said = NULL;
        while (n < 300) {
            shmem_team_t t = SHMEM_TEAM_WORLD;
            stderr_begin();
            int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t);
            said = stderr_end();
            if (rc != 0) {
                CHECK(t == SHMEM_TEAM_INVALID, "a failed split gave a team");
                break;
            }
            free(said);
            said = NULL;
            held[n++] = t;
        }
        /* One PE (the parent's first) reports a split that fails alike everywhere. */
        if (me == 0)
            CHECK(said && strstr(said, "shmem_team_split_strided") && strstr(said, "no team handle below 256 is free") &&
                      strstr(said, "destroy teams no longer needed"),
                  "running out of team handles said: \"%s\"", said ? said : "");
        free(said);
        CHECK(n >= 240 && n < 256, "%d splits before running out of team handles; expected just under 256", n);
        made = n;
        CHECK_EQ_LONG(shmem_long_fcollect(SHMEM_TEAM_WORLD, all_made, &made, 1), 0);
        for (int p = 0; p < npes && p < 64; p++) CHECK(all_made[p] == made, "PE %d ran out after %ld splits, this PE after %ld", p, all_made[p], made);
        for (int i = 0; i < n; i++) shmem_team_destroy(held[i]);
        shmem_team_t again = SHMEM_TEAM_INVALID;
        CHECK_EQ_LONG(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &again), 0);
        CHECK(again != SHMEM_TEAM_INVALID, "no team after destroying the others");
        shmem_team_destroy(again);
    }

    if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);
    if (odd != SHMEM_TEAM_INVALID) shmem_team_destroy(odd);
    shmem_barrier_all();
    if (me == 0) printf("team_split: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
