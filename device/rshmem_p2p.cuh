/* Internal building blocks of the device library (rshmemi_*): peer addresses, thread-group
 * identities, vectorized copies, loads, stores and atomics by word size, waits, signals. Not part
 * of the API.
 *
 * Memory model (PTX terms; a peer is another GPU, so every access that synchronizes is .sys):
 *   put data, p, get   weak loads and stores; ordered by fence, quiet and the barriers
 *   AMOs               relaxed .sys atomics; the forms without a result are red.* (no reply)
 *   signal_op          a relaxed .sys store (SET) or red.add (ADD)
 *   put_signal         the data, then the signal with release semantics (st/red.release.sys),
 *                      so a PE that sees the signal sees the data
 *   g                  a weak load (why: rshmem_rma.cuh, before nvshmem_*_g)
 *   fetch              relaxed .sys loads
 *   wait_until         spins on acquire .sys loads: what the writer released before the value it
 *                      waited for is visible to the loads that follow; no fence afterwards */
#ifndef RSHMEM_P2P_CUH
#define RSHMEM_P2P_CUH

#if !defined(__CUDACC_RTC__) /* NVRTC: printf and memcpy are built in */
#include <stdio.h>
#include <string.h>
#endif
#include "rshmem/device/rshmem_state.cuh"

#define RSHMEMI_DEV static __device__ __forceinline__
/* Public device routines: C linkage, inline (one copy per module; weak under -rdc). */
#define RSHMEMI_API __device__ inline

/* ---- checks (RSHMEM_DEVICE_CHECKS=1) ----------------------------------------------------- */
RSHMEMI_DEV bool rshmemi_checks_on() { return (RSHMEMI_STATE.flags & RSHMEM_DEVICE_FLAG_CHECKS) != 0; }

/* The test is inline; the report is out of line and never returns, so a kernel keeps nothing
 * live across it (a call that returns makes the caller hold its live values in registers the
 * callee must preserve: 15-30 more per kernel, measured with ptxas). */
RSHMEMI_DEV bool rshmemi_args_bad(const void *addr, size_t bytes, int pe) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    unsigned long long off = (unsigned long long)addr - s.heap_base;
    return s.magic != RSHMEM_DEVICE_STATE_MAGIC || pe < 0 || pe >= s.npes || off >= s.heap_stride || bytes > s.heap_stride - off;
}
[[noreturn]] static __device__ __noinline__ void rshmemi_check_fail(const void *addr, size_t bytes, int pe, const char *who) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    if (s.magic != RSHMEM_DEVICE_STATE_MAGIC)
        printf("rshmem: %s called before nvshmem_init (or in a module without nvshmemx_cumodule_init)\n", who);
    else if (pe < 0 || pe >= s.npes)
        printf("rshmem: %s: PE %d is out of range (0..%d)\n", who, pe, s.npes - 1);
    else
        printf("rshmem: %s: address %p (%llu bytes) is not in the symmetric heap\n", who, addr, (unsigned long long)bytes);
    __trap();
    __builtin_unreachable();
}
RSHMEMI_DEV void rshmemi_check_on(const void *addr, size_t bytes, int pe, const char *who) {
    if (rshmemi_checks_on() && rshmemi_args_bad(addr, bytes, pe)) rshmemi_check_fail(addr, bytes, pe, who);
}

/* Whether a call must take the careful route: checks on, or some peer reached through IBGDA.
 * One test of a constant-memory word; when it fails every call goes straight to P2P. */
/* The flags word is read where it is tested (volatile asm: not hoisted out of a user's loop), so
 * it is not one more register held across the loop's out-of-line copy call. NVIDIA's moe_shuffle
 * two_step_allpush<block> (1024 threads, `-c`): 70 -> 56 registers without the route, 70 -> 64
 * with -DRSHMEM_PROXY_ROUTE; ctest/budget/registers.cu unchanged without the route. */
/* The flags word's offset in RshmemDeviceState, spelled out for that asm: NVRTC has no offsetof.
 * Every nvcc build checks it against the layout. */
#define RSHMEMI_STATE_FLAGS_AT 24
#if !defined(__CUDACC_RTC__)
static_assert(offsetof(RshmemDeviceState, flags) == RSHMEMI_STATE_FLAGS_AT, "rshmem device state: the flags word moved");
#endif
RSHMEMI_DEV bool rshmemi_careful() {
    unsigned f;
    asm volatile("ld.const.u32 %0, [rshmemi_device_state_d+%1];" : "=r"(f) : "n"(RSHMEMI_STATE_FLAGS_AT));
    return __builtin_expect((f & (RSHMEM_DEVICE_FLAG_CHECKS | RSHMEM_DEVICE_FLAG_IBGDA | RSHMEM_DEVICE_FLAG_PROXY)) != 0, 0);
}

/* How every routine starts: on the careful route, IBGDA_CALL (returned) when `pe` is reached
 * through IBGDA, else the argument checks; then, and otherwise at once, on to P2P. */
