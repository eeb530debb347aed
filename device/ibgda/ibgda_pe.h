/* rshmem IBGDA, PE level: which QP carries an operation toward a PE (RC or DC), the remote
 * address and key of a symmetric address, and the NVSHMEM operations (put, p, get, g, AMOs,
 * put_signal, quiet, fence) over the QP level of ibgda_post.h. Header-only; compiles under nvcc
 * and as host C++17 (the build CI runs against the software HCA model).
 *
 * Transports (rshmem_ibgda_state):
 *   RC  num_rc_per_pe > 0: QP rc_qps[pe * num_rc_per_pe + i], i by NVSHMEM_IBGDA_RC_MAP_BY.
 *   DC  num_rc_per_pe == 0: a DC initiator (DCI) dci_qps[j] reaches any PE: every WQE carries the
 *       target's address vector (peers[pe].av) with one of the target's DCT numbers
 *       (dcts[pe * num_dct + d], d = warp % num_dct). j by NVSHMEM_IBGDA_DCI_MAP_BY: the thread's
 *       CTA, SM or warp, or the target DCT (pe * num_dct + d), modulo num_dci.
 * Every choice depends only on the calling thread (and the target), so one thread's operations
 * toward one PE always share a QP and its ordering.
 * Each QP used is marked once in the qp_used bitmap, and quiet visits only marked QPs: a PE with
 * 132 DCIs whose kernel used 8 of them polls 8.
 */
#ifndef RSHMEM_IBGDA_PE_H
#define RSHMEM_IBGDA_PE_H

#include "ibgda_coalesce.h"
#include "ibgda_post.h"

