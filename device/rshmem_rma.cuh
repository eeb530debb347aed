/* Device RMA: p, g, put, get (blocking and _nbi) for every standard type, the sized forms and
 * mem, by one thread, a warp or a block; put-with-signal; signal_op / signal_fetch. Over P2P a
 * put is a copy into the peer's mapped heap and "non-blocking" differs only in not waiting
 * for the group at the end. */
#ifndef RSHMEM_RMA_CUH
#define RSHMEM_RMA_CUH

#include "rshmem/device/rshmem_p2p.cuh"
#include "rshmem/device/rshmem_bulk.cuh"

/* Less than 16 bytes by one thread, unaligned (out of line: inlined, the general copy would
 * hold registers in every kernel that moves data by warp or block). */
static __device__ __noinline__ void rshmemi_copy_small(void *d, const void *s, size_t n) {
    rshmemi_copy<1>(d, s, n, rshmemi_thread_group());
}
/* Which group copies may take the bulk-copy engine: the block's. A warp's stays on the SM copy:
 * the bulk path's call took the warp loop of ctest/budget/registers.cu from 64 registers to 69
 * (a 1024-thread block of it would not launch). */
enum { rshmemi_bulk_none = 0, rshmemi_bulk_warp = 0, rshmemi_bulk_block = 1 };
/* Block puts (BATCH 1: one local load in flight per thread, the shortest loop) in a grid of at
 * most RSHMEM_PUT_DEEP_CTAS blocks keep RSHMEMI_PUT_DEEP_BATCH loads in flight per thread
 * instead (not the warp's: ctest/budget/registers.cu's warp loop would need 76 registers).
 * A few SMs cannot cover the local load latency with one word per thread. 4 x H100, PE 0 to
 * PE 1, blocks of 1024 threads (results/gpu-compare-2026-11-27g-rows): 8 blocks moved 273-290
 * GB/s at 4-16 MiB with one load in flight, 312-313 with four (NVSHMEM 307-313, the SM-store
 * floor 312-315); 32 blocks 339-342 -> 344-345 at 8-64 MiB. With 132 blocks four loads gained
 * nothing (0.97-1.00x of one), so a full grid keeps the short loop. gridDim is the grid. */
#ifndef RSHMEM_PUT_DEEP_CTAS
#define RSHMEM_PUT_DEEP_CTAS 32
#endif
enum { RSHMEMI_PUT_DEEP_BATCH = 4 };
RSHMEMI_DEV bool rshmemi_put_deep() { return gridDim.x * gridDim.y * gridDim.z <= (unsigned)RSHMEM_PUT_DEEP_CTAS; }
/* A group's copy of 16 bytes or more, out of line: inlined into a user's loop, the compiler
 * hoists the copy's address and length arithmetic out of it and keeps it live across the whole
 * loop, which took NVSHMEM's put/get bandwidth kernels to 72-78 registers, past the 64 that a
 * 1024-thread block allows. A call costs a few cycles once per group and transfer.
 * BULK: the bulk-copy engine where the transfer fits it (rshmem_bulk.cuh: sm_90+, 16-byte
 * aligned global memory, large enough), for the block-scope RMA routines; decided here, out of
 * line, for the same reason. */
