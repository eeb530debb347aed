/* The victim of ctest/security/run.sh: a job that does a realistic init-time exchange while
 * strangers attack its rendezvous, ROUNDS times (shmem_init .. shmem_finalize, then again).
 * Each round: a ring of puts into a symmetric global, a sum reduction, a heap exchange, then
 * it holds the job open for PAUSE_MS so attacks land mid-job too. Its secret global (in .data,
 * so in the shared static-data range) must stay unread and unchanged; every result is checked.
 * Prints "victim ok PE p of n" on success.      usage: victim ROUNDS PAUSE_MS */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char secret_global[64] = "RSHMEM-VICTIM-SECRET-do-not-leak";
static long ring;
static long sum_src, sum_dst;

#define FAIL(...) do { fprintf(stderr, "victim FAIL PE %d: ", shmem_my_pe()); fprintf(stderr, __VA_ARGS__); \
                       fprintf(stderr, "\n"); shmem_global_exit(1); } while (0)

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1, pause_ms = argc > 2 ? atoi(argv[2]) : 500;
    int me = 0, n = 0;
    for (int round = 0; round < rounds; round++) {
        shmem_init();
        me = shmem_my_pe(), n = shmem_n_pes();
        shmem_long_p(&ring, 1000 * round + me, (me + 1) % n);
        long *heap = shmem_malloc(n * sizeof(long));
        if (!heap) FAIL("shmem_malloc returned NULL");
        for (int pe = 0; pe < n; pe++) shmem_long_p(&heap[me], 7 * me + round, pe);
        shmem_barrier_all();
        if (ring != 1000 * round + (me + n - 1) % n) FAIL("ring value %ld in round %d", ring, round);
        for (int pe = 0; pe < n; pe++)
            if (heap[pe] != 7 * pe + round) FAIL("heap[%d] = %ld in round %d", pe, heap[pe], round);
        sum_src = me + 1;
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &sum_dst, &sum_src, 1);
        if (sum_dst != (long)n * (n + 1) / 2) FAIL("sum %ld, want %ld", sum_dst, (long)n * (n + 1) / 2);
        usleep(pause_ms * 1000);
        shmem_barrier_all();
        if (strcmp(secret_global, "RSHMEM-VICTIM-SECRET-do-not-leak") != 0) FAIL("the secret global changed: %s", secret_global);
        shmem_free(heap);
        shmem_finalize();
        usleep(pause_ms * 500); /* between sessions: strangers may connect now, too */
    }
    printf("victim ok PE %d of %d\n", me, n);
    return 0;
}
