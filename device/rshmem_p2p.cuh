/* Internal building blocks of the device library (rshmemi_*): peer addresses, thread-group
 * identities, vectorized copies, atomics by word size, waits. Not part of the API. */
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

RSHMEMI_DEV void rshmemi_check(const void *addr, size_t bytes, int pe, const char *who) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    if (s.magic != RSHMEM_DEVICE_STATE_MAGIC) {
        printf("rshmem: %s called before nvshmem_init (or in a module without nvshmemx_cumodule_init)\n", who);
        __trap();
    }
    if (pe < 0 || pe >= s.npes) {
        printf("rshmem: %s: PE %d is out of range (0..%d)\n", who, pe, s.npes - 1);
        __trap();
    }
    unsigned long long off = (unsigned long long)addr - s.heap_base;
    if (off >= s.heap_stride || bytes > s.heap_stride - off) {
        printf("rshmem: %s: address %p (%llu bytes) is not in the symmetric heap\n", who, addr, (unsigned long long)bytes);
        __trap();
    }
}

/* Where symmetric `p` of this PE lies on PE `pe`, as mapped here (pure arithmetic: PE p's heap
 * is at window_base + p * heap_stride in every process). */
RSHMEMI_DEV void *rshmemi_peer(const void *p, int pe) {
    return (void *)((const char *)p + ((long long)pe - (long long)RSHMEMI_STATE.mype) * (long long)RSHMEMI_STATE.heap_stride);
}

RSHMEMI_DEV void *rshmemi_peer_checked(const void *p, size_t bytes, int pe, const char *who) {
    if (rshmemi_checks_on()) rshmemi_check(p, bytes, pe, who);
    return rshmemi_peer(p, pe);
}
#define RSHMEMI_PEER(p, bytes, pe) rshmemi_peer_checked((p), (bytes), (pe), __func__)

/* ---- thread groups ------------------------------------------------------------------------
 * A group is (my index, group size); warps count only the lanes that called (partial warps). */
struct rshmemi_group {
    int tid;
    int size;
};
RSHMEMI_DEV rshmemi_group rshmemi_thread_group() { return rshmemi_group{0, 1}; }
RSHMEMI_DEV rshmemi_group rshmemi_warp_group() {
    unsigned mask = __activemask(), lt;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    return rshmemi_group{__popc(mask & lt), __popc(mask)};
}
RSHMEMI_DEV rshmemi_group rshmemi_block_group() {
    return rshmemi_group{(int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)),
                         (int)(blockDim.x * blockDim.y * blockDim.z)};
}
/* Group barriers (the warp's is rshmemi_warp_sync, which remembers the calling lanes). */
RSHMEMI_DEV void rshmemi_sync_block() { __syncthreads(); }

/* ---- copies ----------------------------------------------------------------------------------
 * Split at the widest word both pointers share the alignment of (16 bytes when possible), so
 * the body moves as 16-byte vector loads/stores with every thread of the group striding. */
template <typename W>
RSHMEMI_DEV void rshmemi_copy_words(char *d, const char *s, size_t n, rshmemi_group g) {
    size_t head = (sizeof(W) - ((uintptr_t)d & (sizeof(W) - 1))) & (sizeof(W) - 1);
    if (head > n) head = n;
    for (size_t i = g.tid; i < head; i += g.size) d[i] = s[i];
    size_t words = (n - head) / sizeof(W);
    W *dw = (W *)(d + head);
    const W *sw = (const W *)(s + head);
    for (size_t i = g.tid; i < words; i += g.size) dw[i] = sw[i];
    for (size_t i = head + words * sizeof(W) + g.tid; i < n; i += g.size) d[i] = s[i];
}

RSHMEMI_DEV void rshmemi_copy(void *dst, const void *src, size_t n, rshmemi_group g) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    uintptr_t x = (uintptr_t)d ^ (uintptr_t)s;
    if ((x & 15) == 0)
        rshmemi_copy_words<int4>(d, s, n, g);
    else if ((x & 7) == 0)
        rshmemi_copy_words<unsigned long long>(d, s, n, g);
    else if ((x & 3) == 0)
        rshmemi_copy_words<unsigned int>(d, s, n, g);
    else
        for (size_t i = g.tid; i < n; i += g.size) d[i] = s[i];
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

/* A load that always reads memory (no stale L1 line): for g, fetch and waits. */
template <typename T>
RSHMEMI_DEV T rshmemi_load(const T *p) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    W w = *(const volatile W *)p;
    return rshmemi_from_bits<T>(w);
}
template <typename T>
RSHMEMI_DEV void rshmemi_store(T *p, T v) {
    typedef typename rshmemi_word_of<sizeof(T)>::type W;
    *(volatile W *)p = rshmemi_bits(v);
}

/* System-scope atomics on 4- and 8-byte words (peer memory is another GPU's). */
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

/* Spins until *p satisfies the comparison; returns the value seen. Later loads of data the
 * writer published before its signal see that data (acquire by fence). */
template <typename T>
RSHMEMI_DEV T rshmemi_wait_until(T *p, int cmp, T ref) {
    T v;
    while (!rshmemi_compare(v = rshmemi_load(p), cmp, ref)) {
    }
    __threadfence_system();
    return v;
}

/* ---- signals ---------------------------------------------------------------------------------- */
RSHMEMI_DEV void rshmemi_signal(uint64_t *remote, uint64_t value, int op) {
    if (op == NVSHMEM_SIGNAL_ADD)
        rshmemi_atomic_add<unsigned long long>((unsigned long long *)remote, value);
    else
        rshmemi_atomic_exch<unsigned long long>((unsigned long long *)remote, value);
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

/* ---- barriers --------------------------------------------------------------------------------
 * Dissemination over per-pair counters in every PE's runtime area: PE j adds 1 to
 * sync_counters[j] on PE i; PE i remembers in sync_consumed[j] how many it has used. Counters
 * only grow, so no reset is needed, and one pair of counters serves every team the two PEs
 * share (the members of a team call its barriers in the same order). One thread per PE runs it. */
RSHMEMI_DEV void rshmemi_sync_team_one_thread(const rshmemi_team &t) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    int me = t.my, n = t.size;
    unsigned long long *counters = (unsigned long long *)s.sync_counters;
    unsigned long long *consumed = (unsigned long long *)s.sync_consumed;
    for (int d = 1; d < n; d <<= 1) {
        int to = rshmemi_team_pe(t, (me + d) % n), from = rshmemi_team_pe(t, (me - d + n) % n);
        __threadfence_system();
        if (rshmemi_ibgda_peer(to)) rshmemi_ibgda_barrier_signal(&counters[s.mype], to);
        else atomicAdd_system((unsigned long long *)rshmemi_peer(&counters[s.mype], to), 1ull);
        unsigned long long want = ++consumed[from];
        while (rshmemi_load(&counters[from]) < want) {
        }
    }
    __threadfence_system();
}
RSHMEMI_DEV void rshmemi_sync_all_one_thread() { rshmemi_sync_team_one_thread(rshmemi_team_of(NVSHMEM_TEAM_WORLD)); }

#endif /* RSHMEM_P2P_CUH */