template <int BATCH, int BULK = rshmemi_bulk_none>
static __device__ __noinline__ void rshmemi_group_copy_ool(void *d, const void *s, size_t n, rshmemi_group g) {
    /* A block put of at most one 16-byte word per thread, both ends and n in whole words (n <=
     * 16 KiB for 1024 threads; the bulk path starts at 64 KiB per warp, past this): thread i
     * moves word i, first thing, instead of passing the bulk, depth, alignment, head/tail and
     * loop set-up tests of rshmemi_copy before its one load. 2 x H200, PE 0 -> PE 1, 8/32/132
     * CTAs x 1024 threads, 512 B-32 KiB over the grid: put_block 1.06-1.15x faster than before
     * (0.89-0.95x of NVSHMEM's cost, was 0.95-1.09x), put_nbi_block 1.13-1.22x (0.68-0.70x);
     * 256 KiB 0.97-1.09x; the one row slower than before: put_block 256 KiB at 8 CTAs, 2.8 %
     * (results/gpu-compare-2026-11-28g-rma).
     * Here, not inline before the call: inline (anywhere in rshmemi_group_copy or rshmemi_put)
     * it took put_bw's put_nbi_block kernel from 64 to 72 registers (a 1024-thread block no
     * longer launched) and ctest/budget/registers.cu's loop_block 48 -> 56, loop_warp 64 ->
     * 69-72 (for warp scope): a loop-invariant test that user loops keep live. Inline for the
     * blocking block put alone fitted (put_block 512 B-32 KiB 1.33x faster) but slowed its
     * 8-64 B rows 1.19x and 256 KiB at 8 CTAs 1.16x: not taken. Block puts only: a warp's get
     * or put through this path took loop_warp to 69 registers. */
    if (BULK == rshmemi_bulk_block && ((((uintptr_t)d | (uintptr_t)s | n) & 15) == 0) && (n >> 4) <= (size_t)g.size) {
        if ((size_t)g.tid < (n >> 4)) ((uint4 *)d)[g.tid] = ((const uint4 *)s)[g.tid];
        return;
    }
#if RSHMEMI_BULK_ON
    if (BULK == rshmemi_bulk_block && rshmemi_bulk_fits(d, s, n, rshmemi_block_warps())) {
        rshmemi_bulk_copy_block(d, s, n, g.tid);
        return;
    }
#endif
    if (BATCH == 1 && BULK == rshmemi_bulk_block && rshmemi_put_deep()) rshmemi_copy<RSHMEMI_PUT_DEEP_BATCH>(d, s, n, g);
    else rshmemi_copy<BATCH>(d, s, n, g);
}
/* A group's copy; less than 16 bytes (one word) is its first thread's, in one access where
 * aligned, instead of every thread stepping through the head/word/tail logic for it.
 * A thread with nothing to copy returns before the out-of-line call: ends aligned alike (the
 * 16-byte words of rshmemi_copy_words), its index at or past n / 16 (no word; a head shortens
 * the words, never adds one) and not the last thread (the tail's). Thread 0 never skips (n >= 16);
 * the bulk path needs n >= 64 KiB per warp, where nobody skips. Why: every idle warp's pass
 * through the call and the copy's setup, once per put, took issue slots from the warps that move
 * the data (blocking form: in step with them, between its barriers). 2 and 4 x H200, 32 CTAs x 1024 threads, 512 B-32 KiB over the grid (a word or
 * less per thread): put_block 1.23-1.27x faster (0.97-0.98x of NVSHMEM, was 0.77-0.79x),
 * put_nbi_block 1.25-1.27x; 256 KiB 0.91x (put_block) and 0.97x (nbi) of before, still 1.02x
 * and 1.13x of NVSHMEM (results/gpu-compare-2026-11-28f-putblock).
 * Block groups only (g.size > 32; a warp group's size is a __popc, at most 32, so the compiler
 * drops the test from warp puts): a warp issues as one, so its idle lanes skipping saves nothing
 * and adds the test and a divergent branch to every warp put. With them skipping, put_warp 32 KiB
 * at 32 CTAs (32 B per warp) fell from 64.08 to 58.34 GB/s on 2 x H200 (1.18x NVSHMEM's cost;
 * results/gpu-compare-2026-11-28g-rma). Warps not skipping, 1 x H200 with 2 PEs under MPS (a
 * proxy, not NVLink; results/gpu-compare-2026-11-29a-rma): put_warp 32 KiB 58.4 -> 64.3 GB/s at
 * 8 and 32 CTAs (NVSHMEM 69.0), 4 KiB at 8 CTAs 1.14x, put_nbi_warp 4-32 KiB 1.10-1.17x, 256 KiB
 * 1.01-1.06x; block rows 0.98-1.01x. Skipping whole idle warps of a block instead (the test on
 * a warp's first and last lanes) cost block rows up to 5 %, so blocks keep the per-thread form. */
template <int BATCH, int BULK = rshmemi_bulk_none, int WORDS = 0>
RSHMEMI_DEV void rshmemi_group_copy(void *d, const void *s, size_t n, rshmemi_group g) {
    if (n < 16) {
        if (g.tid == 0 && !rshmemi_copy_few((char *)d, (const char *)s, n)) rshmemi_copy_small(d, s, n);
        return;
    }
    if (WORDS && (n >> 4) <= (size_t)g.size) {
        if (((((uintptr_t)d | (uintptr_t)s | n) & 15) == 0)) {
            if ((size_t)g.tid < (n >> 4)) ((uint4 *)d)[g.tid] = ((const uint4 *)s)[g.tid];
            return;
        }
    }
    if (g.size > 32 && (size_t)g.tid * 16 >= n && g.tid != g.size - 1 && (((uintptr_t)d ^ (uintptr_t)s) & 15) == 0) return;
    rshmemi_group_copy_ool<BATCH, BULK>(d, s, n, g);
}

