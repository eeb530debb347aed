/* PE 1 waits in shmem_int_wait_until for a flag that a thread of its own sets after
   argv[1] seconds, while PE 0 waits in a sum reduction for PE 1; then both finish the
   reduction. Under a short RSHMEM_HANG_TIMEOUT both report their wait and keep waiting.
   Exits 0 when the sum is right. */
#include <pthread.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int flag;
static int src, dst;
static double delay;

static void *release_flag(void *arg) {
    (void)arg;
    usleep((useconds_t)(delay * 1e6));
    __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(int argc, char **argv) {
    delay = argc > 1 ? atof(argv[1]) : 2.5;
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    pthread_t t;
    if (shmem_my_pe() == 1) {
        pthread_create(&t, NULL, release_flag, NULL);
        shmem_int_wait_until(&flag, SHMEM_CMP_EQ, 1);
        pthread_join(t, NULL);
    }
    src = shmem_my_pe() + 1;
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &dst, &src, 1);
    int n = shmem_n_pes();
    if (dst != n * (n + 1) / 2) {
        fprintf(stderr, "PE %d: sum %d, want %d\n", shmem_my_pe(), dst, n * (n + 1) / 2);
        return 1;
    }
    shmem_finalize();
    return 0;
}
