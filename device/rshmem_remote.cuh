/* rshmem device library: the one way device routines reach a PE that loads and stores cannot
 * (see docs/ARCHITECTURE.md, "Proxy transport"). Each routine asks rshmemi_remote_peer(pe, who)
 * on its careful path (one constant-memory test when every PE is P2P) and then calls rshmemi_remote_*,
 * which dispatch on the PE's route byte (RshmemDeviceState::routes):
 *   RSHMEM_ROUTE_PROXY  another host: a command to this PE's host proxy (rshmem_proxy.cuh), which
 *                       runs it over the network; blocking forms wait for it, `_nbi` forms and
 *                       AMOs without a result complete at quiet. One thread's commands run in the
 *                       order it posted them, each complete in the target's GPU memory before the
 *                       next starts, so fence needs no command and a signal follows its data.
 *   RSHMEM_ROUTE_IBGDA  NVSHMEM_DISABLE_P2P on a NIC: ibgda/ibgda_device.cuh.
 * Compiled in only with -DRSHMEM_PROXY_ROUTE or -DRSHMEM_IBGDA_ROUTE (register budget:
 * ctest/budget and docs/ARCHITECTURE.md "Proxy transport"); without it a kernel that addresses
 * such a PE stops with a message naming the routine and the flag. A proxy that has stopped makes the waiting thread print why (rshmem_proxy.cuh) and trap. */
#ifndef RSHMEM_REMOTE_CUH
#define RSHMEM_REMOTE_CUH

#include "rshmem/device/rshmem_proxy.cuh"

/* The route to `pe` (RSHMEM_ROUTE_*); P2P for this PE, out-of-range PEs (the checks name
 * those) and whenever no PE is remote. */
RSHMEMI_DEV unsigned rshmemi_route(int pe) {
    const RshmemDeviceState &s = RSHMEMI_STATE;
    if (!(s.flags & (RSHMEM_DEVICE_FLAG_IBGDA | RSHMEM_DEVICE_FLAG_PROXY)) || pe == s.mype || pe < 0 || pe >= s.npes)
        return RSHMEM_ROUTE_P2P;
    return s.routes ? ((const uint8_t *)s.routes)[pe] : RSHMEM_ROUTE_IBGDA;
}

#if !defined(RSHMEM_IBGDA_ROUTE) && !defined(RSHMEM_PROXY_ROUTE)
[[noreturn]] static __device__ __noinline__ void rshmemi_remote_not_compiled(int pe, unsigned route, const char *who) {
    printf("rshmem: %s: PE %d reaches PE %d only through %s, but this kernel was compiled without that route: rebuild it "
           "with nvcc %s\n",
           who ? who : "a device routine", RSHMEMI_STATE.mype, pe,
           route == RSHMEM_ROUTE_PROXY ? "the host proxy (it is on another host)" : "IBGDA (NVSHMEM_DISABLE_P2P=1)",
           route == RSHMEM_ROUTE_PROXY ? "-DRSHMEM_PROXY_ROUTE" : "-DRSHMEM_IBGDA_ROUTE");
    __trap();
    __builtin_unreachable();
}
/* Without a route no operation takes one; one toward such a peer stops the kernel. */
/* Out of line, so that the inlined test in every P2P routine is one flag check (the register
 * budget of 1024-thread kernels: ctest/budget). */
static __device__ __noinline__ void rshmemi_remote_check(int pe, const char *who) {
    unsigned r = rshmemi_route(pe);
    if (r != RSHMEM_ROUTE_P2P) rshmemi_remote_not_compiled(pe, r, who);
}
/* `who` names the routine in that message. */
RSHMEMI_DEV bool rshmemi_remote_peer(int pe, const char *who) {
    if (RSHMEMI_STATE.flags & (RSHMEM_DEVICE_FLAG_IBGDA | RSHMEM_DEVICE_FLAG_PROXY)) rshmemi_remote_check(pe, who);
    return false;
}
/* The barriers' signals: the name inside the callee, since one more argument at their call sites
 * took reducescatter's kernels over budget (ctest/budget: rs_f32_t 80 -> 94). */
static __device__ __noinline__ void rshmemi_remote_check_sync(int pe) { rshmemi_remote_check(pe, "a device barrier or sync"); }
RSHMEMI_DEV bool rshmemi_remote_peer(int pe) {
    if (RSHMEMI_STATE.flags & (RSHMEM_DEVICE_FLAG_IBGDA | RSHMEM_DEVICE_FLAG_PROXY)) rshmemi_remote_check_sync(pe);
    return false;
}
RSHMEMI_DEV bool rshmemi_remote_on() { return false; }
#else
#if defined(RSHMEM_PROXY_ROUTE) && !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__)
/* Host pass only: this translation unit's kernels carry the proxy route; telling librshmem at
 * program load keeps nvshmem_init from warning that they might not (rshmem_proxy_route_compiled). */
