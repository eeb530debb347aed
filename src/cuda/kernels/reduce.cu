/* On-stream reductions and reduce-scatter, one kernel per (operator, element kind): see
 * common.cuh for the synchronisation and rk_reduce_args for the two modes. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "common.cuh"

/* ---- operators ------------------------------------------------------------------------- */
struct rk_and { template <typename T> __device__ static T f(T a, T b) { return a & b; } };
struct rk_or { template <typename T> __device__ static T f(T a, T b) { return a | b; } };
struct rk_xor { template <typename T> __device__ static T f(T a, T b) { return a ^ b; } };
struct rk_max { template <typename T> __device__ static T f(T a, T b) { return a > b ? a : b; } };
struct rk_min { template <typename T> __device__ static T f(T a, T b) { return a < b ? a : b; } };
struct rk_sum { template <typename T> __device__ static T f(T a, T b) { return (T)(a + b); } };
struct rk_prod { template <typename T> __device__ static T f(T a, T b) { return (T)(a * b); } };

/* ---- element kinds: S is the stored word; half and bfloat16 combine in float ---------------- */
struct rk_f16 {};
struct rk_bf16 {};
template <typename K>
struct rk_kind {
    typedef K S;
    template <typename OP> __device__ static S op(S a, S b) { return OP::f(a, b); }
};
template <>
struct rk_kind<rk_f16> {
    typedef unsigned short S;
    template <typename OP> __device__ static S op(S a, S b) {
        return __half_as_ushort(__float2half(OP::f(__half2float(__ushort_as_half(a)), __half2float(__ushort_as_half(b)))));
    }
};
template <>
struct rk_kind<rk_bf16> {
    typedef unsigned short S;
    template <typename OP> __device__ static S op(S a, S b) {
        return __bfloat16_as_ushort(
            __float2bfloat16(OP::f(__bfloat162float(__ushort_as_bfloat16(a)), __bfloat162float(__ushort_as_bfloat16(b)))));
    }
};

/* 16 bytes of elements, combined lane by lane. */
template <typename K, typename OP>
__device__ __forceinline__ int4 rk_combine(int4 a, int4 b) {
    typedef typename rk_kind<K>::S S;
    const int L = 16 / sizeof(S);
    union {
        int4 v;
        S e[L];
    } x, y;
    x.v = a;
    y.v = b;
#pragma unroll
    for (int i = 0; i < L; i++) x.e[i] = rk_kind<K>::template op<OP>(x.e[i], y.e[i]);
    return x.v;
}

/* Stores v at p on every member (p: this PE's address of a symmetric array), from this PE's
 * successor on (the PEs store to different members at once). */
template <typename T>
__device__ __forceinline__ void rk_store_all(T *p, T v, const rk_sync &s) {
    for (int x = 1; x <= s.size; x++) {
        int k = s.my + x < s.size ? s.my + x : s.my + x - s.size;
        *rk_peer(p, s, s.start + k * s.stride) = v;
    }
}

/* dest[i] = OP over the members of src_k[i], lo <= i < hi, by threads tid of nth (the grid's or
 * one block's), combined in member order from member `first` on (wrapping around): 0 where
 * every PE reduces the same elements, so that they all get the same bits. PUSH: the result goes
 * to every member's dest (rk_store_all), not only to this PE's. */
