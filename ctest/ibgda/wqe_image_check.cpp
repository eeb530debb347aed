// Whole DC WQEs, byte for byte: what the posting path (device/ibgda/ibgda_pe.h, host build)
// writes into a DCI's send queue, against the same WQE built with rdma-core's own setters from
// <infiniband/mlx5dv.h> (mlx5dv_set_ctrl_seg, mlx5dv_set_dgram_seg, mlx5dv_set_data_seg) and
// its segment structs: an RDMA WRITE from registered memory, an inline write (a p), an 8-byte
// fetch-add, and a warp-coalesced p (two inline WQEs), with the 16-byte and the 48-byte address
// vector. The DCT number the device picks must land in dqp_dct with the extended bit kept.
// Built and run by `cargo test --release --test ibgda_layout`.
#include <infiniband/mlx5dv.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "../../device/ibgda/ibgda_pe.h"

using namespace rshmem_ibgda;

static int failures = 0;

static void same(const char *what, const void *ours, const void *theirs, size_t n) {
    if (std::memcmp(ours, theirs, n) == 0) return;
    failures++;
    std::fprintf(stderr, "%s: bytes differ\n", what);
    for (size_t i = 0; i < n; i++)
        if (((const uint8_t *)ours)[i] != ((const uint8_t *)theirs)[i])
            std::fprintf(stderr, "  byte %zu: ours 0x%02x, rdma-core 0x%02x\n", i, ((const uint8_t *)ours)[i], ((const uint8_t *)theirs)[i]);
}

// A DCI in plain memory: 128 blocks, no completion requested for the first 64.
struct dci {
    rshmem_ibgda_qp qp;
    alignas(64) uint8_t sq[128 * 64];
    alignas(64) uint8_t cq[128 * 64];
    alignas(64) uint8_t dbr[64];
    dci() {
        std::memset(&qp, 0, sizeof qp);
        std::memset(sq, 0, sizeof sq);
        std::memset(cq, 0xf0, sizeof cq);
        std::memset(dbr, 0, sizeof dbr);
        qp.version = RSHMEM_IBGDA_STATE_VERSION;
        qp.qpn = 0x0abcde;
        qp.peer_pe = 0xffffffffu;
        qp.kind = RSHMEM_IBGDA_QP_DCI;
        qp.log_nwqes = qp.log_ncqes = 7;
        qp.signal_every = 64;
        qp.batch = 1024;
        qp.inline_max = 28;
        qp.sq_buf = (uint64_t)(uintptr_t)sq;
        qp.cq_buf = (uint64_t)(uintptr_t)cq;
        qp.sq_dbrec = (uint64_t)(uintptr_t)dbr;
        qp.cq_dbrec = (uint64_t)(uintptr_t)(dbr + 16);
        qp.bf_reg = (uint64_t)(uintptr_t)(dbr + 32);
    }
    const uint8_t *block(uint64_t i) const { return sq + (i % 128) * 64; }
};

static const uint64_t KEY = 0x0102030405060708ull, RADDR = 0x1122334455667788ull, LADDR = 0x99aabbccddeeff00ull;
static const uint32_t RKEY = 0xabcdef01u, LKEY = 0x13572468u, DCT = 0x002345u, PLACEHOLDER = 0x002000u;
static const uint16_t LID = 7;
static uint8_t RMAC[6], RGID[16];

// The peer table's address vector: DCT number PLACEHOLDER, which the device replaces by DCT.
static rshmem_mlx5_av peer_av(bool ext) {
    rshmem_mlx5_av av;
    std::memset(&av, 0, sizeof av);
    av.dc_key = rshmem_htobe64(KEY);
    av.dqp_dct = rshmem_htobe32((ext ? RSHMEM_MLX5_EXTENDED_UD_AV : 0u) | PLACEHOLDER);
    av.rlid = rshmem_htobe16(LID);
    return av;
}

// rdma-core's ctrl + datagram segment for a WQE at block `pi` of `ds` octowords.
static size_t head(uint8_t *w, uint16_t pi, uint8_t opcode, uint8_t ds, bool ext) {
    mlx5dv_set_ctrl_seg((mlx5_wqe_ctrl_seg *)w, pi, opcode, 0, 0x0abcde, 0, ds, 0, 0);
    mlx5_wqe_datagram_seg dg;
    std::memset(&dg, 0, sizeof dg);
    mlx5dv_set_dgram_seg(&dg, KEY, DCT, ext ? 1 : 0, 0, 0, LID, RMAC, 0, 0, 0, RGID);
    const size_t av = ext ? sizeof dg : RSHMEM_MLX5_AV_HALF_BYTES;
    std::memcpy(w + 16, &dg, av);
    return 16 + av;
}

static size_t raddr(uint8_t *w, size_t at, uint64_t addr) {
    mlx5_wqe_raddr_seg r;
    r.raddr = htobe64(addr);
    r.rkey = htobe32(RKEY);
    r.reserved = 0;
    std::memcpy(w + at, &r, sizeof r);
    return at + sizeof r;
}

