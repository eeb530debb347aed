/* Built by ctest/scripts/wrappers.sh with the installed oshcc (as C) and oshc++ (as C++): each
 * PE puts its number into the next PE's symmetric variable and reports what it received. */
#include <shmem.h>
#include <stdio.h>

static int from_left = -1;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_int_p(&from_left, me, (me + 1) % n);
    shmem_barrier_all();
    int want = (me + n - 1) % n;
    printf("PE %d of %d: got %d from the left %s\n", me, n, from_left, from_left == want ? "ok" : "WRONG");
    shmem_finalize();
    return from_left == want ? 0 : 1;
}
