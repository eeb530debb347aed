/* rshmem-test: pes=1,2 */
/* Legacy SHMEM programs (the Cray test suite, SGI-era codes) include <mpp/shmem.h>, which SOS
 * and OSHMEM install: it must find rshmem's headers and work like <shmem.h>. */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
#include <mpp/pshmem.h>
#include <stdio.h>

static long cell = -1;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_long_p(&cell, me, (me + 1) % n);
    shmem_barrier_all();
    long want = (me + n - 1) % n;
    int bad = cell != want;
    if (bad) fprintf(stderr, "PE %d: cell is %ld, want %ld\n", me, cell, want);
    shmem_finalize();
    return bad;
}
