/* rshmem header-only device library: NVSHMEM's device API over NVLink/PCIe P2P (plain loads,
 * stores and atomics through the mapped peer heaps). Included by nvshmem.h under nvcc.
 * No relocatable device code is needed: every translation unit carries its own copy of the
 * device state (see rshmem_state.cuh). */
#ifndef RSHMEM_DEVICE_CUH
#define RSHMEM_DEVICE_CUH

#if !defined(__CUDACC__)
#error "rshmem/device/rshmem_device.cuh is CUDA code: include nvshmem.h and compile with nvcc"
#endif

#include "rshmem/device/rshmem_common.h"
#include "rshmem/device/rshmem_state.cuh"
#include "rshmem/device/rshmem_p2p.cuh"
#include "rshmem/device/rshmem_rma.cuh"
#include "rshmem/device/rshmem_amo.cuh"
#include "rshmem/device/rshmem_sync.cuh"
#include "rshmem/device/rshmem_wait.cuh"
#include "rshmem/device/rshmem_coll.cuh"
#include "rshmem/device/rshmem_strided.cuh"
#include "rshmem/device/rshmem_ext.cuh"
#if !defined(__CUDACC_RTC__)
#include "rshmem/device/rshmem_launch.cuh"
#endif

#endif /* RSHMEM_DEVICE_CUH */
