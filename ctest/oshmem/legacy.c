/* Pre-1.2 names an old OpenSHMEM program still links against through OSHMEM's shmem-compat.h
 * (start_pes, _my_pe, _num_pes, my_pe, num_pes, shmalloc, shmemalign, shrealloc, shfree), a
 * program that ends without shmem_finalize (start_pes registers the clean-up), and
 * shmem_global_exit: run as `legacy exit`, the last PE calls shmem_global_exit(7) while the
 * others wait in a barrier; the job must end with a non-zero status and not hang. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "osh_common.h" /* OSHMEM's shmem.h includes shmem-compat.h, which declares these */

long cell;

int main(int argc, char **argv)
{
    start_pes(0);
    int me = _my_pe(), npes = _num_pes();
    CHECK(me == shmem_my_pe() && npes == shmem_n_pes(), "_my_pe/_num_pes disagree with shmem_my_pe/n_pes");
    CHECK(my_pe() == me && num_pes() == npes, "my_pe/num_pes disagree");
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    if (argc > 1 && strcmp(argv[1], "exit") == 0) {
        if (me == npes - 1) {
            usleep(100000); /* let the others block in the barrier first */
            shmem_global_exit(7);
        }
        shmem_barrier_all(); /* never completes: PE npes-1 does not come */
        fprintf(stderr, "legacy: PE %d passed a barrier that PE %d never entered\n", me, npes - 1);
        return 0; /* would make the job look successful: the script checks for failure */
    }

    long *a = shmalloc(16 * sizeof(long));
    CHECK(a != NULL, "shmalloc");
    long *b = shmemalign(128, 8 * sizeof(long));
    CHECK(b != NULL && (uintptr_t)b % 128 == 0, "shmemalign(128) gave %p", (void *)b);
    for (int i = 0; i < 16; i++)
        a[i] = 100L * me + i;
    shmem_barrier_all();
    a = shrealloc(a, 4096 * sizeof(long));
    CHECK(a != NULL, "shrealloc");
    for (int i = 0; i < 16; i++)
        CHECK_EQ_LONG(a[i], 100L * me + i);
    CHECK_EQ_LONG(shmem_long_g(&a[15], right), 100L * right + 15);
    shmem_long_p(&cell, me, right);
    shmem_barrier_all();
    CHECK_EQ_LONG(cell, left);
    shmem_barrier_all();
    shfree(b);
    shfree(a);
    passed("legacy");
    return 0; /* no shmem_finalize: start_pes programs may simply return */
}
