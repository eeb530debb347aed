// Host build of the proxy channel's issuing side: device/rshmem_proxy.cuh, the very header GPU
// code posts with, compiled as plain C++17 into a shared object that tests/proxy_channel.rs
// loads with dlopen. Host threads play CTAs (h_set_cta picks the ring); the Rust proxy loop
// (src/proxy/) serves them through a recording fake transport.
#include <atomic>

#include "../../device/rshmem_proxy.cuh"

using namespace rshmem_proxy;

/* The range a test declares unreachable by the host (standing in for a kernel's shared memory). */
static std::atomic<uintptr_t> unreachable_lo{0}, unreachable_hi{0};
static bool in_unreachable(const void *p) {
    uintptr_t a = (uintptr_t)p;
    return a >= unreachable_lo.load() && a < unreachable_hi.load();
}

extern "C" {

void h_set_cta(uint32_t cta) { rshmem_ibgda::this_thread_ids().cta = cta; }
void h_set_report(void (*hook)(const char *)) { host_report_hook() = hook; }
void h_set_unreachable(const void *at, uint64_t len) {
    unreachable_lo = (uintptr_t)at;
    unreachable_hi = (uintptr_t)at + len;
    host_unreachable_hook() = in_unreachable;
}

int h_put(RshmemProxyChannel *ch, int pe, uint64_t remote, const void *src, uint64_t bytes, int nbi) {
    return put(ch, pe, remote, src, bytes, nbi != 0, "nvshmem_putmem");
}
int h_get(RshmemProxyChannel *ch, int pe, uint64_t remote, void *dst, uint64_t bytes, int nbi) {
    return get(ch, pe, remote, dst, bytes, nbi != 0, "nvshmem_getmem");
}
int h_p(RshmemProxyChannel *ch, int pe, uint64_t remote, uint64_t value, uint32_t bytes) {
    return p(ch, pe, remote, value, bytes, "nvshmem_p");
}
int h_g(RshmemProxyChannel *ch, int pe, uint64_t remote, uint32_t bytes, uint64_t *value) {
    return g(ch, pe, remote, bytes, value, "nvshmem_g");
}
int h_amo(RshmemProxyChannel *ch, int pe, uint64_t remote, uint32_t op, uint32_t type, uint64_t value) {
    return amo(ch, pe, remote, op, type, value, "nvshmem_atomic_add");
}
int h_fetch_amo(RshmemProxyChannel *ch, int pe, uint64_t remote, uint32_t op, uint32_t type, uint64_t value, uint64_t compare,
                uint64_t *old) {
    return fetch_amo(ch, pe, remote, op, type, value, compare, old, "nvshmem_atomic_fetch_add");
}
int h_put_signal(RshmemProxyChannel *ch, int pe, uint64_t remote, const void *src, uint64_t bytes, uint64_t sig_remote,
                 uint64_t signal, uint32_t sig_op, int nbi) {
    return put_signal(ch, pe, remote, src, bytes, sig_remote, signal, sig_op, nbi != 0, "nvshmem_putmem_signal");
}
int h_fence(RshmemProxyChannel *ch) { return fence(ch, "nvshmem_fence"); }
int h_quiet(RshmemProxyChannel *ch) { return quiet(ch, "nvshmem_quiet"); }
/* A device thread's look at the remote-AMO record: 1 when it took and ran the posted AMO. */
int h_serve_amo(RshmemProxyChannel *ch) { return serve_amo(ch) ? 1 : 0; }
/* A device thread's watchdog after a long wait (device/rshmem_p2p.cuh): the record for the host. */
void h_note_stall(RshmemProxyChannel *ch, uint32_t what, uint64_t word, int in_heap, uint64_t seen, uint64_t want, int cmp_or_pe) {
    note_stall(ch, what, word, in_heap != 0, seen, want, cmp_or_pe);
}

}