extern "C" void rshmem_proxy_route_compiled(void);
static const int rshmemi_proxy_route_marker __attribute__((unused)) = (rshmem_proxy_route_compiled(), 0);
#endif
RSHMEMI_DEV bool rshmemi_remote_peer(int pe, const char *) { return rshmemi_route(pe) != RSHMEM_ROUTE_P2P; }
RSHMEMI_DEV bool rshmemi_remote_peer(int pe) { return rshmemi_route(pe) != RSHMEM_ROUTE_P2P; }
RSHMEMI_DEV bool rshmemi_remote_on() { return (RSHMEMI_STATE.flags & (RSHMEM_DEVICE_FLAG_IBGDA | RSHMEM_DEVICE_FLAG_PROXY)) != 0; }
#endif

#if defined(RSHMEM_IBGDA_ROUTE)
#define RSHMEMI_VIA_IBGDA(CALL) CALL
#else
#define RSHMEMI_VIA_IBGDA(CALL) (rshmemi_remote_not_ibgda(), 0)
[[noreturn]] static __device__ __noinline__ void rshmemi_remote_not_ibgda() {
    printf("rshmem: PE %d: a peer is reached through IBGDA, but this kernel was compiled without it: rebuild it with nvcc "
           "-DRSHMEM_IBGDA_ROUTE\n",
           RSHMEMI_STATE.mype);
    __trap();
    __builtin_unreachable();
}
#endif

RSHMEMI_DEV RshmemProxyChannel *rshmemi_proxy() { return (RshmemProxyChannel *)RSHMEMI_STATE.proxy; }
/* Heap offset of symmetric `p` (the proxy names remote memory by offset). */
RSHMEMI_DEV uint64_t rshmemi_heap_offset(const void *p) { return (uint64_t)(uintptr_t)p - RSHMEMI_STATE.heap_base; }
/* A proxy command that could not complete: the waiting side printed why; stop the kernel. */
RSHMEMI_DEV void rshmemi_proxy_ok(int rc) {
    if (rc != 0) __trap();
}

#define RSHMEMI_REMOTE_OOL RSHMEMI_DEV

/* ---- the leaves, typed by size only ---------------------------------------------------------- */
RSHMEMI_REMOTE_OOL void rshmemi_remote_put_bytes(void *dest, const void *src, size_t bytes, int pe, bool nbi, const char *who) {
    if (rshmemi_route(pe) == RSHMEM_ROUTE_PROXY)
        rshmemi_proxy_ok(rshmem_proxy::put(rshmemi_proxy(), pe, rshmemi_heap_offset(dest), src, bytes, nbi, who));
    else RSHMEMI_VIA_IBGDA(rshmemi_ibgda_put_bytes(dest, src, bytes, pe, who));
}
RSHMEMI_REMOTE_OOL void rshmemi_remote_get_bytes(void *dest, const void *src, size_t bytes, int pe, bool nbi, const char *who) {
    if (rshmemi_route(pe) == RSHMEM_ROUTE_PROXY)
        rshmemi_proxy_ok(rshmem_proxy::get(rshmemi_proxy(), pe, rshmemi_heap_offset(src), dest, bytes, nbi, who));
    else RSHMEMI_VIA_IBGDA(rshmemi_ibgda_get_bytes(dest, src, bytes, pe, who));
}
RSHMEMI_REMOTE_OOL void rshmemi_remote_put_signal_bytes(void *dest, const void *src, size_t bytes, uint64_t *sig, uint64_t signal,
                                                       int sig_op, int pe, bool nbi, const char *who) {
    if (rshmemi_route(pe) == RSHMEM_ROUTE_PROXY)
        rshmemi_proxy_ok(rshmem_proxy::put_signal(rshmemi_proxy(), pe, rshmemi_heap_offset(dest), src, bytes, rshmemi_heap_offset(sig),
                                                  signal, sig_op == NVSHMEM_SIGNAL_ADD ? RSHMEM_PROXY_AMO_ADD : RSHMEM_PROXY_AMO_SET,
                                                  nbi, who));
    else RSHMEMI_VIA_IBGDA(rshmemi_ibgda_put_signal_bytes(dest, src, bytes, sig, signal, sig_op, pe, who));
}
/* The same, out of line, for the warp and block forms (below): inlined there, the issue path's
 * channel arithmetic was hoisted out of a user's loop and held across it (ctest/budget/
 * registers.cu with -DRSHMEM_PROXY_ROUTE: loop_block 80 -> 56, loop_warp 72 -> 70). The thread
 * forms keep it inline: called out of line there, loop_thread took 79 instead of 72. */
