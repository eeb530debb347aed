/* rshmem-test: pes=1,2,4,7
 * Contexts and teams: shmem_ctx_get_team, shmem_team_create_ctx on the predefined teams and on a
 * strided team (team-relative PE numbers), and the non-error failure returns of creation. */
#define _GNU_SOURCE
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include "capture.h"

static long box[2];     /* box[0]: written through world contexts; box[1]: through team ones */


static void strided_team(int me, int npes) {
    /* The odd PEs: team PE i is world PE 2i+1. */
    int size = npes / 2;
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, size > 0 ? size : 1, NULL, 0, &odd);
    if (me % 2 == 1) {
        CHECK(odd != SHMEM_TEAM_INVALID, "odd PE %d got no team", me);
        shmem_ctx_t ctx;
        CHECK(shmem_team_create_ctx(odd, SHMEM_CTX_PRIVATE, &ctx) == 0, "team ctx creation failed");
        shmem_team_t back = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(ctx, &back) == 0 && back == odd, "shmem_ctx_get_team on a team ctx");
        int ti = me / 2;                           /* my team PE number */
        int tright = (ti + 1) % size, tleft = (ti + size - 1) % size;
        shmem_ctx_long_p(ctx, &box[1], 1000 + me, tright);      /* team-relative target */
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        CHECK_EQ_LONG(box[1], 1000 + (2 * tleft + 1));          /* from the world PE of team-left */
        CHECK_EQ_LONG(shmem_ctx_long_g(ctx, &box[1], tright), 1000 + me);
        long got = 0;
        shmem_ctx_long_get(ctx, &got, &box[1], 1, tright);
        CHECK_EQ_LONG(got, 1000 + me);
        shmem_ctx_destroy(ctx);
        shmem_barrier_all();
        shmem_team_destroy(odd);
    } else {
        CHECK(odd == SHMEM_TEAM_INVALID, "even PE %d must not be in the odd team", me);
        shmem_ctx_t ctx = (shmem_ctx_t)&ctx;
        CHECK(shmem_team_create_ctx(odd, 0, &ctx) != 0 && ctx == SHMEM_CTX_INVALID, "ctx on SHMEM_TEAM_INVALID must fail");
        shmem_barrier_all();
        CHECK_EQ_LONG(box[1], 0);                               /* nobody writes to even PEs */
        shmem_barrier_all();
    }
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    shmem_team_t team = SHMEM_TEAM_INVALID;

    /* The default context belongs to the world team; the invalid one to no team. */
    CHECK(SHMEM_CTX_DEFAULT != SHMEM_CTX_INVALID, "SHMEM_CTX_DEFAULT must not be NULL");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD, "default ctx team");
    team = SHMEM_TEAM_WORLD;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID, "invalid ctx team");

    /* Failed creations return nonzero and SHMEM_CTX_INVALID; they are not fatal. */
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID, "ctx on SHMEM_TEAM_INVALID");
    bad = SHMEM_CTX_DEFAULT;
    stderr_begin();
    int rc = shmem_ctx_create(1L << 20, &bad);
    char *said = stderr_end();
    CHECK(rc != 0 && bad == SHMEM_CTX_INVALID, "unknown options must fail");
    /* The warning names the routine, though the runtime below the C boundary does not know it. */
    CHECK(strstr(said, "shmem_ctx_create: unknown context option bits 0x100000") != NULL, "the warning: %s", said);
    free(said);
    /* Operations on SHMEM_CTX_INVALID that the spec defines as no-ops. */
    shmem_ctx_destroy(SHMEM_CTX_INVALID);
    shmem_ctx_quiet(SHMEM_CTX_INVALID);
    shmem_ctx_fence(SHMEM_CTX_INVALID);

    /* Contexts on the predefined teams: on one host, SHARED holds every PE in world order. */
    shmem_ctx_t world, shared, plain;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, SHMEM_CTX_SERIALIZED, &world) == 0, "world team ctx");
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &shared) == 0, "shared team ctx");
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE, &plain) == 0, "all options");
    CHECK(world != shared && world != plain && shared != plain && world != SHMEM_CTX_DEFAULT, "handles must differ");
    CHECK(shmem_ctx_get_team(world, &team) == 0 && team == SHMEM_TEAM_WORLD, "world ctx team");
    CHECK(shmem_ctx_get_team(shared, &team) == 0 && team == SHMEM_TEAM_SHARED, "shared ctx team");
    CHECK(shmem_ctx_get_team(plain, &team) == 0 && team == SHMEM_TEAM_WORLD, "created ctx team");

    shmem_ctx_long_p(shared, &box[0], 500 + me, right);
    shmem_ctx_quiet(shared);
    shmem_barrier_all();
    CHECK_EQ_LONG(box[0], 500 + left);
    CHECK_EQ_LONG(shmem_ctx_long_g(world, &box[0], right), 500 + me);
    CHECK_EQ_LONG(shmem_ctx_long_g(plain, &box[0], right), 500 + me);
    shmem_barrier_all();
    shmem_ctx_destroy(world);
    shmem_ctx_destroy(shared);
    shmem_ctx_destroy(plain);

    strided_team(me, npes);

    shmem_barrier_all();
    if (me == 0) printf("ctx_team: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