/* Group transfers: every thread of `g` takes part; `sync` (the group barrier, or nothing for the
 * _nbi puts) ends them. BATCH: loads in flight per thread (see rshmemi_copy_body); BULK: see
 * rshmemi_group_copy_ool (gets only with RSHMEM_BULK_GET=1).
 * A blocking put returns when the source may be reused (OpenSHMEM 1.5 9.5.2; NVSHMEM's put_block
 * likewise): over P2P every thread's loads of its words are done when its stores are issued, and
 * the group barrier makes that true of the whole group's source for every thread. Remote
 * completion and ordering are quiet's and fence's, so no memory fence here (the PTX of
 * put_bw's block kernels: the blocking one differs from _nbi by the bar.sync alone). */
template <int BATCH = 1, int BULK = rshmemi_bulk_none, typename SYNC>
RSHMEMI_DEV void rshmemi_put(void *dest, const void *src, size_t bytes, int pe, rshmemi_group g, SYNC sync, const char *who) {
    RSHMEMI_CAREFUL(pe, dest, bytes, who, rshmemi_remote_put(dest, src, bytes, pe, g, sync, who))
    rshmemi_group_copy<BATCH, BULK>(rshmemi_peer(dest, pe), src, bytes, g);
    sync();
}
/* A warp get of a word or none per lane (16-byte aligned ends and length, at most 16 bytes per
 * lane: 16-512 B for a whole warp) is inline: lane i loads word i, as NVSHMEM's inline warp copy
 * does, instead of the out-of-line copy's call and its head/word/tail set-up before the one load.
 * Through that call get_warp of 64-512 B was 1.05-1.07x NVSHMEM's latency on 2 x H200 NVLink
 * (1.38 vs 1.29-1.31 us; results/gpu-compare-2026-11-29f-nvlink) while 8 B (lane 0's inline
 * word) was 0.91x. SASS of perftest/gpu lat's get_kernel<SC_WARP> (nvcc 13, sm_90), 64 B: from
 * the loop's top to the remote load the copy's path ran 46 instructions with a call and three
 * taken branches, three of them constant loads the next test waits on; this one runs 31 with
 * two taken branches (NVSHMEM 3.4.5: 54, none taken, one its peer-table load;
 * results/gpu-compare-2026-11-29g-getwarp). Warp gets only: rshmemi_warp_rma_sync marks the
 * nvshmemx_*get*_warp routines; the collectives' gets keep the copy. ctest/budget/registers.cu's
 * loop_warp stays at 64 registers (get_w 39 -> 40; with -DRSHMEM_PROXY_ROUTE loop_warp 69 -> 72,
 * a counted kernel), where the block put's out-of-line fast path, taken by warps, needed 69. */
template <typename SYNC>
struct rshmemi_is_warp_rma {
    enum { value = 0 };
};
template <>
struct rshmemi_is_warp_rma<rshmemi_warp_rma_sync> {
    enum { value = 1 };
};
template <int BATCH = 2, int BULK = rshmemi_bulk_none, typename SYNC>
RSHMEMI_DEV void rshmemi_get(void *dest, const void *src, size_t bytes, int pe, rshmemi_group g, SYNC sync, const char *who) {
    RSHMEMI_CAREFUL(pe, src, bytes, who, rshmemi_remote_get(dest, src, bytes, pe, g, sync, who))
    rshmemi_group_copy<BATCH, RSHMEM_BULK_GET ? BULK : rshmemi_bulk_none, rshmemi_is_warp_rma<SYNC>::value>(dest, rshmemi_peer(src, pe), bytes, g);
    sync();
}
/* The thread-scope forms: one aligned word straight, else the copy with 4 loads in flight. */
RSHMEMI_DEV void rshmemi_put_thread(void *dest, const void *src, size_t bytes, int pe, const char *who) {
    RSHMEMI_CAREFUL(pe, dest, bytes, who, rshmemi_remote_put_bytes(dest, src, bytes, pe, false, who))
    char *d = (char *)rshmemi_peer(dest, pe);
    if (!rshmemi_copy_few(d, (const char *)src, bytes)) rshmemi_group_copy_ool<4>(d, src, bytes, rshmemi_thread_group());
}
RSHMEMI_DEV void rshmemi_get_thread(void *dest, const void *src, size_t bytes, int pe, const char *who) {
    RSHMEMI_CAREFUL(pe, src, bytes, who, rshmemi_remote_get_bytes(dest, src, bytes, pe, false, who))
    const char *s = (const char *)rshmemi_peer(src, pe);
    if (!rshmemi_copy_few((char *)dest, s, bytes)) rshmemi_group_copy_ool<4>(dest, s, bytes, rshmemi_thread_group());
}
/* Data, then the group barrier, then one thread's signal with release semantics (the data of
 * every thread of the group is visible before the signal). No barrier after the signal: the
 * source is free once every thread has passed the first one. */
