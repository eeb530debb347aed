/* rshmem proxy channel, issuing side: device threads hand operations for PEs on other hosts to
 * the host proxy thread of their PE (src/proxy/). The layout is RshmemProxy* in rshmem_abi.h.
 *
 * A thread posts to ring `CTA index % lanes`, so all its commands are in one ring and run in
 * the order it posted them. Posting: take a ticket (an atomic add in GPU memory), wait for a
 * credit only when the ticket is a whole ring ahead of the last `consumed` seen (a full ring
 * stalls the thread, never overwrites a command), write the 64-byte command, then its `seq`
 * with release semantics at system scope. Blocking forms wait for the lane's `completed`;
 * fetching forms for their result slot, then hand the slot back (`taken`).
 *
 * quiet waits until every ring's commands posted before it have run (other threads' too, as a
 * PE-wide quiet and the barriers built on it need), then posts a quiet command to its own ring.
 *
 * Local memory the host cannot reach (a kernel's shared or per-thread memory: the proxy's copy
 * engine call would fault on it) travels in the commands themselves, 8 bytes a p or g.
 *
 * Every wait watches the clock: past `stall_ns` it says once which PE, operation and ring wait
 * for what; if the proxy thread has stopped (status DEAD) it says so and returns
 * RSHMEM_PROXY_ERR_DEAD (device callers trap on it: the kernel fails instead of hanging).
 *
 * The same code compiles as host C++17 (ctest/proxy/harness.cpp): there host threads play the
 * CTAs against the real proxy loop in the Rust tests (tests/proxy_channel.rs). */
#ifndef RSHMEM_PROXY_CUH
#define RSHMEM_PROXY_CUH

#include "rshmem/rshmem_abi.h"
#include "ibgda/ibgda_port.h"

#if !defined(__CUDACC__)
#include <chrono>
#include <cstdio>
#endif

static_assert(sizeof(RshmemProxyCmd) == 64, "rshmem proxy: command layout differs from the library's");
static_assert(sizeof(RshmemProxyLane) == 64 && sizeof(RshmemProxyIssue) == 64 && sizeof(RshmemProxyResult) == 32,
              "rshmem proxy: channel layout differs from the library's");

#define RSHMEM_PROXY_FN RSHMEM_IBGDA_FN
#define RSHMEM_PROXY_ERR_DEAD (-1)