namespace rshmem_ibgda {

RSHMEM_IBGDA_FN uint32_t thread_key(uint32_t map_by) {
    switch (map_by) {
    case RSHMEM_IBGDA_MAP_BY_SM: return sm_id();
    case RSHMEM_IBGDA_MAP_BY_WARP: return warp_id();
    default: return cta_id();
    }
}

/* DC: which of pe's DCTs this thread addresses (by warp, so a CTA's warps spread over them). */
RSHMEM_IBGDA_FN uint32_t dct_slot(const rshmem_ibgda_state *st, uint32_t pe) {
    return pe * st->num_dct + (st->num_dct > 1 ? warp_id() % st->num_dct : 0u);
}

RSHMEM_IBGDA_FN bool is_dc(const rshmem_ibgda_state *st) { return st->num_rc_per_pe == 0; }
RSHMEM_IBGDA_FN rshmem_ibgda_qp *qp_array(const rshmem_ibgda_state *st) {
    return (rshmem_ibgda_qp *)(uintptr_t)(is_dc(st) ? st->dci_qps : st->rc_qps);
}
/* Entries of the QP array (num_qps, or what the counts give when it is not set). */
RSHMEM_IBGDA_FN uint32_t qp_count(const rshmem_ibgda_state *st) {
    if (st->num_qps) return st->num_qps;
    return is_dc(st) ? st->num_dci : st->npes * st->num_rc_per_pe;
}

/* Index (in qp_array) of the QP this thread uses to reach `pe`. */
RSHMEM_IBGDA_FN uint32_t qp_index(const rshmem_ibgda_state *st, uint32_t pe) {
    if (!is_dc(st)) return pe * st->num_rc_per_pe + thread_key(st->rc_map_by) % st->num_rc_per_pe;
    const uint32_t key = st->dci_map_by == RSHMEM_IBGDA_MAP_BY_DCT ? dct_slot(st, pe) : thread_key(st->dci_map_by);
    return st->num_dci ? key % st->num_dci : 0u;
}

/* Marks QP i as used (once: a load, and an atomic only the first time). */
RSHMEM_IBGDA_FN void mark_used(const rshmem_ibgda_state *st, uint32_t i) {
    if (!st->qp_used) return;
    uint64_t *w = (uint64_t *)(uintptr_t)st->qp_used + (i >> 6);
    const uint64_t bit = 1ull << (i & 63u);
    if (!(load_relaxed_gpu(w) & bit)) fetch_or_gpu(w, bit);
}

/* The QP this thread posts on toward `pe` (marked used). */
RSHMEM_IBGDA_FN rshmem_ibgda_qp *qp_for(const rshmem_ibgda_state *st, uint32_t pe) {
    const uint32_t i = qp_index(st, pe);
    mark_used(st, i);
    return &qp_array(st)[i];
}

/* Remote address of symmetric address `addr` (an address in my heap) on `pe`. */
RSHMEM_IBGDA_FN remote remote_of(const rshmem_ibgda_state *st, const rshmem_ibgda_qp *qp, uint32_t pe, uint64_t addr) {
    const rshmem_ibgda_peer *p = &((const rshmem_ibgda_peer *)(uintptr_t)st->peers)[pe];
    remote r;
    r.raddr = p->heap_base + (addr - st->heap_base);
    r.rkey = p->rkey;
    r.av_size = qp->kind == RSHMEM_IBGDA_QP_DCI ? p->av_size : 0u;
    r.av = p->av;
    r.dct = r.av_size && st->dcts ? ((const uint32_t *)(uintptr_t)st->dcts)[dct_slot(st, pe)] : 0u;
    return r;
}

RSHMEM_IBGDA_FN bool in_heap(const rshmem_ibgda_state *st, uint64_t addr, uint64_t len) {
    return addr >= st->heap_base && len <= st->heap_size && addr - st->heap_base <= st->heap_size - len;
}
RSHMEM_IBGDA_FN bool in_heap(const rshmem_ibgda_state *st, const void *p, uint64_t len) {
    return in_heap(st, (uint64_t)(uintptr_t)p, len);
}

/* The local key under which the NIC may read or write [addr, addr+len) here: the heap's, or a
 * buffer's registered by nvshmemx_buffer_register. False: neither (the caller copies the data
 * through the WQE or the landing slots instead). */
RSHMEM_IBGDA_FN bool local_key(const rshmem_ibgda_state *st, uint64_t addr, uint64_t len, uint32_t *lkey) {
    if (in_heap(st, addr, len)) {
        *lkey = st->heap_lkey;
        return true;
    }
    const rshmem_ibgda_regs *t = (const rshmem_ibgda_regs *)(uintptr_t)st->regs;
    if (!t) return false;
    const uint32_t n = t->count < RSHMEM_IBGDA_MAX_REGS ? t->count : RSHMEM_IBGDA_MAX_REGS;
    for (uint32_t i = 0; i < n; i++) {
        const rshmem_ibgda_reg &r = t->reg[i];
        if (addr >= r.base && len <= r.size && addr - r.base <= r.size - len) {
            *lkey = r.lkey;
            return true;
        }
    }
    return false;
}
RSHMEM_IBGDA_FN bool local_key(const rshmem_ibgda_state *st, const void *p, uint64_t len, uint32_t *lkey) {
    return local_key(st, (uint64_t)(uintptr_t)p, len, lkey);
}

/* A landing slot for one fetched value (8 bytes), private to the calling thread until its fetch
 * has been read (see fetch_slot_index). */
RSHMEM_IBGDA_FN uint64_t fetch_slot(const rshmem_ibgda_state *st) {
    uint64_t i = fetch_slot_index((uint64_t *)&st->fetch_next) & (uint64_t)(st->fetch_slots - 1u);
    return st->fetch_buf + i * 8u;
}
/* Where non-fetching atomics put the old value: one shared slot after the fetch slots, which
 * nobody reads (a late write there can never land in somebody's fetch). */
RSHMEM_IBGDA_FN uint64_t discard_slot(const rshmem_ibgda_state *st) { return st->fetch_buf + (uint64_t)st->fetch_slots * 8u; }

/* The first n (<= 8) bytes of the landing slot, into dst. */
RSHMEM_IBGDA_FN void read_slot(uint64_t slot, void *dst, uint32_t n) {
    uint64_t v = load_acquire((uint64_t *)(uintptr_t)slot);
    uint8_t *d = (uint8_t *)dst;
    for (uint32_t i = 0; i < n; i++) d[i] = (uint8_t)(v >> (8 * i));
}

/* A put of len bytes to symmetric dest on pe from src, which may be anywhere the calling thread
 * can read: inline when small, an RDMA WRITE when the NIC may read src (the heap, or a buffer
 * registered by nvshmemx_buffer_register), else inline chunks. `blocking`: return once src may
 * be reused (a WRITE waits for its completion; inline payloads are copied when posted). */
RSHMEM_IBGDA_FN int put(const rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe,
                        bool blocking) {
    rshmem_ibgda_qp *qp = qp_for(st, pe);
    if (!in_heap(st, dest, len)) return ERR_ARGUMENT;
    if (len == 0) return qp_status(qp);
    remote r = remote_of(st, qp, pe, (uint64_t)(uintptr_t)dest);
    uint32_t lkey = 0;
    if (len <= qp->inline_max) {
        post_write_inline(qp, r, src, (uint32_t)len);
    } else if (local_key(st, src, len, &lkey)) {
        uint64_t end = post_write(qp, r, (uint64_t)(uintptr_t)src, lkey, len, blocking);
        if (blocking) return wait_for(qp, end);
    } else {
        post_write_inline_chunks(qp, r, src, len);
    }
    return qp_status(qp);
}

/* nvshmem_putmem_nbi */
RSHMEM_IBGDA_FN int putmem_nbi(const rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe) {
    return put(st, dest, src, len, pe, false);
}

/* nvshmem_putmem: returns once the source may be reused. */
RSHMEM_IBGDA_FN int putmem(const rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe) {
    return put(st, dest, src, len, pe, true);
}

/* nvshmem_<T>_p of a 1, 2, 4 or 8-byte value given by its bits (little-endian): one inline WQE,
 * or a share of one when the warp's lanes write consecutive words (ibgda_coalesce.h). */
RSHMEM_IBGDA_FN int p_bits(const rshmem_ibgda_state *st, void *dest, uint64_t bits, uint32_t size, uint32_t pe) {
    rshmem_ibgda_qp *qp = qp_for(st, pe);
    if (!in_heap(st, dest, size)) return ERR_ARGUMENT;
    const remote r = remote_of(st, qp, pe, (uint64_t)(uintptr_t)dest);
    if (!post_p_coalesced(qp, r, pe, bits, size)) post_write_inline(qp, r, &bits, size);
    return qp_status(qp);
}

template <class T> RSHMEM_IBGDA_FN int p(const rshmem_ibgda_state *st, T *dest, T value, uint32_t pe) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "p moves 1, 2, 4 or 8 bytes");
    uint64_t bits = 0;
    for (unsigned i = 0; i < sizeof(T); i++) bits |= (uint64_t)((const uint8_t *)&value)[i] << (8 * i);
    return p_bits(st, dest, bits, (uint32_t)sizeof(T), pe);
}

