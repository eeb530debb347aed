/* On-stream barrier and data collectives (broadcast, fcollect, alltoall): see common.cuh. */
#include "common.cuh"

/* One block of RK_MAX_TEAM threads: step 1 with every member. The announcement is relaxed: the
 * kernel itself accesses no data, and what earlier work on the stream wrote or read is complete
 * and performed when this kernel starts (as for rk_enter); a release store fenced it once more
 * (4×H100, 2 PEs: 5.2 -> 4.3-4.5 µs per barrier). */
extern "C" __global__ void __launch_bounds__(RK_MAX_TEAM) rk_barrier(const __grid_constant__ rk_sync s) {
    rk_signal(s, 1, false);
    rk_wait(s, 1);
    rk_finish(s);
}

/* A broadcast pushed by the non-roots: each copies its slice of the root's
 * source (size - 1 slices, from the member after the root on) into its own dest and every other
 * non-root's, in one pass: the root's links carry its data once, every non-root reads only its
 * slice from the root and nothing from the others, and no chunk needs a flag: the exit
 * announcement is a release (rk_exit). The root copies its source to its dest (unless in place)
 * and pushes nothing. */
__device__ __forceinline__ void rk_broadcast_push(const rk_gather_args &a) {
    const rk_sync &s = a.s;
    const bool root = s.my == a.only;
    char *dest = (char *)a.dest;
    const char *src = rk_peer((const char *)a.src, s, s.start + a.only * s.stride);
    if (root) {
        if (dest != src) rk_copy(dest, src, a.nbytes);
    } else {
        size_t lo, hi;
        rk_slice(a.nbytes, s.size - 1, (s.my - a.only - 1 + s.size) % s.size, 16, &lo, &hi);
        rk_fan_part(dest + lo, src + lo, hi - lo, rk_tid(), rk_nthreads(), s, a.only);
    }
    rk_exit(s, 2, 0, !root);
}

/* fcollect/alltoall: the grid as one part per member (rk_parts), so the loads from every
 * member are in flight at once (the host launches enough blocks for each member's share);
 * parts numbered from this PE on, so that with fewer blocks than members the PEs do not all
 * read from the same member at the same time. */
extern "C" __global__ void __launch_bounds__(RK_THREADS) rk_gather(const __grid_constant__ rk_gather_args a) {
    /* Zero bytes: the start-up warm-up's launch (the host never enqueues an empty collective),
     * which does the driver's first-launch work before the program's first collective. */
    if (a.nbytes == 0) return;
    const rk_sync &s = a.s;
    rk_enter(s);
    if (a.push) {
        rk_broadcast_push(a);
        return;
    }
    int count = a.only >= 0 ? 1 : s.size;
    rk_part p = rk_parts(count);
    for (int c = p.first; c < count; c += p.step) {
        int k = a.only >= 0 ? a.only : (s.my + c) % s.size;
        char *dest = (char *)a.dest + (size_t)k * a.dest_step;
        const char *src = rk_peer((const char *)a.src + a.src_off, s, s.start + k * s.stride);
        if (dest != src) rk_copy_part(dest, src, a.nbytes, p.tid, p.nth);
    }
    rk_exit(s, 2, 0);
}