#define RSHMEMI_CAREFUL(PE, ADDR, BYTES, WHO, REMOTE_CALL)  \
    if (rshmemi_careful()) {                            \
        if (rshmemi_remote_peer(PE, WHO)) return REMOTE_CALL; \
        rshmemi_check_on((ADDR), (BYTES), (PE), (WHO)); \
    }

/* Where symmetric `p` of this PE lies on PE `pe`, as mapped here (pure arithmetic: PE p's heap
 * is at window_base + p * heap_stride in every process). */
RSHMEMI_DEV void *rshmemi_peer(const void *p, int pe) {
    return (void *)((const char *)p + ((long long)pe - (long long)RSHMEMI_STATE.mype) * (long long)RSHMEMI_STATE.heap_stride);
}

RSHMEMI_DEV void *rshmemi_peer_checked(const void *p, size_t bytes, int pe, const char *who) {
    rshmemi_check_on(p, bytes, pe, who);
    return rshmemi_peer(p, pe);
}
#define RSHMEMI_PEER(p, bytes, pe) rshmemi_peer_checked((p), (bytes), (pe), __func__)

/* ---- thread groups ------------------------------------------------------------------------
 * A group is (my index, group size). A warp group is the warp's lanes that exist in the block
 * (all 32 but in a last, partial warp): NVSHMEM's _warp routines are called by the whole warp.
 * It is never derived from __activemask(): a warp may run a call as two halves, each of which
 * would then take itself for the whole group and run the routine again. */
struct rshmemi_group {
    int tid;
    int size;
};
RSHMEMI_DEV rshmemi_group rshmemi_thread_group() { return rshmemi_group{0, 1}; }
RSHMEMI_DEV unsigned rshmemi_lane() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
/* The lanes of this warp that exist in the block (all of them when the block is whole warps). */
RSHMEMI_DEV unsigned rshmemi_warp_lanes() {
    unsigned block = blockDim.x * blockDim.y * blockDim.z;
    if ((block & 31) == 0) return 0xffffffffu;
    unsigned me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned rest = block - (me & ~31u);
    return rest >= 32 ? 0xffffffffu : (1u << rest) - 1;
}
RSHMEMI_DEV rshmemi_group rshmemi_warp_group() { return rshmemi_group{(int)rshmemi_lane(), __popc(rshmemi_warp_lanes())}; }
RSHMEMI_DEV rshmemi_group rshmemi_block_group() {
    return rshmemi_group{(int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)),
                         (int)(blockDim.x * blockDim.y * blockDim.z)};
}
/* Group barriers (the warp's is rshmemi_warp_sync, which remembers the calling lanes). */
RSHMEMI_DEV void rshmemi_sync_block() { __syncthreads(); }

/* ---- copies ----------------------------------------------------------------------------------
 * The group strides over words of W bytes; each thread loads BATCH words before it stores them,
 * so BATCH loads are in flight per thread (a peer load is a NVLink round trip). Thread-scope
 * routines use 4, group gets 2 (their many threads are in flight already), group puts 1 (their
 * loads are local: the shortest loop wins, measured 3-9% on H100); more would cost registers,
 * and a kernel of 1024 threads has 64 per thread in all. */
template <typename W, int BATCH>
RSHMEMI_DEV void rshmemi_copy_body(char *d, const char *s, size_t nw, rshmemi_group g) {
    if (BATCH == 1 || (BATCH == 2 && nw <= (size_t)g.size)) { /* a word per thread at most, or the group's own
                                                 * threads are the parallelism: the shortest loop */
        for (size_t i = (size_t)g.tid; i < nw; i += (size_t)g.size) ((W *)d)[i] = ((const W *)s)[i];
        return;
    }
    const unsigned st = (unsigned)g.size;
    W *dw = (W *)d + g.tid;
    const W *sw = (const W *)s + g.tid;
    size_t left = nw > (size_t)g.tid ? nw - (size_t)g.tid : 0; /* of which every st-th is mine */
#pragma unroll 1
    for (; left > (size_t)(BATCH - 1) * st; sw += BATCH * st, dw += BATCH * st) {
        W v[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; k++) v[k] = sw[k * st];
#pragma unroll
        for (int k = 0; k < BATCH; k++) dw[k * st] = v[k];
        left = left > (size_t)BATCH * st ? left - (size_t)BATCH * st : 0;
    }
#pragma unroll 1
    for (; left > 0; left = left > st ? left - st : 0, sw += st, dw += st) dw[0] = sw[0];
}

/* One thread moving one aligned word of 4, 8 or 16 bytes (the per-thread puts of a grid): a
 * straight load and store, the same instructions in every lane, so a warp's neighbouring puts combine into
 * whole lines instead of splitting over the head/body/tail paths of rshmemi_copy. Returns
 * whether it did the copy. Thread-scope RMA, and a group's copy of less than a word. */