/* nvshmem_getmem (blocking). Into the heap or a registered buffer: one RDMA READ. Elsewhere
 * (memory the NIC cannot write): 8 bytes at a time through this thread's landing slot. */
RSHMEM_IBGDA_FN int getmem(const rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint32_t pe) {
    rshmem_ibgda_qp *qp = qp_for(st, pe);
    if (!in_heap(st, src, len)) return ERR_ARGUMENT;
    if (len == 0) return qp_status(qp);
    remote r = remote_of(st, qp, pe, (uint64_t)(uintptr_t)src);
    uint32_t lkey = 0;
    if (local_key(st, dest, len, &lkey)) return wait_for(qp, post_read(qp, r, (uint64_t)(uintptr_t)dest, lkey, len));
    const uint64_t slot = fetch_slot(st);
    for (uint64_t off = 0; off < len; off += 8) {
        const uint32_t n = (uint32_t)(len - off < 8 ? len - off : 8);
        remote rc = r;
        rc.raddr = r.raddr + off;
        int rc2 = wait_for(qp, post_read(qp, rc, slot, st->fetch_lkey, n));
        if (rc2 != OK) return rc2;
        read_slot(slot, (uint8_t *)dest + off, n);
    }
    return OK;
}

/* nvshmem_<T>_g */
template <class T> RSHMEM_IBGDA_FN int g(const rshmem_ibgda_state *st, const T *src, uint32_t pe, T *out) {
    static_assert(sizeof(T) <= 8, "g moves at most 8 bytes");
    rshmem_ibgda_qp *qp = qp_for(st, pe);
    if (!in_heap(st, src, sizeof(T))) return ERR_ARGUMENT;
    uint64_t slot = fetch_slot(st);
    int rc = wait_for(qp, post_read(qp, remote_of(st, qp, pe, (uint64_t)(uintptr_t)src), slot, st->fetch_lkey, sizeof(T)));
    read_slot(slot, out, (uint32_t)sizeof(T));
    return rc;
}

