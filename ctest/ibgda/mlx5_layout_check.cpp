// Layout truth for device/ibgda/mlx5_layout.h: our segment and CQE definitions against
// rdma-core's <infiniband/mlx5dv.h> (Debian libibverbs-dev).
//   - compile time: size and every field offset/size agree (static_assert);
//   - run time: the same values written through rdma-core's setters / fields and through ours
//     give the same bytes, and our readers decode rdma-core-written CQEs;
//   - output: one line per field "field <seg>.<name> <offset> <size>", per size
//     "size <seg> <bytes>" and per constant "const <NAME> <value>", which tests/ibgda_layout.rs
//     compares with the Rust mirror (src/ibgda/mlx5.rs).
// Built and run by `cargo test --release --test ibgda_layout`.
#include <infiniband/mlx5dv.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "../../device/ibgda/mlx5_layout.h"

#define FSIZE(T, f) sizeof(((T *)nullptr)->f)

// Ours vs theirs: offset and size of one field must agree.
#define SAME(ours, theirs, of, tf)                                                              \
    static_assert(offsetof(ours, of) == offsetof(theirs, tf), #ours "." #of ": offset differs"); \
    static_assert(FSIZE(ours, of) == FSIZE(theirs, tf), #ours "." #of ": size differs")
#define SAME_SIZE(ours, theirs) static_assert(sizeof(ours) == sizeof(theirs), #ours ": size differs")

SAME_SIZE(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg);
SAME(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg, opmod_idx_opcode, opmod_idx_opcode);
SAME(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg, qpn_ds, qpn_ds);
SAME(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg, signature, signature);
SAME(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg, dci_stream_channel_id, dci_stream_channel_id);
SAME(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg, fm_ce_se, fm_ce_se);
SAME(rshmem_mlx5_ctrl_seg, mlx5_wqe_ctrl_seg, imm, imm);

SAME_SIZE(rshmem_mlx5_raddr_seg, mlx5_wqe_raddr_seg);
SAME(rshmem_mlx5_raddr_seg, mlx5_wqe_raddr_seg, raddr, raddr);
SAME(rshmem_mlx5_raddr_seg, mlx5_wqe_raddr_seg, rkey, rkey);
SAME(rshmem_mlx5_raddr_seg, mlx5_wqe_raddr_seg, reserved, reserved);

SAME_SIZE(rshmem_mlx5_data_seg, mlx5_wqe_data_seg);
SAME(rshmem_mlx5_data_seg, mlx5_wqe_data_seg, byte_count, byte_count);
SAME(rshmem_mlx5_data_seg, mlx5_wqe_data_seg, lkey, lkey);
SAME(rshmem_mlx5_data_seg, mlx5_wqe_data_seg, addr, addr);

SAME_SIZE(rshmem_mlx5_inl_data_seg, mlx5_wqe_inl_data_seg);
SAME(rshmem_mlx5_inl_data_seg, mlx5_wqe_inl_data_seg, byte_count, byte_count);

SAME_SIZE(rshmem_mlx5_atomic_seg, mlx5_wqe_atomic_seg);
SAME(rshmem_mlx5_atomic_seg, mlx5_wqe_atomic_seg, swap_add, swap_add);
SAME(rshmem_mlx5_atomic_seg, mlx5_wqe_atomic_seg, compare, compare);

SAME_SIZE(rshmem_mlx5_av, mlx5_wqe_av);
SAME(rshmem_mlx5_av, mlx5_wqe_av, dc_key, key.dc_key);
SAME(rshmem_mlx5_av, mlx5_wqe_av, dqp_dct, dqp_dct);
SAME(rshmem_mlx5_av, mlx5_wqe_av, stat_rate_sl, stat_rate_sl);
SAME(rshmem_mlx5_av, mlx5_wqe_av, fl_mlid, fl_mlid);
SAME(rshmem_mlx5_av, mlx5_wqe_av, rlid, rlid);
SAME(rshmem_mlx5_av, mlx5_wqe_av, rmac, rmac);
SAME(rshmem_mlx5_av, mlx5_wqe_av, tclass, tclass);
SAME(rshmem_mlx5_av, mlx5_wqe_av, hop_limit, hop_limit);
SAME(rshmem_mlx5_av, mlx5_wqe_av, grh_gid_fl, grh_gid_fl);
SAME(rshmem_mlx5_av, mlx5_wqe_av, rgid, rgid);
SAME_SIZE(rshmem_mlx5_datagram_seg, mlx5_wqe_datagram_seg);
SAME(rshmem_mlx5_datagram_seg, mlx5_wqe_datagram_seg, av, av);

SAME_SIZE(rshmem_mlx5_cqe64, mlx5_cqe64);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, wqe_id, wqe_id);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, srqn_uidx, srqn_uidx);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, imm_inval_pkey, imm_inval_pkey);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, app, app);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, app_op, app_op);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, app_info, app_info);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, byte_cnt, byte_cnt);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, timestamp, timestamp);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, sop_drop_qpn, sop_drop_qpn);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, wqe_counter, wqe_counter);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, signature, signature);
SAME(rshmem_mlx5_cqe64, mlx5_cqe64, op_own, op_own);