RSHMEMI_DEV bool rshmemi_copy_few(char *d, const char *s, size_t n) {
    const uintptr_t a = (uintptr_t)d | (uintptr_t)s;
    if (n == 16 && (a & 15) == 0) {
        *(uint4 *)d = *(const uint4 *)s;
        return true;
    }
    if (n == 8 && (a & 7) == 0) {
        *(unsigned long long *)d = *(const unsigned long long *)s;
        return true;
    }
    if (n == 4 && (a & 3) == 0) {
        *(unsigned *)d = *(const unsigned *)s;
        return true;
    }
    return false;
}

/* `n` bytes one piece at a time, each piece as wide as the alignment of d allows (at most 8 and
 * at most what is left); d and s agree modulo every piece size used (the caller's word size). */
RSHMEMI_DEV void rshmemi_copy_pieces(char *d, const char *s, size_t n) {
    while (n) {
        size_t k = (size_t)1 << __ffsll((long long)((uintptr_t)d | 8)) >> 1;
        while (k > n) k >>= 1;
        switch (k) {
            case 8: *(unsigned long long *)d = *(const unsigned long long *)s; break;
            case 4: *(unsigned int *)d = *(const unsigned int *)s; break;
            case 2: *(unsigned short *)d = *(const unsigned short *)s; break;
            default: *d = *s; break;
        }
        d += k;
        s += k;
        n -= k;
    }
}

/* In words of W bytes, which d and s share the alignment of: thread 0 copies the head up to d's
 * word boundary, the last thread the tail after the last whole word, everyone the words. */
template <typename W, int BATCH>
RSHMEMI_DEV void rshmemi_copy_words(char *d, const char *s, size_t n, rshmemi_group g) {
    if ((((uintptr_t)d | (uintptr_t)n) & (sizeof(W) - 1)) == 0) { /* whole words: no ends to copy */
        rshmemi_copy_body<W, BATCH>(d, s, n / sizeof(W), g);
        return;
    }
    size_t head = (size_t)(0 - (uintptr_t)d) & (sizeof(W) - 1);
    if (head > n) head = n;
    if (head && g.tid == 0) rshmemi_copy_pieces(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t nw = n / sizeof(W), done = nw * sizeof(W);
    rshmemi_copy_body<W, BATCH>(d, s, nw, g);
    if (done < n && g.tid == g.size - 1) rshmemi_copy_pieces(d + done, s + done, n - done);
}

/* Ends that are not 16-byte aligned alike (out of line: rare, and inlined its loops would hold
 * registers in every kernel that copies). */
template <int BATCH>
static __device__ __noinline__ void rshmemi_copy_narrow(char *d, const char *s, size_t n, rshmemi_group g) {
    uintptr_t x = (uintptr_t)d ^ (uintptr_t)s;
    if ((x & 7) == 0) rshmemi_copy_words<unsigned long long, BATCH>(d, s, n, g);
    else if ((x & 3) == 0) rshmemi_copy_words<unsigned int, BATCH>(d, s, n, g);
    else rshmemi_copy_body<unsigned char, BATCH>(d, s, n, g);
}

/* The group copies n bytes, in the widest words both ends agree on: 16 bytes for buffers that
 * are aligned alike (every heap allocation is 512-byte aligned), inline. */
template <int BATCH = 2>
RSHMEMI_DEV void rshmemi_copy(void *dst, const void *src, size_t n, rshmemi_group g) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    if ((((uintptr_t)d ^ (uintptr_t)s) & 15) == 0) rshmemi_copy_words<uint4, BATCH>(d, s, n, g);
    else rshmemi_copy_narrow<BATCH>(d, s, n, g);
}

/* ---- words and atomics by size ---------------------------------------------------------------- */
template <int N> struct rshmemi_word_of;
template <> struct rshmemi_word_of<1> { typedef unsigned char type; };
template <> struct rshmemi_word_of<2> { typedef unsigned short type; };
template <> struct rshmemi_word_of<4> { typedef unsigned int type; };
template <> struct rshmemi_word_of<8> { typedef unsigned long long type; };

template <typename T>
RSHMEMI_DEV typename rshmemi_word_of<sizeof(T)>::type rshmemi_bits(T v) {
    typename rshmemi_word_of<sizeof(T)>::type w;
    memcpy(&w, &v, sizeof(T));
    return w;
}
template <typename T, typename W>
RSHMEMI_DEV T rshmemi_from_bits(W w) {
    T v;
    memcpy(&v, &w, sizeof(T));
    return v;
}

/* A relaxed .sys load (volatile: always reads memory, never a stale L1 line): g, fetch, polls. */
template <typename T>
RSHMEMI_DEV T rshmemi_load(const T *p) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    W w = *(const volatile W *)p;
    return rshmemi_from_bits<T>(w);
}
/* A relaxed .sys store: atomic_set, signal SET. */
template <typename T>
RSHMEMI_DEV void rshmemi_store(T *p, T v) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    *(volatile W *)p = rshmemi_bits(v);
}

