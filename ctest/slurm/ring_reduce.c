/* Used by ctest/slurm/run.sh and scripts/slurm-bench.sh: PEs started by srun on several nodes.
 * usage: ring_reduce check        each PE puts a block of N longs (a pattern of its own) into
 *                                 the next PE's symmetric buffer, then every PE sums (PE+1)*i
 *                                 over all PEs with shmem_long_sum_reduce; each checks every
 *                                 element and prints "PE <me> of <n> on <host>: ring ok, sum ok"
 *        ring_reduce time START   START: the launch's CLOCK_REALTIME in ns (date +%s%N); PE 0
 *                                 prints "first barrier after <ms> ms (shmem_init <ms> ms)"
 *                                 when the first shmem_barrier_all returns, then all finalize.
 * Plain OpenSHMEM: the same source builds with Open MPI's oshcc (OpenSHMEM 1.4: "time" only)
 * for a side-by-side run. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 4096

static long from_left[N];
static long mine[N], sums[N];

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long pattern(int pe, int i) { return (long)pe * 1000003L + i; }

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "check") && (strcmp(argv[1], "time") || argc < 3))) {
        fprintf(stderr, "usage: %s check | time START_NS\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    double t0 = now_ms();
    shmem_init();
    double t_init = now_ms() - t0;
    shmem_barrier_all();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (!strcmp(argv[1], "time")) {
        double start = strtod(argv[2], NULL) / 1e6;
        if (me == 0) printf("first barrier after %.1f ms (shmem_init %.1f ms)\n", now_ms() - start, t_init);
        shmem_finalize();
        return 0;
    }
#if SHMEM_MAJOR_VERSION * 100 + SHMEM_MINOR_VERSION < 105
    if (me == 0) fprintf(stderr, "%s: check needs OpenSHMEM 1.5 (team reductions)\n", argv[0]);
    shmem_finalize();
    return 2;
#else
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    long block[N];
    for (int i = 0; i < N; i++) {
        block[i] = pattern(me, i);
        mine[i] = (long)(me + 1) * i;
    }
    shmem_long_put(from_left, block, N, (me + 1) % n);
    shmem_barrier_all();
    int left = (me + n - 1) % n, ring_bad = 0, sum_bad = 0;
    for (int i = 0; i < N; i++) ring_bad += from_left[i] != pattern(left, i);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, sums, mine, N);
    for (int i = 0; i < N; i++) sum_bad += sums[i] != (long)n * (n + 1) / 2 * i;
    printf("PE %d of %d on %s: ring %s, sum %s\n", me, n, host, ring_bad ? "WRONG" : "ok", sum_bad ? "WRONG" : "ok");
    if (ring_bad) printf("PE %d: %d of %d elements from PE %d wrong (first: %ld)\n", me, ring_bad, N, left, from_left[0]);
    if (sum_bad) printf("PE %d: %d of %d sums wrong (sums[1] = %ld, want %d)\n", me, sum_bad, N, sums[1], n * (n + 1) / 2);
    shmem_finalize();
    return ring_bad || sum_bad;
#endif
}
