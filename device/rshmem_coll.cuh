/* Device collectives over P2P for the teams that span the job (NVSHMEM_TEAM_WORLD,
 * NVSHMEM_TEAM_SHARED, NVSHMEMX_TEAM_NODE): alltoall, broadcast, fcollect, reduce (and, or,
 * xor, max, min, sum, prod) and reducescatter, by one thread, a warp or a block. Every PE
 * moves its own part with loads/stores through the peer mappings; team barriers order the
 * phases. Reductions whose destination overlaps the source (in place) stage through the
 * runtime's scratch buffer, one chunk at a time. */
#ifndef RSHMEM_COLL_CUH
#define RSHMEM_COLL_CUH

#include "rshmem/device/rshmem_sync.cuh"

/* ---- reduction operators ----------------------------------------------------------------- */
struct rshmemi_op_and { template <typename T> __device__ static T apply(T a, T b) { return a & b; } };
struct rshmemi_op_or { template <typename T> __device__ static T apply(T a, T b) { return a | b; } };
struct rshmemi_op_xor { template <typename T> __device__ static T apply(T a, T b) { return a ^ b; } };
struct rshmemi_op_max { template <typename T> __device__ static T apply(T a, T b) { return a > b ? a : b; } };
struct rshmemi_op_min { template <typename T> __device__ static T apply(T a, T b) { return a < b ? a : b; } };
struct rshmemi_op_sum { template <typename T> __device__ static T apply(T a, T b) { return (T)(a + b); } };
struct rshmemi_op_prod { template <typename T> __device__ static T apply(T a, T b) { return (T)(a * b); } };

/* Half and bfloat16 reduce in float. */
template <typename OP, typename T>
RSHMEMI_DEV T rshmemi_reduce_op(T a, T b) { return OP::apply(a, b); }
#if defined(RSHMEMI_HAVE_FP16)
template <typename OP>
RSHMEMI_DEV half rshmemi_reduce_op(half a, half b) { return __float2half(OP::apply(__half2float(a), __half2float(b))); }
template <typename OP>
RSHMEMI_DEV __nv_bfloat16 rshmemi_reduce_op(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __float2bfloat16(OP::apply(__bfloat162float(a), __bfloat162float(b)));
}
#endif

/* ---- the algorithms (g: the calling group; sync: its barrier) ------------------------------ */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_alltoall(void *dest, const void *source, size_t bytes, rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    rshmemi_sync_all_group(g, sync);
    for (int k = 0; k < s.npes; k++) {
        int pe = (s.mype + k) % s.npes; /* start with a different peer on each PE */
        rshmemi_copy(rshmemi_peer((char *)dest + (size_t)s.mype * bytes, pe), (const char *)source + (size_t)pe * bytes, bytes, g);
    }
    rshmemi_sync_all_group(g, sync);
}

template <typename SYNC>
RSHMEMI_DEV void rshmemi_fcollect(void *dest, const void *source, size_t bytes, rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    rshmemi_sync_all_group(g, sync);
    for (int k = 0; k < s.npes; k++) {
        int pe = (s.mype + k) % s.npes;
        rshmemi_copy(rshmemi_peer((char *)dest + (size_t)s.mype * bytes, pe), source, bytes, g);
    }
    rshmemi_sync_all_group(g, sync);
}

template <typename SYNC>
RSHMEMI_DEV void rshmemi_broadcast(void *dest, const void *source, size_t bytes, int root, rshmemi_group g, SYNC sync) {
    rshmemi_sync_all_group(g, sync);
    rshmemi_copy(dest, rshmemi_peer(source, root), bytes, g);
    rshmemi_sync_all_group(g, sync);
}