/* An acquire .sys load (generic address: any state space): later loads see what the writer
 * released before this value. */
RSHMEMI_DEV unsigned int rshmemi_ld_acquire_bits(const unsigned char *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.u8 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
RSHMEMI_DEV unsigned int rshmemi_ld_acquire_bits(const unsigned short *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.u16 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
RSHMEMI_DEV unsigned int rshmemi_ld_acquire_bits(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
RSHMEMI_DEV unsigned long long rshmemi_ld_acquire_bits(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
template <typename T>
RSHMEMI_DEV T rshmemi_load_acquire(const T *p) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    return rshmemi_from_bits<T>((W)rshmemi_ld_acquire_bits((const W *)p));
}

/* After relaxed loads saw the values waited for: later loads see what their writers released
 * before them. A fence after the polls (PTX's fence-based acquire pattern) costs one L1
 * invalidation, where acquire loads in a poll loop pay one per poll (measured on H100: 5% of a
 * signal ping-pong; a full fence.sc/acq_rel.sys would cost a NVLink round trip). fence.acquire
 * needs PTX ISA 8.6 (CUDA 12.8). Before it: one acquire load of the polled word, or, after
 * several words were read, the full fence. */
#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
#define RSHMEMI_HAVE_FENCE_ACQUIRE 1
#endif
RSHMEMI_DEV void rshmemi_acquire_fence() {
#ifdef RSHMEMI_HAVE_FENCE_ACQUIRE
    asm volatile("fence.acquire.sys;" ::: "memory");
#else
    __threadfence_system();
#endif
}
RSHMEMI_DEV void rshmemi_acquire_after(const void *polled) {
#ifdef RSHMEMI_HAVE_FENCE_ACQUIRE
    (void)polled;
    rshmemi_acquire_fence();
#else
    (void)rshmemi_ld_acquire_bits((const unsigned char *)polled);
#endif
}

/* Reductions without a result (red.relaxed.sys: the issuing thread waits for nothing). */
#define RSHMEMI_RED(OP, PTX32, PTX64)                                                                        \
    RSHMEMI_DEV void rshmemi_red_##OP##_bits(unsigned int *p, unsigned int v) {                              \
        asm volatile("red.relaxed.sys.global." PTX32 " [%0], %1;" ::"l"(p), "r"(v) : "memory");              \
    }                                                                                                        \
    RSHMEMI_DEV void rshmemi_red_##OP##_bits(unsigned long long *p, unsigned long long v) {                  \
        asm volatile("red.relaxed.sys.global." PTX64 " [%0], %1;" ::"l"(p), "l"(v) : "memory");              \
    }                                                                                                        \
    template <typename T>                                                                                    \
    RSHMEMI_DEV void rshmemi_red_##OP(T *p, T v) {                                                           \
        typedef typename rshmemi_word_of<sizeof(T)>::type W;                                                 \
        static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMOs work on 4- and 8-byte types");                 \
        rshmemi_red_##OP##_bits((W *)p, rshmemi_bits(v));                                                    \
    }
RSHMEMI_RED(add, "add.u32", "add.u64")
RSHMEMI_RED(and, "and.b32", "and.b64")
RSHMEMI_RED(or, "or.b32", "or.b64")
RSHMEMI_RED(xor, "xor.b32", "xor.b64")
#undef RSHMEMI_RED

/* System-scope atomics with a result on 4- and 8-byte words (peer memory is another GPU's). */
#define RSHMEMI_ATOMIC_WORD(OP, INTRINSIC)                                                       \
    template <typename T>                                                                        \
    RSHMEMI_DEV T rshmemi_atomic_##OP(T *p, T v) {                                               \
        typedef typename rshmemi_word_of<sizeof(T)>::type W;                                     \
        static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMOs work on 4- and 8-byte types");     \
        return rshmemi_from_bits<T>(INTRINSIC((W *)p, rshmemi_bits(v)));                         \
    }
RSHMEMI_ATOMIC_WORD(add, atomicAdd_system)
RSHMEMI_ATOMIC_WORD(exch, atomicExch_system)
RSHMEMI_ATOMIC_WORD(and, atomicAnd_system)
RSHMEMI_ATOMIC_WORD(or, atomicOr_system)
RSHMEMI_ATOMIC_WORD(xor, atomicXor_system)
#undef RSHMEMI_ATOMIC_WORD

template <typename T>
RSHMEMI_DEV T rshmemi_atomic_cas(T *p, T cond, T v) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMOs work on 4- and 8-byte types");
    return rshmemi_from_bits<T>(atomicCAS_system((W *)p, rshmemi_bits(cond), rshmemi_bits(v)));
}

