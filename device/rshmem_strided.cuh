/* Device strided transfers: iput / iget for every standard RMA type and the sized forms, by one
 * thread, a warp or a block; alltoalls (strided alltoall) by one thread. Strides count
 * elements: element i moves between dest[i * dst] and source[i * sst]. Over P2P each thread of
 * the group moves every g.size-th element with one load and one store; toward a peer reached
 * only through IBGDA or the host proxy each element is its own put / get (neither route has a strided
 * operation). */
#ifndef RSHMEM_STRIDED_CUH
#define RSHMEM_STRIDED_CUH

#include "rshmem/device/rshmem_rma.cuh"
#include "rshmem/device/rshmem_sync.cuh"

/* The word one element moves as; 16 bytes as two 8-byte words (8-byte alignment suffices). */
struct rshmemi_pair64 {
    unsigned long long lo, hi;
};
template <int E> struct rshmemi_elem { typedef typename rshmemi_word_of<E>::type type; };
template <> struct rshmemi_elem<16> { typedef rshmemi_pair64 type; };

/* Bytes from the first to the end of the last of n elements `stride` apart. */
RSHMEMI_DEV size_t rshmemi_strided_extent(size_t n, ptrdiff_t stride, size_t elem) {
    return n ? ((n - 1) * (size_t)stride + 1) * elem : 0;
}

template <int E, typename SYNC>
RSHMEMI_DEV void rshmemi_iput(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe, rshmemi_group g,
                              SYNC sync, const char *who) {
    typedef typename rshmemi_elem<E>::type W;
    if (rshmemi_remote_peer(pe, who)) {
        for (size_t i = g.tid; i < n; i += g.size)
            rshmemi_remote_put((char *)dest + i * dst * E, (const char *)source + i * sst * E, E, pe, rshmemi_thread_group(),
                              rshmemi_no_sync(), who);
    } else {
        W *d = (W *)rshmemi_peer_checked(dest, rshmemi_strided_extent(n, dst, E), pe, who);
        const W *s = (const W *)source;
        for (size_t i = g.tid; i < n; i += g.size) d[i * dst] = s[i * sst];
    }
    sync();
}
template <int E, typename SYNC>
RSHMEMI_DEV void rshmemi_iget(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe, rshmemi_group g,
                              SYNC sync, const char *who) {
    typedef typename rshmemi_elem<E>::type W;
    if (rshmemi_remote_peer(pe, who)) {
        for (size_t i = g.tid; i < n; i += g.size)
            rshmemi_remote_get((char *)dest + i * dst * E, (const char *)source + i * sst * E, E, pe, rshmemi_thread_group(),
                              rshmemi_no_sync(), who);
    } else {
        W *d = (W *)dest;
        const W *s = (const W *)rshmemi_peer_checked(source, rshmemi_strided_extent(n, sst, E), pe, who);
        for (size_t i = g.tid; i < n; i += g.size) d[i * dst] = s[i * sst];
    }
    sync();
}

/* Block j of this PE's source (elements j*n .. j*n+n-1, sst apart) to block my of member j's
 * dest (dst apart), between two team barriers. */
template <int E>
RSHMEMI_DEV void rshmemi_alltoalls(const rshmemi_team &t, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t n) {
    typedef typename rshmemi_elem<E>::type W;
    rshmemi_sync_team_group(t, rshmemi_thread_group(), rshmemi_no_sync());
    for (int k = 0; k < t.size; k++) {
        int j = (t.my + k) % t.size, pe = rshmemi_team_pe(t, j);
        const W *s = (const W *)source;
        if (rshmemi_remote_peer(pe, "nvshmem_alltoalls")) { /* not mapped here: one put per element (complete at the barrier's quiet) */
            for (size_t i = 0; i < n; i++)
                rshmemi_remote_put_bytes((W *)dest + ((size_t)t.my * n + i) * dst, s + ((size_t)j * n + i) * sst, E, pe, true,
                                         "nvshmem_alltoalls");
            continue;
        }
        W *d = (W *)rshmemi_peer(dest, pe);
        for (size_t i = 0; i < n; i++) d[((size_t)t.my * n + i) * dst] = s[((size_t)j * n + i) * sst];
    }
    rshmemi_sync_team_group(t, rshmemi_thread_group(), rshmemi_no_sync());
}

