/* rshmem IBGDA device posting path: a GPU thread (or, in the host build, a CPU thread) builds
 * mlx5 WQEs in the send queue, publishes them in order, rings the doorbell, and polls the CQ.
 * Header-only; compiles under nvcc and as host C++17.
 *
 * Protocol (per QP, all counters in WQE basic blocks of 64 bytes, 64-bit and monotonic):
 *   reserve    base = fetch_add(resv_head, nbb)                      (one atomic per WQE)
 *   flow ctrl  wait until completed_head >= base + nbb - nwqes         (ring pending, poll CQ)
 *   build      ctrl [+ address vector] + raddr + data | inline | atomic [+ data] segments
 *   publish    CAS(ready_head, base, base + nbb) with release, spinning until earlier WQEs are
 *              published (the release orders the WQE's stores; no system fence per WQE)
 *   ring       when last reserver / crossing a batch boundary / big WQE: under post_lock,
 *              posted_head = ready_head; doorbell record[1] = BE32(ready & 0xffff); then one
 *              8-byte store-release (system scope) of a ctrl segment's first 8 bytes (idx << 8,
 *              qpn << 8) to bf_reg: the only system-scope ordering per doorbell
 * Scopes: the counters of a QP are touched only by threads of its GPU (device scope); the
 * doorbell word, the CQEs and the CQ doorbell record are shared with the NIC (system scope).
 *   complete   a WQE asks for a CQE (CQ_UPDATE) only when it covers a block with index
 *              N-1 mod N (N = signal_every), or when forced (fetches, quiet's NOP)
 *   poll CQ    CQE valid when its opcode is not INVALID and its owner bit equals
 *              (cq_cons >> log_ncqes) & 1; the 16-bit wqe_counter is widened against posted_head;
 *              completed_head = that WQE's start + its size (read back from its ctrl segment)
 *   quiet      target = ready_head; if no signaled WQE reaches it, post a signaled NOP; poll
 *   fence      a NOP with the FENCE flag: the NIC starts later WQEs of this QP only after all
 *              earlier ones (reads and atomics included) have completed
 * This file is the QP level; ibgda_pe.h addresses PEs (QP choice, RC or DC) on top of it.
 * See DESIGN.md §5. Byte layouts: mlx5_layout.h. Descriptors: ibgda_state.h.
 */
#ifndef RSHMEM_IBGDA_POST_H
#define RSHMEM_IBGDA_POST_H

#if !defined(__CUDACC_RTC__) /* NVRTC: rshmem_common.h has the types */
#include <stdint.h>
#endif

#include "ibgda_port.h"
#include "ibgda_state.h"
#include "mlx5_layout.h"

#if !defined(__CUDACC__)
#include <cstring>
#endif