/* ---- comparisons and waits ------------------------------------------------------------------ */
template <typename T>
RSHMEMI_DEV bool rshmemi_compare(T v, int cmp, T ref) {
    switch (cmp) {
        case NVSHMEM_CMP_EQ: return v == ref;
        case NVSHMEM_CMP_NE: return v != ref;
        case NVSHMEM_CMP_GT: return v > ref;
        case NVSHMEM_CMP_LE: return v <= ref;
        case NVSHMEM_CMP_LT: return v < ref;
        case NVSHMEM_CMP_GE: return v >= ref;
        default: return false;
    }
}

/* Proxy route: a thread waiting in device code may be what a PE on another host waits for; now
 * and then it takes the atomic that PE asked for on this GPU (rshmem_proxy.cuh, serve_amo), so
 * a grid holding every SM cannot starve the proxy's atomic kernel into a deadlock. */
#if defined(RSHMEM_PROXY_ROUTE)
#include "rshmem/device/rshmem_proxy.cuh"
struct rshmemi_proxy_look {
    unsigned polls = 0;
    __device__ void operator()() {
        if ((++polls & 255) == 0 && (RSHMEMI_STATE.flags & RSHMEM_DEVICE_FLAG_PROXY))
            rshmem_proxy::serve_amo((RshmemProxyChannel *)RSHMEMI_STATE.proxy);
    }
};
/* A long wait, posted to the proxy channel too: the proxy thread logs it on the host at once
 * (a hung kernel's printf never reaches stdout). */
RSHMEMI_DEV void rshmemi_note_stall(uint32_t what, uint64_t word, bool in_heap, uint64_t seen, uint64_t want, int cmp_or_pe) {
    if (RSHMEMI_STATE.flags & RSHMEM_DEVICE_FLAG_PROXY)
        rshmem_proxy::note_stall((RshmemProxyChannel *)RSHMEMI_STATE.proxy, what, word, in_heap, seen, want, cmp_or_pe);
}
#else
struct rshmemi_proxy_look {
    __device__ void operator()() {}
};
RSHMEMI_DEV void rshmemi_note_stall(uint32_t, uint64_t, bool, uint64_t, uint64_t, int) {}
#endif

/* Long waits say so, once: a PE that never arrives (a deadlock, a dead PE, collectives called
 * in different orders) is named instead of hanging in silence. The clock is read every 64K
 * polls only. */
#define RSHMEMI_WAIT_WARN_NS 10000000000ull
struct rshmemi_wait_watch {
    unsigned polls = 0;
    unsigned long long start = 0;
    rshmemi_proxy_look look;
    /* True once, when the wait has lasted RSHMEMI_WAIT_WARN_NS. */
    __device__ bool expired() {
        look();
        if ((++polls & 0xffff) != 0) return false;
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (start == 0) start = now;
        else if (start != ~0ull && now - start > RSHMEMI_WAIT_WARN_NS) {
            start = ~0ull;
            return true;
        }
        return false;
    }
};

/* A point-to-point wait that has lasted RSHMEMI_WAIT_WARN_NS says so, once, naming this PE, the
 * word (its symmetric heap offset), the value it holds and the one awaited: a hang with a
 * count that differs between PEs or a signal never sent is named instead of silent. */
static __device__ __noinline__ void rshmemi_wait_until_report(const void *p, int cmp, unsigned long long seen,
                                                              unsigned long long ref) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    const unsigned long long at = (unsigned long long)(uintptr_t)p;
    const bool in_heap = at >= s.heap_base && at < s.heap_base + s.heap_stride;
    rshmemi_note_stall(RSHMEM_PROXY_STALL_WAIT, in_heap ? at - s.heap_base : at, in_heap, seen, ref, cmp);
    if (in_heap)
        printf("rshmem: PE %d: nvshmem_wait_until / signal_wait_until (block %d thread %d): the word at symmetric heap "
               "offset %llu still holds %llu (0x%llx) after %llu s; it waits for comparison %d with %llu: no PE has "
               "written that yet (a sender that never sent, or counts that differ between PEs)\n",
               s.mype, (int)blockIdx.x, (int)threadIdx.x, at - s.heap_base, seen, seen, RSHMEMI_WAIT_WARN_NS / 1000000000ull,
               cmp, ref);
    else
        printf("rshmem: PE %d: nvshmem_wait_until / signal_wait_until (block %d thread %d): the word at %p (not in the "
               "symmetric heap: no other PE can write it) still holds %llu after %llu s; it waits for comparison %d with %llu\n",
               s.mype, (int)blockIdx.x, (int)threadIdx.x, p, seen, RSHMEMI_WAIT_WARN_NS / 1000000000ull, cmp, ref);
}

/* Spins until *p satisfies the comparison; returns the value seen. Every poll is an acquire
 * load, so the one that succeeds orders the loads after it: data the writer published before
 * its signal (put_signal, or fence/quiet then p / signal_op) is visible. A full fence here
 * (membar.sys) would cost a round of the memory system on every wait. */
