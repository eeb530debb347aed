/* <mpp/shmem.h>: where SGI/Cray SHMEM programs, Sandia OpenSHMEM and Open MPI's OSHMEM include
 * shmem.h from (both install this copy); rshmem's is <shmem.h>. */
#include "../shmem.h"
