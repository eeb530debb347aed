/* rshmem-test: pes=1,2,3,4,7
 * Collectives back to back with no synchronisation between them: hundreds of calls of every
 * kind (broadcast, reductions out of place and in place, fcollect, collect, alltoall(s),
 * sync, barrier, and the active-set forms) on overlapping teams (world, even PEs, odd PEs,
 * the lower half, 2-D rows and columns), at sizes on both sides of what fits in one message
 * and much larger. Every PE walks the same pseudo-random sequence and skips the calls on
 * teams it is not in, so disjoint teams run at the same time. Each source is refilled with
 * values unique to (PE, call) right before the call and each dest is poisoned, so a call that
 * read a stale message, a half-written one, or one meant for another call fails its check.
 * The sources are reused at once after each call, as the specification allows. Last, a root
 * floods its team with broadcasts while members dawdle now and then. */
#include <shmem.h>
#include <stdint.h>
#include <unistd.h>
#include "check.h"

#define MAXPE 16
#define BIG 700  /* longs: far beyond what a message carries */
#define CALLS 600

static long *src, *dst, *buf;
static long psync[SHMEM_REDUCE_SYNC_SIZE], pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + BIG];

/* The sizes tried: around the inline limits (19..21 longs of payload per message) and far above. */
static const int sizes[] = {0, 1, 2, 7, 18, 19, 20, 21, 22, 40, BIG};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static long val(int pe, int call, int j) { return (long)pe * 1000003L + (long)call * 7919L + j; }

struct team {
    shmem_team_t t;
    int n, me; /* size, my index (-1: not a member) */
    int pes[MAXPE];
};

static void describe(struct team *tm, shmem_team_t t) {
    tm->t = t;
    tm->me = -1;
    tm->n = 0;
    if (t == SHMEM_TEAM_INVALID) return;
    tm->n = shmem_team_n_pes(t);
    tm->me = shmem_team_my_pe(t);
    for (int k = 0; k < tm->n; k++) tm->pes[k] = shmem_team_translate_pe(t, k, SHMEM_TEAM_WORLD);
}

