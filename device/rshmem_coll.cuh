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

/* ---- the algorithms (t: the team; g: the calling group; sync: its barrier) ----------------- */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_alltoall(const rshmemi_team &t, void *dest, const void *source, size_t bytes, rshmemi_group g, SYNC sync) {
    rshmemi_sync_team_group(t, g, sync);
    for (int k = 0; k < t.size; k++) {
        int j = (t.my + k) % t.size; /* start with a different member on each PE */
        rshmemi_copy(rshmemi_peer((char *)dest + (size_t)t.my * bytes, rshmemi_team_pe(t, j)), (const char *)source + (size_t)j * bytes, bytes, g);
    }
    rshmemi_sync_team_group(t, g, sync);
}

template <typename SYNC>
RSHMEMI_DEV void rshmemi_fcollect(const rshmemi_team &t, void *dest, const void *source, size_t bytes, rshmemi_group g, SYNC sync) {
    rshmemi_sync_team_group(t, g, sync);
    for (int k = 0; k < t.size; k++) {
        int j = (t.my + k) % t.size;
        rshmemi_copy(rshmemi_peer((char *)dest + (size_t)t.my * bytes, rshmemi_team_pe(t, j)), source, bytes, g);
    }
    rshmemi_sync_team_group(t, g, sync);
}

/* root: the root's index in the team. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_broadcast(const rshmemi_team &t, void *dest, const void *source, size_t bytes, int root, rshmemi_group g,
                                   SYNC sync) {
    if (rshmemi_checks_on() && (root < 0 || root >= t.size)) {
        printf("rshmem: broadcast: PE_root %d is not a member index of the team (0..%d)\n", root, t.size - 1);
        __trap();
    }
    rshmemi_sync_team_group(t, g, sync);
    if (root != t.my || dest != source) rshmemi_copy(dest, rshmemi_peer(source, rshmemi_team_pe(t, root)), bytes, g);
    rshmemi_sync_team_group(t, g, sync);
}

/* dest[i] = OP over the members (in member order) of source[offset + i], i < n. */
template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reduce(const rshmemi_team &t, T *dest, const T *source, size_t offset, size_t n, rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    const T *src = source + offset;
    bool overlap = (const char *)dest < (const char *)(source + offset + n) && (const char *)src < (const char *)(dest + n);
    rshmemi_sync_team_group(t, g, sync);
    size_t chunk = overlap ? (size_t)(s.coll_scratch_bytes / sizeof(T)) : n;
    T *stage = overlap ? (T *)s.coll_scratch : dest;
    for (size_t base = 0; base < n; base += chunk) {
        size_t len = n - base < chunk ? n - base : chunk;
        for (size_t i = g.tid; i < len; i += g.size) {
            T acc = rshmemi_load((const T *)rshmemi_peer(src + base + i, rshmemi_team_pe(t, 0)));
            for (int k = 1; k < t.size; k++)
                acc = rshmemi_reduce_op<OP>(acc, rshmemi_load((const T *)rshmemi_peer(src + base + i, rshmemi_team_pe(t, k))));
            stage[overlap ? i : base + i] = acc;
        }
        if (overlap) {
            /* Every member has read this chunk of every source before anyone overwrites it. */
            rshmemi_sync_team_group(t, g, sync);
            for (size_t i = g.tid; i < len; i += g.size) dest[base + i] = stage[i];
            sync();
        }
    }
    rshmemi_sync_team_group(t, g, sync);
}

RSHMEMI_EXTERN_C_BEGIN

/* ---- public routines --------------------------------------------------------------------- */
#define RSHMEMI_TEAM(team) rshmemi_team_checked((team), __func__)

#define RSHMEMI_DEF_COLL_SCOPE(PRE, SUF, GROUP, SYNC)                                                             \
    RSHMEMI_API int PRE##alltoallmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems) {   \
        SYNC sync;                                                                                                \
        rshmemi_alltoall(RSHMEMI_TEAM(team), dest, source, nelems, GROUP(), sync);                                                  \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##fcollectmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems) {   \
        SYNC sync;                                                                                                \
        rshmemi_fcollect(RSHMEMI_TEAM(team), dest, source, nelems, GROUP(), sync);                                                  \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##broadcastmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems,    \
                                           int PE_root) {                                                         \
        SYNC sync;                                                                                                \
        rshmemi_broadcast(RSHMEMI_TEAM(team), dest, source, nelems, PE_root, GROUP(), sync);                                        \
        return 0;                                                                                                 \
    }
/* The thread-scope routines also exist on the host (librshmem.so): device definitions only
 * in the device pass, as for every routine declared __host__ __device__ in nvshmem.h. */