template <int BATCH = 2, typename SYNC>
RSHMEMI_DEV void rshmemi_put_signal(void *dest, const void *src, size_t bytes, uint64_t *sig_addr, uint64_t signal, int sig_op,
                                    int pe, rshmemi_group g, SYNC sync, const char *who) {
    if (rshmemi_careful()) {
        if (rshmemi_remote_peer(pe, who)) return rshmemi_remote_put_signal(dest, src, bytes, sig_addr, signal, sig_op, pe, g, sync, who);
        rshmemi_check_on(dest, bytes, pe, who);
        rshmemi_check_on(sig_addr, 8, pe, who);
    }
    rshmemi_group_copy<BATCH>(rshmemi_peer(dest, pe), src, bytes, g);
    sync();
    if (g.tid == 0) rshmemi_signal_release((uint64_t *)rshmemi_peer(sig_addr, pe), signal, sig_op);
}

/* g is a weak load: a plain ld.global, which the L1 may serve and the compiler may merge with
 * an identical load it is not ordered against. That is the contract of OpenSHMEM 1.5 (9.5) and
 * NVSHMEM (whose g is a plain dereference), not a shortcut:
 *   - g orders nothing and synchronizes with nothing. A value another PE writes concurrently is
 *     a data race; a program that must see it waits for it (wait_until, signal_wait_until) or
 *     reads it atomically (atomic_fetch, which stays a relaxed .sys load).
 *   - What a PE published before a barrier, a sync, a signal or a wait the reader has passed
 *     is visible: every one of those ends in an acquire at system scope (ld.acquire.sys or
 *     fence.acquire.sys, see rshmemi_acquire_after), and in the PTX memory model a weak load
 *     after an acquire in program order reads nothing older than what was released before it
 *     (the hardware invalidates the L1 there). ctest/cuda/g_visibility.cu checks exactly this
 *     against a stale line the reader cached on purpose.
 * The relaxed .sys load rshmem used before (volatile: it bypasses the L1 on every call) made
 * repeated g of one address, NVSHMEM's shmem_g_latency loop, 3.7-10x slower and bought no
 * guarantee a correct program can use. */
static __device__ unsigned rshmemi_g_no_pe_said;
/* A g from a PE the job does not have: NVSHMEM leaves it undefined (its peer table is read past
 * its end); its moe_shuffle example relies on it not faulting (it fetches from PEs 0..15
 * whatever the job size). Here it reads as 0, said once per module; RSHMEM_DEVICE_CHECKS=1
 * stops at the first such call instead. */
static __device__ __noinline__ void rshmemi_g_no_pe(int pe, const char *who) {
    if (atomicExch(&rshmemi_g_no_pe_said, 1u) == 0)
        printf("rshmem: PE %d: %s: PE %d is out of range (0..%d); the value reads as 0 (set RSHMEM_DEVICE_CHECKS=1 to stop "
               "at the first such call)\n",
               RSHMEMI_STATE.mype, who, pe, RSHMEMI_STATE.npes - 1);
}
template <typename T>
RSHMEMI_DEV T rshmemi_g(const T *source, int pe, const char *who) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    if (__builtin_expect((unsigned)pe >= (unsigned)RSHMEMI_STATE.npes, 0)) {
        rshmemi_g_no_pe(pe, who);
        return rshmemi_from_bits<T>((W)0);
    }
    return rshmemi_from_bits<T>(*(const W *)rshmemi_peer(source, pe));
}

