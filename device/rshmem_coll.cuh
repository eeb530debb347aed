/* Device collectives on the teams of the device table: alltoall, broadcast, fcollect, reduce
 * (and, or, xor, max, min, sum, prod) and reducescatter, by one thread, a warp or a block.
 *
 * Two protocols over P2P, chosen by size (every member decides alike: the arguments agree):
 *  - small (a member sends at most coll_ll_slot / 2 bytes to another; team handle below
 *    coll_ll_teams): low-latency mailboxes. The sender stores 16-byte units {4 data bytes, flag,
 *    4 data bytes, flag} straight into the receiver's slot for (team, family, parity of the
 *    call, sender); the flag is the call's number, so a unit is complete when both its flags
 *    match, and nobody waits for a barrier: one hop per collective. Two families count their
 *    calls apart. Exchanges (alltoall, fcollect, reduce, reducescatter): every member sends to
 *    every other one, so a member cannot get two exchanges ahead and overwrite a slot still
 *    being read (it would need this member's data of the exchange in between). Broadcasts: a
 *    root waits until every member has acknowledged its previous broadcast of the same
 *    parity, which has long happened unless that member is far behind.
 *  - large: the group moves the data with 16-byte accesses through the peer mappings, between
 *    a team barrier on entry (sources written, destinations free) and one at the end. A
 *    reduction is a reduce-scatter and an all-gather in one pass: member m reduces its share of
 *    the vector from every member's source (in member order, so every PE gets the same bits)
 *    and stores the result into every member's destination; only member m touches that share,
 *    so an in-place reduction (dest == source) needs no staging.
 * Toward peers reached only through IBGDA (NVSHMEM_DISABLE_P2P=1, built with
 * -DRSHMEM_IBGDA_ROUTE) every collective takes a plain route instead: puts between barriers,
 * reductions through gets into the scratch buffer. */
#ifndef RSHMEM_COLL_CUH
#define RSHMEM_COLL_CUH

#include "rshmem/device/rshmem_rma.cuh"
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

/* OP on the elements of two words of W bytes, element by element (W a multiple of sizeof(T);
 * instantiated, never run, for wider T). */
template <typename T, typename OP, typename W>
RSHMEMI_DEV W rshmemi_reduce_word(W a, W b) {
    const int K = sizeof(W) >= sizeof(T) ? (int)(sizeof(W) / sizeof(T)) : 1;
    T x[K], y[K];
    memcpy(x, &a, sizeof(W));
    memcpy(y, &b, sizeof(W));
#pragma unroll
    for (int j = 0; j < K; j++) x[j] = rshmemi_reduce_op<OP>(x[j], y[j]);
    memcpy(&a, x, sizeof(W));
    return a;
}

/* ---- bytes to and from 8-byte words (any alignment; little-endian) -------------------------
 * Whole aligned words inline; the rest (a short tail, a misaligned buffer) out of line. */
static __device__ __noinline__ unsigned long long rshmemi_ld_bytes(const char *p, unsigned n) {
    unsigned long long v = 0;
#pragma unroll 1
    for (unsigned i = 0; i < n; i++) v |= (unsigned long long)(unsigned char)p[i] << (8 * i);
    return v;
}
static __device__ __noinline__ void rshmemi_st_bytes(char *p, unsigned long long v, unsigned n) {
#pragma unroll 1
    for (unsigned i = 0; i < n; i++) p[i] = (char)(v >> (8 * i));
}
RSHMEMI_DEV unsigned long long rshmemi_ld_upto8(const char *p, size_t n) {
    if (n >= 8 && ((uintptr_t)p & 7) == 0) return *(const unsigned long long *)p;
    return rshmemi_ld_bytes(p, n < 8 ? (unsigned)n : 8u);
}
RSHMEMI_DEV void rshmemi_st_upto8(char *p, unsigned long long v, size_t n) {
    if (n >= 8 && ((uintptr_t)p & 7) == 0) *(unsigned long long *)p = v;
    else rshmemi_st_bytes(p, v, n < 8 ? (unsigned)n : 8u);
}

/* The loops of each protocol are out of line: inlined together into one kernel they would
 * hold registers at once that each needs only in turn (a 1024-thread block has 64 each). */
#define RSHMEMI_COLL_OOL static __device__ __noinline__

/* ---- call numbers and low-latency slots ----------------------------------------------------- */
enum { RSHMEMI_LL_EXCHANGE = 0, RSHMEMI_LL_BROADCAST = 1 };

/* max: the scope's crossover (SYNC::ll_max for the exchanges, SYNC::ll_bcast_max for
 * broadcasts, whose members only receive). */
template <typename SYNC>
RSHMEMI_DEV bool rshmemi_ll_fits(nvshmem_team_t team, size_t bytes_per_member, unsigned max = SYNC::ll_max) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    return !rshmemi_remote_on() && team >= 0 && (unsigned)team < s.coll_ll_teams && bytes_per_member <= s.coll_ll_slot / 2 &&
           bytes_per_member <= max;
}
/* A reduction's crossover (bytes of the result per member): SYNC::ll_max, but a lone thread's
 * is RSHMEMI_LL_REDUCE_THREAD_MAX: its other path has two barriers (4 x H200, int32 sum, one
 * call, results/gpu-compare-2026-11-28c-h200x4: 2 PEs, reduce 32 B 4.93 us there, 3.57 here,
 * NVSHMEM 4.86; reducescatter of 64 B 5.66 there, 3.56 here, NVSHMEM 4.59; 4 PEs, reduce 32 B
 * 7.73 there, 7.28 here). 64 B is too much here (2 PEs: 6.54 vs 4.92 there; 4 PEs: 14.1 vs
 * 7.7): a thread polls its units one after another. Its alltoall and fcollect, one barrier,
 * keep SYNC::ll_max. Measurement builds may define the macro to compare crossovers. */
#ifndef RSHMEMI_LL_REDUCE_THREAD_MAX
#define RSHMEMI_LL_REDUCE_THREAD_MAX 32
#endif
template <typename SYNC>
struct rshmemi_ll_reduce_max {
    static const unsigned value = SYNC::ll_max;
};
template <>
struct rshmemi_ll_reduce_max<rshmemi_no_sync> {
    static const unsigned value = RSHMEMI_LL_REDUCE_THREAD_MAX;
};
/* A reducescatter's crossover: SYNC::ll_max per other member where SYNC::ll_rs_per_member (a
 * lone thread: its other path has two barriers, which cost more with every member; 4 x H100, 4
 * PEs, 32 B per member: 7.3 us here, 9.2 us there. Alltoall and fcollect, one barrier, stay on
 * theirs: 4.0-4.4 us there, 7.4 us here), and at least the reduction's crossover. */