namespace rshmem_ibgda {

enum status : int {
    OK = 0,
    ERR_CQE = 1,      /* the QP saw an error CQE: see qp->err_* */
    ERR_ARGUMENT = 2, /* an argument the NIC could not express (size, alignment) */
};

/* AMO operations (NVSHMEM names). */
enum amo_op : uint32_t {
    AMO_FETCH_ADD, AMO_ADD, AMO_COMPARE_SWAP, AMO_SWAP, AMO_FETCH, AMO_SET,
    AMO_FETCH_AND, AMO_AND, AMO_FETCH_OR, AMO_OR, AMO_FETCH_XOR, AMO_XOR,
};

/* The remote end of an operation: address and key, plus the address vector on a DCI. */
struct remote {
    uint64_t raddr;
    uint32_t rkey;
    uint32_t av_size;   /* 0 (RC), 16 or 48 bytes */
    const uint8_t *av;  /* wire-format address vector (rshmem_mlx5_av image) */
    uint32_t dct;       /* DCI: the target DCT number written into the vector; 0: the vector's own */
};

/* Largest byte count of one WQE; longer transfers are split. */
static constexpr uint32_t MAX_WQE_BYTES = 1u << 30;

RSHMEM_IBGDA_FN uint64_t nwqes(const rshmem_ibgda_qp *qp) { return 1ull << qp->log_nwqes; }

/* 16-byte octoword k of the WQE starting at block `base` (WQEs may wrap around the ring). */
RSHMEM_IBGDA_FN uint8_t *wqe_oct(const rshmem_ibgda_qp *qp, uint64_t base, uint32_t k) {
    uint64_t bb = (base + (k >> 2)) & (nwqes(qp) - 1);
    return (uint8_t *)(uintptr_t)qp->sq_buf + (bb << RSHMEM_MLX5_SEND_WQE_SHIFT) + ((k & 3u) << 4);
}

/* One 16-byte store (a vector store on the GPU). */
RSHMEM_IBGDA_FN void store16(uint8_t *dst, const void *src) {
#if defined(__CUDACC__)
    /* The segment structs are only 4-byte aligned: gather words, then one vector store. */
    const uint32_t *w = (const uint32_t *)src;
    *(uint4 *)dst = make_uint4(w[0], w[1], w[2], w[3]);
#else
    std::memcpy(dst, src, 16);
#endif
}

struct alignas(16) oct {
    uint8_t b[16];
};

/* ---- completions ----------------------------------------------------------------------------- */

/* The first error of a QP is kept in its descriptor. On a DCI the failed WQE (still intact: its
 * blocks are not reused before completed_head passes them) also says which DCT at which LID it
 * addressed, which names the target PE (see dct_owner in ibgda_pe.h). */
RSHMEM_IBGDA_FN void record_error(rshmem_ibgda_qp *qp, const uint8_t *cqe, uint32_t cqe_opcode, uint16_t w16, uint64_t w,
                                  uint32_t ds) {
    const rshmem_mlx5_err_cqe *e = (const rshmem_mlx5_err_cqe *)cqe;
    if (load_relaxed(&qp->err_count) == 0) {
        store_relaxed(&qp->err_syndrome, e->syndrome);
        store_relaxed(&qp->err_vendor, e->vendor_err_synd);
        store_relaxed(&qp->err_opcode, (uint8_t)(rshmem_be32toh(e->s_wqe_opcode_qpn) >> 24));
        store_relaxed(&qp->err_cqe_opcode, (uint8_t)cqe_opcode);
        store_relaxed(&qp->err_wqe_index, (uint32_t)w16);
        if (qp->kind == RSHMEM_IBGDA_QP_DCI && ds > 1) {
            const rshmem_mlx5_av *av = (const rshmem_mlx5_av *)wqe_oct(qp, w, 1);
            store_relaxed(&qp->err_dct, rshmem_be32toh(av->dqp_dct) & 0xffffffu);
            store_relaxed(&qp->err_rlid, rshmem_be16toh(av->rlid));
        }
    }
    store_release(&qp->err_count, load_relaxed(&qp->err_count) + 1u);
}

/* Consumes every valid CQE (one poller at a time; others return at once). */
RSHMEM_IBGDA_FN void poll_cq(rshmem_ibgda_qp *qp) {
    uint32_t unlocked = 0;
    if (!cas_gpu(&qp->cq_lock, unlocked, 1u)) return;
    const uint64_t cmask = (1ull << qp->log_ncqes) - 1;
    uint64_t ci = load_relaxed_gpu(&qp->cq_cons);
    uint64_t completed = load_relaxed_gpu(&qp->completed_head);
    const uint64_t start = ci;
    for (;;) {
        uint8_t *cqe = (uint8_t *)(uintptr_t)qp->cq_buf + ((ci & cmask) << 6);
        /* The last 4 bytes: wqe_counter (BE16), signature, op_own, read in one acquire load. */
        uint32_t tail = load_acquire((uint32_t *)(cqe + 60));
        uint32_t op_own = tail >> 24;
        uint32_t opcode = rshmem_mlx5_cqe_opcode((uint8_t)op_own);
        if (opcode == RSHMEM_MLX5_CQE_INVALID || (op_own & 1u) != ((ci >> qp->log_ncqes) & 1u)) break;
        uint16_t w16 = rshmem_be16toh((uint16_t)(tail & 0xffffu));
        /* Widen the 16-bit index: the WQE was rung, so it lies within nwqes below posted_head. */
        uint64_t posted = load_acquire_gpu(&qp->posted_head);
        uint64_t w = posted - (uint16_t)((uint16_t)posted - w16);
        /* Its blocks are not reused before completed_head passes them, so its ctrl is intact. */
        const rshmem_mlx5_ctrl_seg *ctrl = (const rshmem_mlx5_ctrl_seg *)wqe_oct(qp, w, 0);
        uint32_t ds = rshmem_be32toh(load_relaxed((uint32_t *)&ctrl->qpn_ds)) & 0xffu;
        if (opcode == RSHMEM_MLX5_CQE_REQ_ERR || opcode == RSHMEM_MLX5_CQE_RESP_ERR) record_error(qp, cqe, opcode, w16, w, ds);
        uint64_t end = w + (ds + 3u) / 4u;
        if (end > completed) completed = end;
        ci++;
    }
    if (ci != start) {
        store_release_gpu(&qp->cq_cons, ci);
        store_release((uint32_t *)(uintptr_t)qp->cq_dbrec, rshmem_htobe32((uint32_t)(ci & 0xffffffu)));
        store_release_gpu(&qp->completed_head, completed);
    }
    store_release_gpu(&qp->cq_lock, 0u);
}

/* ---- doorbell ---------------------------------------------------------------------------------- */

/* Rings for everything published so far. Never loses a doorbell: the value is read under the lock. */
RSHMEM_IBGDA_FN void ring(rshmem_ibgda_qp *qp) {
    unsigned spins = 0;
    for (;;) {
        uint32_t unlocked = 0;
        if (cas_gpu(&qp->post_lock, unlocked, 1u)) break;
        backoff(spins);
    }
    uint64_t ready = load_acquire_gpu(&qp->ready_head);
    if (ready > load_relaxed_gpu(&qp->posted_head)) {
        if (qp->flags & RSHMEM_IBGDA_QP_CPU_DOORBELL) {
            /* The CPU thread that rings reads posted_head (system scope). */
            store_release(&qp->posted_head, ready);
        } else {
            store_release_gpu(&qp->posted_head, ready);
            uint32_t *dbr = (uint32_t *)(uintptr_t)qp->sq_dbrec;
            store_release_gpu(&dbr[RSHMEM_MLX5_SND_DBR], rshmem_htobe32((uint32_t)(ready & 0xffffu)));
            /* The doorbell's system-scope release makes the WQEs and the record visible to the
             * NIC before the doorbell. First 8 bytes of a ctrl segment: BE32(idx << 8) then BE32(qpn << 8). */
            uint64_t db = (uint64_t)rshmem_mlx5_opmod_idx_opcode(0, (uint32_t)ready, 0) |
                          ((uint64_t)rshmem_mlx5_qpn_ds(qp->qpn, 0) << 32);
            doorbell_store((uint64_t *)(uintptr_t)qp->bf_reg, db);
        }
    }
    store_release_gpu(&qp->post_lock, 0u);
}

RSHMEM_IBGDA_FN void ring_pending(rshmem_ibgda_qp *qp) {
    if (load_acquire_gpu(&qp->ready_head) > load_acquire_gpu(&qp->posted_head)) ring(qp);
}

/* ---- reserve / publish ------------------------------------------------------------------------ */

RSHMEM_IBGDA_FN uint64_t reserve(rshmem_ibgda_qp *qp, uint32_t nbb) {
    uint64_t base = fetch_add_gpu(&qp->resv_head, (uint64_t)nbb);
    unsigned spins = 0;
    while (base + nbb > load_acquire_gpu(&qp->completed_head) + nwqes(qp)) {
        ring_pending(qp);
        poll_cq(qp);
        backoff(spins);
    }
    return base;
}

/* Whether [base, base + nbb) crosses a multiple of n, a power of two. No 64-bit division: on
 * the GPU that is a subroutine call, and it cost a put 12 registers (83 -> 71). */
RSHMEM_IBGDA_FN bool crosses(uint64_t base, uint32_t nbb, uint32_t n) { return (base ^ (base + nbb)) >= n; }

/* fm_ce_se for a WQE of nbb blocks at base. */
RSHMEM_IBGDA_FN uint8_t ce_flags(rshmem_ibgda_qp *qp, uint64_t base, uint32_t nbb, bool force_ce) {
    if (force_ce || crosses(base, nbb, qp->signal_every)) {
        fetch_max_gpu(&qp->signaled_head, base + nbb);
        return RSHMEM_MLX5_CTRL_CQ_UPDATE;
    }
    return 0;
}

RSHMEM_IBGDA_FN void write_ctrl(rshmem_ibgda_qp *qp, uint64_t base, uint32_t opcode, uint32_t opmod, uint32_t ds,
                                uint8_t fm_ce_se) {
    rshmem_mlx5_ctrl_seg c;
    c.opmod_idx_opcode = rshmem_mlx5_opmod_idx_opcode(opmod, (uint32_t)base, opcode);
    c.qpn_ds = rshmem_mlx5_qpn_ds(qp->qpn, ds);
    c.signature = 0;
    c.dci_stream_channel_id[0] = 0;
    c.dci_stream_channel_id[1] = 0;
    c.fm_ce_se = fm_ce_se;
    c.imm = 0;
    store16(wqe_oct(qp, base, 0), &c);
}

/* Writes the datagram segment (DCI only): the peer's address vector, with the chosen target DCT
 * number in dqp_dct (its EXTENDED_UD_AV bit kept); returns the octowords used. */
RSHMEM_IBGDA_FN uint32_t write_av(rshmem_ibgda_qp *qp, uint64_t base, uint32_t k, const remote &r) {
    uint32_t n = r.av_size / 16u;
    for (uint32_t i = 0; i < n; i++) {
        oct o;
        for (int j = 0; j < 16; j++) o.b[j] = r.av[i * 16 + j];
        if (i == 0 && r.dct) {
            uint32_t dqp;
            for (int j = 0; j < 4; j++) ((uint8_t *)&dqp)[j] = o.b[8 + j];
            dqp = rshmem_htobe32((rshmem_be32toh(dqp) & RSHMEM_MLX5_EXTENDED_UD_AV) | (r.dct & 0xffffffu));
            for (int j = 0; j < 4; j++) o.b[8 + j] = ((const uint8_t *)&dqp)[j];
        }
        store16(wqe_oct(qp, base, k + i), &o);
    }
    return n;
}

RSHMEM_IBGDA_FN void write_raddr(rshmem_ibgda_qp *qp, uint64_t base, uint32_t k, const remote &r) {
    rshmem_mlx5_raddr_seg s;
    s.raddr = rshmem_htobe64(r.raddr);
    s.rkey = rshmem_htobe32(r.rkey);
    s.reserved = 0;
    store16(wqe_oct(qp, base, k), &s);
}

RSHMEM_IBGDA_FN void write_data(rshmem_ibgda_qp *qp, uint64_t base, uint32_t k, uint64_t laddr, uint32_t lkey,
                                uint32_t len) {
    rshmem_mlx5_data_seg s;
    s.byte_count = rshmem_htobe32(len);
    s.lkey = rshmem_htobe32(lkey);
    s.addr = rshmem_htobe64(laddr);
    store16(wqe_oct(qp, base, k), &s);
}

/* Makes the WQE visible and advances ready_head in order (the CAS's release orders the WQE's
 * stores before it); then rings if this poster should. */
RSHMEM_IBGDA_FN void publish(rshmem_ibgda_qp *qp, uint64_t base, uint32_t nbb) {
    unsigned spins = 0;
    for (;;) {
        uint64_t expected = base;
        if (cas_gpu(&qp->ready_head, expected, base + nbb)) break;
        backoff(spins);
    }
    const uint32_t b = qp->batch; /* a power of two */
    bool last = load_relaxed_gpu(&qp->resv_head) == base + nbb;
    if (last || nbb >= b || crosses(base, nbb, b)) ring(qp);
}

RSHMEM_IBGDA_FN uint32_t bb_of(uint32_t ds) { return (ds + 3u) / 4u; }

/* ---- one WQE per lane, posted by warp groups ----------------------------------------------------
 * The lanes of a warp that post on the same QP at the same moment reserve their blocks with one
 * atomic (the first lane's), write their WQEs side by side, and publish them with one CAS and at
 * most one doorbell: a warp of nvshmem_p costs about what one WQE costs. On the host every
 * thread is a group of one. */
struct slot {
    uint64_t base;   /* this lane's first block */
    uint64_t gbase;  /* the group's first block */
    uint32_t gnbb;   /* the group's blocks */
    uint32_t mask;   /* the group's lanes */
    uint32_t leader; /* the lane that reserves and publishes */
};

/* Largest group reservation: a quarter of the ring, so that a group's flow-control wait is
 * always met by completions of earlier WQEs (signaled at least every signal_every blocks). */
RSHMEM_IBGDA_FN uint32_t max_group_bb(const rshmem_ibgda_qp *qp) { return (uint32_t)(nwqes(qp) / 4u); }

RSHMEM_IBGDA_FN slot reserve_grouped(rshmem_ibgda_qp *qp, uint32_t nbb) {
    slot s;
    const uint32_t lane = lane_id();
    s.mask = group_of((uint64_t)(uintptr_t)qp);
    s.leader = first_lane(s.mask);
    uint32_t off = 0, total = 0;
    if (group_uniform(s.mask, nbb)) {
        off = popc(s.mask & ((1u << lane) - 1u)) * nbb;
        total = popc(s.mask) * nbb;
    } else {
        for (uint32_t l = 0; l < 32u; l++) {
            if (!((s.mask >> l) & 1u)) continue;
            uint32_t v = group_bcast32(s.mask, nbb, l);
            if (l < lane) off += v;
            total += v;
        }
    }
    if (total > max_group_bb(qp) && s.mask != (1u << lane)) {
        /* Too many blocks at once for this ring: every lane reserves alone. */
        s.mask = 1u << lane;
        s.leader = lane;
        off = 0;
        total = nbb;
    }
    uint64_t gbase = 0;
    if (lane == s.leader) gbase = reserve(qp, total);
    s.gbase = group_bcast(s.mask, gbase, s.leader);
    s.gnbb = total;
    s.base = s.gbase + off;
    return s;
}

/* Every lane's WQE is written: the leader publishes (and maybe rings) for the group. The warp
 * barrier orders the lanes' WQE stores before the leader's system fence in publish. */
RSHMEM_IBGDA_FN void publish_grouped(rshmem_ibgda_qp *qp, const slot &s) {
    group_sync(s.mask);
    if (lane_id() == s.leader) publish(qp, s.gbase, s.gnbb);
}

/* Reserves nbb blocks, lets `build(base)` write the WQE there, publishes; returns its end. */
template <class Build>
RSHMEM_IBGDA_FN uint64_t post_one(rshmem_ibgda_qp *qp, uint32_t nbb, Build build) {
    slot s = reserve_grouped(qp, nbb);
    build(s.base);
    publish_grouped(qp, s);
    return s.base + nbb;
}

/* ---- operations -------------------------------------------------------------------------------- */
/* Each returns the block index just past its (last) WQE: the operation has completed once
 * completed_head reaches it (wait_for). */

/* Largest inline payload of one WQE when the source is not registered memory (4 blocks on RC). */
static constexpr uint32_t INLINE_CHUNK = 192;

/* RDMA WRITE or READ of len bytes between registered local memory and the remote; transfers
 * over MAX_WQE_BYTES are split. `ce` asks for a completion on the last WQE. */
RSHMEM_IBGDA_FN uint64_t post_rw(rshmem_ibgda_qp *qp, uint32_t opcode, const remote &r, uint64_t laddr, uint32_t lkey,
                                 uint64_t len, bool ce) {
    uint64_t end = 0, off = 0;
    const uint32_t ds = 3u + r.av_size / 16u, nbb = bb_of(ds);
    do {
        const uint32_t chunk = (uint32_t)((len - off) > MAX_WQE_BYTES ? MAX_WQE_BYTES : (len - off));
        const bool last = off + chunk >= len;
        end = post_one(qp, nbb, [&](uint64_t base) {
            remote rc = r;
            rc.raddr = r.raddr + off;
            uint32_t k = 1;
            k += write_av(qp, base, k, rc);
            write_raddr(qp, base, k++, rc);
            write_data(qp, base, k++, laddr + off, lkey, chunk);
            write_ctrl(qp, base, opcode, 0, ds, ce_flags(qp, base, nbb, ce && last));
        });
        off += chunk;
    } while (off < len);
    return end;
}

/* RDMA WRITE of len bytes from registered local memory. */
RSHMEM_IBGDA_FN uint64_t post_write(rshmem_ibgda_qp *qp, const remote &r, uint64_t laddr, uint32_t lkey, uint64_t len,
                                    bool force_ce = false) {
    return post_rw(qp, RSHMEM_MLX5_OPCODE_RDMA_WRITE, r, laddr, lkey, len, force_ce);
}

/* RDMA WRITE with the payload inside the WQE (no read of local memory by the NIC). */
RSHMEM_IBGDA_FN uint64_t post_write_inline(rshmem_ibgda_qp *qp, const remote &r, const void *src, uint32_t len,
                                           bool force_ce = false) {
    const uint32_t hdr = 1u + r.av_size / 16u + 1u; /* ctrl, av, raddr */
    const uint32_t ds = hdr + (4u + len + 15u) / 16u, nbb = bb_of(ds);
    return post_one(qp, nbb, [&](uint64_t base) {
        uint32_t k = 1;
        k += write_av(qp, base, k, r);
        write_raddr(qp, base, k++, r);
        /* inline header + bytes, 16 at a time */
        const uint8_t *s = (const uint8_t *)src;
        const uint32_t total = 4u + len;
        for (uint32_t o = 0; o < total; o += 16u, k++) {
            oct w;
            for (uint32_t j = 0; j < 16u; j++) {
                uint32_t at = o + j;
                w.b[j] = at < 4u ? 0 : (at < total ? s[at - 4u] : 0);
            }
            if (o == 0) {
                uint32_t bc = rshmem_htobe32(len | RSHMEM_MLX5_INLINE_SEG);
                for (int j = 0; j < 4; j++) w.b[j] = ((const uint8_t *)&bc)[j];
            }
            store16(wqe_oct(qp, base, k), &w);
        }
        write_ctrl(qp, base, RSHMEM_MLX5_OPCODE_RDMA_WRITE, 0, ds, ce_flags(qp, base, nbb, force_ce));
    });
}

/* A payload from memory the NIC cannot read (not registered: shared memory, a local array, a
 * cudaMalloc buffer) travels inline, INLINE_CHUNK bytes per WQE. */
RSHMEM_IBGDA_FN uint64_t post_write_inline_chunks(rshmem_ibgda_qp *qp, const remote &r, const void *src, uint64_t len,
                                                  bool force_ce = false) {
    uint64_t end = 0;
    for (uint64_t off = 0; off < len; off += INLINE_CHUNK) {
        const uint32_t n = (uint32_t)(len - off < INLINE_CHUNK ? len - off : INLINE_CHUNK);
        remote rc = r;
        rc.raddr = r.raddr + off;
        end = post_write_inline(qp, rc, (const uint8_t *)src + off, n, force_ce && off + n >= len);
    }
    return end;
}

/* RDMA READ of len bytes into registered local memory. Completion is always requested on the
 * last WQE (the caller needs to know when the data has landed). */
RSHMEM_IBGDA_FN uint64_t post_read(rshmem_ibgda_qp *qp, const remote &r, uint64_t laddr, uint32_t lkey, uint64_t len) {
    return post_rw(qp, RSHMEM_MLX5_OPCODE_RDMA_READ, r, laddr, lkey, len, true);
}

/* An atomic on a 4- or 8-byte remote word. The old value lands at (lkey, laddr) in host byte
 * order (the QP is set up for host-endian atomics); for non-fetching ops point it at scratch.
 * Operands are given in host order and converted to the big-endian wire format here. */
RSHMEM_IBGDA_FN uint64_t post_amo(rshmem_ibgda_qp *qp, const remote &r, amo_op op, uint32_t size, uint64_t value,
                                  uint64_t compare, uint64_t laddr, uint32_t lkey, bool force_ce = false) {
    const uint64_t ones = size == 8 ? ~0ull : 0xffffffffull;
    value &= ones;
    compare &= ones;
    uint32_t opcode = 0, opmod = 0, seg_octs = 1;
    /* masked CS: swap, compare, swap_mask, compare_mask; masked FA: add, field boundary */
    uint64_t a = 0, b = 0, c = 0, d = 0;
    bool masked_cs = false;
    switch (op) {
    case AMO_FETCH_ADD:
    case AMO_ADD:
    case AMO_FETCH:
        if (op == AMO_FETCH) value = 0;
        if (size == 8) { opcode = RSHMEM_MLX5_OPCODE_ATOMIC_FA; a = value; }
        else { opcode = RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA; a = value; b = 0; }
        break;
    case AMO_COMPARE_SWAP:
        if (size == 8) { opcode = RSHMEM_MLX5_OPCODE_ATOMIC_CS; a = value; b = compare; }
        else { masked_cs = true; a = value; b = compare; c = ones; d = ones; }
        break;
    case AMO_SWAP:
    case AMO_SET: masked_cs = true; a = value; b = 0; c = ones; d = 0; break;
    case AMO_FETCH_AND:
    case AMO_AND: masked_cs = true; a = 0; b = 0; c = ~value & ones; d = 0; break;
    case AMO_FETCH_OR:
    case AMO_OR: masked_cs = true; a = value; b = 0; c = value; d = 0; break;
    case AMO_FETCH_XOR:
    case AMO_XOR: opcode = RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA; a = value; b = ones; break;
    default: return 0;
    }
    if (masked_cs) opcode = RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS;
    const bool masked = opcode == RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS || opcode == RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA;
    if (masked) opmod = size == 8 ? RSHMEM_MLX5_OPMOD_EXT_AMO_8B : RSHMEM_MLX5_OPMOD_EXT_AMO_4B;
    if (masked_cs && size == 8) seg_octs = 2;
    const uint32_t ds = 1u + r.av_size / 16u + 1u + seg_octs + 1u, nbb = bb_of(ds);
    return post_one(qp, nbb, [&](uint64_t base) {
        uint32_t k = 1;
        k += write_av(qp, base, k, r);
        write_raddr(qp, base, k++, r);
        if (size == 8 && !masked) {
            rshmem_mlx5_atomic_seg s;
            s.swap_add = rshmem_htobe64(a);
            s.compare = rshmem_htobe64(b);
            store16(wqe_oct(qp, base, k++), &s);
        } else if (size == 8 && masked_cs) {
            rshmem_mlx5_masked_cs64_seg s;
            s.swap = rshmem_htobe64(a);
            s.compare = rshmem_htobe64(b);
            s.swap_mask = rshmem_htobe64(c);
            s.compare_mask = rshmem_htobe64(d);
            store16(wqe_oct(qp, base, k++), &s);
            store16(wqe_oct(qp, base, k++), (const uint8_t *)&s + 16);
        } else if (size == 8) {
            rshmem_mlx5_masked_fa64_seg s;
            s.add = rshmem_htobe64(a);
            s.field_boundary = rshmem_htobe64(b);
            store16(wqe_oct(qp, base, k++), &s);
        } else if (masked_cs) {
            rshmem_mlx5_masked_cs32_seg s;
            s.swap = rshmem_htobe32((uint32_t)a);
            s.compare = rshmem_htobe32((uint32_t)b);
            s.swap_mask = rshmem_htobe32((uint32_t)c);
            s.compare_mask = rshmem_htobe32((uint32_t)d);
            store16(wqe_oct(qp, base, k++), &s);
        } else {
            rshmem_mlx5_masked_fa32_seg s;
            s.add = rshmem_htobe32((uint32_t)a);
            s.field_boundary = rshmem_htobe32((uint32_t)b);
            s.reserved = 0;
            store16(wqe_oct(qp, base, k++), &s);
        }
        write_data(qp, base, k++, laddr, lkey, size);
        write_ctrl(qp, base, opcode, opmod, ds, ce_flags(qp, base, nbb, force_ce));
    });
}

/* A NOP WQE (ctrl only): signaled for quiet, fenced for fence. */
RSHMEM_IBGDA_FN uint64_t post_nop(rshmem_ibgda_qp *qp, bool signaled, bool fenced) {
    return post_one(qp, 1, [&](uint64_t base) {
        uint8_t f = ce_flags(qp, base, 1, signaled);
        if (fenced) f |= RSHMEM_MLX5_CTRL_FENCE;
        write_ctrl(qp, base, RSHMEM_MLX5_OPCODE_NOP, 0, 1, f);
    });
}

/* ---- waiting ----------------------------------------------------------------------------------- */

RSHMEM_IBGDA_FN int qp_status(rshmem_ibgda_qp *qp) { return load_acquire_gpu(&qp->err_count) ? ERR_CQE : OK; }

/* Waits until every block below `end` has completed (end came from a signaled WQE). */
RSHMEM_IBGDA_FN int wait_for(rshmem_ibgda_qp *qp, uint64_t end) {
    unsigned spins = 0;
    while (load_acquire_gpu(&qp->completed_head) < end) {
        ring_pending(qp);
        poll_cq(qp);
        if (load_acquire_gpu(&qp->completed_head) >= end) break;
        backoff(spins);
    }
    return qp_status(qp);
}

/* Waits until everything published on this QP so far has completed. */
RSHMEM_IBGDA_FN int quiet(rshmem_ibgda_qp *qp) {
    uint64_t target = load_acquire_gpu(&qp->ready_head);
    if (load_acquire_gpu(&qp->completed_head) >= target) return qp_status(qp);
    if (load_acquire_gpu(&qp->signaled_head) < target) target = post_nop(qp, true, false);
    return wait_for(qp, target);
}

/* Orders every later WQE of this QP after every earlier one. */
RSHMEM_IBGDA_FN void fence(rshmem_ibgda_qp *qp) { post_nop(qp, false, true); }

} // namespace rshmem_ibgda

#endif /* RSHMEM_IBGDA_POST_H */
