/* The release of a device barrier is one fence per thread, not one per signal: a red.release is
 * a MEMBAR.SYS of its own (SASS), and each waits for the reply to the signal before it, so a
 * lone thread of a 4-PE team paid two NVLink round trips more than NVSHMEM (6.4 vs 4.5 us on
 * 4 x H100). ctest/scripts/cuda_compile.sh compiles this file to PTX and fails when a barrier
 * kernel signals with red.release or has no fence.release. */
#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void barrier_thread() { nvshmem_barrier_all(); }
__global__ void barrier_warp() { nvshmemx_barrier_all_warp(); }
__global__ void barrier_block() { nvshmemx_barrier_all_block(); }
__global__ void team_barrier_thread(nvshmem_team_t team) { nvshmem_barrier(team); }