#ifdef __CUDA_ARCH__
RSHMEMI_DEF_COLL_SCOPE(nvshmem_, , rshmemi_thread_group, rshmemi_no_sync)
#endif
RSHMEMI_DEF_COLL_SCOPE(nvshmemx_, _warp, rshmemi_warp_group, rshmemi_warp_sync)
RSHMEMI_DEF_COLL_SCOPE(nvshmemx_, _block, rshmemi_block_group, rshmemi_block_sync)
#undef RSHMEMI_DEF_COLL_SCOPE

#define RSHMEMI_DEF_COLL_TYPED(PRE, SUF, GROUP, SYNC, NAME, TYPE)                                                  \
    RSHMEMI_API int PRE##NAME##_alltoall##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) { \
        SYNC sync;                                                                                                 \
        rshmemi_alltoall(RSHMEMI_TEAM(team), dest, source, nelems * sizeof(TYPE), GROUP(), sync);                                    \
        return 0;                                                                                                  \
    }                                                                                                              \
    RSHMEMI_API int PRE##NAME##_fcollect##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) { \
        SYNC sync;                                                                                                 \
        rshmemi_fcollect(RSHMEMI_TEAM(team), dest, source, nelems * sizeof(TYPE), GROUP(), sync);                                    \
        return 0;                                                                                                  \
    }                                                                                                              \
    RSHMEMI_API int PRE##NAME##_broadcast##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, \
                                               int PE_root) {                                                      \
        SYNC sync;                                                                                                 \
        rshmemi_broadcast(RSHMEMI_TEAM(team), dest, source, nelems * sizeof(TYPE), PE_root, GROUP(), sync);                          \
        return 0;                                                                                                  \
    }
#define RSHMEMI_DEF_COLL_THREAD(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmem_, , rshmemi_thread_group, rshmemi_no_sync, NAME, TYPE)
#define RSHMEMI_DEF_COLL_WARP(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmemx_, _warp, rshmemi_warp_group, rshmemi_warp_sync, NAME, TYPE)
#define RSHMEMI_DEF_COLL_BLOCK(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmemx_, _block, rshmemi_block_group, rshmemi_block_sync, NAME, TYPE)
#ifdef __CUDA_ARCH__
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_THREAD)
#endif
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_WARP)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_BLOCK)
#undef RSHMEMI_DEF_COLL_THREAD
#undef RSHMEMI_DEF_COLL_WARP
#undef RSHMEMI_DEF_COLL_BLOCK
#undef RSHMEMI_DEF_COLL_TYPED

#define RSHMEMI_DEF_REDUCE_SCOPE(PRE, SUF, GROUP, SYNC, NAME, TYPE, OP)                                           \
    RSHMEMI_API int PRE##NAME##_##OP##_reduce##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source,          \
                                                   size_t nreduce) {                                             \
        SYNC sync;                                                                                                \
        rshmemi_reduce<TYPE, rshmemi_op_##OP>(RSHMEMI_TEAM(team), dest, source, 0, nreduce, GROUP(), sync);                         \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##NAME##_##OP##_reducescatter##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source,   \
                                                          size_t nreduce) {                                      \
        SYNC sync;                                                                                                \
        rshmemi_team t = RSHMEMI_TEAM(team);                                                                      \
        rshmemi_reduce<TYPE, rshmemi_op_##OP>(t, dest, source, (size_t)t.my * nreduce, nreduce, GROUP(), sync);                                                   \
        return 0;                                                                                                 \
    }
#ifdef __CUDA_ARCH__
#define RSHMEMI_DEF_REDUCE_THREAD(NAME, TYPE, OP) \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmem_, , rshmemi_thread_group, rshmemi_no_sync, NAME, TYPE, OP)
#else
#define RSHMEMI_DEF_REDUCE_THREAD(NAME, TYPE, OP)
#endif
#define RSHMEMI_DEF_REDUCE(NAME, TYPE, OP)                                                                        \
    RSHMEMI_DEF_REDUCE_THREAD(NAME, TYPE, OP)                                                                     \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmemx_, _warp, rshmemi_warp_group, rshmemi_warp_sync, NAME, TYPE, OP)             \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmemx_, _block, rshmemi_block_group, rshmemi_block_sync, NAME, TYPE, OP)

RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, and)
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, or)
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, xor)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, max)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, min)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, sum)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DEF_REDUCE, prod)
#undef RSHMEMI_DEF_REDUCE
#undef RSHMEMI_DEF_REDUCE_THREAD
#undef RSHMEMI_DEF_REDUCE_SCOPE
#undef RSHMEMI_TEAM

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_COLL_CUH */