RSHMEMI_EXTERN_C_BEGIN

/* ---- routines that also exist on the host: device definitions ------------------------------ */
#ifdef __CUDA_ARCH__

RSHMEMI_API int nvshmem_my_pe(void) { return RSHMEMI_STATE.mype; }
RSHMEMI_API int nvshmem_n_pes(void) { return RSHMEMI_STATE.npes; }

RSHMEMI_API void *nvshmem_ptr(const void *ptr, int pe) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    unsigned long long off = (unsigned long long)ptr - s.heap_base;
    if (pe < 0 || pe >= s.npes || off >= s.heap_stride) return NULL;
    if (!(s.flags & RSHMEM_DEVICE_FLAG_ALL_P2P) && ((const unsigned long long *)s.peer_bases)[pe] == 0) return NULL;
    return rshmemi_peer(ptr, pe);
}

/* p: one weak store to the peer's mapped heap; the peer address is arithmetic on constants
 * (rshmemi_peer), no table load. SASS of perftest/gpu/p_bw's kernel (nvcc 13, sm_90), its
 * inner loop per call: rshmem 12 instructions (address, a 64-bit multiply-add folded into one
 * IMAD.WIDE, STG.E.64, loop test); NVSHMEM 3.4.5 21 (an LDG.E.64.CONSTANT of its peer-base
 * table, a null test and branch to its proxy path, ST.E.64). Nothing to remove. The `p` rows
 * that were 1.05-1.18x behind (64 KiB-1 MiB windows, 8-132 CTAs) are not the store sequence: the
 * floor kernel beside them (the same loop with plain volatile stores through nvshmem_ptr, no
 * library code) is behind by the same ratio in the same process, and moving the window within
 * the buffer (p_bw --offset) moves both and flips the sign: 2 x H200, 8 B, 8 CTAs, 1 MiB: at
 * offset 0 rshmem 1.09x behind, at 1 MiB 0.97x (ahead); 128 KiB: 0.88x at offset 0
 * (results/gpu-compare-2026-11-28g-rma). Where the window's bytes lie decides those rows. */
#define RSHMEMI_DEF_RMA_THREAD(NAME, TYPE)                                                                       \
    RSHMEMI_API void nvshmem_##NAME##_p(TYPE *dest, const TYPE value, int pe) {                                  \
        RSHMEMI_CAREFUL(pe, dest, sizeof(TYPE), __func__, rshmemi_remote_p<TYPE>(dest, value, pe, __func__))        \
        *(TYPE *)rshmemi_peer(dest, pe) = value; /* one weak store: ordered by fence/quiet */                    \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_g(const TYPE *source, int pe) {                                            \
        RSHMEMI_CAREFUL(pe, source, sizeof(TYPE), __func__, rshmemi_remote_g<TYPE>(source, pe, __func__))         \
        return rshmemi_g<TYPE>(source, pe, __func__);                                                            \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe) {               \
        rshmemi_put_thread(dest, source, nelems * sizeof(TYPE), pe, __func__); \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_get(TYPE *dest, const TYPE *source, size_t nelems, int pe) {               \
        rshmemi_get_thread(dest, source, nelems * sizeof(TYPE), pe, __func__); \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_put_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe) {           \
        rshmemi_put_thread(dest, source, nelems * sizeof(TYPE), pe, __func__); \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_get_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe) {           \
        rshmemi_get_thread(dest, source, nelems * sizeof(TYPE), pe, __func__); \
    }
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_RMA_THREAD)
#undef RSHMEMI_DEF_RMA_THREAD

#define RSHMEMI_DEF_SIZED_THREAD(BITS, BYTES)                                                             \
    RSHMEMI_API void nvshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe) {           \
        rshmemi_put_thread(dest, source, nelems * BYTES, pe, __func__); \
    }                                                                                                     \
    RSHMEMI_API void nvshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe) {           \
        rshmemi_get_thread(dest, source, nelems * BYTES, pe, __func__); \
    }                                                                                                     \
    RSHMEMI_API void nvshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe) {     \
        rshmemi_put_thread(dest, source, nelems * BYTES, pe, __func__); \
    }                                                                                                     \
    RSHMEMI_API void nvshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe) {     \
        rshmemi_get_thread(dest, source, nelems * BYTES, pe, __func__); \
    }