template <typename T>
RSHMEMI_DEV T rshmemi_wait_until(T *p, int cmp, T ref) {
    T v;
    rshmemi_wait_watch w;
    while (!rshmemi_compare(v = rshmemi_load(p), cmp, ref))
        if (w.expired()) rshmemi_wait_until_report(p, cmp, (unsigned long long)rshmemi_bits(v), (unsigned long long)rshmemi_bits(ref));
    rshmemi_acquire_after(p);
    return v;
}

/* ---- signals ---------------------------------------------------------------------------------- */
/* signal_op: SET is a relaxed store, ADD a reduction; neither waits for a reply. */
RSHMEMI_DEV void rshmemi_signal(uint64_t *remote, uint64_t value, int op) {
    if (op == NVSHMEM_SIGNAL_ADD) rshmemi_red_add<unsigned long long>((unsigned long long *)remote, value);
    else rshmemi_store<unsigned long long>((unsigned long long *)remote, value);
}
/* The signal of put_signal: release semantics, so everything this thread (and, through the
 * group barrier before it, its group) wrote before is visible to whoever sees the signal. */
RSHMEMI_DEV void rshmemi_signal_release(uint64_t *remote, uint64_t value, int op) {
    if (op == NVSHMEM_SIGNAL_ADD)
        asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(remote), "l"(value) : "memory");
    else
        asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(remote), "l"(value) : "memory");
}

/* ---- teams --------------------------------------------------------------------------------
 * A team's members are the world PEs start + i * stride, i < size; this PE is i = my. The host
 * keeps the device's table (RshmemDeviceTeam[max_teams], indexed by the team handle) current
 * with every split and destroy. size 0: not a team this PE belongs to. */
struct rshmemi_team {
    int start, stride, size, my;
};
RSHMEMI_DEV rshmemi_team rshmemi_team_of(nvshmem_team_t team) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    if (team == NVSHMEM_TEAM_WORLD) return rshmemi_team{0, 1, s.npes, s.mype};
    if (team >= 0 && (unsigned)team < s.max_teams) {
        RshmemDeviceTeam t = ((const RshmemDeviceTeam *)s.teams)[team];
        if (t.size > 0) return rshmemi_team{t.start, t.stride, t.size, t.my_index};
    }
    return rshmemi_team{0, 0, 0, -1};
}
/* World PE of member i. */
RSHMEMI_DEV int rshmemi_team_pe(const rshmemi_team &t, int i) { return t.start + i * t.stride; }
/* Member index of world PE pe, or -1. */
RSHMEMI_DEV int rshmemi_team_index(const rshmemi_team &t, int pe) {
    int d = pe - t.start, stride = t.stride > 0 ? t.stride : 1;
    if (t.size <= 0 || d < 0 || d % stride != 0 || d / stride >= t.size) return -1;
    return d / stride;
}
/* The team, or a stop with a message naming the routine when it is not one of this PE's. */
RSHMEMI_DEV rshmemi_team rshmemi_team_checked(nvshmem_team_t team, const char *who) {
    rshmemi_team t = rshmemi_team_of(team);
    if (t.size <= 0) {
        printf("rshmem: %s: team %d is not a team this PE belongs to (NVSHMEM_TEAM_INVALID, destroyed, never created, or beyond the %u-entry device team table)\n",
               who, (int)team, RSHMEMI_STATE.max_teams);
        __trap();
    }
    return t;
}
#include "rshmem/device/ibgda/ibgda_device.cuh" /* IBGDA route for peers without P2P */
#include "rshmem/device/rshmem_remote.cuh"       /* the one entry to PEs without P2P */

/* ---- group barriers as objects ------------------------------------------------------------
 * A routine's scope: its barrier (operator()) and its group (group()). */