template <typename K, typename OP, bool PUSH = false>
__device__ __noinline__ void rk_reduce_range(const rk_sync &s, typename rk_kind<K>::S *dest, const typename rk_kind<K>::S *src,
                                             size_t lo, size_t hi, int first, size_t tid, size_t nth) {
    typedef typename rk_kind<K>::S S;
    /* Vectors per member in flight per thread: 4 for wide elements, 2 for narrow ones (their
     * combine is 8 or 16 lanes of work, and the code would grow without adding memory
     * parallelism). The loads of G members are issued together, then combined in member order:
     * one NVLink round trip per G members instead of one per member (the combine order, and
     * so the bits, are those of loading one member after the other). */
    const int L = 16 / sizeof(S), U = sizeof(S) >= 4 ? 4 : 2, G = 4;
    size_t head = lo;
    if ((((uintptr_t)(dest + lo) | (uintptr_t)(src + lo)) & 15) == 0) {
        size_t nv = (hi - lo) / L;
        const int4 *s0 = (const int4 *)(src + lo);
        int4 *d = (int4 *)(dest + lo);
        for (size_t i = tid; i < nv; i += U * nth) {
            int4 acc[U];
            for (int c0 = 0; c0 < s.size; c0 += G) {
                int4 x[G][U];
#pragma unroll
                for (int g = 0; g < G; g++) {
                    int k = first + c0 + g;
                    if (k >= s.size) k -= s.size;
                    if (c0 + g < s.size) {
                        const int4 *p = rk_peer(s0, s, s.start + k * s.stride);
#pragma unroll
                        for (int u = 0; u < U; u++) x[g][u] = i + u * nth < nv ? __ldcg(p + i + u * nth) : make_int4(0, 0, 0, 0);
                    }
                }
#pragma unroll
                for (int g = 0; g < G; g++) {
                    if (c0 + g < s.size) {
#pragma unroll
                        for (int u = 0; u < U; u++) acc[u] = c0 + g == 0 ? x[g][u] : rk_combine<K, OP>(acc[u], x[g][u]);
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (i + u * nth < nv) {
                    if (PUSH) rk_store_all(d + i + u * nth, acc[u], s);
                    else d[i + u * nth] = acc[u];
                }
        }
        head = lo + nv * L;
    }
    for (size_t i = head + tid; i < hi; i += nth) {
        S acc = __ldcg(rk_peer(src + i, s, s.start + first * s.stride));
        for (int c = 1, k = first + 1; c < s.size; c++, k++) {
            if (k == s.size) k = 0;
            acc = rk_kind<K>::template op<OP>(acc, __ldcg(rk_peer(src + i, s, s.start + k * s.stride)));
        }
        if (PUSH) rk_store_all(dest + i, acc, s);
        else dest[i] = acc;
    }
}

template <typename K, typename OP>
__device__ __forceinline__ void rk_reduce_kernel(const rk_reduce_args &a) {
    typedef typename rk_kind<K>::S S;
    /* No elements: the start-up warm-up's launch (the host never enqueues an empty reduction),
     * which returns before its handshake and touches nothing (see rk_gather in coll.cu). */
    if (a.n == 0) return;
    const rk_sync &s = a.s;
    S *dest = (S *)a.dest;
    const S *src = (const S *)a.src + a.src_off;
    if (a.mode == 2) {
        /* One block: the staged copy is complete and visible before block 0 announces it. */
        rk_copy((void *)a.stage, src, a.n * sizeof(S));
        __threadfence_system();
        __syncthreads();
        src = (const S *)a.stage;
    }
    rk_enter(s);
    if (a.mode == 3) {
        /* Push: this PE reduces slice `my` (in member order from member my + 1 on, as in two
         * phases) and stores each result into every member's dest; its exit announcement is a
         * release (rk_exit), so a member that has taken it sees the slice. One PE computes each
         * element: the same bits everywhere. In place is safe too: element i is read and written
         * on every member by one thread, in that order. */
        size_t lo, hi;
        rk_slice(a.n, s.size, s.my, 16 / sizeof(S), &lo, &hi);
        rk_reduce_range<K, OP, true>(s, dest, src, lo, hi, (s.my + 1) % s.size, rk_tid(), rk_nthreads());
        rk_exit(s, 2, 0, true);
        return;
    }
    if (a.mode != 1) {
        rk_reduce_range<K, OP>(s, dest, src, 0, a.n, 0, rk_tid(), rk_nthreads());
        rk_exit(s, 2, 0);
        return;
    }
    /* Slice k is combined from member k + 1 on: at every step the PEs read from different members
     * (in member order from 0, all of them read member 0 first, then member 1, ..., one member's
     * links carrying every PE's reads at a time). One PE reduces each slice, so every PE still
     * gets the same bits (4×H100, 4 PEs, 4 MiB: 47.3 -> 43.9 µs). */
    const int from = (s.my + 1) % s.size;
    rk_two_phase(s, (char *)dest, a.n, sizeof(S), s.size, 0, a.chunks, true,
                 [&](size_t lo, size_t hi) { rk_reduce_range<K, OP>(s, dest, src, lo, hi, from, threadIdx.x, blockDim.x); });
}

#define RK_REDUCE(OPNAME, TNAME, K)                                                                          \
    extern "C" __global__ void __launch_bounds__(RK_THREADS) rk_reduce_##OPNAME##_##TNAME(const __grid_constant__ rk_reduce_args a) { \
        rk_reduce_kernel<K, rk_##OPNAME>(a);                                                                 \
    }

/* One module per element kind (scripts/gen_ptx.sh builds this file once per RK_KIND), so a
 * program JIT-compiles only the kinds it reduces. Bitwise operators, sum and product act on
 * the bits of a width (two's complement wraps alike for signed and unsigned types: the u*
 * kernels serve both); max and min need the signedness; floating kinds have no bitwise ops. */
#define RK_INT_OPS(TNAME, K) RK_REDUCE(and, TNAME, K) RK_REDUCE(or, TNAME, K) RK_REDUCE(xor, TNAME, K) \
    RK_REDUCE(sum, TNAME, K) RK_REDUCE(prod, TNAME, K) RK_REDUCE(max, TNAME, K) RK_REDUCE(min, TNAME, K)
#define RK_ORDER_OPS(TNAME, K) RK_REDUCE(max, TNAME, K) RK_REDUCE(min, TNAME, K)
#define RK_FLOAT_OPS(TNAME, K) RK_REDUCE(sum, TNAME, K) RK_REDUCE(prod, TNAME, K) RK_REDUCE(max, TNAME, K) RK_REDUCE(min, TNAME, K)

#if !defined(RK_KIND)
#error "define RK_KIND (one of u8 u16 u32 u64 i8 i16 i32 i64 f16 bf16 f32 f64): see scripts/gen_ptx.sh"
#endif
#define RK_KIND_u8 1
#define RK_KIND_u16 2
#define RK_KIND_u32 3
#define RK_KIND_u64 4
#define RK_KIND_i8 5
#define RK_KIND_i16 6
#define RK_KIND_i32 7
#define RK_KIND_i64 8
#define RK_KIND_f16 9
#define RK_KIND_bf16 10
#define RK_KIND_f32 11
#define RK_KIND_f64 12
#define RK_CAT(a, b) a##b
#define RK_KIND_ID(k) RK_CAT(RK_KIND_, k)

#if RK_KIND_ID(RK_KIND) == 1
RK_INT_OPS(u8, unsigned char)
#elif RK_KIND_ID(RK_KIND) == 2
RK_INT_OPS(u16, unsigned short)
#elif RK_KIND_ID(RK_KIND) == 3
RK_INT_OPS(u32, unsigned int)
#elif RK_KIND_ID(RK_KIND) == 4
RK_INT_OPS(u64, unsigned long long)
#elif RK_KIND_ID(RK_KIND) == 5
RK_ORDER_OPS(i8, signed char)
#elif RK_KIND_ID(RK_KIND) == 6
RK_ORDER_OPS(i16, short)
#elif RK_KIND_ID(RK_KIND) == 7
RK_ORDER_OPS(i32, int)
#elif RK_KIND_ID(RK_KIND) == 8
RK_ORDER_OPS(i64, long long)
#elif RK_KIND_ID(RK_KIND) == 9
RK_FLOAT_OPS(f16, rk_f16)
#elif RK_KIND_ID(RK_KIND) == 10
RK_FLOAT_OPS(bf16, rk_bf16)
#elif RK_KIND_ID(RK_KIND) == 11
RK_FLOAT_OPS(f32, float)
#elif RK_KIND_ID(RK_KIND) == 12
RK_FLOAT_OPS(f64, double)
#else
#error "unknown RK_KIND"
#endif