/* The bit pattern of a 4- or 8-byte value, zero-extended. */
template <class T> RSHMEM_IBGDA_FN uint64_t bits_of(T x) {
    uint64_t r = 0;
    const uint8_t *b = (const uint8_t *)&x;
    for (unsigned i = 0; i < sizeof(T); i++) r |= (uint64_t)b[i] << (8 * i);
    return r;
}

RSHMEM_IBGDA_FN bool amo_fetches(amo_op op) {
    return op == AMO_FETCH_ADD || op == AMO_COMPARE_SWAP || op == AMO_SWAP || op == AMO_FETCH || op == AMO_FETCH_AND ||
           op == AMO_FETCH_OR || op == AMO_FETCH_XOR;
}

/* nvshmem_<T>_atomic_<op>: 4- and 8-byte types (floating types by their bits). Fetching ops wait
 * and store the old value in *old; non-fetching ones return after posting. */
template <class T>
RSHMEM_IBGDA_FN int amo(const rshmem_ibgda_state *st, amo_op op, T *dest, T value, T compare, uint32_t pe, T *old) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "IBGDA atomics are 4 or 8 bytes");
    rshmem_ibgda_qp *qp = qp_for(st, pe);
    uint64_t addr = (uint64_t)(uintptr_t)dest;
    if (!in_heap(st, addr, sizeof(T)) || (addr & (sizeof(T) - 1))) return ERR_ARGUMENT;
    const bool fetching = amo_fetches(op);
    const uint64_t slot = fetching ? fetch_slot(st) : discard_slot(st);
    uint64_t v = bits_of(value), c = bits_of(compare);
    uint64_t end = post_amo(qp, remote_of(st, qp, pe, addr), op, (uint32_t)sizeof(T), v, c, slot, st->fetch_lkey, fetching);
    if (!fetching) return qp_status(qp);
    int rc = wait_for(qp, end);
    if (old) read_slot(slot, old, (uint32_t)sizeof(T));
    return rc;
}

/* nvshmem_putmem_signal: the data, then the signal (add or set) on the same QP, which the NIC
 * executes after the data has been written. `blocking` as in put. */
RSHMEM_IBGDA_FN int put_signal(const rshmem_ibgda_state *st, void *dest, const void *src, uint64_t len, uint64_t *sig,
                               uint64_t signal, bool add, uint32_t pe, bool blocking) {
    rshmem_ibgda_qp *qp = qp_for(st, pe);
    const uint64_t sa = (uint64_t)(uintptr_t)sig;
    if (!in_heap(st, dest, len) || !in_heap(st, sa, 8) || (sa & 7u)) return ERR_ARGUMENT;
    int rc = put(st, dest, src, len, pe, false);
    if (rc != OK) return rc;
    uint32_t lkey = 0;
    const bool by_nic = len > qp->inline_max && local_key(st, src, len, &lkey); /* as put chose */
    uint64_t end = post_amo(qp, remote_of(st, qp, pe, sa), add ? AMO_ADD : AMO_SET, 8, signal, 0, discard_slot(st),
                            st->fetch_lkey, blocking && by_nic);
    if (blocking && by_nic) return wait_for(qp, end);
    return qp_status(qp);
}

/* nvshmem_quiet: everything this PE posted has completed (other threads' operations too, as
 * NVSHMEM promises), visiting only the QPs marked used. */