/* depth: words each thread keeps in flight in bulk copies; ll_batch: small-collective units
 * each thread handles at once (a block has many threads in flight already, and 1024 of them
 * have 64 registers each); ll_max: bytes per member up to which a collective takes the
 * low-latency protocol (measured on H100: one thread polls its units nearly one after
 * another, so beyond two units its copies with 4 words in flight between two barriers are
 * faster; a warp's crossover is near 1 KiB, a block's beyond the slot); ll_bcast_max: the
 * same for broadcasts (H100, 2 PEs, vs pulling between two barriers: a thread's 32 B 0.76 of
 * the time, 64-512 B 1.2-5.9x slower; a warp's 2 KiB 1.37x slower; on 2 x H200 a warp's 1 KiB
 * low-latency 3.04 us against 2.22 pushed at 2 KiB: results/gpu-compare-2026-11-28e-first); bcast_push_max: bytes per
 * member up to which the root pushes a broadcast (push_words loads in flight per thread, each
 * word then stored to every member) instead of every member pulling it between two barriers,
 * ~0: always (4 x H100, 2 and 4 PEs, push/pull: a thread's 2 KiB 0.24-0.30 of the time, a
 * block's 32 KiB-4 MiB 0.33-0.67: stores wait for no round trip, loads over NVLink do; the
 * batched loads took a thread's 128 B push to 0.66-0.70 and a warp's 2 KiB to 0.77-0.78 of the
 * time of loading a word at a time); ll_rs_per_member: a
 * reducescatter's ll_max counts per other member (rshmemi_ll_rs_max); reduce_words,
 * reduce_together: 16-byte words of a large reduction per thread and step, and whether a
 * member's loads of them are in flight at once (see rshmemi_reduce_range); rs_words,
 * rs_together, rs_pairs: the same for a reducescatter's share, which each member's group reads
 * from every member (pairs: two members' loads at once). Each step waits for one NVLink round
 * trip, so the words in flight set the time (4 x H100, results/gpu-compare-2026-11-28a-rows,
 * main's constants and these in one call; sizes are whole sources): a lone thread's 128 B-2 KiB
 * with 4 words instead of 2 took 0.58-0.88 of the time at 2 PEs and 0.77-0.89 at 4 (2 PEs,
 * 2 KiB: 36.2 -> 21.1 us, NVSHMEM 23.1), but 64 B at 2 PEs 1.20x longer: a share of 2 words is
 * below one step of 4, so rshmemi_reduce_range's tail takes it a word at a time (a build that
 * kept 2 words for shares below 128 B was slower at every size, not understood); a block's
 * 16 KiB-4 MiB with 2 words instead of 1, both loads of a member at once, 0.55-0.87 at 2 PEs,
 * 32 KiB-4 MiB 0.53-0.75 at 4 (16 KiB 1.01; 2 PEs, 512 KiB: 80.8 -> 46.2 us, NVSHMEM 74.2). Not pairs at block scope: that took a 1024-thread
 * block's kernel to 66 registers. A thread's 4 words take its reducescatter kernels to 80-84
 * registers (76-80 with 2): a 1024-thread block of them launched with neither. */
struct rshmemi_no_sync {
    static const int depth = 4, ll_batch = 4;
    static const unsigned ll_max = 16, ll_bcast_max = 32, bcast_push_max = 4096;
    static const int reduce_words = 2, push_words = 8;
    static const bool reduce_together = true, ll_rs_per_member = true;
    static const int rs_words = 4;
    static const bool rs_together = true, rs_pairs = true;
    __device__ void operator()() const {}
    __device__ rshmemi_group group() const { return rshmemi_thread_group(); }
};
struct rshmemi_warp_sync {
    static const int depth = 4, ll_batch = 2;
    static const unsigned ll_max = 1024, ll_bcast_max = 512, bcast_push_max = 8192;
    static const int reduce_words = 2, push_words = 4;
    static const bool reduce_together = false, ll_rs_per_member = false;
    static const int rs_words = 2;
    static const bool rs_together = false, rs_pairs = false;
    unsigned lanes;
    __device__ rshmemi_warp_sync() : lanes(rshmemi_warp_lanes()) {}
    __device__ void operator()() const { __syncwarp(lanes); }
    __device__ rshmemi_group group() const { return rshmemi_group{(int)rshmemi_lane(), __popc(lanes)}; }
};
struct rshmemi_block_sync {
    static const int depth = 2, ll_batch = 1;
    static const unsigned ll_max = ~0u, ll_bcast_max = ~0u, bcast_push_max = ~0u;
    static const int reduce_words = 1, push_words = 4;
    static const bool reduce_together = false, ll_rs_per_member = false;
    static const int rs_words = 2;
    static const bool rs_together = true, rs_pairs = false;
    __device__ void operator()() const { rshmemi_sync_block(); }
    __device__ rshmemi_group group() const { return rshmemi_block_group(); }
};
/* The barrier of the warp put/get routines (nvshmemx_*_put_warp, *_get_warp, *_get_nbi_warp):
 * for a block of whole warps (the usual case; a uniform test on blockDim) the constant full mask.
 * A mask in a register (rshmemi_warp_sync) makes ptxas check it before the barrier on every call
 * (MATCH.ANY, REDUX.OR, VOTEU.ANY, a LOP3 and a conditional BRA.DIV), which a constant skips:
 * then a BRA.DIV and a NOP, as NVSHMEM's __syncwarp() (cuobjdump of put_bw's put_warp kernel).
 * 1 x H200, 2 PEs under MPS (a proxy, not NVLink; results/gpu-compare-2026-11-29c-rma): put_warp
 * 8 B-256 KiB 4-7 % faster at 8 and 32 CTAs (32 KiB 64.5 -> 67.8 GB/s, NVSHMEM 69.1), get_warp
 * 8-512 B 2-3 % lower latency. The warp collectives keep rshmemi_warp_sync: with this barrier
 * their rows were up to 5 % slower (broadcast 8 B 1.79 -> 1.88 us, reduce 2 KiB 4.01 -> 4.14 us),
 * still 0.40-0.87x NVSHMEM's time; put_signal and the strided forms were not measured with it. */