template <typename SYNC>
RSHMEMI_DEV unsigned rshmemi_ll_rs_max(const rshmemi_team &t) {
    const unsigned least = rshmemi_ll_reduce_max<SYNC>::value;
    const unsigned per_member = SYNC::ll_rs_per_member && t.size > 2 ? SYNC::ll_max * (unsigned)(t.size - 1) : 0;
    return per_member > least ? per_member : least;
}
RSHMEMI_DEV volatile unsigned long long *rshmemi_ll_calls(nvshmem_team_t team, int family) {
    return (volatile unsigned long long *)RSHMEMI_STATE.coll_calls + 2 * team + family;
}
/* This PE's number for the small collective of `family` being started on `team` (every member
 * counts alike); the group has met at its barrier on return, so its sources are written. */
template <typename SYNC>
RSHMEMI_DEV unsigned long long rshmemi_ll_begin(nvshmem_team_t team, int family, rshmemi_group g, SYNC sync) {
    volatile unsigned long long *calls = rshmemi_ll_calls(team, family);
    unsigned long long c = *calls + 1;
    if ((unsigned)c == 0) c += 2; /* flags are the low 32 bits: never 0 (an empty slot), parity kept */
    sync();
    if (g.tid == 0) *calls = c;
    return c;
}
/* This PE's slot for (team, family, call, sender world PE). */
RSHMEMI_DEV char *rshmemi_ll_slot(nvshmem_team_t team, int family, unsigned long long call, int sender) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    size_t index = (((size_t)team * 2 + (size_t)family) * 2 + (call & 1)) * (size_t)s.npes + (size_t)sender;
    return (char *)s.coll_ll + index * s.coll_ll_slot;
}
RSHMEMI_DEV void rshmemi_ll_put_unit(char *remote_unit, unsigned long long data, unsigned flag) {
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(remote_unit), "r"((unsigned)data), "r"(flag),
                 "r"((unsigned)(data >> 32)), "r"(flag)
                 : "memory");
}
/* One unit as it is now: {data low, flag, data high, flag}. ACQUIRE: what this thread does
 * after the load is ordered after it (a broadcast's acknowledgement, see rshmemi_broadcast_ll). */
template <bool ACQUIRE = false>
RSHMEMI_DEV uint4 rshmemi_ll_peek(const char *unit) {
    uint4 v;
    if (ACQUIRE)
        asm volatile("ld.acquire.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(unit) : "memory");
    else
        asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(unit) : "memory");
    return v;
}
RSHMEMI_DEV bool rshmemi_ll_ready(uint4 v, unsigned flag) { return v.y == flag && v.w == flag; }
RSHMEMI_DEV unsigned long long rshmemi_ll_data(uint4 v) { return (unsigned long long)v.x | (unsigned long long)v.z << 32; }

/* The stalled wait's report names the sender and both PEs' counts of the team's small
 * collectives of this family: unequal counts mean the PEs called them in different orders. */
static __device__ __noinline__ void rshmemi_ll_report(const volatile unsigned long long *calls, int sender, unsigned flag,
                                                      unsigned seen0, unsigned seen1, size_t u) {
    const volatile unsigned long long *theirs = (const volatile unsigned long long *)rshmemi_peer((const void *)calls, sender);
    printf("rshmem: PE %d: device collective: still waiting after %llu s for PE %d's data of this team's small collective "
           "number %u (unit %llu of its slot holds number %u/%u); this PE has started %llu of them, PE %d %llu: it has not "
           "arrived, is dead, or calls the team's collectives in another order\n",
           RSHMEMI_STATE.mype, RSHMEMI_WAIT_WARN_NS / 1000000000ull, sender, flag, (unsigned long long)u, seen0, seen1, *calls,
           sender, *theirs);
}
/* Waits for unit `u` of a slot (from world PE `sender`) to carry `flag`; returns its 8 data
 * bytes. */
RSHMEMI_DEV unsigned long long rshmemi_ll_take_unit(const char *slot, size_t u, unsigned flag, int sender,
                                                    const volatile unsigned long long *calls) {
    rshmemi_wait_watch w;
    uint4 v;
    while (!rshmemi_ll_ready(v = rshmemi_ll_peek(slot + 16 * u), flag))
        if (w.expired()) rshmemi_ll_report(calls, sender, flag, v.y, v.w, u);
    return rshmemi_ll_data(v);
}

/* Sends `bytes` of `src` (for member k: src + k * src_stride; stride 0: the same data to
 * everyone) to every other member's slot of this call. The group shares (member, unit) pairs,
 * RSHMEMI_LL_BATCH of them per thread at a time: their loads are in flight together (one
 * thread alone would otherwise wait for every load in turn; SYNC::ll_batch: more for small
 * groups, whose threads have many units each, one for blocks, whose registers are scarce). */