RSHMEMI_REPT_SIZES(RSHMEMI_DEF_SIZED_THREAD)
#undef RSHMEMI_DEF_SIZED_THREAD

RSHMEMI_API void nvshmem_putmem(void *dest, const void *source, size_t bytes, int pe) {
    rshmemi_put_thread(dest, source, bytes, pe, __func__);
}
RSHMEMI_API void nvshmem_getmem(void *dest, const void *source, size_t bytes, int pe) {
    rshmemi_get_thread(dest, source, bytes, pe, __func__);
}
RSHMEMI_API void nvshmem_putmem_nbi(void *dest, const void *source, size_t bytes, int pe) {
    rshmemi_put_thread(dest, source, bytes, pe, __func__);
}
RSHMEMI_API void nvshmem_getmem_nbi(void *dest, const void *source, size_t bytes, int pe) {
    rshmemi_get_thread(dest, source, bytes, pe, __func__);
}

RSHMEMI_API void nvshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
    RSHMEMI_CAREFUL(pe, sig_addr, 8, __func__, rshmemi_remote_signal_op(sig_addr, signal, sig_op, pe, __func__))
    rshmemi_signal((uint64_t *)rshmemi_peer(sig_addr, pe), signal, sig_op);
}
RSHMEMI_API uint64_t nvshmem_signal_fetch(uint64_t *sig_addr) { return rshmemi_load(sig_addr); }

#endif /* __CUDA_ARCH__ */

/* ---- device-only routines ------------------------------------------------------------------------
 * Warp and block forms: called by every thread of the warp / block with the same arguments;
 * all of them move data; the blocking forms end with a group barrier. */
#define RSHMEMI_DEF_RMA_GROUP(NAME, TYPE, SCOPE)                                                                  \
    RSHMEMI_API void nvshmemx_##NAME##_put_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) {       \
        rshmemi_put<1, rshmemi_bulk_##SCOPE>(dest, source, nelems * sizeof(TYPE), pe, rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_rma_sync(), __func__); \
    }                                                                                                             \
    RSHMEMI_API void nvshmemx_##NAME##_get_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) {       \
        rshmemi_get<2, rshmemi_bulk_##SCOPE>(dest, source, nelems * sizeof(TYPE), pe, rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_rma_sync(), __func__); \
    }                                                                                                             \
    RSHMEMI_API void nvshmemx_##NAME##_put_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) {   \
        rshmemi_put<1, rshmemi_bulk_##SCOPE>(dest, source, nelems * sizeof(TYPE), pe, rshmemi_##SCOPE##_group(), rshmemi_no_sync(), __func__); \
    }                                                                                                             \
    RSHMEMI_API void nvshmemx_##NAME##_get_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) {   \
        rshmemi_get<2, rshmemi_bulk_##SCOPE>(dest, source, nelems * sizeof(TYPE), pe, rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_rma_sync(), __func__); \
    }
#define RSHMEMI_DEF_RMA_WARP(NAME, TYPE) RSHMEMI_DEF_RMA_GROUP(NAME, TYPE, warp)
#define RSHMEMI_DEF_RMA_BLOCK(NAME, TYPE) RSHMEMI_DEF_RMA_GROUP(NAME, TYPE, block)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_RMA_WARP)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_RMA_BLOCK)
#undef RSHMEMI_DEF_RMA_WARP
#undef RSHMEMI_DEF_RMA_BLOCK
#undef RSHMEMI_DEF_RMA_GROUP

