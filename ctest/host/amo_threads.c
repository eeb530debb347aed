/* rshmem-test: pes=1,2,4,7
 * SHMEM_THREAD_MULTIPLE: 4 threads per PE hammer fetch_add / inc / add on PE 0's counters. The
 * totals must be exact and every value fetched by any thread of any PE must appear exactly once. */
#include <pthread.h>
#include <stdint.h>
#include "check.h"

#define THREADS 4
#define ITERS 1000

static long counter;        /* symmetric (static data); PE 0's copy is the target */
static long long total_inc; /* symmetric; PE 0's copy is the target */
static long *fetched;       /* symmetric heap: npes * THREADS * ITERS slots, gathered on PE 0 */
static int me, npes;

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    long *mine = fetched + ((size_t)me * THREADS + (size_t)t) * ITERS;
    for (int i = 0; i < ITERS; i++) {
        mine[i] = (i % 2) ? shmem_long_atomic_fetch_add(&counter, 1, 0)
                          : shmem_ctx_long_atomic_fetch_inc(SHMEM_CTX_DEFAULT, &counter, 0);
        if (i % 3) shmem_longlong_atomic_inc(&total_inc, 0);
        else shmem_longlong_atomic_add(&total_inc, 1, 0);
    }
    return NULL;
}

int main(void) {
    int provided = -1;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided thread level %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    size_t total = (size_t)npes * THREADS * ITERS;
    fetched = shmem_malloc(total * sizeof(long));

    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);

    /* Each PE's fetched values go to PE 0's array. */
    long *mine = fetched + (size_t)me * THREADS * ITERS;
    if (me != 0) shmem_putmem(mine, mine, (size_t)THREADS * ITERS * sizeof(long), 0);
    shmem_barrier_all();

    if (me == 0) {
        CHECK_EQ_LONG(counter, (long long)total);
        CHECK_EQ_LONG(total_inc, (long long)total);
        char *seen = calloc(total, 1);
        for (size_t i = 0; i < total; i++) {
            long v = fetched[i];
            CHECK(v >= 0 && (size_t)v < total, "fetched value %ld out of range", v);
            CHECK(!seen[v], "value %ld fetched twice", v);
            seen[v] = 1;
        }
        free(seen);
        printf("amo_threads: %d PEs x %d threads ok\n", npes, THREADS);
    }
    shmem_barrier_all();
    shmem_free(fetched);
    shmem_finalize();
    return 0;
}