template <int RSHMEMI_LL_BATCH>
RSHMEMI_COLL_OOL void rshmemi_ll_send(const rshmemi_team &t, nvshmem_team_t team, int family, unsigned long long call,
                                      const char *src, size_t src_stride, size_t bytes, rshmemi_group g) {
    /* 32-bit arithmetic: a slot holds a few hundred units (64-bit division costs registers). */
    const unsigned units = (unsigned)((bytes + 7) / 8), total = units * (unsigned)t.size, gs = (unsigned)g.size;
    char *my_slot = rshmemi_ll_slot(team, family, call, RSHMEMI_STATE.mype);
    if (src_stride == 0 && (gs == 1 || total > RSHMEMI_LL_BATCH * gs)) {
        /* The same data to everyone, more pairs than the group takes in one round (or a lone
         * thread): each unit loaded once, then stored to every other member (a member per unit
         * reloaded it: 32 B from a thread at 4 PEs was 3 batches of loads). Within one round
         * the pairs' loads are in flight together and their stores spread over the threads. */
        for (unsigned u0 = g.tid; u0 < units; u0 += RSHMEMI_LL_BATCH * gs) {
            unsigned long long v[RSHMEMI_LL_BATCH];
#pragma unroll
            for (int j = 0; j < RSHMEMI_LL_BATCH; j++) {
                unsigned u = u0 + j * gs;
                if (u < units) v[j] = rshmemi_ld_upto8(src + 8 * u, bytes - 8 * u);
            }
            for (int k = 0; k < t.size; k++) {
                if (k == t.my) continue;
                char *to = (char *)rshmemi_peer(my_slot, rshmemi_team_pe(t, k));
#pragma unroll
                for (int j = 0; j < RSHMEMI_LL_BATCH; j++) {
                    unsigned u = u0 + j * gs;
                    if (u < units) rshmemi_ll_put_unit(to + 16 * u, v[j], (unsigned)call);
                }
            }
        }
        return;
    }
    for (unsigned w0 = g.tid; w0 < total; w0 += RSHMEMI_LL_BATCH * gs) {
        unsigned long long v[RSHMEMI_LL_BATCH];
        char *to[RSHMEMI_LL_BATCH];
#pragma unroll
        for (int j = 0; j < RSHMEMI_LL_BATCH; j++) {
            unsigned w = w0 + j * gs;
            int k = (int)(w / units);
            unsigned u = w - (unsigned)k * units;
            to[j] = nullptr;
            if (w < total && k != t.my) {
                v[j] = rshmemi_ld_upto8(src + (size_t)k * src_stride + 8 * u, bytes - 8 * u);
                to[j] = (char *)rshmemi_peer(my_slot + 16 * u, rshmemi_team_pe(t, k));
            }
        }
#pragma unroll
        for (int j = 0; j < RSHMEMI_LL_BATCH; j++)
            if (to[j]) rshmemi_ll_put_unit(to[j], v[j], (unsigned)call);
    }
}
/* Copies every other member's `bytes` of this call out of its slot to dest + k * dest_stride
 * (only_from >= 0: that member's alone), RSHMEMI_LL_BATCH units per thread polled together
 * (ACQUIRE: with acquire loads). */
template <int RSHMEMI_LL_BATCH, bool ACQUIRE = false>
RSHMEMI_COLL_OOL void rshmemi_ll_recv(const rshmemi_team &t, nvshmem_team_t team, int family, unsigned long long call,
                                      char *dest, size_t dest_stride, size_t bytes, rshmemi_group g, int only_from = -1) {
    const unsigned units = (unsigned)((bytes + 7) / 8), total = units * (only_from >= 0 ? 1u : (unsigned)t.size);
    const unsigned gs = (unsigned)g.size;
    for (unsigned w0 = g.tid; w0 < total; w0 += RSHMEMI_LL_BATCH * gs) {
        unsigned long long v[RSHMEMI_LL_BATCH];
        const char *unit[RSHMEMI_LL_BATCH];
        int from[RSHMEMI_LL_BATCH];
        unsigned pending = 0;
#pragma unroll
        for (int j = 0; j < RSHMEMI_LL_BATCH; j++) {
            unsigned w = w0 + j * gs;
            int k = only_from >= 0 ? only_from : (int)(w / units);
            unsigned u = only_from >= 0 ? w : w - (unsigned)k * units;
            from[j] = k;
            unit[j] = rshmemi_ll_slot(team, family, call, rshmemi_team_pe(t, k)) + 16 * u;
            if (w < total && k != t.my) pending |= 1u << j;
        }
        const unsigned todo = pending;
        rshmemi_wait_watch watch;
        while (pending) {
#pragma unroll
            for (int j = 0; j < RSHMEMI_LL_BATCH; j++) {
                if (!(pending >> j & 1)) continue;
                uint4 x = rshmemi_ll_peek<ACQUIRE>(unit[j]);
                if (rshmemi_ll_ready(x, (unsigned)call)) {
                    v[j] = rshmemi_ll_data(x);
                    pending &= ~(1u << j);
                } else if (watch.expired()) {
                    rshmemi_ll_report(rshmemi_ll_calls(team, family), rshmemi_team_pe(t, from[j]), (unsigned)call, x.y, x.w,
                                      (size_t)((unit[j] - rshmemi_ll_slot(team, family, call, rshmemi_team_pe(t, from[j]))) / 16));
                }
            }
        }
#pragma unroll
        for (int j = 0; j < RSHMEMI_LL_BATCH; j++) {
            if (!(todo >> j & 1)) continue;
            unsigned w = w0 + j * gs;
            unsigned u = only_from >= 0 ? w : w - (unsigned)from[j] * units;
            rshmemi_st_upto8(dest + (size_t)from[j] * dest_stride + 8 * u, v[j], bytes - 8 * u);
        }
    }
}

/* Exchange-family reductions: unit u of the OP over the members (in member order) of their
 * `bytes` sent for this call, this PE's own from `mine`; into dest. */
template <typename T, typename OP>
RSHMEMI_COLL_OOL void rshmemi_ll_reduce(const rshmemi_team &t, nvshmem_team_t team, unsigned long long call, T *dest, const T *mine,
                                   size_t bytes, rshmemi_group g) {
    for (size_t u = g.tid; u < (bytes + 7) / 8; u += g.size) {
        size_t have = bytes - 8 * u < 8 ? bytes - 8 * u : 8;
        unsigned long long acc = 0;
        for (int k = 0; k < t.size; k++) {
            unsigned long long v =
                k == t.my ? rshmemi_ld_upto8((const char *)mine + 8 * u, have)
                          : rshmemi_ll_take_unit(rshmemi_ll_slot(team, RSHMEMI_LL_EXCHANGE, call, rshmemi_team_pe(t, k)), u,
                                                 (unsigned)call, rshmemi_team_pe(t, k), rshmemi_ll_calls(team, RSHMEMI_LL_EXCHANGE));
            acc = k == 0 ? v : rshmemi_reduce_word<T, OP>(acc, v);
        }
        rshmemi_st_upto8((char *)dest + 8 * u, acc, have);
    }
}

/* ---- data movement of the large path ------------------------------------------------------ */
/* The group copies `bytes`, SYNC::depth words in flight per thread. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_coll_copy(void *dst, const void *src, size_t bytes, rshmemi_group g) {
    rshmemi_copy<SYNC::depth>(dst, src, bytes, g);
}

/* One 16-byte store, kept whole (a uint4 out of an array of them was otherwise stored as four
 * 4-byte stores, measured 1.27x the time of a 1024-thread block reduce). No memory clobber: a
 * thread reads each word before it writes it and never reads it again, and the group barrier
 * after the loop orders the stores for everyone else. */
