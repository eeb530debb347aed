/* rshmem-test: pes=1,2,4,7
 * SHMEM_THREAD_MULTIPLE: 4 threads per PE, each owning one slice of a symmetric buffer, put,
 * p, nbi-put and get their slice on the right neighbour concurrently, each through its own
 * contexts, which they create and destroy concurrently. After a barrier every element of every
 * slice must hold the last value its writer put. */
#include <pthread.h>
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define NT 4
#define SLICE 256
#define ITERS 150

static int me, npes, right, left;
static long *buf;                       /* NT slices of SLICE longs */

static long value(int pe, int t, int iter, int i) {
    return ((long)pe << 40) | ((long)t << 32) | ((long)iter << 12) | i;
}

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    long *slice = buf + t * SLICE;
    long src[SLICE], got[SLICE];
    static const long options[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE};
    for (int iter = 0; iter < ITERS; iter++) {
        shmem_ctx_t ctx, extra;
        int rc = (iter % 2) ? shmem_team_create_ctx(SHMEM_TEAM_WORLD, options[iter % 4], &ctx)
                            : shmem_ctx_create(options[iter % 4], &ctx);
        CHECK(rc == 0 && ctx != SHMEM_CTX_INVALID, "thread %d: context creation failed (rc %d)", t, rc);
        CHECK(shmem_ctx_create(0, &extra) == 0 && extra != ctx, "thread %d: second context", t);
        for (int i = 0; i < SLICE; i++) src[i] = value(me, t, iter, i);
        switch (iter % 3) {
        case 0: shmem_ctx_long_put(ctx, slice, src, SLICE, right); break;
        case 1:
            shmem_ctx_long_put_nbi(ctx, slice, src, SLICE / 2, right);
            shmem_long_put_nbi(slice + SLICE / 2, src + SLICE / 2, SLICE / 2, right);
            break;
        case 2:
            for (int i = 0; i < SLICE; i++) shmem_ctx_long_p(extra, &slice[i], src[i], right);
            break;
        }
        shmem_ctx_quiet(ctx);
        shmem_ctx_quiet(extra);
        shmem_ctx_destroy(extra);
        memset(got, 0, sizeof got);
        if (iter % 2) shmem_ctx_getmem(ctx, got, slice, sizeof got, right);
        else shmem_long_get(got, slice, SLICE, right);
        for (int i = 0; i < SLICE; i++)
            CHECK(got[i] == src[i], "thread %d iter %d: element %d read back %#lx, want %#lx", t, iter, i, got[i], src[i]);
        CHECK(shmem_ctx_long_g(ctx, &slice[SLICE - 1], right) == src[SLICE - 1], "thread %d: g", t);
        shmem_team_t team = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "thread %d: ctx team", t);
        shmem_ctx_destroy(ctx);
    }
    return NULL;
}

int main(void) {
    int provided = -1;
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "shmem_init_thread failed");
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided thread level %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    buf = shmem_calloc(NT * SLICE, sizeof(long));
    CHECK(buf != NULL, "shmem_calloc failed");

    pthread_t th[NT];
    for (int t = 0; t < NT; t++) CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
    shmem_barrier_all();

    for (int t = 0; t < NT; t++)
        for (int i = 0; i < SLICE; i++)
            CHECK(buf[t * SLICE + i] == value(left, t, ITERS - 1, i), "slice %d element %d is %#lx, want %#lx", t, i,
                  buf[t * SLICE + i], value(left, t, ITERS - 1, i));
    shmem_barrier_all();
    shmem_free(buf);
    if (me == 0) printf("threads_multiple: %d PEs x %d threads OK\n", npes, NT);
    shmem_finalize();
    return 0;
}