RSHMEMI_EXTERN_C_BEGIN

#define RSHMEMI_DEF_STRIDED(PRE, NAME, TYPE, E, SUF, GROUP, SYNC)                                                      \
    RSHMEMI_API void PRE##NAME##iput##SUF(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,  \
                                          int pe) {                                                                   \
        rshmemi_iput<E>(dest, source, dst, sst, nelems, pe, GROUP(), SYNC(), __func__);                                \
    }                                                                                                                 \
    RSHMEMI_API void PRE##NAME##iget##SUF(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,  \
                                          int pe) {                                                                   \
        rshmemi_iget<E>(dest, source, dst, sst, nelems, pe, GROUP(), SYNC(), __func__);                                \
    }
/* The thread forms (nvshmem_*) are host routines too (the library's): defined for the device
 * pass only. */
#ifdef __CUDA_ARCH__
#define RSHMEMI_DEF_STRIDED_THREAD(NAME, TYPE, E, SUF) \
    RSHMEMI_DEF_STRIDED(nvshmem_, NAME, TYPE, E, SUF, rshmemi_thread_group, rshmemi_no_sync)
#else
#define RSHMEMI_DEF_STRIDED_THREAD(NAME, TYPE, E, SUF)
#endif
#define RSHMEMI_DEF_STRIDED_SCOPES(NAME, TYPE, E)                                                       \
    RSHMEMI_DEF_STRIDED_THREAD(NAME, TYPE, E, )                                                         \
    RSHMEMI_DEF_STRIDED(nvshmemx_, NAME, TYPE, E, _warp, rshmemi_warp_group, rshmemi_warp_sync)         \
    RSHMEMI_DEF_STRIDED(nvshmemx_, NAME, TYPE, E, _block, rshmemi_block_group, rshmemi_block_sync)

#define RSHMEMI_DEF_STRIDED_TYPED(NAME, TYPE)                                                                          \
    RSHMEMI_DEF_STRIDED_SCOPES(NAME##_, TYPE, sizeof(TYPE))                                                             \
    RSHMEMI_API int nvshmem_##NAME##_alltoalls(nvshmem_team_t team, TYPE *dest, const TYPE *source, ptrdiff_t dst,      \
                                               ptrdiff_t sst, size_t nelems) {                                         \
        rshmemi_alltoalls<sizeof(TYPE)>(rshmemi_team_checked(team, __func__), dest, source, dst, sst, nelems);          \
        return 0;                                                                                                      \
    }
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_STRIDED_TYPED)
#undef RSHMEMI_DEF_STRIDED_TYPED

/* iput8 .. iput128, iget8 .. iget128 (the names put the size after the verb). */
#define RSHMEMI_DEF_STRIDED_SIZED(BITS, BYTES)                                                                     \
    RSHMEMI_DEF_STRIDED_THREAD(, void, BYTES, BITS)                                                                \
    RSHMEMI_DEF_STRIDED(nvshmemx_, , void, BYTES, BITS##_warp, rshmemi_warp_group, rshmemi_warp_sync)             \
    RSHMEMI_DEF_STRIDED(nvshmemx_, , void, BYTES, BITS##_block, rshmemi_block_group, rshmemi_block_sync)
RSHMEMI_REPT_SIZES(RSHMEMI_DEF_STRIDED_SIZED)
#undef RSHMEMI_DEF_STRIDED_SIZED
#undef RSHMEMI_DEF_STRIDED_SCOPES
#undef RSHMEMI_DEF_STRIDED_THREAD
#undef RSHMEMI_DEF_STRIDED

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_STRIDED_CUH */