RSHMEMI_DEV void rshmemi_st16(uint4 *p, uint4 v) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}

/* Element i of every member's `src`, reduced in member order (the tail of a range). */
template <typename T, typename OP>
RSHMEMI_DEV T rshmemi_gather_reduce1(const rshmemi_team &t, const T *src) {
    T acc = rshmemi_load((const T *)rshmemi_peer(src, rshmemi_team_pe(t, 0)));
    for (int k = 1; k < t.size; k++) acc = rshmemi_reduce_op<OP>(acc, rshmemi_load((const T *)rshmemi_peer(src, rshmemi_team_pe(t, k))));
    return acc;
}

/* 16-byte words w, w + step, ... (D of them) of every member's src, reduced in member order
 * into acc[0..D): a member's D loads are in flight together, so a thread waits once per
 * member, not once per word and member; PAIRS: two members' loads at once, so once per two
 * members (a lone thread's reducescatter of 2 KiB on 4 x H100 waited for 64 NVLink round trips
 * one member at a time). */
template <typename T, typename OP, int D, bool PAIRS = false>
RSHMEMI_DEV void rshmemi_gather_reduce16(const rshmemi_team &t, const T *src, size_t step, uint4 *acc) {
    const uint4 *s0 = (const uint4 *)rshmemi_peer(src, rshmemi_team_pe(t, 0));
    int k = 1;
    if (PAIRS && t.size > 1) {
        const uint4 *s1 = (const uint4 *)rshmemi_peer(src, rshmemi_team_pe(t, 1));
        uint4 v[D];
#pragma unroll
        for (int j = 0; j < D; j++) acc[j] = __ldcg(s0 + j * step), v[j] = __ldcg(s1 + j * step);
#pragma unroll
        for (int j = 0; j < D; j++) acc[j] = rshmemi_reduce_word<T, OP>(acc[j], v[j]);
        for (k = 2; k + 1 < t.size; k += 2) {
            const uint4 *sa = (const uint4 *)rshmemi_peer(src, rshmemi_team_pe(t, k));
            const uint4 *sb = (const uint4 *)rshmemi_peer(src, rshmemi_team_pe(t, k + 1));
            uint4 w[D];
#pragma unroll
            for (int j = 0; j < D; j++) v[j] = __ldcg(sa + j * step), w[j] = __ldcg(sb + j * step);
#pragma unroll
            for (int j = 0; j < D; j++) acc[j] = rshmemi_reduce_word<T, OP>(rshmemi_reduce_word<T, OP>(acc[j], v[j]), w[j]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < D; j++) acc[j] = __ldcg(s0 + j * step);
    }
    for (; k < t.size; k++) {
        const uint4 *sk = (const uint4 *)rshmemi_peer(src, rshmemi_team_pe(t, k));
        uint4 v[D];
#pragma unroll
        for (int j = 0; j < D; j++) v[j] = __ldcg(sk + j * step);
#pragma unroll
        for (int j = 0; j < D; j++) acc[j] = rshmemi_reduce_word<T, OP>(acc[j], v[j]);
    }
}

/* Elements [lo, hi) of the reduction: from every member's src, into dest (push: into every
 * member's dest). 16-byte words where src and dest allow, WORDS of them per thread and step:
 * TOGETHER, a member's loads of them are in flight at once (a lone thread: half the time of
 * one word at a time at 64 B-2 KiB on H100), and PAIRS, two members' at once (a lone thread's
 * reducescatter; its reduction stays within the 64 registers of a 1024-thread block without);
 * else word after word, in fewer registers (the warp's, whose reducescatter would otherwise
 * need 80). */
template <typename T, typename OP, int WORDS, bool TOGETHER, bool PAIRS>
RSHMEMI_COLL_OOL void rshmemi_reduce_range(const rshmemi_team &t, T *dest, const T *src, size_t lo, size_t hi, bool push,
                                      rshmemi_group g) {
    const size_t V = 16 / sizeof(T);
    size_t i = lo;
    if (sizeof(T) <= 16 && 16 % sizeof(T) == 0 && ((((uintptr_t)(dest + lo)) | ((uintptr_t)(src + lo))) & 15) == 0) {
        const size_t words = (hi - lo) / V, step = (size_t)g.size;
        size_t w = g.tid;
        for (; WORDS > 1 && w + (WORDS - 1) * step < words; w += WORDS * step) {
            uint4 acc[WORDS];
            if (TOGETHER) {
                rshmemi_gather_reduce16<T, OP, WORDS, PAIRS>(t, src + lo + w * V, step, acc);
            } else {
#pragma unroll
                for (int j = 0; j < WORDS; j++) rshmemi_gather_reduce16<T, OP, 1>(t, src + lo + (w + j * step) * V, step, &acc[j]);
            }
            for (int k = 0; k < (push ? t.size : 1); k++) {
                uint4 *d = (uint4 *)((push ? (T *)rshmemi_peer(dest, rshmemi_team_pe(t, k)) : dest) + lo + w * V);
#pragma unroll
                for (int j = 0; j < WORDS; j++) rshmemi_st16(d + j * step, acc[j]);
            }
        }
        for (; w < words; w += step) {
            uint4 acc;
            rshmemi_gather_reduce16<T, OP, 1>(t, src + lo + w * V, step, &acc);
            for (int k = 0; k < (push ? t.size : 1); k++)
                rshmemi_st16((uint4 *)((push ? (T *)rshmemi_peer(dest, rshmemi_team_pe(t, k)) : dest) + lo + w * V), acc);
        }
        i = lo + words * V;
    }
    for (size_t j = i + g.tid; j < hi; j += g.size) {
        T acc = rshmemi_gather_reduce1<T, OP>(t, src + j);
        for (int k = 0; k < (push ? t.size : 1); k++) (push ? (T *)rshmemi_peer(dest, rshmemi_team_pe(t, k)) : dest)[j] = acc;
    }
}

/* Member m's share of n elements: whole 16-byte words (v elements), so that shares keep the
 * alignment. The quotient comes from a double, corrected: a 64-bit division costs registers. */
RSHMEMI_DEV void rshmemi_share(size_t n, size_t v, int m, int members, size_t *lo, size_t *hi) {
    size_t words = (n + v - 1) / v; /* v is a power of two */
    size_t per = (size_t)((double)words / (double)members);
    while (per * (size_t)members < words) per++;
    while (per > 0 && (per - 1) * (size_t)members >= words) per--;
    per *= v;
    *lo = per * (size_t)m < n ? per * (size_t)m : n;
    *hi = *lo + per < n ? *lo + per : n;
}

/* ---- stops for misuse ------------------------------------------------------------------------ */
static __device__ __noinline__ void rshmemi_coll_misuse(const char *who, const char *what) {
    printf("rshmem: PE %d: %s: %s\n", RSHMEMI_STATE.mype, who, what);
    __trap();
}
RSHMEMI_DEV bool rshmemi_overlap(const void *a, size_t na, const void *b, size_t nb) {
    return (const char *)a < (const char *)b + nb && (const char *)b < (const char *)a + na;
}

/* ---- the algorithms (team: its handle, t: its members; g: the calling group; sync: its
 *      barrier). Each ends with its group met at a barrier. ------------------------------------ */

/* Start of a collective that writes the other members' dest (alltoall, fcollect beyond the
 * low-latency sizes): the group's source is complete, and over P2P nothing more. The
 * caller guarantees that every member's dest is ready to receive when any member calls
 * (OpenSHMEM's precondition of these collectives, which NVSHMEM keeps: it also writes first and
 * ends with one barrier), so one team barrier at the end suffices: 2 PEs on an H100, a thread's
 * fcollect/alltoall of 64 B-2 KiB took 0.59-0.84 of the time, a block's of 8 KiB-2 MiB
 * 0.60-0.95 (its low-latency sizes, not on this path, measured 0.25 us slower in the same
 * A/B, unexplained). The IBGDA route keeps its barrier first, as before. Broadcast pushes
 * the same way up to SYNC::bcast_push_max bytes per member, and pulls beyond. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_push_begin(const rshmemi_team &t, rshmemi_group g, SYNC sync) {
    if (rshmemi_remote_on()) rshmemi_sync_team_group(t, g, sync);
    else sync();
}
/* The low-latency forms (rshmemi_ll_fits): also the library's own on-stream kernel
 * (src/cuda/kernels/ll.cu) for small on-stream calls. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_alltoall_ll(nvshmem_team_t team, const rshmemi_team &t, char *d, const char *s, size_t bytes,
                                     rshmemi_group g, SYNC sync) {
    unsigned long long call = rshmemi_ll_begin(team, RSHMEMI_LL_EXCHANGE, g, sync);
    rshmemi_ll_send<SYNC::ll_batch>(t, team, RSHMEMI_LL_EXCHANGE, call, s, bytes, bytes, g);
    rshmemi_coll_copy<SYNC>(d + (size_t)t.my * bytes, s + (size_t)t.my * bytes, bytes, g);
    rshmemi_ll_recv<SYNC::ll_batch>(t, team, RSHMEMI_LL_EXCHANGE, call, d, bytes, bytes, g);
    sync();
}
template <typename SYNC>
RSHMEMI_DEV void rshmemi_fcollect_ll(nvshmem_team_t team, const rshmemi_team &t, char *d, const char *source, size_t bytes,
                                     rshmemi_group g, SYNC sync) {
    unsigned long long call = rshmemi_ll_begin(team, RSHMEMI_LL_EXCHANGE, g, sync);
    rshmemi_ll_send<SYNC::ll_batch>(t, team, RSHMEMI_LL_EXCHANGE, call, source, 0, bytes, g);
    rshmemi_coll_copy<SYNC>(d + (size_t)t.my * bytes, source, bytes, g);
    rshmemi_ll_recv<SYNC::ll_batch>(t, team, RSHMEMI_LL_EXCHANGE, call, d, bytes, bytes, g);
    sync();
}
/* Small broadcasts: acks[team][npes + 2] on every PE holds, per member (world PE), the last of
 * this PE's broadcasts that member has taken out of its slot, and in its last two entries the
 * number of this PE's last broadcast as root of each parity. root: a member index.
 * The acknowledgement only has to follow the member's reads of the slot (the root overwrites
 * the slot once it sees it): the member reads the slot with acquire loads, which order what it
 * does later (the group barrier, then the acknowledgement) after them, and stores the
 * acknowledgement relaxed. A release store there waited for the member's dest stores to be
 * performed system-wide (a fence.sys, ~1.5 us on H100) before every next broadcast: that was
 * most of a small broadcast's time. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_broadcast_ll(nvshmem_team_t team, const rshmemi_team &t, void *dest, const void *source, size_t bytes,
                                      int root, rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    unsigned long long call = rshmemi_ll_begin(team, RSHMEMI_LL_BROADCAST, g, sync);
    unsigned long long *acks = (unsigned long long *)s.coll_acks + (size_t)team * (size_t)(s.npes + 2);
    if (t.my == root) {
        /* The slot this broadcast reuses has been emptied by every member. */
        unsigned long long *rooted = &acks[s.npes + (call & 1)];
        unsigned long long prev = *rooted;
        for (int k = g.tid; k < t.size; k += g.size) {
            rshmemi_wait_watch w;
            while (k != root && rshmemi_load_acquire(&acks[rshmemi_team_pe(t, k)]) < prev)
                if (w.expired()) rshmemi_wait_report("device broadcast (acknowledgement of an earlier one)", rshmemi_team_pe(t, k));
        }
        sync();
        if (g.tid == 0) *rooted = call;
        rshmemi_ll_send<SYNC::ll_batch>(t, team, RSHMEMI_LL_BROADCAST, call, (const char *)source, 0, bytes, g);
        if (dest != source) rshmemi_coll_copy<SYNC>(dest, source, bytes, g);
    } else {
        rshmemi_ll_recv<SYNC::ll_batch, true>(t, team, RSHMEMI_LL_BROADCAST, call, (char *)dest, 0, bytes, g, root);
        sync();
        if (g.tid == 0) {
            unsigned long long *ack = (unsigned long long *)rshmemi_peer(&acks[s.mype], rshmemi_team_pe(t, root));
            asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(ack), "l"(call) : "memory");
        }
    }
    sync();
}