struct rshmemi_warp_rma_sync : rshmemi_warp_sync {
    __device__ void operator()() const {
        if (((blockDim.x * blockDim.y * blockDim.z) & 31) == 0) __syncwarp(0xffffffffu);
        else __syncwarp(lanes);
    }
};
typedef rshmemi_block_sync rshmemi_block_rma_sync;

/* ---- barriers and syncs -----------------------------------------------------------------------
 * PE j adds 1 to sync_counters[j] on PE i; PE i remembers in sync_consumed[j] how many it has
 * used. Counters only grow, so no reset is needed, and one pair of counters serves every team
 * the two PEs share (the members of a team call its barriers in the same order).
 * Teams of up to RSHMEMI_SYNC_DIRECT members: every member signals every other one directly
 * and waits for a signal from each (one hop: the signals are reductions that wait for no
 * reply, and the group's threads share the members out). Larger teams: dissemination,
 * log2(n) rounds, by one thread.
 * A barrier's signal is a release: what this PE (and its group, through the group barrier
 * before it) wrote is visible to a PE that has seen the signal, which is what quiet + sync
 * promise. A sync's signal is relaxed: NVSHMEM's sync orders execution, not memory. Both wait
 * with acquire loads, so what a signaller released is visible after the wait. */
#define RSHMEMI_SYNC_DIRECT 32

/* A release fence: with relaxed signals after it, a release pattern (PTX memory model). One per
 * thread and barrier instead of one per signal: a red.release is a MEMBAR.SYS each (SASS), and
 * each such fence waits for the reply to the red before it, so a lone thread of a 4-PE team paid
 * two NVLink round trips more than it needs. fence.release needs PTX ISA 8.6, as fence.acquire. */
RSHMEMI_DEV void rshmemi_release_fence() {
#ifdef RSHMEMI_HAVE_FENCE_ACQUIRE
    asm volatile("fence.release.sys;" ::: "memory");
#else
    __threadfence_system();
#endif
}
/* One signal to `to`; a barrier's is a release only through rshmemi_release_fence before it. */
RSHMEMI_DEV void rshmemi_sync_signal(int to) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    unsigned long long *counter = &((unsigned long long *)s.sync_counters)[s.mype];
    if (rshmemi_remote_peer(to)) {
        rshmemi_remote_barrier_signal(counter, to);
        return;
    }
    unsigned long long *remote = (unsigned long long *)rshmemi_peer(counter, to);
    asm volatile("red.relaxed.sys.global.add.u64 [%0], 1;" ::"l"(remote) : "memory");
}
static __device__ __noinline__ void rshmemi_wait_report(const char *what, int peer) {
    printf("rshmem: PE %d: %s: still waiting for PE %d after %llu s (it has not arrived: a deadlock, a dead PE, "
           "or team collectives called in a different order on different PEs)\n",
           RSHMEMI_STATE.mype, what, peer, RSHMEMI_WAIT_WARN_NS / 1000000000ull);
    rshmemi_note_stall(RSHMEM_PROXY_STALL_BARRIER, 0, false, 0, 0, peer);
}

/* Waits with relaxed polls for the next signal from `from`; the caller's acquire fence follows
 * (one after all of a thread's waits). */
RSHMEMI_DEV void rshmemi_sync_wait(int from) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    unsigned long long *counters = (unsigned long long *)s.sync_counters;
    unsigned long long want = ++((unsigned long long *)s.sync_consumed)[from];
    rshmemi_wait_watch w;
    while (rshmemi_load(&counters[from]) < want)
        if (w.expired()) rshmemi_wait_report("device barrier", from);
}

template <bool RELEASE, typename SYNC>
RSHMEMI_DEV void rshmemi_team_barrier(const rshmemi_team &t, rshmemi_group g, SYNC sync) {
    sync();
    if (t.size <= RSHMEMI_SYNC_DIRECT) {
        /* Whether this thread has a member other than itself to signal and wait for. */
        const bool any = g.tid < t.size && (g.tid != t.my || g.tid + g.size < t.size);
        if (RELEASE && any) rshmemi_release_fence();
        for (int k = g.tid; k < t.size; k += g.size)
            if (k != t.my) rshmemi_sync_signal(rshmemi_team_pe(t, k));
        for (int k = g.tid; k < t.size; k += g.size)
            if (k != t.my) rshmemi_sync_wait(rshmemi_team_pe(t, k));
        if (any) rshmemi_acquire_fence();
    } else if (g.tid == 0) {
        for (int d = 1; d < t.size; d <<= 1) { /* each round passes on what the rounds before acquired */
            if (RELEASE) rshmemi_release_fence();
            rshmemi_sync_signal(rshmemi_team_pe(t, (t.my + d) % t.size));
            rshmemi_sync_wait(rshmemi_team_pe(t, (t.my - d + t.size) % t.size));
            rshmemi_acquire_fence();
        }
    }
    sync();
}

#endif /* RSHMEM_P2P_CUH */