#define RSHMEMI_DEF_BYTES_GROUP(PREFIX, SUFFIX, BYTES, SCOPE)                                                      \
    RSHMEMI_API void nvshmemx_put##PREFIX##_##SCOPE(void *dest, const void *source, size_t SUFFIX, int pe) {       \
        rshmemi_put<1, rshmemi_bulk_##SCOPE>(dest, source, SUFFIX * BYTES, pe, rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_rma_sync(), __func__); \
    }                                                                                                              \
    RSHMEMI_API void nvshmemx_get##PREFIX##_##SCOPE(void *dest, const void *source, size_t SUFFIX, int pe) {       \
        rshmemi_get<2, rshmemi_bulk_##SCOPE>(dest, source, SUFFIX * BYTES, pe, rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_rma_sync(), __func__); \
    }                                                                                                              \
    RSHMEMI_API void nvshmemx_put##PREFIX##_nbi_##SCOPE(void *dest, const void *source, size_t SUFFIX, int pe) {   \
        rshmemi_put<1, rshmemi_bulk_##SCOPE>(dest, source, SUFFIX * BYTES, pe, rshmemi_##SCOPE##_group(), rshmemi_no_sync(), __func__);     \
    }                                                                                                              \
    RSHMEMI_API void nvshmemx_get##PREFIX##_nbi_##SCOPE(void *dest, const void *source, size_t SUFFIX, int pe) {   \
        rshmemi_get<2, rshmemi_bulk_##SCOPE>(dest, source, SUFFIX * BYTES, pe, rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_rma_sync(), __func__); \
    }
#define RSHMEMI_DEF_SIZED_GROUPS(BITS, BYTES)              \
    RSHMEMI_DEF_BYTES_GROUP(BITS, nelems, BYTES, warp)     \
    RSHMEMI_DEF_BYTES_GROUP(BITS, nelems, BYTES, block)
RSHMEMI_REPT_SIZES(RSHMEMI_DEF_SIZED_GROUPS)
RSHMEMI_DEF_BYTES_GROUP(mem, bytes, 1, warp)
RSHMEMI_DEF_BYTES_GROUP(mem, bytes, 1, block)
#undef RSHMEMI_DEF_SIZED_GROUPS
#undef RSHMEMI_DEF_BYTES_GROUP

/* put with signal: thread (nvshmem_*), warp and block (nvshmemx_*), blocking and _nbi (the same
 * code: the group barrier before the signal is needed either way). */
#define RSHMEMI_DEF_PUT_SIGNAL(PRE, NAME, TYPE, BYTES, SUFFIX, GROUP, SYNC, BATCH)                                   \
    RSHMEMI_API void PRE##NAME##_signal##SUFFIX(TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr,   \
                                                uint64_t signal, int sig_op, int pe) {                              \
        rshmemi_put_signal<BATCH>(dest, source, nelems * BYTES, sig_addr, signal, sig_op, pe, GROUP(), SYNC(), __func__); \
    }                                                                                                                \
    RSHMEMI_API void PRE##NAME##_signal_nbi##SUFFIX(TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr, \
                                                    uint64_t signal, int sig_op, int pe) {                          \
        rshmemi_put_signal<BATCH>(dest, source, nelems * BYTES, sig_addr, signal, sig_op, pe, GROUP(), SYNC(), __func__); \
    }
#define RSHMEMI_DEF_PUT_SIGNAL_SCOPES(NAME, TYPE, BYTES)                                                               \
    RSHMEMI_DEF_PUT_SIGNAL(nvshmem_, NAME, TYPE, BYTES, , rshmemi_thread_group, rshmemi_no_sync, 4)                    \
    RSHMEMI_DEF_PUT_SIGNAL(nvshmemx_, NAME, TYPE, BYTES, _warp, rshmemi_warp_group, rshmemi_warp_sync, 1)              \
    RSHMEMI_DEF_PUT_SIGNAL(nvshmemx_, NAME, TYPE, BYTES, _block, rshmemi_block_group, rshmemi_block_sync, 1)
#define RSHMEMI_DEF_PUT_SIGNAL_TYPED(NAME, TYPE) RSHMEMI_DEF_PUT_SIGNAL_SCOPES(NAME##_put, TYPE, sizeof(TYPE))
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_PUT_SIGNAL_TYPED)
#undef RSHMEMI_DEF_PUT_SIGNAL_TYPED
#define RSHMEMI_DEF_PUT_SIGNAL_SIZED(BITS, BYTES) RSHMEMI_DEF_PUT_SIGNAL_SCOPES(put##BITS, void, BYTES)
RSHMEMI_REPT_SIZES(RSHMEMI_DEF_PUT_SIGNAL_SIZED)
RSHMEMI_DEF_PUT_SIGNAL_SCOPES(putmem, void, 1)
#undef RSHMEMI_DEF_PUT_SIGNAL_SIZED
#undef RSHMEMI_DEF_PUT_SIGNAL_SCOPES
#undef RSHMEMI_DEF_PUT_SIGNAL

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_RMA_CUH */