template <typename SYNC>
RSHMEMI_DEV void rshmemi_alltoall(nvshmem_team_t team, const rshmemi_team &t, void *dest, const void *source, size_t bytes,
                                  rshmemi_group g, SYNC sync) {
    char *d = (char *)dest;
    const char *s = (const char *)source;
    if (rshmemi_ll_fits<SYNC>(team, bytes)) return rshmemi_alltoall_ll(team, t, d, s, bytes, g, sync);
    rshmemi_push_begin(t, g, sync);
    for (int k = 0; k < t.size; k++) {
        int j = (t.my + k) % t.size; /* start with a different member on each PE */
        if (rshmemi_remote_on())
            rshmemi_put(d + (size_t)t.my * bytes, s + (size_t)j * bytes, bytes, rshmemi_team_pe(t, j), g, sync, "nvshmem_alltoall");
        else
            rshmemi_coll_copy<SYNC>(rshmemi_peer(d + (size_t)t.my * bytes, rshmemi_team_pe(t, j)), s + (size_t)j * bytes, bytes, g);
    }
    rshmemi_sync_team_group(t, g, sync);
}

template <typename SYNC>
RSHMEMI_DEV void rshmemi_fcollect(nvshmem_team_t team, const rshmemi_team &t, void *dest, const void *source, size_t bytes,
                                  rshmemi_group g, SYNC sync) {
    char *d = (char *)dest;
    if (rshmemi_ll_fits<SYNC>(team, bytes)) return rshmemi_fcollect_ll(team, t, d, (const char *)source, bytes, g, sync);
    rshmemi_push_begin(t, g, sync);
    for (int k = 0; k < t.size; k++) {
        int j = (t.my + k) % t.size;
        if (rshmemi_remote_on())
            rshmemi_put(d + (size_t)t.my * bytes, source, bytes, rshmemi_team_pe(t, j), g, sync, "nvshmem_fcollect");
        else
            rshmemi_coll_copy<SYNC>(rshmemi_peer(d + (size_t)t.my * bytes, rshmemi_team_pe(t, j)), source, bytes, g);
    }
    rshmemi_sync_team_group(t, g, sync);
}

