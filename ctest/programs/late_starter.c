/* Used by faults_bootstrap_timeout.sh: PE <late> (from RSHMEM_RANK / PMI_RANK; default 1)
 * sleeps instead of calling shmem_init, so the others must give up and name it. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int late = argc > 1 ? atoi(argv[1]) : 1;
    const char *rank = getenv("RSHMEM_RANK");
    if (rank && atoi(rank) == late) {
        sleep(120);
        return 0;
    }
    shmem_init();
    printf("PE %d: shmem_init returned although PE %d never called it\n", shmem_my_pe(), late);
    return 1;
}