RSHMEM_IBGDA_FN int quiet_all(const rshmem_ibgda_state *st) {
    rshmem_ibgda_qp *qps = qp_array(st);
    const uint32_t n = qp_count(st);
    int rc = OK;
    if (!st->qp_used) {
        for (uint32_t i = 0; i < n; i++)
            if (qps[i].qpn && quiet(&qps[i]) != OK) rc = ERR_CQE;
        return rc;
    }
    const uint64_t *used = (const uint64_t *)(uintptr_t)st->qp_used;
    for (uint32_t w = 0; w < (n + 63u) / 64u; w++) {
        for (uint64_t bits = load_acquire_gpu((uint64_t *)&used[w]); bits; bits &= bits - 1u) {
            const uint32_t i = w * 64u + ctz64(bits);
            if (qps[i].qpn && quiet(&qps[i]) != OK) rc = ERR_CQE;
        }
    }
    return rc;
}

/* nvshmem_fence toward one PE: a fenced NOP on the QP this thread uses for it when that QP
 * carries all of the thread's traffic to pe (one RC per PE, or a DCI), else a quiet of the PE's
 * RC QPs. */
RSHMEM_IBGDA_FN int fence_pe(const rshmem_ibgda_state *st, uint32_t pe) {
    if (is_dc(st) || st->num_rc_per_pe == 1) {
        fence(qp_for(st, pe));
        return OK;
    }
    rshmem_ibgda_qp *qps = (rshmem_ibgda_qp *)(uintptr_t)st->rc_qps;
    int rc = OK;
    for (uint32_t i = 0; i < st->num_rc_per_pe; i++)
        if (quiet(&qps[pe * st->num_rc_per_pe + i]) != OK) rc = ERR_CQE;
    return rc;
}

/* nvshmem_fence for the calling thread: its operations toward each PE travel on one QP
 * (qp_index), so a fenced NOP on each of those QPs with work in flight orders them. With one
 * DCI for all targets (map by cta, sm or warp) that is a single QP. */
RSHMEM_IBGDA_FN void fence_thread(const rshmem_ibgda_state *st) {
    const bool per_pe = !is_dc(st) || st->dci_map_by == RSHMEM_IBGDA_MAP_BY_DCT;
    const uint32_t n = per_pe ? st->npes : 1u;
    rshmem_ibgda_qp *qps = qp_array(st);
    for (uint32_t pe = 0; pe < n; pe++) {
        rshmem_ibgda_qp *qp = &qps[qp_index(st, pe)];
        if (qp->qpn && load_acquire_gpu(&qp->ready_head) > load_acquire_gpu(&qp->completed_head)) fence(qp);
    }
}

/* The first QP of this PE that saw an error CQE, or null. */
RSHMEM_IBGDA_FN rshmem_ibgda_qp *failed_qp(const rshmem_ibgda_state *st) {
    rshmem_ibgda_qp *qps = qp_array(st);
    const uint32_t n = qp_count(st);
    for (uint32_t i = 0; i < n; i++)
        if (qps[i].qpn && load_acquire_gpu(&qps[i].err_count)) return &qps[i];
    return nullptr;
}

/* The PE owning DCT number `dct` at LID `rlid` (from a failed WQE's address vector), or -1. */
RSHMEM_IBGDA_FN int dct_owner(const rshmem_ibgda_state *st, uint16_t rlid, uint32_t dct) {
    if (!st->dcts) return -1;
    const rshmem_ibgda_peer *peers = (const rshmem_ibgda_peer *)(uintptr_t)st->peers;
    const uint32_t *dcts = (const uint32_t *)(uintptr_t)st->dcts;
    for (uint32_t pe = 0; pe < st->npes; pe++) {
        const rshmem_mlx5_av *av = (const rshmem_mlx5_av *)peers[pe].av;
        if (!peers[pe].av_size || rshmem_be16toh(av->rlid) != rlid) continue;
        for (uint32_t d = 0; d < st->num_dct; d++)
            if ((dcts[pe * st->num_dct + d] & 0xffffffu) == dct) return (int)pe;
    }
    return -1;
}

} // namespace rshmem_ibgda

#endif /* RSHMEM_IBGDA_PE_H */