static uint64_t rng = 88172645463325252ULL;
static unsigned next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static void poison(long *p, int n) {
    for (int i = 0; i < n; i++) p[i] = -1 - i;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "at most %d PEs", MAXPE);
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    src = shmem_malloc(sizeof(long) * 2 * BIG * MAXPE);
    dst = shmem_malloc(sizeof(long) * 2 * BIG * MAXPE);
    buf = shmem_malloc(sizeof(long) * BIG);

    shmem_team_t evens, odds = SHMEM_TEAM_INVALID, low = SHMEM_TEAM_INVALID, row = SHMEM_TEAM_INVALID,
                        col = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, (npes + 1) / 2, NULL, 0, &low);
    shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &row, NULL, 0, &col);
    struct team teams[6];
    describe(&teams[0], SHMEM_TEAM_WORLD);
    describe(&teams[1], evens);
    describe(&teams[2], odds);
    describe(&teams[3], low);
    describe(&teams[4], row);
    describe(&teams[5], col);

    int done = 0;
    for (int call = 0; call < CALLS; call++) {
        unsigned r = next();
        int op = r % 10;
        struct team *tm = &teams[(r >> 4) % 6];
        int n = sizes[(r >> 8) % NSIZES];
        if (op == 9 || (op == 8 && !(r & (1u << 20)))) tm = &teams[0]; /* world-only forms */
        if (tm->me < 0) continue;    /* not a member: the others go on without us */
        int tn = tm->n, t = tm->me;
        done++;
        switch (op) {
        case 0: { /* broadcast from a rotating root */
            int root = (int)((r >> 16) % (unsigned)tn);
            for (int j = 0; j < n; j++) src[j] = val(me, call, j);
            poison(dst, n + 1);
            CHECK_EQ_LONG(shmem_long_broadcast(tm->t, dst, src, (size_t)n, root), 0);
            for (int j = 0; j < n; j++) CHECK_EQ_LONG(dst[j], val(tm->pes[root], call, j));
            CHECK_EQ_LONG(dst[n], -1 - n);
            break;
        }
        case 1:   /* sum, out of place */
        case 2: { /* sum, in place */
            long *d = op == 2 ? buf : dst, *s = op == 2 ? buf : src;
            for (int j = 0; j < n; j++) s[j] = val(me, call, j);
            if (op == 1) poison(dst, n + 1);
            CHECK_EQ_LONG(shmem_long_sum_reduce(tm->t, d, s, (size_t)n), 0);
            for (int j = 0; j < n; j++) {
                long want = 0;
                for (int k = 0; k < tn; k++) want += val(tm->pes[k], call, j);
                CHECK(d[j] == want, "call %d: sum_reduce n=%d inplace=%d team size %d: element %d is %ld, want %ld", call,
                      n, op == 2, tn, j, d[j], want);
            }
            if (op == 1) CHECK_EQ_LONG(dst[n], -1 - n);
            break;
        }
        case 3: { /* xor, in place on the big buffer's tail (a different address than case 2) */
            long *b = src + BIG;
            for (int j = 0; j < n; j++) b[j] = val(me, call, j) * 31;
            CHECK_EQ_LONG(shmem_int64_xor_reduce(tm->t, (int64_t *)b, (int64_t *)b, (size_t)n), 0);
            for (int j = 0; j < n; j++) {
                long want = 0;
                for (int k = 0; k < tn; k++) want ^= val(tm->pes[k], call, j) * 31;
                CHECK_EQ_LONG(b[j], want);
            }
            break;
        }
        case 4: { /* fcollect */
            for (int j = 0; j < n; j++) src[j] = val(me, call, j);
            poison(dst, n * tn + 1);
            CHECK_EQ_LONG(shmem_long_fcollect(tm->t, dst, src, (size_t)n), 0);
            for (int k = 0; k < tn; k++)
                for (int j = 0; j < n; j++) CHECK_EQ_LONG(dst[k * n + j], val(tm->pes[k], call, j));
            CHECK_EQ_LONG(dst[n * tn], -1 - n * tn);
            break;
        }
        case 5: { /* collect: member k contributes (n + 3k) % 25 longs, or BIG for the last one */
            int cnt[MAXPE], total = 0;
            for (int k = 0; k < tn; k++) {
                cnt[k] = (n == BIG && k == tn - 1) ? BIG : (n + 3 * k) % 25;
                total += cnt[k];
            }
            for (int j = 0; j < cnt[t]; j++) src[j] = val(me, call, j);
            poison(dst, total + 1);
            CHECK_EQ_LONG(shmem_long_collect(tm->t, dst, src, (size_t)cnt[t]), 0);
            int at = 0;
            for (int k = 0; k < tn; k++)
                for (int j = 0; j < cnt[k]; j++) CHECK_EQ_LONG(dst[at++], val(tm->pes[k], call, j));
            CHECK_EQ_LONG(dst[total], -1 - total);
            break;
        }
        case 6: { /* alltoall: block k of my source is for member k */
            for (int k = 0; k < tn; k++)
                for (int j = 0; j < n; j++) src[k * n + j] = val(me, call, k * n + j);
            poison(dst, n * tn + 1);
            CHECK_EQ_LONG(shmem_long_alltoall(tm->t, dst, src, (size_t)n), 0);
            for (int k = 0; k < tn; k++)
                for (int j = 0; j < n; j++) CHECK_EQ_LONG(dst[k * n + j], val(tm->pes[k], call, t * n + j));
            CHECK_EQ_LONG(dst[n * tn], -1 - n * tn);
            break;
        }
        case 7: { /* alltoalls, source stride 2, dest stride 3 (small n only: the spans grow fast) */
            int m = n > 40 ? 40 : n;
            for (int i = 0; i < 2 * m * tn; i++) src[i] = -5;
            for (int k = 0; k < tn; k++)
                for (int j = 0; j < m; j++) src[2 * (k * m + j)] = val(me, call, k * m + j);
            poison(dst, 3 * m * tn + 1);
            CHECK_EQ_LONG(shmem_long_alltoalls(tm->t, dst, src, 3, 2, (size_t)m), 0);
            for (int k = 0; k < tn; k++)
                for (int j = 0; j < m; j++) {
                    CHECK_EQ_LONG(dst[3 * (k * m + j)], val(tm->pes[k], call, t * m + j));
                    CHECK_EQ_LONG(dst[3 * (k * m + j) + 1], -1 - (3 * (k * m + j) + 1));
                }
            break;
        }
        case 8: /* synchronisation only */
            if (r & (1u << 20))
                CHECK_EQ_LONG(shmem_team_sync(tm->t), 0);
            else
                shmem_barrier_all(); /* every PE is in the world, so every PE gets here */
            break;
        case 9: { /* active-set forms on the world: sum_to_all (in place half the time), broadcast64 */
            if (r & (1u << 21)) {
                int root = (int)((r >> 16) % (unsigned)npes);
                for (int j = 0; j < n; j++) src[j] = val(me, call, j);
                poison(dst, n + 1);
                shmem_broadcast64(dst, src, (size_t)n, root, 0, 0, npes, psync);
                for (int j = 0; j < n; j++) CHECK_EQ_LONG(dst[j], me == root ? -1 - j : val(root, call, j));
            } else {
                long *d = (r & (1u << 22)) ? src : dst;
                for (int j = 0; j < n; j++) src[j] = val(me, call, j) % 1000;
                CHECK(n <= BIG, "size");
                shmem_long_sum_to_all(d, src, n, 0, 0, npes, pwrk, psync);
                for (int j = 0; j < n; j++) {
                    long want = 0;
                    for (int k = 0; k < npes; k++) want += val(k, call, j) % 1000;
                    CHECK_EQ_LONG(d[j], want);
                }
            }
            break;
        }
        }
    }

    /* A root that broadcasts again and again runs ahead of members that dawdle: it must wait
     * for them rather than overwrite messages they have not read (small pushes and large
     * round trips mixed, a slow member now and then). */
    for (int call = 0; call < 2000; call++) {
        int n = (call % 50 == 49) ? BIG : 1 + call % 3;
        if (me == 0)
            for (int j = 0; j < n; j++) src[j] = val(me, call, j);
        if (me != 0 && call % 97 == me) usleep(200);
        CHECK_EQ_LONG(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, (size_t)n, 0), 0);
        for (int j = 0; j < n; j++) CHECK_EQ_LONG(dst[j], val(0, call, j));
    }

    shmem_barrier_all();
    if (me == 0) printf("coll_backtoback: %d calls on PE 0, OK on %d PEs\n", done, npes);
    shmem_finalize();
    return 0;
}
