/* Used by the launch_*.sh scripts: proves the PEs found each other, whatever started them.
 * usage: launch_check [rounds] [implicit]
 *   Each round: shmem_init; every PE puts a value into a heap array and a static array on
 *   every PE; barrier; every PE checks what arrived; shmem_finalize. With "implicit", the
 *   last round returns from main without shmem_finalize (the library finalizes at exit).
 *   To show that the implicit finalize really ran (it is collective), the last PE puts a flag
 *   into PE 0 just before returning, and PE 0 checks it in an exit handler that runs after the
 *   library's: it can only be set if PE 0's exit waited for the last PE.
 * Prints "PE <me> of <n>: round <r> ok" per round and exits 0, or prints FAIL and exits 1. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PES 64
static long from_static[MAX_PES];
static long last_pe_done;
static int i_am_pe0 = -1;

static void pe0_at_exit(void) {
    if (i_am_pe0 != 1)
        return;
    if (last_pe_done == 1) {
        printf("PE 0 at exit: ok, the implicit finalize waited for the last PE\n");
    } else {
        printf("FAIL PE 0 at exit: the last PE's final put is missing, so exit did not wait for it\n");
        fflush(stdout);
        _exit(1);
    }
}

static int check(long *got, int n, int round, const char *where, int me) {
    for (int i = 0; i < n; i++) {
        long want = 1000L * (round + 1) + i;
        if (got[i] != want) {
            printf("FAIL PE %d round %d: %s[%d] = %ld, want %ld\n", me, round, where, i, got[i], want);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    int implicit = argc > 2 && strcmp(argv[2], "implicit") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (implicit)
        atexit(pe0_at_exit); /* registered before shmem_init: runs after the library's hook */
    for (int round = 0; round < rounds; round++) {
        shmem_init();
        int me = shmem_my_pe(), n = shmem_n_pes();
        if (n > MAX_PES) {
            printf("FAIL: %d PEs, this test handles %d\n", n, MAX_PES);
            shmem_global_exit(1);
        }
        long *heap = shmem_malloc(sizeof(long) * n);
        long mine = 1000L * (round + 1) + me;
        for (int pe = 0; pe < n; pe++) {
            shmem_putmem(&heap[me], &mine, sizeof mine, pe);
            shmem_putmem(&from_static[me], &mine, sizeof mine, pe);
        }
        shmem_barrier_all();
        int ok = check(heap, n, round, "heap", me) && check(from_static, n, round, "static", me);
        long back = -1;
        shmem_getmem(&back, &heap[(me + 1) % n], sizeof back, (me + 1) % n);
        if (ok && back != 1000L * (round + 1) + (me + 1) % n) {
            printf("FAIL PE %d round %d: get from PE %d returned %ld\n", me, round, (me + 1) % n, back);
            ok = 0;
        }
        if (!ok)
            shmem_global_exit(1);
        printf("PE %d of %d: round %d ok (pid %d)\n", me, n, round, (int)getpid());
        shmem_barrier_all();
        shmem_free(heap);
        if (!(implicit && round == rounds - 1)) {
            shmem_finalize();
            continue;
        }
        i_am_pe0 = me == 0;
        if (me == n - 1) {
            usleep(300 * 1000);
            long one = 1;
            shmem_putmem(&last_pe_done, &one, sizeof one, 0);
        }
    }
    return 0;
}