/* The root's push of a broadcast into every member's dest (its own too, unless in place).
 * 16-byte words aligned alike: each thread loads D words of the source (D loads in flight: one
 * at a time, a lone thread waited for each of them in turn, a 2 KiB push 128 times) and stores
 * each to every member; else member after member. Member k's dest is at first + k * step: a
 * team's members are evenly spaced, and so are their heaps in the window. TAIL_TOGETHER: the
 * last words (fewer than D for some threads) in one step with their loads in flight together
 * too, else word after word (rshmemi_push_tail_together). */
template <int D, bool TAIL_TOGETHER>
RSHMEMI_COLL_OOL void rshmemi_push_all(const rshmemi_team &t, void *dest, const void *source, size_t bytes, rshmemi_group g) {
    char *first = (char *)rshmemi_peer(dest, rshmemi_team_pe(t, 0));
    const long long step = (long long)t.stride * (long long)RSHMEMI_STATE.heap_stride;
    const int skip = dest == source ? t.my : -1;
    if ((((uintptr_t)dest | (uintptr_t)source | (uintptr_t)bytes) & 15) != 0) {
        for (int k = 0; k < t.size; k++)
            if (k != skip) rshmemi_copy<1>(first + k * step, source, bytes, g);
        return;
    }
    const size_t words = bytes / 16, gs = (size_t)g.size;
    const uint4 *src = (const uint4 *)source;
    size_t w = (size_t)g.tid;
    for (; w + (D - 1) * gs < words; w += D * gs) {
        uint4 v[D];
#pragma unroll
        for (int j = 0; j < D; j++) v[j] = src[w + j * gs];
        char *d = first + 16 * w;
        for (int k = 0; k < t.size; k++, d += step)
            if (k != skip) {
#pragma unroll
                for (int j = 0; j < D; j++) rshmemi_st16((uint4 *)d + j * gs, v[j]);
            }
    }
    if (TAIL_TOGETHER && w < words) {
        uint4 v[D];
#pragma unroll
        for (int j = 0; j < D; j++)
            if (w + j * gs < words) v[j] = src[w + j * gs];
        char *d = first + 16 * w;
        for (int k = 0; k < t.size; k++, d += step)
            if (k != skip) {
#pragma unroll
                for (int j = 0; j < D; j++)
                    if (w + j * gs < words) rshmemi_st16((uint4 *)d + j * gs, v[j]);
            }
        return;
    }
    for (; w < words; w += gs) {
        const uint4 v = src[w];
        char *d = first + 16 * w;
        for (int k = 0; k < t.size; k++, d += step)
            if (k != skip) rshmemi_st16((uint4 *)d, v);
    }
}

/* A warp's push takes its last words together: a warp's 1 KiB (2 words a lane, below one step
 * of 4) waited for two loads in turn and took longer than its 2 KiB (4 x H200, 2 PEs: 2.46 us
 * against 2.28; together 2.29, NVSHMEM 2.31; 4 PEs 2.65 -> 2.44, NVSHMEM 2.75; no warp size
 * slower: results/gpu-compare-2026-11-28f-coll). A lone thread's (8 per step) took its 64 B
 * push from 2.46 to 2.09 us (2 PEs) and 3.41 to 2.89 (4 PEs), but its other sizes moved -1.4 to
 * +5.7 % in the same kernel, even those that never run this code (8-32 B go by mailbox: +2.1 to
 * +5.7 %): left word after word. A block's: not measured, left as it was. */
template <typename SYNC>
struct rshmemi_push_tail_together {
    static const bool value = false;
};
template <>
struct rshmemi_push_tail_together<rshmemi_warp_sync> {
    static const bool value = true;
};

