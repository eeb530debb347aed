/* A barrier made of AMOs, for the fabric_* tests: they check point-to-point routines across
 * hosts and must not depend on collectives across hosts. Every PE arrives on PE 0's counter;
 * the last one to arrive raises every PE's generation word. Include once per program. */
#ifndef FABRIC_SYNC_H
#define FABRIC_SYNC_H
#include <shmem.h>

static long fabric_arrived, fabric_generation;

static void amo_barrier(void) {
    static long round;
    int n = shmem_n_pes();
    round++;
    shmem_quiet();
    if (shmem_long_atomic_fetch_inc(&fabric_arrived, 0) == round * n - 1) {
        for (int p = 0; p < n; p++) shmem_long_atomic_set(&fabric_generation, round, p);
        shmem_quiet();
    }
    shmem_long_wait_until(&fabric_generation, SHMEM_CMP_GE, round);
}
#endif