SAME_SIZE(rshmem_mlx5_err_cqe, mlx5_err_cqe);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, srqn, srqn);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, vendor_err_synd, vendor_err_synd);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, syndrome, syndrome);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, s_wqe_opcode_qpn, s_wqe_opcode_qpn);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, wqe_counter, wqe_counter);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, signature, signature);
SAME(rshmem_mlx5_err_cqe, mlx5_err_cqe, op_own, op_own);

// Constants: ours equal rdma-core's.
#define SAME_CONST(ours, theirs) static_assert((unsigned long)(ours) == (unsigned long)(theirs), #ours)
SAME_CONST(RSHMEM_MLX5_OPCODE_NOP, MLX5_OPCODE_NOP);
SAME_CONST(RSHMEM_MLX5_OPCODE_RDMA_WRITE, MLX5_OPCODE_RDMA_WRITE);
SAME_CONST(RSHMEM_MLX5_OPCODE_RDMA_WRITE_IMM, MLX5_OPCODE_RDMA_WRITE_IMM);
SAME_CONST(RSHMEM_MLX5_OPCODE_RDMA_READ, MLX5_OPCODE_RDMA_READ);
SAME_CONST(RSHMEM_MLX5_OPCODE_ATOMIC_CS, MLX5_OPCODE_ATOMIC_CS);
SAME_CONST(RSHMEM_MLX5_OPCODE_ATOMIC_FA, MLX5_OPCODE_ATOMIC_FA);
SAME_CONST(RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS, MLX5_OPCODE_ATOMIC_MASKED_CS);
SAME_CONST(RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA, MLX5_OPCODE_ATOMIC_MASKED_FA);
SAME_CONST(RSHMEM_MLX5_CTRL_SOLICITED, MLX5_WQE_CTRL_SOLICITED);
SAME_CONST(RSHMEM_MLX5_CTRL_CQ_UPDATE, MLX5_WQE_CTRL_CQ_UPDATE);
SAME_CONST(RSHMEM_MLX5_CTRL_FENCE, MLX5_WQE_CTRL_FENCE);
SAME_CONST(RSHMEM_MLX5_CTRL_INITIATOR_SMALL_FENCE, MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE);
SAME_CONST(RSHMEM_MLX5_SEND_WQE_BB, MLX5_SEND_WQE_BB);
SAME_CONST(RSHMEM_MLX5_SEND_WQE_SHIFT, MLX5_SEND_WQE_SHIFT);
SAME_CONST(RSHMEM_MLX5_INLINE_SEG, MLX5_INLINE_SEG);
SAME_CONST(RSHMEM_MLX5_RCV_DBR, MLX5_RCV_DBR);
SAME_CONST(RSHMEM_MLX5_SND_DBR, MLX5_SND_DBR);
SAME_CONST(RSHMEM_MLX5_EXTENDED_UD_AV, MLX5_EXTENDED_UD_AV);
SAME_CONST(RSHMEM_MLX5_CQE_OWNER_MASK, MLX5_CQE_OWNER_MASK);
SAME_CONST(RSHMEM_MLX5_CQE_REQ, MLX5_CQE_REQ);
SAME_CONST(RSHMEM_MLX5_CQE_REQ_ERR, MLX5_CQE_REQ_ERR);
SAME_CONST(RSHMEM_MLX5_CQE_RESP_ERR, MLX5_CQE_RESP_ERR);
SAME_CONST(RSHMEM_MLX5_CQE_INVALID, MLX5_CQE_INVALID);
SAME_CONST(RSHMEM_MLX5_SYND_LOCAL_LENGTH_ERR, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_LOCAL_QP_OP_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_LOCAL_PROT_ERR, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_BAD_RESP_ERR, MLX5_CQE_SYNDROME_BAD_RESP_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_LOCAL_ACCESS_ERR, MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_REMOTE_INVAL_REQ_ERR, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_REMOTE_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_REMOTE_OP_ERR, MLX5_CQE_SYNDROME_REMOTE_OP_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_TRANSPORT_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_RNR_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
SAME_CONST(RSHMEM_MLX5_SYND_REMOTE_ABORTED_ERR, MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR);

static int failures = 0;
#define EXPECT(cond, ...)                                 \
    do {                                                  \
        if (!(cond)) {                                    \
            std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            std::fprintf(stderr, __VA_ARGS__);            \
            std::fprintf(stderr, "\n");                   \
            failures++;                                   \
        }                                                 \
    } while (0)

template <class A, class B>
static void same_bytes(const char *what, const A &ours, const B &theirs) {
    static_assert(sizeof(A) == sizeof(B), "sizes");
    if (std::memcmp(&ours, &theirs, sizeof(A)) != 0) {
        std::fprintf(stderr, "FAIL %s: byte images differ\n  ours:  ", what);
        for (size_t i = 0; i < sizeof(A); i++) std::fprintf(stderr, "%02x", ((const unsigned char *)&ours)[i]);
        std::fprintf(stderr, "\n  rdma:  ");
        for (size_t i = 0; i < sizeof(A); i++) std::fprintf(stderr, "%02x", ((const unsigned char *)&theirs)[i]);
        std::fprintf(stderr, "\n");
        failures++;
    }
}

static void run_byte_checks() {
    // Control segment: rdma-core's setter vs our builders.
    const uint16_t pi = 0xbeef;
    const uint32_t qpn = 0x123456, imm = 0xa1b2c3d4;
    const uint8_t opmod = RSHMEM_MLX5_OPMOD_EXT_AMO_8B, ds = 5, sig = 0x5a;
    const uint8_t fm = RSHMEM_MLX5_CTRL_CQ_UPDATE | RSHMEM_MLX5_CTRL_FENCE | RSHMEM_MLX5_CTRL_SOLICITED;
    mlx5_wqe_ctrl_seg theirs_ctrl;
    std::memset(&theirs_ctrl, 0, sizeof theirs_ctrl);
    mlx5dv_set_ctrl_seg(&theirs_ctrl, pi, MLX5_OPCODE_ATOMIC_MASKED_FA, opmod, qpn, fm, ds, sig, imm);
    rshmem_mlx5_ctrl_seg ours_ctrl;
    std::memset(&ours_ctrl, 0, sizeof ours_ctrl);
    ours_ctrl.opmod_idx_opcode = rshmem_mlx5_opmod_idx_opcode(opmod, pi, RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA);
    ours_ctrl.qpn_ds = rshmem_mlx5_qpn_ds(qpn, ds);
    ours_ctrl.signature = sig;
    ours_ctrl.fm_ce_se = fm;
    ours_ctrl.imm = imm;
    same_bytes("ctrl segment", ours_ctrl, theirs_ctrl);
    // The wire is big-endian: the opcode is the last byte of the first word, opmod the first.
    const unsigned char *cb = (const unsigned char *)&ours_ctrl;
    EXPECT(cb[0] == opmod && cb[1] == 0xbe && cb[2] == 0xef && cb[3] == RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA,
           "ctrl word 0 is not big-endian opmod|idx|opcode");
    EXPECT(cb[4] == 0x12 && cb[5] == 0x34 && cb[6] == 0x56 && cb[7] == ds, "ctrl word 1 is not big-endian qpn|ds");

    // Data segment.
    mlx5_wqe_data_seg theirs_data;
    mlx5dv_set_data_seg(&theirs_data, 0x01020304, 0x0a0b0c0d, (uintptr_t)0x1122334455667788ull);
    rshmem_mlx5_data_seg ours_data;
    ours_data.byte_count = rshmem_htobe32(0x01020304);
    ours_data.lkey = rshmem_htobe32(0x0a0b0c0d);
    ours_data.addr = rshmem_htobe64(0x1122334455667788ull);
    same_bytes("data segment", ours_data, theirs_data);

    // Remote address segment.
    mlx5_wqe_raddr_seg theirs_raddr;
    theirs_raddr.raddr = htobe64(0xfedcba9876543210ull);
    theirs_raddr.rkey = htobe32(0x00c0ffee);
    theirs_raddr.reserved = 0;
    rshmem_mlx5_raddr_seg ours_raddr;
    ours_raddr.raddr = rshmem_htobe64(0xfedcba9876543210ull);
    ours_raddr.rkey = rshmem_htobe32(0x00c0ffee);
    ours_raddr.reserved = 0;
    same_bytes("raddr segment", ours_raddr, theirs_raddr);

    // Atomic segment.
    mlx5_wqe_atomic_seg theirs_atomic;
    theirs_atomic.swap_add = htobe64(0x0102030405060708ull);
    theirs_atomic.compare = htobe64(0x8877665544332211ull);
    rshmem_mlx5_atomic_seg ours_atomic;
    ours_atomic.swap_add = rshmem_htobe64(0x0102030405060708ull);
    ours_atomic.compare = rshmem_htobe64(0x8877665544332211ull);
    same_bytes("atomic segment", ours_atomic, theirs_atomic);

    // Inline header.
    mlx5_wqe_inl_data_seg theirs_inl;
    theirs_inl.byte_count = htobe32(12 | MLX5_INLINE_SEG);
    rshmem_mlx5_inl_data_seg ours_inl;
    ours_inl.byte_count = rshmem_htobe32(12 | RSHMEM_MLX5_INLINE_SEG);
    same_bytes("inline header", ours_inl, theirs_inl);

    // Address vector (rdma-core's setter).
    uint8_t rmac[6] = {1, 2, 3, 4, 5, 6}, rgid[16];
    for (int i = 0; i < 16; i++) rgid[i] = (uint8_t)(0xf0 + i);
    mlx5_wqe_datagram_seg theirs_dg;
    std::memset(&theirs_dg, 0, sizeof theirs_dg);
    mlx5dv_set_dgram_seg(&theirs_dg, 0x1122334455667788ull, 0x00abcdef, 1, 0x21, 0x7f, 0x4321, rmac, 0x33, 0x40,
                         0x55667788, rgid);
    rshmem_mlx5_av ours_av;
    std::memset(&ours_av, 0, sizeof ours_av);
    ours_av.dc_key = rshmem_htobe64(0x1122334455667788ull);
    ours_av.dqp_dct = rshmem_htobe32(RSHMEM_MLX5_EXTENDED_UD_AV | 0x00abcdef);
    ours_av.stat_rate_sl = 0x21;
    ours_av.fl_mlid = 0x7f;
    ours_av.rlid = rshmem_htobe16(0x4321);
    std::memcpy(ours_av.rmac, rmac, 6);
    ours_av.tclass = 0x33;
    ours_av.hop_limit = 0x40;
    ours_av.grh_gid_fl = rshmem_htobe32(0x55667788);
    std::memcpy(ours_av.rgid, rgid, 16);
    same_bytes("address vector", ours_av, theirs_dg.av);
    // The half (16-byte) form a DCI WQE may carry: rdma-core's setter without the extended bit,
    // against our image of key, DCT number and LID; its first 16 bytes are all the NIC reads.
    mlx5_wqe_datagram_seg theirs_half;
    std::memset(&theirs_half, 0, sizeof theirs_half);
    mlx5dv_set_dgram_seg(&theirs_half, 0x0badc0ffee0ddf00ull, 0x000d0001, 0, 0, 0, 0x0007, rmac, 0, 0, 0, rgid);
    rshmem_mlx5_datagram_seg ours_half;
    std::memset(&ours_half, 0, sizeof ours_half);
    ours_half.av.dc_key = rshmem_htobe64(0x0badc0ffee0ddf00ull);
    ours_half.av.dqp_dct = rshmem_htobe32(0x000d0001);
    ours_half.av.rlid = rshmem_htobe16(0x0007);
    EXPECT(std::memcmp(&ours_half, &theirs_half, RSHMEM_MLX5_AV_HALF_BYTES) == 0, "half address vector bytes");
    EXPECT((rshmem_be32toh(theirs_half.av.dqp_dct) & RSHMEM_MLX5_EXTENDED_UD_AV) == 0, "half form has no extended bit");

    // CQE written as rdma-core declares it, read through ours.
    for (int owner = 0; owner < 2; owner++) {
        mlx5_cqe64 theirs_cqe;
        std::memset(&theirs_cqe, 0, sizeof theirs_cqe);
        theirs_cqe.byte_cnt = htobe32(0x00012345);
        theirs_cqe.wqe_counter = htobe16(0xfffe);
        theirs_cqe.sop_drop_qpn = htobe32(0x00654321);
        theirs_cqe.op_own = (uint8_t)(MLX5_CQE_REQ << 4);
        mlx5dv_set_cqe_owner(&theirs_cqe, (uint8_t)owner);
        rshmem_mlx5_cqe64 ours_cqe;
        std::memcpy(&ours_cqe, &theirs_cqe, sizeof ours_cqe);
        EXPECT(rshmem_be32toh(ours_cqe.byte_cnt) == 0x00012345, "cqe byte_cnt");
        EXPECT(rshmem_be16toh(ours_cqe.wqe_counter) == 0xfffe, "cqe wqe_counter");
        EXPECT((rshmem_be32toh(ours_cqe.sop_drop_qpn) & 0xffffff) == 0x654321, "cqe qpn");
        EXPECT(rshmem_mlx5_cqe_owner(ours_cqe.op_own) == mlx5dv_get_cqe_owner(&theirs_cqe), "cqe owner");
        EXPECT(rshmem_mlx5_cqe_opcode(ours_cqe.op_own) == mlx5dv_get_cqe_opcode(&theirs_cqe), "cqe opcode");
    }
    // Error CQE.
    mlx5_err_cqe theirs_err;
    std::memset(&theirs_err, 0, sizeof theirs_err);
    theirs_err.syndrome = MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
    theirs_err.vendor_err_synd = 0x88;
    theirs_err.s_wqe_opcode_qpn = htobe32((MLX5_OPCODE_RDMA_WRITE << 24) | 0x000abc);
    theirs_err.wqe_counter = htobe16(7);
    theirs_err.op_own = (uint8_t)(MLX5_CQE_REQ_ERR << 4) | 1;
    rshmem_mlx5_err_cqe ours_err;
    std::memcpy(&ours_err, &theirs_err, sizeof ours_err);
    EXPECT(ours_err.syndrome == RSHMEM_MLX5_SYND_REMOTE_ACCESS_ERR, "err syndrome");
    EXPECT(ours_err.vendor_err_synd == 0x88, "err vendor syndrome");
    EXPECT(rshmem_be32toh(ours_err.s_wqe_opcode_qpn) >> 24 == RSHMEM_MLX5_OPCODE_RDMA_WRITE, "err opcode");
    EXPECT((rshmem_be32toh(ours_err.s_wqe_opcode_qpn) & 0xffffff) == 0xabc, "err qpn");
    EXPECT(rshmem_be16toh(ours_err.wqe_counter) == 7, "err wqe_counter");
    EXPECT(rshmem_mlx5_cqe_opcode(ours_err.op_own) == RSHMEM_MLX5_CQE_REQ_ERR, "err op_own");

    // Byte swaps against libc.
    EXPECT(rshmem_htobe16(0x1234) == htobe16(0x1234), "htobe16");
    EXPECT(rshmem_htobe32(0x12345678) == htobe32(0x12345678), "htobe32");
    EXPECT(rshmem_htobe64(0x0123456789abcdefull) == htobe64(0x0123456789abcdefull), "htobe64");
    EXPECT(rshmem_be64toh(htobe64(42)) == 42, "be64toh");
}

// The table the Rust mirror is compared with.
#define FIELD(T, seg, f) std::printf("field %s.%s %zu %zu\n", seg, #f, offsetof(T, f), FSIZE(T, f))
#define SIZE(T, seg) std::printf("size %s %zu\n", seg, sizeof(T))
#define CONST(name) std::printf("const %s %lu\n", #name, (unsigned long)(name))

static void print_table() {
    SIZE(rshmem_mlx5_ctrl_seg, "ctrl");
    FIELD(rshmem_mlx5_ctrl_seg, "ctrl", opmod_idx_opcode);
    FIELD(rshmem_mlx5_ctrl_seg, "ctrl", qpn_ds);
    FIELD(rshmem_mlx5_ctrl_seg, "ctrl", signature);
    FIELD(rshmem_mlx5_ctrl_seg, "ctrl", dci_stream_channel_id);
    FIELD(rshmem_mlx5_ctrl_seg, "ctrl", fm_ce_se);
    FIELD(rshmem_mlx5_ctrl_seg, "ctrl", imm);
    SIZE(rshmem_mlx5_raddr_seg, "raddr");
    FIELD(rshmem_mlx5_raddr_seg, "raddr", raddr);
    FIELD(rshmem_mlx5_raddr_seg, "raddr", rkey);
    FIELD(rshmem_mlx5_raddr_seg, "raddr", reserved);
    SIZE(rshmem_mlx5_data_seg, "data");
    FIELD(rshmem_mlx5_data_seg, "data", byte_count);
    FIELD(rshmem_mlx5_data_seg, "data", lkey);
    FIELD(rshmem_mlx5_data_seg, "data", addr);
    SIZE(rshmem_mlx5_inl_data_seg, "inl");
    FIELD(rshmem_mlx5_inl_data_seg, "inl", byte_count);
    SIZE(rshmem_mlx5_atomic_seg, "atomic");
    FIELD(rshmem_mlx5_atomic_seg, "atomic", swap_add);
    FIELD(rshmem_mlx5_atomic_seg, "atomic", compare);
    SIZE(rshmem_mlx5_masked_cs32_seg, "masked_cs32");
    FIELD(rshmem_mlx5_masked_cs32_seg, "masked_cs32", swap);
    FIELD(rshmem_mlx5_masked_cs32_seg, "masked_cs32", compare);
    FIELD(rshmem_mlx5_masked_cs32_seg, "masked_cs32", swap_mask);
    FIELD(rshmem_mlx5_masked_cs32_seg, "masked_cs32", compare_mask);
    SIZE(rshmem_mlx5_masked_fa32_seg, "masked_fa32");
    FIELD(rshmem_mlx5_masked_fa32_seg, "masked_fa32", add);
    FIELD(rshmem_mlx5_masked_fa32_seg, "masked_fa32", field_boundary);
    SIZE(rshmem_mlx5_masked_cs64_seg, "masked_cs64");
    FIELD(rshmem_mlx5_masked_cs64_seg, "masked_cs64", swap);
    FIELD(rshmem_mlx5_masked_cs64_seg, "masked_cs64", compare);
    FIELD(rshmem_mlx5_masked_cs64_seg, "masked_cs64", swap_mask);
    FIELD(rshmem_mlx5_masked_cs64_seg, "masked_cs64", compare_mask);
    SIZE(rshmem_mlx5_masked_fa64_seg, "masked_fa64");
    FIELD(rshmem_mlx5_masked_fa64_seg, "masked_fa64", add);
    FIELD(rshmem_mlx5_masked_fa64_seg, "masked_fa64", field_boundary);
    SIZE(rshmem_mlx5_av, "av");
    FIELD(rshmem_mlx5_av, "av", dc_key);
    FIELD(rshmem_mlx5_av, "av", dqp_dct);
    FIELD(rshmem_mlx5_av, "av", stat_rate_sl);
    FIELD(rshmem_mlx5_av, "av", fl_mlid);
    FIELD(rshmem_mlx5_av, "av", rlid);
    FIELD(rshmem_mlx5_av, "av", rmac);
    FIELD(rshmem_mlx5_av, "av", tclass);
    FIELD(rshmem_mlx5_av, "av", hop_limit);
    FIELD(rshmem_mlx5_av, "av", grh_gid_fl);
    FIELD(rshmem_mlx5_av, "av", rgid);
    SIZE(rshmem_mlx5_datagram_seg, "dgram");
    FIELD(rshmem_mlx5_datagram_seg, "dgram", av);
    SIZE(rshmem_mlx5_cqe64, "cqe");
    FIELD(rshmem_mlx5_cqe64, "cqe", srqn_uidx);
    FIELD(rshmem_mlx5_cqe64, "cqe", byte_cnt);
    FIELD(rshmem_mlx5_cqe64, "cqe", timestamp);
    FIELD(rshmem_mlx5_cqe64, "cqe", sop_drop_qpn);
    FIELD(rshmem_mlx5_cqe64, "cqe", wqe_counter);
    FIELD(rshmem_mlx5_cqe64, "cqe", signature);
    FIELD(rshmem_mlx5_cqe64, "cqe", op_own);
    SIZE(rshmem_mlx5_err_cqe, "err_cqe");
    FIELD(rshmem_mlx5_err_cqe, "err_cqe", vendor_err_synd);
    FIELD(rshmem_mlx5_err_cqe, "err_cqe", syndrome);
    FIELD(rshmem_mlx5_err_cqe, "err_cqe", s_wqe_opcode_qpn);
    FIELD(rshmem_mlx5_err_cqe, "err_cqe", wqe_counter);
    FIELD(rshmem_mlx5_err_cqe, "err_cqe", op_own);
    CONST(RSHMEM_MLX5_OPCODE_NOP);
    CONST(RSHMEM_MLX5_OPCODE_RDMA_WRITE);
    CONST(RSHMEM_MLX5_OPCODE_RDMA_WRITE_IMM);
    CONST(RSHMEM_MLX5_OPCODE_RDMA_READ);
    CONST(RSHMEM_MLX5_OPCODE_ATOMIC_CS);
    CONST(RSHMEM_MLX5_OPCODE_ATOMIC_FA);
    CONST(RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS);
    CONST(RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA);
    CONST(RSHMEM_MLX5_OPMOD_EXT_AMO_4B);
    CONST(RSHMEM_MLX5_OPMOD_EXT_AMO_8B);
    CONST(RSHMEM_MLX5_CTRL_CQ_UPDATE);
    CONST(RSHMEM_MLX5_CTRL_FENCE);
    CONST(RSHMEM_MLX5_CTRL_SOLICITED);
    CONST(RSHMEM_MLX5_SEND_WQE_BB);
    CONST(RSHMEM_MLX5_INLINE_SEG);
    CONST(RSHMEM_MLX5_SND_DBR);
    CONST(RSHMEM_MLX5_EXTENDED_UD_AV);
    CONST(RSHMEM_MLX5_AV_HALF_BYTES);
    CONST(RSHMEM_MLX5_CQE_REQ);
    CONST(RSHMEM_MLX5_CQE_REQ_ERR);
    CONST(RSHMEM_MLX5_CQE_INVALID);
    CONST(RSHMEM_MLX5_SYND_LOCAL_PROT_ERR);
    CONST(RSHMEM_MLX5_SYND_WR_FLUSH_ERR);
    CONST(RSHMEM_MLX5_SYND_REMOTE_ACCESS_ERR);
    CONST(RSHMEM_MLX5_SYND_REMOTE_OP_ERR);
    CONST(RSHMEM_MLX5_SYND_TRANSPORT_RETRY_EXC_ERR);
}

int main() {
    run_byte_checks();
    print_table();
    if (failures) {
        std::fprintf(stderr, "%d layout check(s) failed\n", failures);
        return 1;
    }
    std::fprintf(stderr, "mlx5 layout: all checks passed\n");
    return 0;
}
