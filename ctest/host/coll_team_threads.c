/* rshmem-test: pes=2,4,7
 * SHMEM_THREAD_MULTIPLE: two threads per PE run collectives at the same time on two teams that
 * share members (A = all PEs; B = the even PEs, or a copy of all PEs when there are fewer than
 * 4): sum reductions, broadcasts and team syncs, every result checked every iteration. Teams
 * are independent, so the two streams of collectives must never mix. Then B is destroyed and
 * a team with other members (PEs 1..) runs against the world the same way. */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include "check.h"

#define ITERS 500
#define NBIG 1000 /* elements of the large reduction (beyond what one message carries) */

struct lane {
    shmem_team_t team;
    long *src, *dst, *bsrc, *bdst; /* symmetric */
    long salt;
};

static int me, npes;

static void *run(void *arg) {
    struct lane *l = arg;
    int n = shmem_team_n_pes(l->team), my = shmem_team_my_pe(l->team);
    for (int it = 0; it < ITERS; it++) {
        long base = l->salt + it;
        for (int i = 0; i < NBIG; i++) l->src[i] = base * (my + 1) + i;
        int nelem = (it % 2) ? NBIG : 3;
        CHECK(shmem_long_sum_reduce(l->team, l->dst, l->src, nelem) == 0, "reduce rc");
        long tri = (long)n * (n + 1) / 2;
        for (int i = 0; i < nelem; i++)
            CHECK(l->dst[i] == base * tri + (long)i * n, "team %s iter %d: sum[%d] = %ld, want %ld",
                  l->salt ? "B" : "A", it, i, l->dst[i], base * tri + (long)i * n);
        int root = it % n;
        for (int i = 0; i < 4; i++) l->bsrc[i] = (my == root) ? base * 7 + i : -1;
        CHECK(shmem_long_broadcast(l->team, l->bdst, l->bsrc, 4, root) == 0, "broadcast rc");
        for (int i = 0; i < 4; i++)
            CHECK(l->bdst[i] == base * 7 + i, "team %s iter %d: broadcast[%d] = %ld, want %ld",
                  l->salt ? "B" : "A", it, i, l->bdst[i], base * 7 + i);
        CHECK(shmem_team_sync(l->team) == 0, "sync rc");
    }
    return NULL;
}

static void lane_init(struct lane *l, shmem_team_t team, long salt) {
    l->team = team;
    l->salt = salt;
    l->src = shmem_malloc(NBIG * sizeof(long));
    l->dst = shmem_malloc(NBIG * sizeof(long));
    l->bsrc = shmem_malloc(4 * sizeof(long));
    l->bdst = shmem_malloc(4 * sizeof(long));
    CHECK(l->src && l->dst && l->bsrc && l->bdst, "allocation");
}

/* Runs lane A on the world and lane B on `b` (where this PE is a member) at the same time. */
static void round_of(struct lane *la, struct lane *lb, shmem_team_t b) {
    lb->team = b;
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, run, la) == 0, "thread A");
    if (b != SHMEM_TEAM_INVALID) CHECK(pthread_create(&tb, NULL, run, lb) == 0, "thread B");
    pthread_join(ta, NULL);
    if (b != SHMEM_TEAM_INVALID) pthread_join(tb, NULL);
    shmem_barrier_all();
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0 && provided == SHMEM_THREAD_MULTIPLE, "thread level");
    me = shmem_my_pe();
    npes = shmem_n_pes();
    struct lane la, lb;
    lane_init(&la, SHMEM_TEAM_WORLD, 0);
    lane_init(&lb, SHMEM_TEAM_INVALID, 1000000);
    /* Round 1: B = the even PEs (all PEs when fewer than 4). */
    int stride = npes >= 4 ? 2 : 1;
    shmem_team_t b = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, stride, (npes + stride - 1) / stride, NULL, 0, &b);
    round_of(&la, &lb, b);
    if (b != SHMEM_TEAM_INVALID) shmem_team_destroy(b);
    /* Round 2: a new team, likely at the handle B had, with other members: PEs 1.. (all PEs
     * when fewer than 4). */
    int start = npes >= 4 ? 1 : 0;
    shmem_team_t c = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, npes - start, NULL, 0, &c);
    round_of(&la, &lb, c);
    if (c != SHMEM_TEAM_INVALID) shmem_team_destroy(c);
    if (me == 0) printf("coll_team_threads: 2 rounds of %d iterations on two teams at once, all sums and broadcasts right\n", ITERS);
    shmem_finalize();
    return 0;
}