namespace rshmem_proxy {
namespace port = rshmem_ibgda;

#if defined(__CUDACC__)
RSHMEM_PROXY_FN uint64_t now_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define RSHMEM_PROXY_REPORT(...) printf(__VA_ARGS__)
/* Whether the proxy's copies can reach `p`: global memory (device or mapped host), not a
 * kernel's shared, local or constant space. */
RSHMEM_PROXY_FN bool host_reachable(const void *p) { return __isGlobal(p); }
#else
inline uint64_t now_ns() {
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
/* The host build hands reports to a hook (the test harness collects them); stderr without one. */
inline void (*&host_report_hook())(const char *) {
    static void (*hook)(const char *) = nullptr;
    return hook;
}
template <class... A> inline void host_report(const char *fmt, A... args) {
    char line[512];
    snprintf(line, sizeof line, fmt, args...);
    if (host_report_hook()) host_report_hook()(line);
    else fputs(line, stderr);
}
#define RSHMEM_PROXY_REPORT(...) rshmem_proxy::host_report(__VA_ARGS__)
/* The host build reaches everything, except where a test says otherwise (standing in for
 * shared memory). */
inline bool (*&host_unreachable_hook())(const void *) {
    static bool (*hook)(const void *) = nullptr;
    return hook;
}
inline bool host_reachable(const void *p) { return !host_unreachable_hook() || !host_unreachable_hook()(p); }
#endif

/* ---- remote AMOs on this PE's GPU memory (RshmemProxyAmo; src/proxy/gpu.rs, AmoDoorbell) ----
 * A PE on another host asked for an atomic on this GPU's memory; its proxy posted it in the
 * channel's AMO record. The first thread to move the claim word from seq - 1 to seq runs it:
 * a thread waiting in device code (the wait loops look here now and then) or the proxy's
 * one-thread kernel. A grid that holds every SM while it waits for that atomic thus runs it
 * itself instead of starving the kernel. */
#if defined(__CUDACC__)
/* The CUDA *_system atomics: relaxed, one instruction each (a cuda::atomic_ref switch held 20
 * more registers, which every wait loop that may run this pays). */
RSHMEM_PROXY_FN unsigned long long amo_apply(unsigned long long *p, uint32_t op, unsigned long long a, unsigned long long b) {
    switch (op) {
        case 0: return atomicAdd_system(p, a);
        case 1: return atomicAnd_system(p, a);
        case 2: return atomicOr_system(p, a);
        case 3: return atomicXor_system(p, a);
        case 5: return atomicCAS_system(p, a, b); /* the old value either way */
        case 6: return port::load_relaxed(p);
        default: return atomicExch_system(p, a);  /* 4 swap, 7 set */
    }
}
RSHMEM_PROXY_FN unsigned amo_apply(unsigned *p, uint32_t op, unsigned a, unsigned b) {
    switch (op) {
        case 0: return atomicAdd_system(p, a);
        case 1: return atomicAnd_system(p, a);
        case 2: return atomicOr_system(p, a);
        case 3: return atomicXor_system(p, a);
        case 5: return atomicCAS_system(p, a, b);
        case 6: return port::load_relaxed(p);
        default: return atomicExch_system(p, a);
    }
}
#else
template <class T> inline T amo_apply(T *p, uint32_t op, T a, T b) {
    switch (op) {
        case 0: return __atomic_fetch_add(p, a, __ATOMIC_RELAXED);
        case 1: return __atomic_fetch_and(p, a, __ATOMIC_RELAXED);
        case 2: return __atomic_fetch_or(p, a, __ATOMIC_RELAXED);
        case 3: return __atomic_fetch_xor(p, a, __ATOMIC_RELAXED);
        case 5: __atomic_compare_exchange_n(p, &a, b, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); return a;
        case 6: return __atomic_load_n(p, __ATOMIC_RELAXED);
        default: return __atomic_exchange_n(p, a, __ATOMIC_RELAXED);
    }
}
#endif

#if defined(__CUDACC__)
#define RSHMEM_PROXY_COLD static __device__ __noinline__
#else
#define RSHMEM_PROXY_COLD inline
#endif
/* Takes and runs the posted remote AMO, if there is one nobody took; true when it ran one. Out
 * of line: the wait loops that call it stay small. */
RSHMEM_PROXY_FN bool serve_amo_here(RshmemProxyChannel *ch) {
    RshmemProxyAmo *r = &ch->amo;
    const uint64_t seq = port::load_acquire(&r->seq);
    if (seq == port::load_relaxed(&r->done)) return false;
    uint64_t expected = seq - 1;
    if (!port::cas_gpu((uint64_t *)(uintptr_t)port::load_relaxed(&r->claim), expected, seq)) return false;
    const uint64_t addr = port::load_relaxed(&r->addr), a = port::load_relaxed(&r->a), b = port::load_relaxed(&r->b);
    const uint32_t op = port::load_relaxed(&r->op), size = port::load_relaxed(&r->size);
    port::fence_system(); /* what this GPU wrote before is ordered before the atomic, as in rshmem_amo */
    const uint64_t old = size == 4 ? (uint64_t)amo_apply((unsigned *)(uintptr_t)addr, op, (unsigned)a, (unsigned)b)
                                   : (uint64_t)amo_apply((unsigned long long *)(uintptr_t)addr, op, (unsigned long long)a,
                                                         (unsigned long long)b);
    port::store_relaxed(&r->result, old);
    port::store_release(&r->done, seq);
    return true;
}
RSHMEM_PROXY_COLD bool serve_amo(RshmemProxyChannel *ch) { return serve_amo_here(ch); }

/* A device thread's long wait (device/rshmem_p2p.cuh's watchdog), posted for the proxy thread to
 * log on the host at once (RshmemProxyStall): device printf reaches stdout only when the kernel
 * ends, which a hung one never does. One reporter at a time; one arriving meanwhile is dropped. */
RSHMEM_PROXY_FN void post_stall(RshmemProxyChannel *ch, uint32_t what, uint64_t word, uint32_t in_heap, uint64_t seen,
                                uint64_t want, int cmp_or_pe) {
    RshmemProxyStall *r = &ch->stall;
    if (port::exchange(&r->busy, 1u) != 0) return;
    port::store_relaxed(&r->what, what);
    port::store_relaxed(&r->word, word);
    port::store_relaxed(&r->in_heap, in_heap);
    port::store_relaxed(&r->seen, seen);
    port::store_relaxed(&r->want, want);
    port::store_relaxed(&r->cmp_or_pe, cmp_or_pe);
#if defined(__CUDACC__)
    port::store_relaxed(&r->block, (uint32_t)blockIdx.x);
    port::store_relaxed(&r->thread, (uint32_t)threadIdx.x);
#else
    port::store_relaxed(&r->block, port::cta_id());
    port::store_relaxed(&r->thread, 0u);
#endif
    port::store_release(&r->seq, port::load_relaxed(&r->seq) + 1);
    port::store_release(&r->busy, 0u);
}
/* Out of line for the wait loops of rshmem_p2p.cuh (their printf is a call anyway). */
RSHMEM_PROXY_COLD void note_stall(RshmemProxyChannel *ch, uint32_t what, uint64_t word, bool in_heap, uint64_t seen,
                                  uint64_t want, int cmp_or_pe) {
    post_stall(ch, what, word, in_heap ? 1u : 0u, seen, want, cmp_or_pe);
}

/* What an issuing thread is doing, for the reports. */
struct what {
    const char *routine;
    int pe;
    uint32_t lane;
    uint32_t op; /* the command's RSHMEM_PROXY_OP_* */
};

/* What a wait waits for (RSHMEM_PROXY_WAIT_*), in words. */
RSHMEM_PROXY_FN const char *waits_for(uint64_t kind) {
    return kind == RSHMEM_PROXY_WAIT_SLOT         ? "a free slot (the ring is full)"
           : kind == RSHMEM_PROXY_WAIT_COMPLETION ? "its completion"
           : kind == RSHMEM_PROXY_WAIT_RESULT     ? "its result"
                                                  : "the commands posted before it";
}

/* The dead-proxy report, out of line (a printf's arguments would hold registers in every wait). */
RSHMEM_PROXY_COLD void report_dead(const RshmemProxyChannel *ch, const what &w) {
    RSHMEM_PROXY_REPORT("rshmem: PE %d: %s to PE %d cannot complete: the proxy thread stopped at ring %u command %llu "
                        "(to PE %d); its message on the host says why\n",
                        ch->mype, w.routine, w.pe, ch->failed_lane, (unsigned long long)ch->failed_ticket, ch->failed_pe);
}
#if defined(__CUDACC__)
/* No return, so the call keeps none of the caller's registers (PTX .noreturn): a returning call
 * here would stack its frame on every live value of the kernel around it. */
[[noreturn]] RSHMEM_PROXY_COLD void stop_dead(const RshmemProxyChannel *ch, const what *w) {
    report_dead(ch, *w);
    __trap();
    __builtin_unreachable();
}
/* A slow wait, once: posted in the channel's stall record for the proxy thread to log on the
 * host (Channel::stall_report, RSHMEM_PROXY_STALL_CHANNEL). Stores only, inline: a printf is a
 * returning call (see stop_dead). */
RSHMEM_PROXY_FN void report_slow(RshmemProxyChannel *ch, const what &w, uint64_t kind, uint64_t waited_ns) {
    post_stall(ch, RSHMEM_PROXY_STALL_CHANNEL, w.lane, w.op, kind, waited_ns / 1000000u, w.pe);
}
#else
RSHMEM_PROXY_COLD void report_slow(RshmemProxyChannel *ch, const what &w, uint64_t kind, uint64_t waited_ns) {
    RSHMEM_PROXY_REPORT("rshmem: PE %d: %s to PE %d has waited %llu ms for %s in proxy ring %u; the proxy thread "
                        "is not keeping up (is it alive? is PE %d's host reachable?)\n",
                        ch->mype, w.routine, w.pe, (unsigned long long)(waited_ns / 1000000u), waits_for(kind), w.lane, w.pe);
}
#endif

/* Waits until *word >= want (kind: RSHMEM_PROXY_WAIT_*). Inline, with no returning call: a
 * 1024-thread kernel that may take this route keeps within 64 registers (ctest/budget). Every
 * 256 polls: the proxy's status (stopped: report and trap) and the remote atomic this GPU may
 * owe (the proxy this thread waits for may be waiting for it); every 64K polls the clock. */
RSHMEM_PROXY_FN int wait_for(RshmemProxyChannel *ch, uint64_t *word, uint64_t want, uint64_t kind, const what &w) {
    /* The clock in units of 2^20 ns (~1 ms), 32 bits: one register for the wait's start. */
    unsigned polls = 0, start = 0;
    while (port::load_acquire(word) < want) {
        port::backoff(polls); /* counts the polls too */
        if ((polls & 255) != 0) continue;
        if (port::load_acquire(&ch->status) == RSHMEM_PROXY_DEAD) {
#if defined(__CUDACC__)
            stop_dead(ch, &w);
#else
            report_dead(ch, w);
            return RSHMEM_PROXY_ERR_DEAD;
#endif
        }
        serve_amo_here(ch);
        if ((polls & 0xffff) != 0 || start == ~0u) continue;
        const unsigned t = (unsigned)(now_ns() >> 20) | 1u; /* never 0 */
        if (start == 0) start = t;
        else if ((uint64_t)(t - start) << 20 > port::load_relaxed(&ch->stall_ns)) {
            report_slow(ch, w, kind, (uint64_t)(t - start) << 20);
            start = ~0u;
        }
    }
    return 0;
}

/* One command's fields besides seq. */
struct command {
    uint32_t op;
    int pe;
    uint64_t remote, local, bytes, value, compare;
    uint32_t amo, amo_type;
};

/* Posts `c` to this thread's ring and, when it asks for it, waits for its completion or result.
 * Inline (session 19; an out-of-line call stacked its frame on the caller's live registers):
 * the channel's layout words are read with relaxed loads where they are used, so the compiler
 * does not hoist them out of a user's loop and keep them live across its P2P path. */
RSHMEM_PROXY_FN int issue(RshmemProxyChannel *ch, const command *c, const char *routine, uint64_t *result = nullptr) {
    const uint64_t slots = port::load_relaxed(&ch->slots);
    what w = {routine, c->pe, port::cta_id() % port::load_relaxed(&ch->lanes), c->op};
    RshmemProxyIssue *issue = (RshmemProxyIssue *)port::load_relaxed(&ch->issue) + w.lane;
    const uint64_t t = port::fetch_add_gpu(&issue->ticket, (uint64_t)1);
    if (t >= port::load_relaxed_gpu(&issue->consumed_seen) + slots) {
        RshmemProxyLane *lane = (RshmemProxyLane *)port::load_relaxed(&ch->lane_state) + w.lane;
        if (wait_for(ch, &lane->consumed, t - slots + 1, RSHMEM_PROXY_WAIT_SLOT, w)) return RSHMEM_PROXY_ERR_DEAD;
        port::fetch_max_gpu(&issue->consumed_seen, port::load_relaxed(&lane->consumed));
    }
    RshmemProxyCmd *slot = (RshmemProxyCmd *)port::load_relaxed(&ch->cmds) + w.lane * slots + (t & (slots - 1));
    port::store_relaxed(&slot->op, c->op);
    port::store_relaxed(&slot->pe, c->pe);
    port::store_relaxed(&slot->remote, c->remote);
    port::store_relaxed(&slot->local, c->local);
    port::store_relaxed(&slot->bytes, c->bytes);
    port::store_relaxed(&slot->value, c->value);
    port::store_relaxed(&slot->compare, c->compare);
    port::store_relaxed(&slot->amo, c->amo);
    port::store_relaxed(&slot->amo_type, c->amo_type);
    port::store_release(&slot->seq, t + 1);
    if (c->op & RSHMEM_PROXY_FLAG_WAIT) {
        RshmemProxyLane *lane = (RshmemProxyLane *)port::load_relaxed(&ch->lane_state) + w.lane;
        if (wait_for(ch, &lane->completed, t + 1, RSHMEM_PROXY_WAIT_COMPLETION, w)) return RSHMEM_PROXY_ERR_DEAD;
    }
    if (c->op & RSHMEM_PROXY_FLAG_RESULT) {
        RshmemProxyResult *r = (RshmemProxyResult *)port::load_relaxed(&ch->results) + w.lane * slots + (t & (slots - 1u));
        if (wait_for(ch, &r->ready, t + 1, RSHMEM_PROXY_WAIT_RESULT, w)) return RSHMEM_PROXY_ERR_DEAD;
        *result = port::load_relaxed(&r->value);
        port::store_release(&r->taken, t + 1);
    }
    return 0;
}

/* ---- the operations (remote: byte offset in the target PE's symmetric heap) ---- */

/* A source or destination the host cannot reach: 8 bytes a command, the data in the commands
 * (p: the source is free again once posted; g: each waits for its bytes). */
RSHMEM_PROXY_FN int put_inline(RshmemProxyChannel *ch, int pe, uint64_t remote, const void *src, uint64_t bytes,
                               const char *routine) {
    const unsigned char *s = (const unsigned char *)src;
    for (uint64_t at = 0; at < bytes; at += 8) {
        const uint32_t n = bytes - at < 8 ? (uint32_t)(bytes - at) : 8u;
        uint64_t v = 0;
        for (uint32_t i = 0; i < n; i++) v |= (uint64_t)s[at + i] << (8 * i);
        command c = {RSHMEM_PROXY_OP_P, pe, remote + at, 0, n, v, 0, 0, 0};
        if (issue(ch, &c, routine)) return RSHMEM_PROXY_ERR_DEAD;
    }
    return 0;
}
RSHMEM_PROXY_FN int get_inline(RshmemProxyChannel *ch, int pe, uint64_t remote, void *dst, uint64_t bytes, const char *routine) {
    unsigned char *d = (unsigned char *)dst;
    for (uint64_t at = 0; at < bytes; at += 8) {
        const uint32_t n = bytes - at < 8 ? (uint32_t)(bytes - at) : 8u;
        uint64_t v = 0;
        command c = {RSHMEM_PROXY_OP_G | RSHMEM_PROXY_FLAG_RESULT, pe, remote + at, 0, n, 0, 0, 0, 0};
        if (issue(ch, &c, routine, &v)) return RSHMEM_PROXY_ERR_DEAD;
        for (uint32_t i = 0; i < n; i++) d[at + i] = (unsigned char)(v >> (8 * i));
    }
    return 0;
}

RSHMEM_PROXY_FN int put(RshmemProxyChannel *ch, int pe, uint64_t remote, const void *src, uint64_t bytes, bool nbi,
                        const char *routine) {
    if (!host_reachable(src)) return put_inline(ch, pe, remote, src, bytes, routine);
    command c = {RSHMEM_PROXY_OP_PUT | (nbi ? 0u : RSHMEM_PROXY_FLAG_WAIT), pe, remote, (uint64_t)(uintptr_t)src, bytes, 0, 0, 0, 0};
    return issue(ch, &c, routine);
}
RSHMEM_PROXY_FN int get(RshmemProxyChannel *ch, int pe, uint64_t remote, void *dst, uint64_t bytes, bool nbi, const char *routine) {
    if (!host_reachable(dst)) return get_inline(ch, pe, remote, dst, bytes, routine);
    command c = {RSHMEM_PROXY_OP_GET | (nbi ? 0u : RSHMEM_PROXY_FLAG_WAIT), pe, remote, (uint64_t)(uintptr_t)dst, bytes, 0, 0, 0, 0};
    return issue(ch, &c, routine);
}
/* p: `bytes` (1..8) of `value`, little-endian; complete at quiet. */
RSHMEM_PROXY_FN int p(RshmemProxyChannel *ch, int pe, uint64_t remote, uint64_t value, uint32_t bytes, const char *routine) {
    command c = {RSHMEM_PROXY_OP_P, pe, remote, 0, bytes, value, 0, 0, 0};
    return issue(ch, &c, routine);
}
RSHMEM_PROXY_FN int g(RshmemProxyChannel *ch, int pe, uint64_t remote, uint32_t bytes, uint64_t *value, const char *routine) {
    command c = {RSHMEM_PROXY_OP_G | RSHMEM_PROXY_FLAG_RESULT, pe, remote, 0, bytes, 0, 0, 0, 0};
    return issue(ch, &c, routine, value);
}
/* amo: RSHMEM_PROXY_AMO_*, type: RSHMEM_PROXY_TYPE_*; values as bit patterns. */
RSHMEM_PROXY_FN int amo(RshmemProxyChannel *ch, int pe, uint64_t remote, uint32_t op, uint32_t type, uint64_t value,
                        const char *routine) {
    command c = {RSHMEM_PROXY_OP_AMO, pe, remote, 0, 0, value, 0, op, type};
    return issue(ch, &c, routine);
}
RSHMEM_PROXY_FN int fetch_amo(RshmemProxyChannel *ch, int pe, uint64_t remote, uint32_t op, uint32_t type, uint64_t value,
                              uint64_t compare, uint64_t *old, const char *routine) {
    command c = {RSHMEM_PROXY_OP_FETCH_AMO | RSHMEM_PROXY_FLAG_RESULT, pe, remote, 0, 0, value, compare, op, type};
    return issue(ch, &c, routine, old);
}
/* put, then the signal word at `sig_remote` updated (sig_op: RSHMEM_PROXY_AMO_SET or _ADD) after the data. */
RSHMEM_PROXY_FN int put_signal(RshmemProxyChannel *ch, int pe, uint64_t remote, const void *src, uint64_t bytes,
                               uint64_t sig_remote, uint64_t signal, uint32_t sig_op, bool nbi, const char *routine) {
    if (!host_reachable(src)) {
        /* The data inline, a fence, then the signal: in the ring's order, so after its data. */
        command f = {RSHMEM_PROXY_OP_FENCE, -1, 0, 0, 0, 0, 0, 0, 0};
        command a = {RSHMEM_PROXY_OP_AMO, pe, sig_remote, 0, 0, signal, 0, sig_op, RSHMEM_PROXY_TYPE_U64};
        if (put_inline(ch, pe, remote, src, bytes, routine) || issue(ch, &f, routine)) return RSHMEM_PROXY_ERR_DEAD;
        return issue(ch, &a, routine);
    }
    command c = {RSHMEM_PROXY_OP_PUT_SIGNAL | (nbi ? 0u : RSHMEM_PROXY_FLAG_WAIT), pe, remote, (uint64_t)(uintptr_t)src, bytes,
                 signal, sig_remote, sig_op, RSHMEM_PROXY_TYPE_U64};
    return issue(ch, &c, routine);
}
RSHMEM_PROXY_FN int fence(RshmemProxyChannel *ch, const char *routine) {
    command c = {RSHMEM_PROXY_OP_FENCE, -1, 0, 0, 0, 0, 0, 0, 0};
    return issue(ch, &c, routine);
}
/* Every ring's commands posted before this call have run (each ring's ticket read now, then its
 * `consumed` awaited), then a quiet command in this thread's ring completes them at the
 * transport. */
RSHMEM_PROXY_FN int quiet(RshmemProxyChannel *ch, const char *routine) {
    const uint32_t lanes = port::load_relaxed(&ch->lanes);
    for (uint32_t l = 0; l < lanes; l++) {
        RshmemProxyIssue *issue = (RshmemProxyIssue *)port::load_relaxed(&ch->issue) + l;
        const uint64_t posted = port::load_relaxed_gpu(&issue->ticket);
        if (posted <= port::load_relaxed_gpu(&issue->consumed_seen)) continue; /* no host read needed */
        const what w = {routine, -1, l, RSHMEM_PROXY_OP_QUIET};
        if (wait_for(ch, &((RshmemProxyLane *)port::load_relaxed(&ch->lane_state) + l)->consumed, posted, RSHMEM_PROXY_WAIT_EARLIER, w))
            return RSHMEM_PROXY_ERR_DEAD;
        port::fetch_max_gpu(&issue->consumed_seen, posted);
    }
    command c = {RSHMEM_PROXY_OP_QUIET | RSHMEM_PROXY_FLAG_WAIT, -1, 0, 0, 0, 0, 0, 0, 0};
    return issue(ch, &c, routine);
}

} /* namespace rshmem_proxy */

#endif /* RSHMEM_PROXY_CUH */
