/* rshmem-test: pes=1,2,4,7
 * Distributed locks: a non-atomic read-modify-write of a counter on PE 0 (get, yield, put) done
 * many times by every PE under shmem_set_lock / shmem_test_lock must give an exact total;
 * shmem_test_lock returns 0 when it takes a free lock and 1 when the lock is held (also by the
 * caller). The deprecated cache routines are callable no-ops. */
#include <sched.h>
#include "check.h"

#define ITERS 60

static long lock1, lock2; /* symmetric and zero-initialised, as the specification requires */
static long count;        /* PE 0's copy is the shared counter */

static void locked_increment(void) {
    long v;
    shmem_getmem(&v, &count, sizeof v, 0);
    sched_yield(); /* widen the window a broken lock would let another PE into */
    v++;
    shmem_putmem(&count, &v, sizeof v, 0);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();

    /* set_lock / clear_lock */
    for (int i = 0; i < ITERS; i++) {
        shmem_set_lock(&lock1);
        locked_increment();
        shmem_clear_lock(&lock1);
    }
    shmem_barrier_all();
    if (me == 0) CHECK_EQ_LONG(count, (long)npes * ITERS);
    shmem_barrier_all();

    /* test_lock semantics */
    if (me == 0) CHECK(shmem_test_lock(&lock2) == 0, "test_lock on a free lock must take it");
    shmem_barrier_all();
    if (me != 0) CHECK(shmem_test_lock(&lock2) == 1, "test_lock on a held lock must fail");
    shmem_barrier_all();
    if (me == 0) {
        CHECK(shmem_test_lock(&lock2) == 1, "test_lock by the holder itself must fail");
        shmem_clear_lock(&lock2);
    }
    shmem_barrier_all();
    for (int p = 0; p < npes; p++) {
        if (me == p) {
            CHECK(shmem_test_lock(&lock2) == 0, "PE %d: test_lock on the released lock", p);
            shmem_clear_lock(&lock2);
        }
        shmem_barrier_all();
    }

    /* test_lock spinning and set_lock mixed on the same lock */
    for (int i = 0; i < ITERS; i++) {
        if ((i + me) % 2) {
            while (shmem_test_lock(&lock1)) sched_yield();
        } else {
            shmem_set_lock(&lock1);
        }
        locked_increment();
        shmem_clear_lock(&lock1);
    }
    shmem_barrier_all();
    if (me == 0) CHECK_EQ_LONG(count, 2L * npes * ITERS);

    /* Deprecated cache management: no-ops on coherent memory; data stays as it is. */
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(&count);
    shmem_set_cache_line_inv(&count);
    shmem_udcflush();
    shmem_udcflush_line(&count);
    if (me == 0) CHECK_EQ_LONG(count, 2L * npes * ITERS);

    shmem_barrier_all();
    if (me == 0) printf("lock_ticket: %d PEs ok\n", npes);
    shmem_finalize();
    return 0;
}
