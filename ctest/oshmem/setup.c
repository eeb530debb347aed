/* Setup, queries and contexts through Open MPI's OSHMEM ABI: shmem_init_thread with
 * SHMEM_THREAD_MULTIPLE and shmem_query_thread (OSHMEM's enum values), the info routines, and
 * contexts: SHMEM_CTX_DEFAULT (the exported object oshmem_ctx_default), shmem_ctx_create with
 * each option, and several threads per PE each driving its own private context at once.
 * OSHMEM 4.1 implements OpenSHMEM 1.4, which has no teams: contexts and active sets (see
 * coll.c) are all the grouping it offers, so this is where "team-like" features are covered. */
#include <pthread.h>
#include <stdint.h>

#include "osh_common.h"

#define NTHREADS 3
#define PER_THREAD 200

static int me, npes, right, left;
long slots[NTHREADS][PER_THREAD]; /* symmetric: thread t of the left PE fills row t here */
long hits;                        /* symmetric: AMO target, all threads of all PEs */

struct job {
    int t;
    int rc;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    shmem_ctx_t ctx;
    j->rc = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx);
    if (j->rc != 0)
        return NULL;
    for (int i = 0; i < PER_THREAD; i++) {
        shmem_ctx_long_p(ctx, &slots[j->t][i], 100000L * me + 1000L * j->t + i, right);
        shmem_ctx_long_atomic_add(ctx, &hits, 1, 0);
    }
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

static void threads_with_contexts(int provided)
{
    if (provided != SHMEM_THREAD_MULTIPLE) {
        if (me == 0)
            printf("setup: thread level %d < SHMEM_THREAD_MULTIPLE: skipping the threaded part\n", provided);
        return;
    }
    hits = 0;
    shmem_barrier_all();
    pthread_t th[NTHREADS];
    struct job jobs[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        jobs[t] = (struct job){t, 0};
        CHECK(pthread_create(&th[t], NULL, worker, &jobs[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(jobs[t].rc == 0, "shmem_ctx_create in thread %d returned %d", t, jobs[t].rc);
    }
    shmem_barrier_all();
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < PER_THREAD; i++)
            CHECK(slots[t][i] == 100000L * left + 1000L * t + i, "thread %d slot %d: %ld", t, i, slots[t][i]);
    if (me == 0)
        CHECK_EQ_LONG(hits, (long)NTHREADS * PER_THREAD * npes);
    shmem_barrier_all();
}

static void contexts(void)
{
    static const long options[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE,
                                   SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED};
    long *x = shmem_malloc(sizeof(long));
    for (unsigned k = 0; k < sizeof options / sizeof options[0]; k++) {
        shmem_ctx_t ctx;
        int rc = shmem_ctx_create(options[k], &ctx);
        CHECK(rc == 0, "shmem_ctx_create(%ld) returned %d", options[k], rc);
        CHECK(ctx != SHMEM_CTX_DEFAULT, "a created context must differ from SHMEM_CTX_DEFAULT");
        *x = 10L * me + (long)k;
        shmem_barrier_all();
        /* NOSTORE promises the context is used for no store (put, modifying AMO): read only. */
        CHECK_EQ_LONG(shmem_ctx_long_g(ctx, x, right), 10L * right + (long)k);
        if (!(options[k] & SHMEM_CTX_NOSTORE)) {
            shmem_barrier_all();
            shmem_ctx_long_p(ctx, x, 10L * me + (long)k + 1, right);
            shmem_ctx_quiet(ctx);
            shmem_barrier_all();
            CHECK_EQ_LONG(*x, 10L * left + (long)k + 1);
            shmem_barrier_all();
            CHECK_EQ_LONG(shmem_ctx_long_atomic_fetch_add(ctx, x, 1, right), 10L * me + (long)k + 1);
            shmem_ctx_quiet(ctx);
        }
        shmem_barrier_all();
        shmem_ctx_destroy(ctx);
    }
    /* The default context works after others were destroyed. */
    shmem_ctx_long_p(SHMEM_CTX_DEFAULT, x, 7, right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    CHECK_EQ_LONG(*x, 7);
    shmem_barrier_all();
    shmem_free(x);
}

int main(void)
{
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(rc == 0, "shmem_init_thread returned %d", rc);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    CHECK(provided >= SHMEM_THREAD_SINGLE && provided <= SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    int queried = -1;
    shmem_query_thread(&queried);
    CHECK(queried == provided, "shmem_query_thread %d vs provided %d", queried, provided);
    CHECK(SHMEM_THREAD_SINGLE == 0 && SHMEM_THREAD_MULTIPLE == 3, "OSHMEM thread level values");

    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor >= SHMEM_MINOR_VERSION, "version %d.%d", major, minor);
    char name[SHMEM_MAX_NAME_LEN];
    memset(name, 'x', sizeof name);
    shmem_info_get_name(name);
    CHECK(memchr(name, 0, sizeof name) != NULL && name[0] != 0, "name not a terminated string");
    CHECK(shmem_n_pes() >= 1 && me >= 0 && me < npes, "my_pe %d of %d", me, npes);
    CHECK(shmem_pe_accessible(npes) == 0 && shmem_pe_accessible(-1) == 0, "pe_accessible out of range");

    contexts();
    threads_with_contexts(provided);
    passed("setup");
    shmem_finalize();
    return 0;
}
