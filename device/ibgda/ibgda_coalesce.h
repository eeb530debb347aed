/* rshmem IBGDA: warp-coalesced p. When lanes of a warp call nvshmem_<T>_p at the same moment
 * toward one PE through one QP, with values of one size at consecutive addresses in lane order
 * (dest[lane], the usual pattern), their values travel as one inline RDMA WRITE per
 * COALESCE_BYTES bytes instead of one WQE per lane: a warp of 4-byte p is one WQE of 3 blocks
 * instead of 32 WQEs, a warp of 8-byte p two WQEs.
 *
 * Every lane writes its own value into the group's WQEs (one or two stores of at most 4 bytes:
 * the inline payload starts 4 bytes into its octoword, so an 8-byte value may straddle two), and
 * the first lane of each WQE also writes that WQE's headers. The group reserves and publishes
 * once (slot / publish_grouped in ibgda_post.h). The layout functions (pg_*) are plain, so the
 * host build tests them by playing a warp's lanes in one thread (ctest/ibgda/harness.cpp,
 * h_p_group); detecting a group (match, all, shuffle) exists only on the GPU, where a host thread
 * would be a group of one anyway. Lanes in any other pattern (another order, gaps, mixed sizes or
 * PEs) post one WQE each, still sharing one reservation per QP.
 */
#ifndef RSHMEM_IBGDA_COALESCE_H
#define RSHMEM_IBGDA_COALESCE_H

#include "ibgda_post.h"

namespace rshmem_ibgda {

/* Payload of one coalesced WQE at most: the inline chunk the posting path already uses, so no
 * WQE is larger than those of a put from unregistered memory (4 blocks on RC). */
static constexpr uint32_t COALESCE_BYTES = INLINE_CHUNK;

RSHMEM_IBGDA_FN uint32_t pg_lanes_per_wqe(uint32_t size) { return COALESCE_BYTES / size; }
/* Octowords before the inline segment: ctrl, [address vector,] raddr. */
RSHMEM_IBGDA_FN uint32_t pg_head_octs(const remote &r) { return 2u + r.av_size / 16u; }
/* ds of one WQE carrying `bytes` inline. */
RSHMEM_IBGDA_FN uint32_t pg_ds(const remote &r, uint32_t bytes) { return pg_head_octs(r) + (4u + bytes + 15u) / 16u; }

/* Blocks for n lanes of `size` bytes: full WQEs of pg_lanes_per_wqe lanes, then the rest. */
RSHMEM_IBGDA_FN uint32_t pg_blocks(const remote &r, uint32_t n, uint32_t size) {
    const uint32_t per = pg_lanes_per_wqe(size), full = n / per, rest = n % per;
    return full * bb_of(pg_ds(r, per * size)) + (rest ? bb_of(pg_ds(r, rest * size)) : 0u);
}

/* Stores the low n (1, 2 or 4) bytes of v at byte `pos` of the WQE at block `base`; pos is
 * n-aligned, so the store stays inside one octoword (the WQE may wrap around the ring). */
RSHMEM_IBGDA_FN void pg_store(rshmem_ibgda_qp *qp, uint64_t base, uint32_t pos, uint32_t v, uint32_t n) {
    uint8_t *p = wqe_oct(qp, base, pos / 16u) + (pos & 15u);
    if (n == 4) *(uint32_t *)p = v;
    else if (n == 2) *(uint16_t *)p = (uint16_t)v;
    else *p = (uint8_t)v;
}

/* Lane `rank` of a group of n writes its value (`bits`, little-endian, `size` bytes) into the
 * group's WQEs, which start at block gbase; r0 is the remote of rank 0's address. */
RSHMEM_IBGDA_FN void pg_write_lane(rshmem_ibgda_qp *qp, uint64_t gbase, const remote &r0, uint32_t n, uint32_t rank,
                                   uint32_t size, uint64_t bits) {
    const uint32_t per = pg_lanes_per_wqe(size), c = rank / per, j = rank % per;
    const uint64_t base = gbase + (uint64_t)c * bb_of(pg_ds(r0, per * size));
    const uint32_t inl = pg_head_octs(r0) * 16u;
    const uint32_t pos = inl + 4u + j * size;
    if (size == 8) {
        pg_store(qp, base, pos, (uint32_t)bits, 4);
        pg_store(qp, base, pos + 4u, (uint32_t)(bits >> 32), 4);
    } else {
        pg_store(qp, base, pos, (uint32_t)bits, size);
    }
    if (j != 0) return;
    /* First lane of its WQE: the headers. */
    const uint32_t lanes = n - c * per < per ? n - c * per : per, bytes = lanes * size;
    remote rc = r0;
    rc.raddr = r0.raddr + (uint64_t)c * per * size;
    uint32_t k = 1;
    k += write_av(qp, base, k, rc);
    write_raddr(qp, base, k, rc);
    pg_store(qp, base, inl, rshmem_htobe32(bytes | RSHMEM_MLX5_INLINE_SEG), 4);
    const uint32_t ds = pg_ds(r0, bytes);
    write_ctrl(qp, base, RSHMEM_MLX5_OPCODE_RDMA_WRITE, 0, ds, ce_flags(qp, base, bb_of(ds), false));
}

/* Posts this lane's p as part of a coalesced WQE when the lanes calling now toward the same QP
 * form a group as described above; returns false when this lane must post alone. `r` is this
 * lane's remote (raddr of its own destination), `pe` its target. */
RSHMEM_IBGDA_FN bool post_p_coalesced(rshmem_ibgda_qp *qp, const remote &r, uint32_t pe, uint64_t bits, uint32_t size) {
#if defined(RSHMEM_IBGDA_DEVICE_BUILD)
    const uint32_t mask = group_of((uint64_t)(uintptr_t)qp);
    /* Every test below gives the same answer on every lane of mask, so the group stays together. */
    if (popc(mask) < 2 || !group_uniform(mask, pe) || !group_uniform(mask, size)) return false;
    const uint32_t lane = lane_id(), leader = first_lane(mask), rank = popc(mask & ((1u << lane) - 1u));
    const uint64_t lead_raddr = group_bcast(mask, r.raddr, leader);
    if (!group_all(mask, r.raddr == lead_raddr + (uint64_t)rank * size)) return false;
    const uint32_t n = popc(mask);
    remote r0 = r;
    r0.raddr = lead_raddr;
    const uint32_t nbb = pg_blocks(r0, n, size);
    if (nbb > max_group_bb(qp)) return false; /* a tiny ring: lanes go one by one */
    slot s;
    s.mask = mask;
    s.leader = leader;
    s.gnbb = nbb;
    uint64_t gbase = 0;
    if (lane == leader) gbase = reserve(qp, nbb);
    s.gbase = group_bcast(mask, gbase, leader);
    s.base = s.gbase;
    pg_write_lane(qp, s.gbase, r0, n, rank, size, bits);
    publish_grouped(qp, s);
    return true;
#else
    (void)qp, (void)r, (void)pe, (void)bits, (void)size;
    return false;
#endif
}

} // namespace rshmem_ibgda

#endif /* RSHMEM_IBGDA_COALESCE_H */
