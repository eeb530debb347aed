/* rshmem: NVSHMEM's extension header. Everything nvshmemx_* is declared by nvshmem.h already
 * (as in NVSHMEM, where either header gives the whole API). */
#ifndef RSHMEM_NVSHMEMX_H
#define RSHMEM_NVSHMEMX_H
#include "nvshmem.h"
#endif