static __device__ __noinline__ void rshmemi_remote_put_ool(void *dest, const void *src, size_t bytes, int pe, bool nbi, const char *who) {
    rshmemi_remote_put_bytes(dest, src, bytes, pe, nbi, who);
}
static __device__ __noinline__ void rshmemi_remote_get_ool(void *dest, const void *src, size_t bytes, int pe, const char *who) {
    rshmemi_remote_get_bytes(dest, src, bytes, pe, false, who);
}
static __device__ __noinline__ void rshmemi_remote_put_signal_ool(void *dest, const void *src, size_t bytes, uint64_t *sig,
                                                                 uint64_t signal, int sig_op, int pe, const char *who) {
    rshmemi_remote_put_signal_bytes(dest, src, bytes, sig, signal, sig_op, pe, false, who);
}
RSHMEMI_REMOTE_OOL void rshmemi_remote_p_bits(void *dest, uint64_t bits, uint32_t size, int pe, const char *who) {
    if (rshmemi_route(pe) == RSHMEM_ROUTE_PROXY)
        rshmemi_proxy_ok(rshmem_proxy::p(rshmemi_proxy(), pe, rshmemi_heap_offset(dest), bits, size, who));
    else RSHMEMI_VIA_IBGDA(rshmemi_ibgda_p_bits(dest, bits, size, pe, who));
}
RSHMEMI_REMOTE_OOL uint64_t rshmemi_remote_g_bits(const void *src, uint32_t size, int pe, const char *who) {
    uint64_t v = 0;
    if (rshmemi_route(pe) == RSHMEM_ROUTE_PROXY)
        rshmemi_proxy_ok(rshmem_proxy::g(rshmemi_proxy(), pe, rshmemi_heap_offset(src), size, &v, who));
    else v = RSHMEMI_VIA_IBGDA(rshmemi_ibgda_g_bits(src, size, pe, who));
    return v;
}
/* An AMO (rshmem_ibgda::amo_op) on a 4- or 8-byte word, operands and result by their bits. */
RSHMEMI_REMOTE_OOL uint64_t rshmemi_remote_amo_bits(int op, void *dest, uint64_t value, uint64_t cond, uint32_t size, int pe,
                                                    const char *who) {
    if (rshmemi_route(pe) != RSHMEM_ROUTE_PROXY) return RSHMEMI_VIA_IBGDA(rshmemi_ibgda_amo_bits(op, dest, value, cond, size, pe, who));
    using namespace rshmem_ibgda;
    uint32_t pop = RSHMEM_PROXY_AMO_ADD;
    bool fetch = true;
    switch (op) {
        case AMO_ADD: fetch = false; /* fallthrough */
        case AMO_FETCH_ADD: pop = RSHMEM_PROXY_AMO_ADD; break;
        case AMO_AND: fetch = false; /* fallthrough */
        case AMO_FETCH_AND: pop = RSHMEM_PROXY_AMO_AND; break;
        case AMO_OR: fetch = false; /* fallthrough */
        case AMO_FETCH_OR: pop = RSHMEM_PROXY_AMO_OR; break;
        case AMO_XOR: fetch = false; /* fallthrough */
        case AMO_FETCH_XOR: pop = RSHMEM_PROXY_AMO_XOR; break;
        case AMO_SET: fetch = false; /* fallthrough */
        case AMO_SWAP: pop = RSHMEM_PROXY_AMO_SET; break;
        case AMO_FETCH: pop = RSHMEM_PROXY_AMO_READ; break;
        case AMO_COMPARE_SWAP: pop = RSHMEM_PROXY_AMO_CSWAP; break;
    }
    const uint32_t type = size == 8 ? RSHMEM_PROXY_TYPE_U64 : RSHMEM_PROXY_TYPE_U32;
    const uint64_t off = rshmemi_heap_offset(dest);
    uint64_t old = 0;
    if (fetch) rshmemi_proxy_ok(rshmem_proxy::fetch_amo(rshmemi_proxy(), pe, off, pop, type, value, cond, &old, who));
    else rshmemi_proxy_ok(rshmem_proxy::amo(rshmemi_proxy(), pe, off, pop, type, value, who));
    return old;
}

