/* rshmem-test: pes=3,4 */
/* Visible: what a writer completed is seen by a third PE (OpenSHMEM 1.5 §9.10 quiet, §9.9
 * fence, §9.8.3 put-with-signal). PE 0 writes to a target T on another host (the first PE
 * without a shmem_ptr mapping from PE 0) that does nothing meanwhile that drives its provider
 * (it spins on a local variable, its progress thread starved beside it), and every other PE
 * reads T's memory back (through the fabric, or through shared memory from T's host):
 *   quiet   PE 0 puts to T (one packed block, then injected 64-byte and 8-byte puts, which
 *           tcp;ofi_rxm counts complete once sent), shmem_quiet, then sets a flag on each
 *           reader; a reader that sees the flag gets T's data: it must be new. (Without quiet's
 *           read-back this fails in the first round: results/net-2026-11-27g-visible/.)
 *   fence   PE 0 puts to T, shmem_fence, puts a second flag to T; a reader polls that flag on
 *           T with gets and, once it is new, gets the data: it must be new too.
 *   signal  PE 0 puts to T with shmem_putmem_signal; a reader polls the signal on T with
 *           gets, then gets the data: it must be new.
 * Each round waits for every reader's acknowledgement, so each is a fresh race. Registered
 * only in the multihost suite (3 PEs on 3 hosts and 4 on 2 and 3), issue 18. */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <shmem.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

#define MAXPE 16
#ifndef ROUNDS
#define ROUNDS 20
#endif
#define SMALL 16    /* 8-byte puts (injected) */
#define BLOCK 256   /* longs: one packed put of 2 KiB */
#ifndef FLOOD
#define FLOOD 2048 /* 64-byte puts (injected) ahead of them: a backlog on the way to T */
#endif

static long small_q[SMALL], block_q[BLOCK], small_f[SMALL], small_s[SMALL];
static long flood[FLOOD][8];
static long flag_q, flag_f;
static uint64_t sig;
static long acks[MAXPE];
static long done, target;

/* A get-poll on T until *var there is at least r (bounded: names what it waited for). */
static void poll_remote(long *var, long r, int pe, const char *what) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (shmem_long_g(var, pe) < r) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        CHECK(t.tv_sec - t0.tv_sec < 30, "round %ld: %s on PE %d never arrived", r, what, pe);
    }
}

static void check_new(const long *got, int n, long r, const char *after) {
    for (int i = 0; i < n; i++)
        CHECK(got[i] >= r, "round %ld: element %d of %d read from the target after %s is %ld (stale)", r, i, n, after,
              got[i]);
}

/* Every thread of this process on one CPU, the library's (its progress thread) at the lowest
 * priority: the target's spinning main thread leaves its provider a sliver of that CPU, as on a
 * node busy with other work, so writes to it wait a while before they land. */
static void starve_the_library(void) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        int tid = atoi(e->d_name);
        sched_setaffinity(tid, sizeof one, &one);
        if (tid != getpid()) setpriority(PRIO_PROCESS, tid, 19);
    }
    closedir(d);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes >= 3 && npes <= MAXPE, "needs 3 to %d PEs, has %d", MAXPE, npes);
    if (me == 0) {
        target = npes - 1;
        for (int pe = 1; pe < npes; pe++)
            if (shmem_ptr(&done, pe) == NULL) {
                target = pe;
                break;
            }
        for (int pe = 1; pe < npes; pe++) shmem_long_p(&target, target, pe);
    }
    shmem_barrier_all();
    int t = (int)target;
    long got[BLOCK];
    if (me == t) {
        /* The target: nothing that enters the library until PE 0 says it is done. */
        starve_the_library();
        volatile long *d = &done;
        volatile unsigned long spin = 0;
        while (*d == 0) spin++;
    } else if (me == 0) {
        long src[BLOCK];
        for (long r = 1; r <= ROUNDS; r++) {
            /* The packed block first: its completion is acknowledged by T, and would vouch for
             * the injected puts if they went before it. */
            for (int i = 0; i < BLOCK; i++) src[i] = r;
            shmem_putmem(block_q, src, sizeof block_q, t);
            for (int i = 0; i < FLOOD; i++) shmem_putmem(flood[i], src, sizeof flood[i], t);
            for (int i = 0; i < SMALL; i++) shmem_long_p(&small_q[i], r, t);
            shmem_quiet();
            for (int pe = 1; pe < npes; pe++)
                if (pe != t) shmem_long_p(&flag_q, r, pe);
            for (int i = 0; i < SMALL; i++) shmem_long_p(&small_f[i], r, t);
            shmem_fence();
            shmem_long_p(&flag_f, r, t);
            for (int i = 0; i < SMALL; i++) src[i] = r;
            shmem_putmem_signal(small_s, src, sizeof small_s, &sig, (uint64_t)r, SHMEM_SIGNAL_SET, t);
            for (int pe = 1; pe < npes; pe++)
                if (pe != t) shmem_long_wait_until(&acks[pe], SHMEM_CMP_GE, r);
        }
        shmem_long_p(&done, 1, t);
    } else {
        for (long r = 1; r <= ROUNDS; r++) {
            shmem_long_wait_until(&flag_q, SHMEM_CMP_GE, r);
            shmem_getmem(got, small_q, sizeof small_q, t);
            check_new(got, SMALL, r, "shmem_quiet (8-byte puts)");
            shmem_getmem(got, block_q, sizeof block_q, t);
            check_new(got, BLOCK, r, "shmem_quiet (a 2 KiB put)");
            shmem_getmem(got, flood[FLOOD - 1], sizeof flood[0], t);
            check_new(got, 8, r, "shmem_quiet (the last of many 64-byte puts)");
            poll_remote(&flag_f, r, t, "the flag put after shmem_fence");
            shmem_getmem(got, small_f, sizeof small_f, t);
            check_new(got, SMALL, r, "shmem_fence and a flag");
            poll_remote((long *)&sig, r, t, "the signal of shmem_putmem_signal");
            shmem_getmem(got, small_s, sizeof small_s, t);
            check_new(got, SMALL, r, "the signal of shmem_putmem_signal");
            shmem_long_p(&acks[me], r, 0);
        }
    }
    shmem_barrier_all();
    if (me == 0) printf("visible: OK on %d PEs, target PE %d, %d rounds\n", npes, t, ROUNDS);
    shmem_finalize();
    return 0;
}
