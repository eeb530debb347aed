/* A PMPI-style profiling library (ctest/scripts/profiling.sh): it defines a few shmem_ routines,
 * counts the calls, and forwards each to rshmem's implementation under its pshmem_ name.
 * shmem_pcontrol(0) pauses the counting, shmem_pcontrol(1) resumes it; the counts are printed
 * at shmem_finalize. */
#include <pshmem.h>
#include <stdio.h>

static long inits, putmems, int_ps, barriers;
static int counting = 1;

void shmem_init(void) {
    inits++;
    pshmem_init();
}

void shmem_putmem(void *dest, const void *source, size_t nelems, int pe) {
    putmems += counting;
    pshmem_putmem(dest, source, nelems, pe);
}

void shmem_int_p(int *dest, int value, int pe) {
    int_ps += counting;
    pshmem_int_p(dest, value, pe);
}

void shmem_barrier_all(void) {
    barriers += counting;
    pshmem_barrier_all();
}

void shmem_pcontrol(const int level, ...) {
    counting = level != 0;
}

void shmem_finalize(void) {
    printf("PE %d counted: init %ld putmem %ld int_p %ld barrier_all %ld\n", pshmem_my_pe(), inits, putmems,
           int_ps, barriers);
    fflush(stdout);
    pshmem_finalize();
}
