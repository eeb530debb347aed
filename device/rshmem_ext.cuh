/* The rest of NVSHMEM 3.4's device API: the multicast pointer query, the warpgroup barrier
 * and the double2 maxloc reduction. */
#ifndef RSHMEM_EXT_CUH
#define RSHMEM_EXT_CUH

#include "rshmem/device/rshmem_coll.cuh"

/* ---- warpgroups: the 4 consecutive warps (128 threads) from a multiple of 128 ----------------
 * Their barrier is named barrier 1 + the warpgroup's index in the block (0 is __syncthreads's):
 * a kernel that calls nvshmemx_barrier_warpgroup should not use those ids itself. */
RSHMEMI_DEV rshmemi_group rshmemi_warpgroup_group() {
    rshmemi_group b = rshmemi_block_group();
    int base = b.tid & ~127, size = b.size - base < 128 ? b.size - base : 128;
    return rshmemi_group{b.tid - base, size};
}
struct rshmemi_warpgroup_sync {
    __device__ void operator()() const {
        rshmemi_group b = rshmemi_block_group();
        int base = b.tid & ~127, size = b.size - base < 128 ? b.size - base : 128;
        asm volatile("bar.sync %0, %1;" ::"r"(1 + (b.tid >> 7)), "r"(size) : "memory");
    }
};

/* ---- maxloc on double2: x is the value, y its location; the larger x wins, a tie goes to the
 * smaller y (MPI_MAXLOC's rule). 16-byte elements take the large path; where an element is not
 * 16-byte aligned, rshmemi_reduce reads it with rshmemi_load: the overload below (found by
 * argument-dependent lookup) reads it as two words. */
RSHMEMI_DEV double2 rshmemi_load(const double2 *p) {
    const volatile double *d = (const volatile double *)p;
    return make_double2(d[0], d[1]);
}
struct rshmemi_op_maxloc {
    __device__ static double2 apply(double2 a, double2 b) {
        if (a.x != b.x) return a.x > b.x ? a : b;
        return a.y <= b.y ? a : b;
    }
};

RSHMEMI_EXTERN_C_BEGIN

/* rshmem maps no multicast (NVLS) objects: there is never a multicast address (the host
 * routine is the library's). */
#ifdef __CUDA_ARCH__
RSHMEMI_API void *nvshmemx_mc_ptr(nvshmem_team_t team, const void *ptr) {
    (void)team;
    (void)ptr;
    return 0;
}
#endif

RSHMEMI_API int nvshmemx_barrier_warpgroup(nvshmem_team_t team) {
    rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), rshmemi_warpgroup_group(), rshmemi_warpgroup_sync());
    return 0;
}

RSHMEMI_API int nvshmemx_double2_maxloc_reduce_block(nvshmem_team_t team, double2 *dest, const double2 *source, size_t nreduce) {
    rshmemi_block_sync sync;
    rshmemi_reduce<double2, rshmemi_op_maxloc>(team, rshmemi_team_checked(team, __func__), dest, source, nreduce, sync.group(), sync,
                                               __func__);
    return 0;
}

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_EXT_CUH */
