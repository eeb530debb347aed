// Bare-CUDA floors shared by several benchmarks: the same hardware path as a SHMEM operation,
// with no SHMEM call. The peer's memory is reached through the plain pointer nvshmem_ptr()
// returned on the host (the library is used only to find the address, never inside a floor).
#pragma once

#include "bench.cuh"

namespace floors {

__device__ __forceinline__ void st_u64(void *p, unsigned long long v) {
    asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_u64(const void *p) {
    unsigned long long v;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
// Plain stores the compiler may neither drop nor merge (asm volatile). No "memory" clobber, so
// the loads feeding them can be scheduled early; group_copy ends with a compiler barrier.
__device__ __forceinline__ void st_v4(void *p, uint4 v) {
    asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
__device__ __forceinline__ void st_u64_plain(void *p, unsigned long long v) {
    asm volatile("st.global.u64 [%0], %1;" ::"l"(p), "l"(v));
}
__device__ __forceinline__ void compiler_barrier() { asm volatile("" ::: "memory"); }

// Copy `len` bytes (multiple of 8) from local src to dst (a peer pointer) with the threads of one
// group (tid in [0, nthr)): 16-byte stores where both ends allow, four loads in flight per
// thread; 8-byte stores for the rest.
__device__ __forceinline__ void group_copy(char *dst, const char *src, size_t len, unsigned tid,
                                           unsigned nthr) {
    size_t head = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 15) == 0) {
        const uint4 *s = (const uint4 *)src;
        size_t n16 = len / 16, k = tid;
        for (; k + 3 * (size_t)nthr < n16; k += 4 * (size_t)nthr) {
            uint4 a = s[k], b = s[k + nthr], c = s[k + 2 * nthr], d = s[k + 3 * nthr];
            st_v4(dst + 16 * k, a);
            st_v4(dst + 16 * (k + nthr), b);
            st_v4(dst + 16 * (k + 2 * nthr), c);
            st_v4(dst + 16 * (k + 3 * nthr), d);
        }
        for (; k < n16; k += nthr) st_v4(dst + 16 * k, s[k]);
        head = n16 * 16;
    }
    for (size_t k = head / 8 + tid; k < len / 8; k += nthr)
        st_u64_plain(dst + 8 * k, *(const unsigned long long *)(src + 8 * k));
    compiler_barrier();
}

// The load side: `len` bytes (multiple of 8) from src (a peer pointer) into local dst, L1
// bypassed (ld.global.cg), four loads in flight per thread.
__device__ __forceinline__ void group_load(char *dst, const char *src, size_t len, unsigned tid,
                                           unsigned nthr) {
    size_t head = 0;
    if ((((uintptr_t)dst | (uintptr_t)src) & 15) == 0) {
        const uint4 *s = (const uint4 *)src;
        uint4 *d = (uint4 *)dst;
        size_t n16 = len / 16, k = tid;
        for (; k + 3 * (size_t)nthr < n16; k += 4 * (size_t)nthr) {
            uint4 a = __ldcg(s + k), b = __ldcg(s + k + nthr), c = __ldcg(s + k + 2 * nthr), e = __ldcg(s + k + 3 * nthr);
            d[k] = a;
            d[k + nthr] = b;
            d[k + 2 * nthr] = c;
            d[k + 3 * nthr] = e;
        }
        for (; k < n16; k += nthr) d[k] = __ldcg(s + k);
        head = n16 * 16;
    }
    for (size_t k = head / 8 + tid; k < len / 8; k += nthr)
        ((unsigned long long *)dst)[k] = __ldcg((const unsigned long long *)src + k);
}

// Two PEs meet: each adds to the other's counter and waits for its own (monotonic values, so
// counters never need resetting between launches).
__device__ __forceinline__ void flag_sync(unsigned long long *mine, unsigned long long *theirs,
                                          unsigned long long value) {
    __threadfence_system();
    st_u64(theirs, value);
    while (ld_u64(mine) < value) {
    }
}

// Flag ping-pong, one thread per PE: the initiator stores i to the peer's flag and spins on its
// own; the other answers. Window over `iters` round trips after `warm`.
__global__ void pingpong(unsigned long long *mine, unsigned long long *theirs, bool initiator,
                         unsigned long long base, int warm, int iters, unsigned long long *slot) {
    unsigned long long t0 = 0;
    for (int i = 1; i <= warm + iters; i++) {
        if (i == warm + 1) t0 = bench::gtimer();
        unsigned long long v = base + (unsigned long long)i;
        if (initiator) {
            st_u64(theirs, v);
            while (ld_u64(mine) < v) {
            }
        } else {
            while (ld_u64(mine) < v) {
            }
            st_u64(theirs, v);
        }
    }
    *slot = bench::gtimer() - t0;
}

// Barrier floor for two PEs: a flag exchange per iteration by thread 0 (bracketed by
// __syncthreads for a block).
__global__ void sync_pair(unsigned long long *mine, unsigned long long *theirs,
                          unsigned long long base, int warm, int iters, unsigned long long *slot) {
    unsigned long long t0 = 0;
    for (int i = 1; i <= warm + iters; i++) {
        if (i == warm + 1) {
            __syncthreads();
            if (threadIdx.x == 0) t0 = bench::gtimer();
        }
        __syncthreads();
        if (threadIdx.x == 0) flag_sync(mine, theirs, base + (unsigned long long)i);
        __syncthreads();
    }
    if (threadIdx.x == 0) *slot = bench::gtimer() - t0;
}

// Collective floor, one CTA: push `bytes` to the peer (SM stores), then a flag exchange.
__global__ void push_sync(char *peer_dst, const char *src, size_t bytes,
                          unsigned long long *mine, unsigned long long *theirs,
                          unsigned long long base, int warm, int iters, unsigned long long *slot) {
    unsigned long long t0 = 0;
    for (int i = 1; i <= warm + iters; i++) {
        if (i == warm + 1) {
            __syncthreads();
            if (threadIdx.x == 0) t0 = bench::gtimer();
        }
        group_copy(peer_dst, src, bytes, threadIdx.x, blockDim.x);
        __syncthreads();
        if (threadIdx.x == 0) flag_sync(mine, theirs, base + (unsigned long long)i);
        __syncthreads();
    }
    if (threadIdx.x == 0) *slot = bench::gtimer() - t0;
}

// Reduction floor, one CTA: dst = local + peer (int32, loads over NVLink), then a flag exchange.
__global__ void pull_add_sync(int *dst, const int *local, const int *peer_src, size_t n,
                              unsigned long long *mine, unsigned long long *theirs,
                              unsigned long long base, int warm, int iters,
                              unsigned long long *slot) {
    unsigned long long t0 = 0;
    for (int i = 1; i <= warm + iters; i++) {
        if (i == warm + 1) {
            __syncthreads();
            if (threadIdx.x == 0) t0 = bench::gtimer();
        }
        if (n % 4 == 0) {
            const int4 *a = (const int4 *)local, *b = (const int4 *)peer_src;
            int4 *d = (int4 *)dst;
            for (size_t k = threadIdx.x; k < n / 4; k += blockDim.x) {
                int4 x = a[k], y = __ldcv(b + k);
                d[k] = make_int4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
            }
        } else {
            for (size_t k = threadIdx.x; k < n; k += blockDim.x) dst[k] = local[k] + __ldcv(peer_src + k);
        }
        __syncthreads();
        if (threadIdx.x == 0) flag_sync(mine, theirs, base + (unsigned long long)i);
        __syncthreads();
    }
    if (threadIdx.x == 0) *slot = bench::gtimer() - t0;
}

// Monotonic flag values: every PE runs the same sequence of launches, so the same counter.
inline unsigned long long next_base(int warm, int iters) {
    static unsigned long long base = 0;
    unsigned long long b = base;
    base += (unsigned long long)(warm + iters) + 1;
    return b;
}

}  // namespace floors
