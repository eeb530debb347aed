/* nvshmemx_collective_launch and its grid-size query (host code, in the program's own
 * translation unit): a cooperative launch, so every block of a kernel that synchronizes
 * across PEs is resident at once. */
#ifndef RSHMEM_LAUNCH_CUH
#define RSHMEM_LAUNCH_CUH

#include <stdio.h>
#include <cuda_runtime.h>
#include "rshmem/device/rshmem_common.h"

extern "C" int rshmem_pes_on_my_gpu(void); /* librshmem (declared in nvshmem.h too) */

/* Largest grid of `blockDims` threads (and `sharedMem` bytes of dynamic shared memory) whose
 * blocks can all be resident on this PE's GPU, while the other PEs on the same GPU (if any)
 * have grids of the same size resident too: their kernels wait for each other. */
static inline int nvshmemx_collective_launch_query_gridsize(const void *func, dim3 blockDims, void **args, size_t sharedMem,
                                                            int *gridsize) {
    (void)args;
    int device = 0, sms = 0, per_sm = 0;
    if (gridsize == NULL) return NVSHMEMX_ERROR_INVALID_VALUE;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, (int)(blockDims.x * blockDims.y * blockDims.z),
                                                      sharedMem) != cudaSuccess)
        return NVSHMEMX_ERROR_INTERNAL;
    *gridsize = per_sm * sms / rshmem_pes_on_my_gpu();
    return NVSHMEMX_SUCCESS;
}

/* Launches `func` cooperatively; fails (NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED) rather than
 * deadlock when the grid cannot be resident at once. */
static inline int nvshmemx_collective_launch(const void *func, dim3 gridDims, dim3 blockDims, void **args, size_t sharedMem,
                                             cudaStream_t stream) {
    int max_grid = 0;
    int rc = nvshmemx_collective_launch_query_gridsize(func, blockDims, args, sharedMem, &max_grid);
    if (rc != NVSHMEMX_SUCCESS) return rc;
    if ((long long)gridDims.x * gridDims.y * gridDims.z > max_grid) {
        fprintf(stderr, "rshmem: nvshmemx_collective_launch: a grid of %u x %u x %u blocks cannot be resident at once (at most %d); "
                        "use nvshmemx_collective_launch_query_gridsize\n", gridDims.x, gridDims.y, gridDims.z, max_grid);
        return NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
    }
    return cudaLaunchCooperativeKernel(func, gridDims, blockDims, args, sharedMem, stream) == cudaSuccess
               ? NVSHMEMX_SUCCESS
               : NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED;
}

#endif /* RSHMEM_LAUNCH_CUH */
