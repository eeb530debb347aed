/* <mpp/pshmem.h>: where SGI/Cray SHMEM programs, Sandia OpenSHMEM and Open MPI's OSHMEM include
 * pshmem.h from (both install this copy); rshmem's is <pshmem.h>. */
#include "../pshmem.h"
