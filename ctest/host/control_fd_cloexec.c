/* rshmem-test: pes=2
 * rshmemrun's control pipe (RSHMEM_CONTROL_FD, where shmem_global_exit is reported) is
 * close-on-exec in the PE: a program the PE runs cannot end the job with a status of its own. */
#include <fcntl.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include "check.h"

int main(void) {
    shmem_init();
    const char *text = getenv("RSHMEM_CONTROL_FD");
    CHECK(text != NULL, "RSHMEM_CONTROL_FD is not set: run this under rshmemrun");
    int fd = atoi(text);
    int flags = fcntl(fd, F_GETFD);
    CHECK(flags >= 0 && (flags & FD_CLOEXEC), "the control descriptor %d has flags %d, want FD_CLOEXEC", fd, flags);
    /* A child shell tries what a stray subprocess could: claim a global exit with status 9. */
    char cmd[160];
    snprintf(cmd, sizeof cmd, "echo 'exit %d 9' >&%d 2>/dev/null", shmem_my_pe(), fd);
    int rc = system(cmd);
    CHECK(rc != 0, "a child process wrote to the control descriptor %d", fd);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
