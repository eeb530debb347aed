/* Shared helpers for the programs in ctest/oshmem/: they are built with Open MPI's `oshcc` (its
 * shmem.h, OpenSHMEM 1.4) and run both natively and with rshmem swapped in by LD_PRELOAD.
 * Only standard OpenSHMEM calls are used, so either library must give the same results. */
#ifndef RSHMEM_OSH_COMMON_H
#define RSHMEM_OSH_COMMON_H
#include <shmem.h>
#include <stdio.h>
#include <string.h>

#include "check.h" /* ctest/common: CHECK, CHECK_EQ_LONG (report, then shmem_global_exit(1)) */

/* Which library answers the calls: rshmem when it is preloaded, Open MPI otherwise. Used only
 * to skip known bugs of the native library (each skip prints why). */
static inline int running_on_rshmem(void)
{
    char name[SHMEM_MAX_NAME_LEN];
    memset(name, 0, sizeof name);
    shmem_info_get_name(name);
    return strstr(name, "rshmem") != NULL;
}

static inline void passed(const char *prog)
{
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        char name[SHMEM_MAX_NAME_LEN];
        memset(name, 0, sizeof name);
        shmem_info_get_name(name);
        printf("%s: PASS on %d PEs (library: %s)\n", prog, shmem_n_pes(), name);
        fflush(stdout);
    }
}

#endif