/* ---- group forms: every thread of g calls; the first posts, all meet at sync ---------------- */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_remote_put(void *dest, const void *src, size_t bytes, int pe, rshmemi_group g, SYNC sync, const char *who,
                                    bool nbi = false) {
    sync(); /* the group's source is complete before the first thread posts it */
    if (g.tid == 0) rshmemi_remote_put_ool(dest, src, bytes, pe, nbi, who);
    sync();
}
template <typename SYNC>
RSHMEMI_DEV void rshmemi_remote_get(void *dest, const void *src, size_t bytes, int pe, rshmemi_group g, SYNC sync, const char *who) {
    if (g.tid == 0) rshmemi_remote_get_ool(dest, src, bytes, pe, who);
    sync();
}
template <typename SYNC>
RSHMEMI_DEV void rshmemi_remote_put_signal(void *dest, const void *src, size_t bytes, uint64_t *sig, uint64_t signal, int sig_op,
                                           int pe, rshmemi_group g, SYNC sync, const char *who) {
    sync();
    if (g.tid == 0) rshmemi_remote_put_signal_ool(dest, src, bytes, sig, signal, sig_op, pe, who);
    sync();
}
template <typename T>
RSHMEMI_DEV void rshmemi_remote_p(T *dest, T value, int pe, const char *who) {
    static_assert(sizeof(T) <= 8, "p moves at most 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &value, sizeof(T));
    rshmemi_remote_p_bits(dest, bits, (uint32_t)sizeof(T), pe, who);
}
template <typename T>
RSHMEMI_DEV T rshmemi_remote_g(const T *src, int pe, const char *who) {
    static_assert(sizeof(T) <= 8, "g moves at most 8 bytes");
    uint64_t bits = rshmemi_remote_g_bits(src, (uint32_t)sizeof(T), pe, who);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}
RSHMEMI_DEV void rshmemi_remote_signal_op(uint64_t *sig, uint64_t value, int op, int pe, const char *who) {
    rshmemi_remote_amo_bits(op == NVSHMEM_SIGNAL_ADD ? rshmem_ibgda::AMO_ADD : rshmem_ibgda::AMO_SET, sig, value, 0, 8, pe, who);
}
template <typename T>
RSHMEMI_DEV T rshmemi_remote_amo(rshmem_ibgda::amo_op op, const T *dest, T value, T cond, int pe, const char *who) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "AMOs work on 4- and 8-byte types");
    uint64_t v = 0, c = 0;
    memcpy(&v, &value, sizeof(T));
    memcpy(&c, &cond, sizeof(T));
    uint64_t o = rshmemi_remote_amo_bits(op, (void *)dest, v, c, (uint32_t)sizeof(T), pe, who);
    T old;
    memcpy(&old, &o, sizeof(T));
    return old;
}

/* ---- ordering and barriers ------------------------------------------------------------------- */
RSHMEMI_REMOTE_OOL void rshmemi_remote_quiet_all(const char *who) {
    if (RSHMEMI_STATE.flags & RSHMEM_DEVICE_FLAG_PROXY) rshmemi_proxy_ok(rshmem_proxy::quiet(rshmemi_proxy(), who));
    if (RSHMEMI_STATE.flags & RSHMEM_DEVICE_FLAG_IBGDA) RSHMEMI_VIA_IBGDA(rshmemi_ibgda_quiet_all(who));
}
RSHMEMI_DEV void rshmemi_remote_quiet(const char *who) {
    if (rshmemi_remote_on()) rshmemi_remote_quiet_all(who);
}
/* The proxy runs one thread's commands in order, each complete before the next: no command. */
RSHMEMI_DEV void rshmemi_remote_fence() {
    if (rshmemi_remote_on() && (RSHMEMI_STATE.flags & RSHMEM_DEVICE_FLAG_IBGDA)) RSHMEMI_VIA_IBGDA(rshmemi_ibgda_fence_thread());
}
/* The barrier's "I arrived" to PE `to`: everything this PE posted is complete first. */
RSHMEMI_DEV void rshmemi_remote_barrier_signal(unsigned long long *counter, int to) {
    rshmemi_remote_quiet_all("nvshmem_barrier");
    rshmemi_remote_amo_bits(rshmem_ibgda::AMO_ADD, counter, 1, 0, 8, to, "nvshmem_barrier");
}

#endif /* RSHMEM_REMOTE_CUH */
