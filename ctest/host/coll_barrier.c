/* rshmem-test: pes=1,2,4,7 */
/* Barrier ordering: puts (shmem_long_p, shmem_putmem_nbi) and direct stores (through
 * shmem_ptr) that every PE makes into its peers' memory before a barrier are visible to those
 * peers after it, over many iterations; the same for the active-set shmem_barrier (with pSync
 * left as the program set it), and for shmem_quiet + shmem_sync_all / shmem_team_sync; then
 * barriers over the even and the odd PEs at the same time. A PE on another host has no
 * shmem_ptr (NULL, as the specification allows): the direct store is a put there. */
#include <shmem.h>
#include "check.h"

#define MAXPE 64
#define ITERS 2000

static long slots[MAXPE];
static long pSync[SHMEM_BARRIER_SYNC_SIZE];

/* slots[me] = v on PE pe: a direct store where its memory is mapped here, else a put. */
static void store(long v, int pe) {
    long *remote = (long *)shmem_ptr(slots, pe);
    if (remote)
        remote[shmem_my_pe()] = v;
    else
        shmem_long_put(&slots[shmem_my_pe()], &v, 1, pe);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs for the test");
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    for (int it = 0; it < ITERS; it++) {
        long v = (long)it * npes + me;
        for (int pe = 0; pe < npes; pe++) {
            int how = (it / 4) % 3;
            if (how == 0) {
                store(v, pe);
            } else if (how == 1) {
                shmem_long_p(&slots[me], v, pe);
            } else {
                shmem_putmem_nbi(&slots[me], &v, sizeof v, pe);
            }
        }
        switch (it % 4) {
        case 0: shmem_barrier_all(); break;
        case 1: shmem_barrier(0, 0, npes, pSync); break;
        /* syncs do not complete puts: quiet first, as the specification asks */
        case 2: shmem_quiet(); shmem_sync_all(); break;
        default: shmem_quiet(); CHECK_EQ_LONG(shmem_team_sync(SHMEM_TEAM_WORLD), 0); break;
        }
        for (int pe = 0; pe < npes; pe++)
            CHECK((slots[pe] == (long)it * npes + pe), "iteration %d: slot %d = %ld, want %ld", it, pe, slots[pe], (long)it * npes + pe);
        /* Nobody overwrites the slots before everyone has checked them. */
        shmem_barrier_all();
    }

    /* Barriers over part of the job: even PEs (logPE_stride 1) while odd PEs use their own. */
    for (int it = 0; it < 200; it++) {
        int neven = (npes + 1) / 2, nodd = npes / 2;
        long v = 1000000 + it;
        if (me % 2 == 0) {
            for (int k = 0; k < neven; k++) store(v, 2 * k);
            shmem_barrier(0, 1, neven, pSync);
            for (int k = 0; k < neven; k++) CHECK_EQ_LONG(slots[2 * k], v);
            shmem_barrier(0, 1, neven, pSync);
        } else {
            for (int k = 0; k < nodd; k++) store(-v, 2 * k + 1);
            shmem_barrier(1, 1, nodd, pSync);
            for (int k = 0; k < nodd; k++) CHECK_EQ_LONG(slots[2 * k + 1], -v);
            shmem_barrier(1, 1, nodd, pSync);
        }
    }
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) CHECK_EQ_LONG(pSync[i], SHMEM_SYNC_VALUE);

    shmem_barrier_all();
    if (me == 0) printf("coll_barrier: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