/* dest[i] = OP over every PE of source[offset + i], i < n. */
template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reduce(T *dest, const T *source, size_t offset, size_t n, rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    const T *src = source + offset;
    bool overlap = (const char *)dest < (const char *)(source + offset + n) && (const char *)src < (const char *)(dest + n);
    rshmemi_sync_all_group(g, sync);
    size_t chunk = overlap ? (size_t)(s.coll_scratch_bytes / sizeof(T)) : n;
    T *stage = overlap ? (T *)s.coll_scratch : dest;
    for (size_t base = 0; base < n; base += chunk) {
        size_t len = n - base < chunk ? n - base : chunk;
        for (size_t i = g.tid; i < len; i += g.size) {
            T acc = rshmemi_load((const T *)rshmemi_peer(src + base + i, 0));
            for (int pe = 1; pe < s.npes; pe++)
                acc = rshmemi_reduce_op<OP>(acc, rshmemi_load((const T *)rshmemi_peer(src + base + i, pe)));
            stage[overlap ? i : base + i] = acc;
        }
        if (overlap) {
            /* Every PE has read this chunk of every source before anyone overwrites it. */
            rshmemi_sync_all_group(g, sync);
            for (size_t i = g.tid; i < len; i += g.size) dest[base + i] = stage[i];
            sync();
        }
    }
    rshmemi_sync_all_group(g, sync);
}

RSHMEMI_EXTERN_C_BEGIN

/* ---- public routines --------------------------------------------------------------------- */
#define RSHMEMI_TEAM_CHECK(team) rshmemi_check_team((team), __func__)

#define RSHMEMI_DEF_COLL_SCOPE(PRE, SUF, GROUP, SYNC)                                                             \
    RSHMEMI_API int PRE##alltoallmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems) {   \
        RSHMEMI_TEAM_CHECK(team);                                                                                 \
        rshmemi_alltoall(dest, source, nelems, GROUP(), SYNC());                                                  \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##fcollectmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems) {   \
        RSHMEMI_TEAM_CHECK(team);                                                                                 \
        rshmemi_fcollect(dest, source, nelems, GROUP(), SYNC());                                                  \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##broadcastmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems,    \
                                           int PE_root) {                                                         \
        RSHMEMI_TEAM_CHECK(team);                                                                                 \
        rshmemi_broadcast(dest, source, nelems, PE_root, GROUP(), SYNC());                                        \
        return 0;                                                                                                 \
    }
RSHMEMI_DEF_COLL_SCOPE(nvshmem_, , rshmemi_thread_group, rshmemi_no_sync)
RSHMEMI_DEF_COLL_SCOPE(nvshmemx_, _warp, rshmemi_warp_group, rshmemi_warp_sync)
RSHMEMI_DEF_COLL_SCOPE(nvshmemx_, _block, rshmemi_block_group, rshmemi_block_sync)
#undef RSHMEMI_DEF_COLL_SCOPE

#define RSHMEMI_DEF_COLL_TYPED(PRE, SUF, GROUP, SYNC, NAME, TYPE)                                                  \
    RSHMEMI_API int PRE##NAME##_alltoall##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) { \
        RSHMEMI_TEAM_CHECK(team);                                                                                  \
        rshmemi_alltoall(dest, source, nelems * sizeof(TYPE), GROUP(), SYNC());                                    \
        return 0;                                                                                                  \
    }                                                                                                              \
    RSHMEMI_API int PRE##NAME##_fcollect##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) { \
        RSHMEMI_TEAM_CHECK(team);                                                                                  \
        rshmemi_fcollect(dest, source, nelems * sizeof(TYPE), GROUP(), SYNC());                                    \
        return 0;                                                                                                  \
    }                                                                                                              \
    RSHMEMI_API int PRE##NAME##_broadcast##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, \
                                               int PE_root) {                                                      \
        RSHMEMI_TEAM_CHECK(team);                                                                                  \
        rshmemi_broadcast(dest, source, nelems * sizeof(TYPE), PE_root, GROUP(), SYNC());                          \
        return 0;                                                                                                  \
    }
