/* Every PE prints a line to stdout (a file or a pipe, so stdio buffers it), then
 * mode "global": the last PE calls shmem_global_exit(4) while the others wait in a barrier;
 * mode "fatal": the last PE makes a fatal error (a put to PE -1) while the others wait. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    printf("PE %d printed this before the exit\n", me);
    shmem_sync_all();
    if (me == npes - 1) {
        if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
            long v = 0;
            shmem_long_put(&v, &v, 1, -1);
        }
        shmem_global_exit(4);
    }
    shmem_barrier_all();
    printf("PE %d went on after the exit\n", me);
    shmem_finalize();
    return 0;
}
