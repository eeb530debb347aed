// Host build of the IBGDA device posting path: the very headers the GPU compiles
// (device/ibgda/ibgda_pe.h over ibgda_post.h), compiled as plain C++17 into a shared object that the Rust tests
// (tests/ibgda_model.rs) load with dlopen. The software HCA model (src/ibgda/model/) plays the
// NIC; this file only forwards to the posting code and plays CTAs/warps with std::threads.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "../../device/ibgda/ibgda_pe.h"

using namespace rshmem_ibgda;

static remote rmt(uint64_t raddr, uint32_t rkey) {
    remote r;
    r.raddr = raddr;
    r.rkey = rkey;
    r.av_size = 0;
    r.av = nullptr;
    r.dct = 0;
    return r;
}

extern "C" {

// ---- QP level ----
uint64_t h_write(rshmem_ibgda_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint64_t len,
                 int force_ce) {
    return post_write(qp, rmt(raddr, rkey), laddr, lkey, len, force_ce != 0);
}
uint64_t h_write_inline(rshmem_ibgda_qp *qp, uint64_t raddr, uint32_t rkey, const void *src, uint32_t len) {
    return post_write_inline(qp, rmt(raddr, rkey), src, len);
}
uint64_t h_read(rshmem_ibgda_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr, uint32_t lkey, uint64_t len) {
    return post_read(qp, rmt(raddr, rkey), laddr, lkey, len);
}
uint64_t h_amo(rshmem_ibgda_qp *qp, uint64_t raddr, uint32_t rkey, uint32_t op, uint32_t size, uint64_t value,
               uint64_t compare, uint64_t laddr, uint32_t lkey, int force_ce) {
    return post_amo(qp, rmt(raddr, rkey), (amo_op)op, size, value, compare, laddr, lkey, force_ce != 0);
}
// A DCI write: the address vector image is given by the caller.
uint64_t h_write_dc(rshmem_ibgda_qp *qp, const uint8_t *av, uint32_t av_size, uint64_t raddr, uint32_t rkey,
                    uint64_t laddr, uint32_t lkey, uint64_t len) {
    remote r = rmt(raddr, rkey);
    r.av = av;
    r.av_size = av_size;
    return post_write(qp, r, laddr, lkey, len, false);
}
int h_wait(rshmem_ibgda_qp *qp, uint64_t end) { return wait_for(qp, end); }
int h_quiet(rshmem_ibgda_qp *qp) { return quiet(qp); }
void h_fence(rshmem_ibgda_qp *qp) { fence(qp); }

// ---- PE level (symmetric addresses) ----
int h_putmem_nbi(rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe) {
    return putmem_nbi(st, dest, src, len, pe);
}
int h_putmem(rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe) {
    return putmem(st, dest, src, len, pe);
}
int h_getmem(rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe) {
    return getmem(st, dest, src, len, pe);
}
int h_p64(rshmem_ibgda_state *st, uint64_t *dest, uint64_t v, uint32_t pe) { return p(st, dest, v, pe); }
int h_p32(rshmem_ibgda_state *st, uint32_t *dest, uint32_t v, uint32_t pe) { return p(st, dest, v, pe); }
int h_p8(rshmem_ibgda_state *st, uint8_t *dest, uint8_t v, uint32_t pe) { return p(st, dest, v, pe); }
int h_g64(rshmem_ibgda_state *st, const uint64_t *src, uint32_t pe, uint64_t *out) { return g(st, src, pe, out); }
int h_g32(rshmem_ibgda_state *st, const uint32_t *src, uint32_t pe, uint32_t *out) { return g(st, src, pe, out); }
int h_amo64(rshmem_ibgda_state *st, uint32_t op, uint64_t *dest, uint64_t v, uint64_t c, uint32_t pe, uint64_t *old) {
    return amo(st, (amo_op)op, dest, v, c, pe, old);
}
int h_amo32(rshmem_ibgda_state *st, uint32_t op, uint32_t *dest, uint32_t v, uint32_t c, uint32_t pe, uint32_t *old) {
    return amo(st, (amo_op)op, dest, v, c, pe, old);
}
int h_quiet_all(rshmem_ibgda_state *st) { return quiet_all(st); }
int h_fence_pe(rshmem_ibgda_state *st, uint32_t pe) { return fence_pe(st, pe); }

// ---- many "warps" at once ----
// Thread t (playing CTA t, SM t, warp t) writes `ops` messages of `msg` bytes: message i of
// thread t goes from src + (t*ops+i)*msg to the same offset at dest on `pe`, through putmem_nbi
// (inline when msg <= inline_max). Every 16th message is followed by a fetch-add of 1 on
// counter[t] (8 bytes each). Then quiet. Returns the number of failed calls.
int h_stress(rshmem_ibgda_state *st, uint32_t pe, uint32_t threads, uint32_t ops, uint32_t msg, uint8_t *dest,
             const uint8_t *src, uint64_t *counter) {
    std::atomic<int> failures{0};
    std::vector<std::thread> ts;
    for (uint32_t t = 0; t < threads; t++) {
        ts.emplace_back([=, &failures] {
            this_thread_ids() = host_ids{t, t, t};
            for (uint32_t i = 0; i < ops; i++) {
                uint64_t off = ((uint64_t)t * ops + i) * msg;
                if (putmem_nbi(st, dest + off, src + off, msg, pe) != OK) failures++;
                if (counter && i % 16 == 15 && amo(st, AMO_ADD, &counter[t], (uint64_t)1, (uint64_t)0, pe, (uint64_t *)nullptr) != OK)
                    failures++;
            }
            if (quiet_all(st) != OK) failures++;
        });
    }
    for (auto &t : ts) t.join();
    return failures.load();
}

// Post rate: `threads` threads each post `ops` inline 8-byte writes on their QP (qps[t % nqps]),
// then quiet. Returns elapsed nanoseconds (the model runs in sink mode for this).
uint64_t h_post_rate(rshmem_ibgda_qp **qps, uint32_t nqps, uint32_t threads, uint32_t ops, uint64_t raddr,
                     uint32_t rkey) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (uint32_t t = 0; t < threads; t++) {
        ts.emplace_back([=] {
            rshmem_ibgda_qp *qp = qps[t % nqps];
            uint64_t v = t;
            for (uint32_t i = 0; i < ops; i++) post_write_inline(qp, rmt(raddr, rkey), &v, 8);
            quiet(qp);
        });
    }
    for (auto &t : ts) t.join();
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

void h_set_ids(uint32_t cta, uint32_t sm, uint32_t warp) { this_thread_ids() = host_ids{cta, sm, warp}; }

// ---- DC and coalescing ----
void h_fence_thread(rshmem_ibgda_state *st) { fence_thread(st); }
uint32_t h_qp_index(rshmem_ibgda_state *st, uint32_t pe) { return qp_index(st, pe); }
int h_put_signal(rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint64_t *sig, uint64_t signal, int add,
                 uint32_t pe, int blocking) {
    return put_signal(st, dest, src, len, sig, signal, add != 0, pe, blocking != 0);
}

// Plays the n lanes of one warp group whose p calls are coalesced (ibgda_coalesce.h): lane r
// writes values[r] (size bytes) to raddr + r*size. The lanes write their parts in reverse order
// (lanes run in any order), then the group publishes. Returns the end block, or 0 when the group
// would not fit the ring (the device then posts lane by lane).
uint64_t h_p_group(rshmem_ibgda_qp *qp, uint64_t raddr, uint32_t rkey, const uint8_t *av, uint32_t av_size, uint32_t dct,
                   const uint64_t *values, uint32_t n, uint32_t size) {
    remote r0 = rmt(raddr, rkey);
    r0.av = av;
    r0.av_size = av_size;
    r0.dct = dct;
    const uint32_t nbb = pg_blocks(r0, n, size);
    if (nbb > max_group_bb(qp)) return 0;
    const uint64_t gbase = reserve(qp, nbb);
    for (uint32_t rank = n; rank-- > 0;) pg_write_lane(qp, gbase, r0, n, rank, size, values[rank]);
    publish(qp, gbase, nbb);
    return gbase + nbb;
}

// Many "warps" toward several PEs (DC: initiators shared by the targets). Thread t's op i (k =
// t*ops+i) goes to targets[(t+i) % ntargets] and is
//   - a putmem_nbi of msg bytes src+k*msg -> dest+k*msg, or every 8th a put_signal of the same
//     bytes adding 1 to sig[t] (8 bytes) on the target;
//   - every 16th also a fetching atomic add of 1 to counter[t] on the target, whose old values
//     must count 0, 1, 2, ... per (thread, target): a thread's operations toward one PE keep
//     their order;
//   - every 32nd also a g of probe[0] on the target, which must read probe_value + target.
// Then quiet. Returns the number of failed calls or wrong values.
int h_stress_dc(rshmem_ibgda_state *st, const uint32_t *targets, uint32_t ntargets, uint32_t threads, uint32_t ops,
                uint32_t msg, uint8_t *dest, const uint8_t *src, uint64_t *counter, uint64_t *sig, uint64_t *probe,
                uint64_t probe_value) {
    std::atomic<int> failures{0};
    std::vector<std::thread> ts;
    for (uint32_t t = 0; t < threads; t++) {
        ts.emplace_back([=, &failures] {
            this_thread_ids() = host_ids{t, t / 2, t};
            std::vector<uint64_t> next(ntargets, 0);
            for (uint32_t i = 0; i < ops; i++) {
                const uint32_t ti = (t + i) % ntargets, pe = targets[ti];
                const uint64_t off = ((uint64_t)t * ops + i) * msg;
                int rc = i % 8 == 7 ? put_signal(st, dest + off, src + off, msg, &sig[t], 1, true, pe, false)
                                    : putmem_nbi(st, dest + off, src + off, msg, pe);
                if (rc != OK) failures++;
                if (i % 16 == 15) {
                    uint64_t old = ~0ull;
                    if (amo(st, AMO_FETCH_ADD, &counter[t], (uint64_t)1, (uint64_t)0, pe, &old) != OK || old != next[ti]) failures++;
                    next[ti]++;
                }
                if (i % 32 == 31) {
                    uint64_t v = 0;
                    if (g(st, probe, pe, &v) != OK || v != probe_value + pe) failures++;
                }
            }
            if (quiet_all(st) != OK) failures++;
        });
    }
    for (auto &t : ts) t.join();
    return failures.load();
}

} // extern "C"
