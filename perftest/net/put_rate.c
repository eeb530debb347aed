/* put_rate: the rate of blocking 8-byte puts when every PE puts to every PE in turn (the
 * all-to-all pattern of the Mellanox verifier's analysis.tc5, which does this 4 million times
 * per PE at its smallest size), timed by the clock instead of by a count.
 *   put_rate [--time S] [--reps N]     run it with 2 or more PEs, spread over hosts
 * Each repetition: a barrier, then every PE puts one 8-byte word to each PE (itself included)
 * in turn, slot `me` of the target's table, for as many rounds as PE 0 found to take about S
 * seconds (default 0.5); the time each PE took for them is its own. The value put is the round
 * number, so after the closing barrier each PE checks that every slot holds the last round.
 * PE 0 prints the slowest PE's rate (puts per second, its median repetition) as the CSV row
 * put8_alltoall_np<npes>,8,<rate>,op/s (perftest/net/bench.sh runs it at 4 PEs on 2 hosts,
 * for rshmem and for OSHMEM). Builds with any OpenSHMEM 1.4 library. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PES 256
#define MAX_REPS 15

static long table[MAX_PES];      /* slot i: the last round PE i put here */
static double rates[MAX_PES];    /* on PE 0: each PE's puts per second */
static long rounds_per_rep;      /* set by PE 0 on every PE */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    double seconds = 0.5;
    int reps = 3;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: put_rate [--time SECONDS] [--reps N (1-%d)]\n", MAX_REPS);
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS || !(seconds > 0)) {
        fprintf(stderr, "put_rate: --reps must be 1-%d and --time positive\n", MAX_REPS);
        return 2;
    }
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n < 2 || n > MAX_PES) {
        if (me == 0)
            fprintf(stderr, "put_rate: needs 2 to %d PEs, got %d\n", MAX_PES, n);
        shmem_global_exit(2);
    }

    /* PE 0 times a trial of 64 rounds and sets the round count of a repetition for all PEs,
     * so that every PE puts the same rounds (the last round's value is what each slot holds). */
    long round = 0;
    for (int i = 0; i < 64; i++) {
        long v = ++round;
        for (int k = 0; k < n; k++)
            shmem_long_put(&table[me], &v, 1, (me + k) % n);
    }
    shmem_barrier_all();
    if (me == 0) {
        double t0 = now();
        for (int i = 0; i < 64; i++)
            for (int k = 0; k < n; k++)
                shmem_long_put(&table[0], &round, 1, k);
        double each = (now() - t0) / 64;
        long count = (long)(seconds / (each > 1e-9 ? each : 1e-9));
        count = count < 16 ? 16 : count;
        for (int pe = 0; pe < n; pe++)
            shmem_long_p(&rounds_per_rep, count, pe);
    }
    shmem_barrier_all();

    double all[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        shmem_barrier_all();
        double t0 = now();
        for (long i = 0; i < rounds_per_rep; i++) {
            long v = ++round;
            for (int k = 0; k < n; k++)
                shmem_long_put(&table[me], &v, 1, (me + k) % n);
        }
        double t = now() - t0;
        shmem_barrier_all();
        for (int i = 0; i < n; i++) {
            if (table[i] != round) {
                fprintf(stderr, "put_rate: PE %d: slot %d holds %ld after round %ld\n", me, i, table[i], round);
                shmem_global_exit(1);
            }
        }
        all[r] = (double)rounds_per_rep * n / t;
    }
    qsort(all, (size_t)reps, sizeof all[0], by_value);
    shmem_double_p(&rates[me], all[reps / 2], 0);
    shmem_barrier_all();
    if (me == 0) {
        double slowest = rates[0];
        for (int pe = 1; pe < n; pe++)
            slowest = rates[pe] < slowest ? rates[pe] : slowest;
        printf("put8_alltoall_np%d,8,%.6g,op/s\n", n, slowest);
        fflush(stdout);
    }
    shmem_finalize();
    return 0;
}