int main() {
    for (bool ext : {false, true}) {
        const rshmem_mlx5_av av = peer_av(ext);
        remote r;
        r.raddr = RADDR;
        r.rkey = RKEY;
        r.av = (const uint8_t *)&av;
        r.av_size = ext ? 48 : 16;
        r.dct = DCT;
        const uint8_t avo = (uint8_t)(r.av_size / 16);
        char what[64];

        // RDMA WRITE of 4096 bytes from registered memory.
        {
            dci q;
            post_write(&q.qp, r, LADDR, LKEY, 4096);
            uint8_t w[128] = {0};
            size_t at = raddr(w, head(w, 0, MLX5_OPCODE_RDMA_WRITE, 3 + avo, ext), RADDR);
            mlx5dv_set_data_seg((mlx5_wqe_data_seg *)(w + at), 4096, LKEY, (uintptr_t)LADDR);
            std::snprintf(what, sizeof what, "RDMA WRITE, %u-byte AV", r.av_size);
            same(what, q.block(0), w, at + 16);
        }
        // Inline write of 8 bytes (what a p sends).
        {
            dci q;
            const uint64_t v = 0x8877665544332211ull;
            post_write_inline(&q.qp, r, &v, 8);
            uint8_t w[128] = {0};
            size_t at = raddr(w, head(w, 0, MLX5_OPCODE_RDMA_WRITE, 2 + avo + 1, ext), RADDR);
            mlx5_wqe_inl_data_seg inl;
            inl.byte_count = htobe32(8 | MLX5_INLINE_SEG);
            std::memcpy(w + at, &inl, sizeof inl);
            std::memcpy(w + at + 4, &v, 8);
            std::snprintf(what, sizeof what, "inline write, %u-byte AV", r.av_size);
            same(what, q.block(0), w, at + 12);
        }
        // 8-byte fetch-add, the old value to (LKEY, LADDR).
        {
            dci q;
            post_amo(&q.qp, r, AMO_FETCH_ADD, 8, 5, 0, LADDR, LKEY);
            uint8_t w[128] = {0};
            size_t at = raddr(w, head(w, 0, MLX5_OPCODE_ATOMIC_FA, 4 + avo, ext), RADDR);
            mlx5_wqe_atomic_seg a;
            a.swap_add = htobe64(5);
            a.compare = 0;
            std::memcpy(w + at, &a, sizeof a);
            mlx5dv_set_data_seg((mlx5_wqe_data_seg *)(w + at + 16), 8, LKEY, (uintptr_t)LADDR);
            std::snprintf(what, sizeof what, "fetch-add, %u-byte AV", r.av_size);
            same(what, q.block(0), w, at + 32);
        }
        // A warp of 32 lanes writing consecutive 8-byte words: two inline WQEs (24 + 8 lanes).
        {
            dci q;
            uint64_t vals[32];
            for (int l = 0; l < 32; l++) vals[l] = 0x0101010101010101ull * (uint64_t)(l + 1);
            const uint32_t nbb = pg_blocks(r, 32, 8);
            const uint64_t g = reserve(&q.qp, nbb);
            for (uint32_t l = 0; l < 32; l++) pg_write_lane(&q.qp, g, r, 32, 31 - l, 8, vals[31 - l]);
            publish(&q.qp, g, nbb);
            uint32_t first = 0;
            for (int k = 0; k < 2; k++) {
                const uint32_t lanes = k == 0 ? 24 : 8, bytes = lanes * 8, ds = 2 + avo + (4 + bytes + 15) / 16;
                uint8_t w[512] = {0};
                size_t at = raddr(w, head(w, (uint16_t)first, MLX5_OPCODE_RDMA_WRITE, (uint8_t)ds, ext), RADDR + k * 192);
                mlx5_wqe_inl_data_seg inl;
                inl.byte_count = htobe32(bytes | MLX5_INLINE_SEG);
                std::memcpy(w + at, &inl, sizeof inl);
                std::memcpy(w + at + 4, &vals[k * 24], bytes);
                uint8_t ours[512];
                for (uint32_t b = 0; b < (ds + 3) / 4; b++) std::memcpy(ours + b * 64, q.block(first + b), 64);
                std::snprintf(what, sizeof what, "coalesced p, WQE %d, %u-byte AV", k, r.av_size);
                same(what, ours, w, at + 4 + bytes);
                first += (ds + 3) / 4;
            }
            if (first != nbb) {
                failures++;
                std::fprintf(stderr, "coalesced p: %u blocks written, pg_blocks says %u\n", first, nbb);
            }
        }
    }
    if (failures) {
        std::fprintf(stderr, "%d WQE image check(s) failed\n", failures);
        return 1;
    }
    std::printf("DC WQE images (write, inline write, fetch-add, coalesced p; 16- and 48-byte AV) match rdma-core\n");
    return 0;
}
