/* <mpp/shmemx.h>: where SGI/Cray SHMEM programs, Sandia OpenSHMEM and Open MPI's OSHMEM include
 * shmemx.h from (both install this copy); rshmem's is <shmemx.h>. */
#include "../shmemx.h"