#define RSHMEMI_DEF_COLL_THREAD(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmem_, , rshmemi_thread_group, rshmemi_no_sync, NAME, TYPE)
#define RSHMEMI_DEF_COLL_WARP(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmemx_, _warp, rshmemi_warp_group, rshmemi_warp_sync, NAME, TYPE)
#define RSHMEMI_DEF_COLL_BLOCK(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmemx_, _block, rshmemi_block_group, rshmemi_block_sync, NAME, TYPE)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_THREAD)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_WARP)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_BLOCK)
#undef RSHMEMI_DEF_COLL_THREAD
#undef RSHMEMI_DEF_COLL_WARP
#undef RSHMEMI_DEF_COLL_BLOCK
#undef RSHMEMI_DEF_COLL_TYPED

#define RSHMEMI_DEF_REDUCE_SCOPE(PRE, SUF, GROUP, SYNC, NAME, TYPE, OP)                                           \
    RSHMEMI_API int PRE##NAME##_##OP##_reduce##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source,          \
                                                   size_t nreduce) {                                             \
        RSHMEMI_TEAM_CHECK(team);                                                                                 \
        rshmemi_reduce<TYPE, rshmemi_op_##OP>(dest, source, 0, nreduce, GROUP(), SYNC());                         \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##NAME##_##OP##_reducescatter##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source,   \
                                                          size_t nreduce) {                                      \
        RSHMEMI_TEAM_CHECK(team);                                                                                 \
        rshmemi_reduce<TYPE, rshmemi_op_##OP>(dest, source, (size_t)RSHMEMI_STATE.mype * nreduce, nreduce,      \
                                              GROUP(), SYNC());                                                   \
        return 0;                                                                                                 \
    }
#define RSHMEMI_DEF_REDUCE(NAME, TYPE, OP)                                                                        \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmem_, , rshmemi_thread_group, rshmemi_no_sync, NAME, TYPE, OP)                   \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmemx_, _warp, rshmemi_warp_group, rshmemi_warp_sync, NAME, TYPE, OP)             \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmemx_, _block, rshmemi_block_group, rshmemi_block_sync, NAME, TYPE, OP)

/* Types per operator: bitwise ops on integers; max/min/sum/prod on every standard type. */
#define RSHMEMI_REPT_BITWISE_REDUCE_TYPES(X, OP)                                                              \
    X(uchar, unsigned char, OP) X(ushort, unsigned short, OP) X(uint, unsigned int, OP)                       \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP)                      \
    X(int16, int16_t, OP) X(int32, int32_t, OP) X(int64, int64_t, OP) X(uint8, uint8_t, OP)                   \
    X(uint16, uint16_t, OP) X(uint32, uint32_t, OP) X(uint64, uint64_t, OP) X(size, size_t, OP)
#if defined(RSHMEMI_HAVE_FP16)
#define RSHMEMI_REPT_FP16_REDUCE_TYPES(X, OP) X(bfloat16, __nv_bfloat16, OP) X(half, half, OP)
#else
#define RSHMEMI_REPT_FP16_REDUCE_TYPES(X, OP)
#endif
#define RSHMEMI_REPT_STANDARD_REDUCE_TYPES(X, OP)                                                             \
    RSHMEMI_REPT_BITWISE_REDUCE_TYPES(X, OP)                                                                  \
    X(char, char, OP) X(schar, signed char, OP) X(short, short, OP) X(int, int, OP) X(long, long, OP)          \
    X(longlong, long long, OP) RSHMEMI_REPT_FP16_REDUCE_TYPES(X, OP) X(float, float, OP) X(double, double, OP)

RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, and)
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, or)
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, xor)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, max)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, min)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, sum)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, prod)
#undef RSHMEMI_DEF_REDUCE
#undef RSHMEMI_DEF_REDUCE_SCOPE
#undef RSHMEMI_TEAM_CHECK

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_COLL_CUH */