/* root: the root's index in the team. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_broadcast(nvshmem_team_t team, const rshmemi_team &t, void *dest, const void *source, size_t bytes,
                                   int root, rshmemi_group g, SYNC sync) {
    if (rshmemi_checks_on() && (root < 0 || root >= t.size)) {
        printf("rshmem: broadcast: PE_root %d is not a member index of the team (0..%d)\n", root, t.size - 1);
        __trap();
    }
    if (rshmemi_ll_fits<SYNC>(team, bytes, SYNC::ll_bcast_max)) return rshmemi_broadcast_ll(team, t, dest, source, bytes, root, g, sync);
    if (rshmemi_remote_on()) {
        rshmemi_sync_team_group(t, g, sync);
        if (root != t.my || dest != source) rshmemi_get(dest, source, bytes, rshmemi_team_pe(t, root), g, sync, "nvshmem_broadcast");
        rshmemi_sync_team_group(t, g, sync);
        return;
    }
    /* Up to SYNC::bcast_push_max bytes per member (a block's always): the root pushes into
     * every member's dest and one barrier ends it (every member's dest is ready to receive when
     * any member calls: OpenSHMEM's precondition of broadcast). Larger (a lone thread's or a
     * warp's): every member pulls from the root between two barriers, which is faster once the
     * root's few threads have much to write. */
    if (SYNC::bcast_push_max != 0 && bytes <= SYNC::bcast_push_max) {
        sync();
        if (root == t.my) rshmemi_push_all<SYNC::push_words, rshmemi_push_tail_together<SYNC>::value>(t, dest, source, bytes, g);
    } else {
        rshmemi_sync_team_group(t, g, sync);
        if (root != t.my || dest != source) rshmemi_coll_copy<SYNC>(dest, rshmemi_peer(source, rshmemi_team_pe(t, root)), bytes, g);
    }
    rshmemi_sync_team_group(t, g, sync);
}

/* IBGDA route of the reductions: every member's part of a chunk is fetched into the scratch
 * buffer (gets), reduced locally, written to dest after a barrier (dest may be the source). */
template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reduce_by_gets(const rshmemi_team &t, T *dest, const T *src, size_t n, rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    T *scratch = (T *)s.coll_scratch;
    const size_t chunk = s.coll_scratch_bytes / sizeof(T) / (size_t)(t.size + 1);
    rshmemi_sync_team_group(t, g, sync);
    for (size_t base = 0; base < n; base += chunk) {
        size_t len = n - base < chunk ? n - base : chunk;
        for (int k = 0; k < t.size; k++)
            rshmemi_get(scratch + (size_t)k * chunk, src + base, len * sizeof(T), rshmemi_team_pe(t, k), g, sync, "nvshmem_reduce");
        T *out = scratch + (size_t)t.size * chunk;
        for (size_t i = g.tid; i < len; i += g.size) {
            T acc = scratch[i];
            for (int k = 1; k < t.size; k++) acc = rshmemi_reduce_op<OP>(acc, scratch[(size_t)k * chunk + i]);
            out[i] = acc;
        }
        rshmemi_sync_team_group(t, g, sync); /* every member has fetched this chunk of every source */
        for (size_t i = g.tid; i < len; i += g.size) dest[base + i] = out[i];
        sync();
    }
    rshmemi_sync_team_group(t, g, sync);
}

/* dest[i] = OP over the members (in member order) of source[i], i < n. */
template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reduce(nvshmem_team_t team, const rshmemi_team &t, T *dest, const T *source, size_t n, rshmemi_group g,
                                SYNC sync, const char *who) {
    const size_t bytes = n * sizeof(T);
    if (dest != source && rshmemi_overlap(dest, bytes, source, bytes))
        rshmemi_coll_misuse(who, "dest and source overlap without being the same array");
    if (sizeof(T) <= 8 && rshmemi_ll_fits<SYNC>(team, bytes, rshmemi_ll_reduce_max<SYNC>::value)) {
        unsigned long long call = rshmemi_ll_begin(team, RSHMEMI_LL_EXCHANGE, g, sync);
        rshmemi_ll_send<SYNC::ll_batch>(t, team, RSHMEMI_LL_EXCHANGE, call, (const char *)source, 0, bytes, g);
        sync(); /* sent before dest (which may be the source) is written */
        rshmemi_ll_reduce<T, OP>(t, team, call, dest, source, bytes, g);
        sync();
        return;
    }
    if (rshmemi_remote_on()) {
        rshmemi_reduce_by_gets<T, OP>(t, dest, source, n, g, sync);
        return;
    }
    rshmemi_sync_team_group(t, g, sync);
    size_t lo, hi;
    rshmemi_share(n, sizeof(T) <= 16 && 16 % sizeof(T) == 0 ? 16 / sizeof(T) : 1, t.my, t.size, &lo, &hi);
    rshmemi_reduce_range<T, OP, SYNC::reduce_words, SYNC::reduce_together, false>(t, dest, source, lo, hi, true, g);
    rshmemi_sync_team_group(t, g, sync);
}

/* In-place reducescatter (dest == source): member 0 still reads the start of every source.
 * A chunk at a time: reduce into the scratch buffer (indexed so that element i lands at
 * scratch[i - base]), meet, write. */
template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reducescatter_staged(const rshmemi_team &t, T *dest, const T *mine, size_t n,
                                                                 rshmemi_group g, SYNC sync) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    /* 32-bit chunk arithmetic (the scratch buffer is small): 64-bit costs the kernel registers. */
    const unsigned chunk = (unsigned)(s.coll_scratch_bytes / sizeof(T));
    T *scratch = (T *)s.coll_scratch;
    for (size_t base = 0; base < n; base += chunk) {
        unsigned len = n - base < chunk ? (unsigned)(n - base) : chunk;
        rshmemi_reduce_range<T, OP, SYNC::rs_words, SYNC::rs_together, SYNC::rs_pairs>(t, scratch - base, mine, base,
                                                                                                       base + len, false, g);
        rshmemi_sync_team_group(t, g, sync);
        for (unsigned i = g.tid; i < len; i += g.size) dest[base + i] = scratch[i]; /* local, rare */
        sync();
    }
}

template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reducescatter_direct(const rshmemi_team &t, T *dest, const T *mine, size_t n, bool in_place,
                                                   rshmemi_group g, SYNC sync) {
    rshmemi_sync_team_group(t, g, sync);
    if (!in_place)
        rshmemi_reduce_range<T, OP, SYNC::rs_words, SYNC::rs_together, SYNC::rs_pairs>(t, dest, mine, 0, n, false, g);
    else rshmemi_reducescatter_staged<T, OP>(t, dest, mine, n, g, sync);
    rshmemi_sync_team_group(t, g, sync);
}

/* dest[i] = OP over the members of source[my * n + i], i < n. dest may be the source itself
 * (then the results wait in the scratch buffer until every member has read its block). Every
 * member takes the same path, whatever its index: the paths differ in their barriers. */
