/* rshmem-test: pes=1,2
 * Library identity and the shmemx.h feature macros (issue 17 §2): shmem_info_get_name returns
 * exactly SHMEM_VENDOR_STRING, as the specification (and OpenSHMEM/shmem4py unit tests) want;
 * shmemx.h announces shmemx_wtime with HAVE_SHMEMX_WTIME, and the clock runs forward. */
#include <shmem.h>
#include <shmemx.h>
#include <string.h>
#include <time.h>
#include "check.h"

#ifndef HAVE_SHMEMX_WTIME
#error "shmemx.h declares shmemx_wtime but does not define HAVE_SHMEMX_WTIME"
#endif

int main(void) {
    char name[SHMEM_MAX_NAME_LEN];
    int major = -1, minor = -1;
    shmem_init();
    memset(name, 'x', sizeof name);
    shmem_info_get_name(name);
    CHECK(memchr(name, 0, sizeof name) != NULL, "shmem_info_get_name wrote no terminating NUL");
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "shmem_info_get_name gave \"%s\", SHMEM_VENDOR_STRING is \"%s\"",
          name, SHMEM_VENDOR_STRING);
    shmem_info_get_version(&major, &minor);
    CHECK_EQ_LONG(major, SHMEM_MAJOR_VERSION);
    CHECK_EQ_LONG(minor, SHMEM_MINOR_VERSION);

    double t0 = shmemx_wtime();
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double t1 = shmemx_wtime();
    CHECK(t1 - t0 >= 0.019 && t1 - t0 < 60.0, "shmemx_wtime advanced %.6f s across a 20 ms sleep", t1 - t0);
    shmem_finalize();
    return 0;
}
