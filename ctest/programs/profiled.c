/* The program under the profiling library of ctest/scripts/profiling.sh: a known number of calls
 * (init 1, putmem 3, int_p 5 counted + 2 while paused by shmem_pcontrol(0), barrier_all 2), and
 * the data they move checked, so that forwarding through pshmem_ is shown to do the work. */
#include <shmem.h>
#include <stdio.h>

static int cells[8];
static char text[16];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    char mine[16];
    snprintf(mine, sizeof mine, "from PE %d", me);
    for (int i = 0; i < 3; i++) shmem_putmem(text, mine, sizeof mine, right);
    for (int i = 0; i < 5; i++) shmem_int_p(&cells[i], 100 * me + i, right);
    shmem_pcontrol(0);
    for (int i = 5; i < 7; i++) shmem_int_p(&cells[i], 100 * me + i, right);
    shmem_pcontrol(1);
    shmem_barrier_all();
    shmem_barrier_all();
    int ok = 1;
    char want[16];
    snprintf(want, sizeof want, "from PE %d", left);
    for (int i = 0; i < 7; i++) ok &= cells[i] == 100 * left + i;
    for (int i = 0; i < 16 && want[i]; i++) ok &= text[i] == want[i];
    printf("PE %d data %s\n", me, ok ? "ok" : "WRONG");
    shmem_finalize();
    return ok ? 0 : 1;
}