template <typename T, typename OP, typename SYNC>
RSHMEMI_DEV void rshmemi_reducescatter(nvshmem_team_t team, const rshmemi_team &t, T *dest, const T *source, size_t n,
                                       rshmemi_group g, SYNC sync, const char *who) {
    const size_t bytes = n * sizeof(T);
    const T *mine = source + (size_t)t.my * n;
    if (dest != source && rshmemi_overlap(dest, bytes, source, bytes * (size_t)t.size))
        rshmemi_coll_misuse(who, "dest overlaps source without being the same array");
    if (sizeof(T) <= 8 && rshmemi_ll_fits<SYNC>(team, bytes, rshmemi_ll_rs_max<SYNC>(t))) {
        unsigned long long call = rshmemi_ll_begin(team, RSHMEMI_LL_EXCHANGE, g, sync);
        rshmemi_ll_send<SYNC::ll_batch>(t, team, RSHMEMI_LL_EXCHANGE, call, (const char *)source, bytes, bytes, g);
        sync();
        rshmemi_ll_reduce<T, OP>(t, team, call, dest, mine, bytes, g);
        sync();
        return;
    }
    if (rshmemi_remote_on()) {
        rshmemi_reduce_by_gets<T, OP>(t, dest, mine, n, g, sync);
        return;
    }
    rshmemi_reducescatter_direct<T, OP>(t, dest, mine, n, dest == source, g, sync);
}

RSHMEMI_EXTERN_C_BEGIN

/* ---- public routines --------------------------------------------------------------------- */
/* Each routine: its scope object (barrier and group from one capture), then the algorithm. */
#define RSHMEMI_COLL_PROLOGUE(SYNC) \
    SYNC sync;                      \
    rshmemi_group g = sync.group(); \
    rshmemi_team t = rshmemi_team_checked(team, __func__)

#define RSHMEMI_DEF_COLL_SCOPE(PRE, SUF, SYNC)                                                                    \
    RSHMEMI_API int PRE##alltoallmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems) {   \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                              \
        rshmemi_alltoall(team, t, dest, source, nelems, g, sync);                                                 \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##fcollectmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems) {   \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                              \
        rshmemi_fcollect(team, t, dest, source, nelems, g, sync);                                                 \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##broadcastmem##SUF(nvshmem_team_t team, void *dest, const void *source, size_t nelems,    \
                                           int PE_root) {                                                         \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                              \
        rshmemi_broadcast(team, t, dest, source, nelems, PE_root, g, sync);                                       \
        return 0;                                                                                                 \
    }
/* The thread-scope routines also exist on the host (librshmem.so): device definitions only
 * in the device pass, as for every routine declared __host__ __device__ in nvshmem.h. */
#ifdef __CUDA_ARCH__
RSHMEMI_DEF_COLL_SCOPE(nvshmem_, , rshmemi_no_sync)
#endif
RSHMEMI_DEF_COLL_SCOPE(nvshmemx_, _warp, rshmemi_warp_sync)
RSHMEMI_DEF_COLL_SCOPE(nvshmemx_, _block, rshmemi_block_sync)
#undef RSHMEMI_DEF_COLL_SCOPE

#define RSHMEMI_DEF_COLL_TYPED(PRE, SUF, SYNC, NAME, TYPE)                                                         \
    RSHMEMI_API int PRE##NAME##_alltoall##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) { \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                               \
        rshmemi_alltoall(team, t, dest, source, nelems * sizeof(TYPE), g, sync);                                   \
        return 0;                                                                                                  \
    }                                                                                                              \
    RSHMEMI_API int PRE##NAME##_fcollect##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems) { \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                               \
        rshmemi_fcollect(team, t, dest, source, nelems * sizeof(TYPE), g, sync);                                   \
        return 0;                                                                                                  \
    }                                                                                                              \
    RSHMEMI_API int PRE##NAME##_broadcast##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, \
                                               int PE_root) {                                                      \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                               \
        rshmemi_broadcast(team, t, dest, source, nelems * sizeof(TYPE), PE_root, g, sync);                         \
        return 0;                                                                                                  \
    }
#define RSHMEMI_DEF_COLL_THREAD(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmem_, , rshmemi_no_sync, NAME, TYPE)
#define RSHMEMI_DEF_COLL_WARP(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmemx_, _warp, rshmemi_warp_sync, NAME, TYPE)
#define RSHMEMI_DEF_COLL_BLOCK(NAME, TYPE) RSHMEMI_DEF_COLL_TYPED(nvshmemx_, _block, rshmemi_block_sync, NAME, TYPE)
#ifdef __CUDA_ARCH__
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_THREAD)
#endif
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_WARP)
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DEF_COLL_BLOCK)
#undef RSHMEMI_DEF_COLL_THREAD
#undef RSHMEMI_DEF_COLL_WARP
#undef RSHMEMI_DEF_COLL_BLOCK
#undef RSHMEMI_DEF_COLL_TYPED

#define RSHMEMI_DEF_REDUCE_SCOPE(PRE, SUF, SYNC, NAME, TYPE, OP)                                                  \
    RSHMEMI_API int PRE##NAME##_##OP##_reduce##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source,          \
                                                   size_t nreduce) {                                             \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                              \
        rshmemi_reduce<TYPE, rshmemi_op_##OP>(team, t, dest, source, nreduce, g, sync, __func__);                 \
        return 0;                                                                                                 \
    }                                                                                                             \
    RSHMEMI_API int PRE##NAME##_##OP##_reducescatter##SUF(nvshmem_team_t team, TYPE *dest, const TYPE *source,   \
                                                          size_t nreduce) {                                      \
        RSHMEMI_COLL_PROLOGUE(SYNC);                                                                              \
        rshmemi_reducescatter<TYPE, rshmemi_op_##OP>(team, t, dest, source, nreduce, g, sync, __func__);          \
        return 0;                                                                                                 \
    }
#ifdef __CUDA_ARCH__
#define RSHMEMI_DEF_REDUCE_THREAD(NAME, TYPE, OP) RSHMEMI_DEF_REDUCE_SCOPE(nvshmem_, , rshmemi_no_sync, NAME, TYPE, OP)
#else
#define RSHMEMI_DEF_REDUCE_THREAD(NAME, TYPE, OP)
#endif
#define RSHMEMI_DEF_REDUCE(NAME, TYPE, OP)                                               \
    RSHMEMI_DEF_REDUCE_THREAD(NAME, TYPE, OP)                                            \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmemx_, _warp, rshmemi_warp_sync, NAME, TYPE, OP)        \
    RSHMEMI_DEF_REDUCE_SCOPE(nvshmemx_, _block, rshmemi_block_sync, NAME, TYPE, OP)

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

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_COLL_CUH */
