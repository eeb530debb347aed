/* rshmem-test: pes=2,3 */
/* rshmem-expect: shmem_long_broadcast.*PE_root */
/* A large broadcast is a round trip between the root and each member, so members that name
 * different roots may only meet in their next call: the error still says why. */
#include <shmem.h>

#define N 4096
static long a[N], b[N];

int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    shmem_long_broadcast(SHMEM_TEAM_WORLD, a, b, N, me == 0 ? 0 : 1);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
