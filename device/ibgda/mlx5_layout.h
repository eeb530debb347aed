/* rshmem IBGDA: our own definitions of the mlx5 work-queue and completion-queue formats that
 * the device posting path writes and reads.
 *
 * Usable from CUDA device code and from host C++17 (and C11). Every multi-byte field the NIC reads
 * is big-endian on the wire: store it through rshmem_htobe32/64/16 below.
 *
 * Truth: ctest/ibgda/mlx5_layout_check.cpp compiles this header next to rdma-core's
 * <infiniband/mlx5dv.h> and checks size, every field offset and the byte image of each segment
 * against the real structs (cargo test runs it: tests/ibgda_layout.rs). The masked-atomic
 * segments are NOT in mlx5dv.h; their layout follows the ConnectX PRM "extended atomics"
 * description and is checked only against the model (src/ibgda/model.rs), never against hardware.
 * The Rust mirror is src/ibgda/mlx5.rs.
 */
#ifndef RSHMEM_IBGDA_MLX5_LAYOUT_H
#define RSHMEM_IBGDA_MLX5_LAYOUT_H

#if !defined(__CUDACC_RTC__) /* NVRTC: rshmem_common.h has the types */
#include <stdint.h>
#endif

#if defined(__CUDACC__)
#define RSHMEM_MLX5_FN __host__ __device__ __forceinline__
#elif defined(__cplusplus)
#define RSHMEM_MLX5_FN inline
#else
#define RSHMEM_MLX5_FN static inline
#endif

/* ---- constants (values as the mlx5 PRM / rdma-core define them) -------------------------- */

/* WQE opcodes (low byte of opmod_idx_opcode). */
#define RSHMEM_MLX5_OPCODE_NOP              0x00u
#define RSHMEM_MLX5_OPCODE_RDMA_WRITE       0x08u
#define RSHMEM_MLX5_OPCODE_RDMA_WRITE_IMM   0x09u
#define RSHMEM_MLX5_OPCODE_RDMA_READ        0x10u
#define RSHMEM_MLX5_OPCODE_ATOMIC_CS        0x11u
#define RSHMEM_MLX5_OPCODE_ATOMIC_FA        0x12u
#define RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS 0x14u
#define RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA 0x15u

/* Opcode modifier (top byte of opmod_idx_opcode) selecting extended (masked) atomics of
 * 4 and 8 bytes: 0x08 | (log2(size) - 2). */
#define RSHMEM_MLX5_OPMOD_EXT_AMO_4B        0x08u
#define RSHMEM_MLX5_OPMOD_EXT_AMO_8B        0x09u

/* fm_ce_se bits of the control segment. */
#define RSHMEM_MLX5_CTRL_SOLICITED          0x02u /* 1 << 1 */
#define RSHMEM_MLX5_CTRL_CQ_UPDATE          0x08u /* 2 << 2: request a CQE for this WQE */
#define RSHMEM_MLX5_CTRL_CE_MASK            0x0cu
#define RSHMEM_MLX5_CTRL_INITIATOR_SMALL_FENCE 0x20u /* 1 << 5 */
#define RSHMEM_MLX5_CTRL_FENCE              0x80u /* 4 << 5: wait for prior WQEs (incl. reads) */
#define RSHMEM_MLX5_CTRL_FM_MASK            0xe0u

/* Send queue basic block. */
#define RSHMEM_MLX5_SEND_WQE_BB             64u
#define RSHMEM_MLX5_SEND_WQE_SHIFT          6u
#define RSHMEM_MLX5_DS_BYTES                16u  /* ds counts 16-byte octowords */

/* Inline data segment: byte_count | INLINE_SEG. */
#define RSHMEM_MLX5_INLINE_SEG              0x80000000u

/* Doorbell record: word 0 receive counter, word 1 send counter (both big-endian). */
#define RSHMEM_MLX5_RCV_DBR                 0u
#define RSHMEM_MLX5_SND_DBR                 1u

/* Address vector: dqp_dct bit 31 marks the extended (48-byte) form. */
#define RSHMEM_MLX5_EXTENDED_UD_AV          0x80000000u

/* CQE opcodes (high nibble of op_own) and owner bit (bit 0). */
#define RSHMEM_MLX5_CQE_OWNER_MASK          0x01u
#define RSHMEM_MLX5_CQE_REQ                 0x0u
#define RSHMEM_MLX5_CQE_REQ_ERR             0xdu
#define RSHMEM_MLX5_CQE_RESP_ERR            0xeu
#define RSHMEM_MLX5_CQE_INVALID             0xfu

/* Error CQE syndromes. */
#define RSHMEM_MLX5_SYND_LOCAL_LENGTH_ERR        0x01u
#define RSHMEM_MLX5_SYND_LOCAL_QP_OP_ERR         0x02u
#define RSHMEM_MLX5_SYND_LOCAL_PROT_ERR          0x04u
#define RSHMEM_MLX5_SYND_WR_FLUSH_ERR            0x05u
#define RSHMEM_MLX5_SYND_BAD_RESP_ERR            0x10u
#define RSHMEM_MLX5_SYND_LOCAL_ACCESS_ERR        0x11u
#define RSHMEM_MLX5_SYND_REMOTE_INVAL_REQ_ERR    0x12u
#define RSHMEM_MLX5_SYND_REMOTE_ACCESS_ERR       0x13u
#define RSHMEM_MLX5_SYND_REMOTE_OP_ERR           0x14u
#define RSHMEM_MLX5_SYND_TRANSPORT_RETRY_EXC_ERR 0x15u
#define RSHMEM_MLX5_SYND_RNR_RETRY_EXC_ERR       0x16u
#define RSHMEM_MLX5_SYND_REMOTE_ABORTED_ERR      0x22u

#define RSHMEM_MLX5_CQE_SIZE                64u

/* ---- segments ------------------------------------------------------------------------------ */
/* All segments are written as whole 16-byte units by the device (vector stores). Every struct is
 * a multiple of 4 bytes with natural alignment, so no packing attribute is needed (rdma-core's
 * ctrl segment is declared packed+aligned(4); with these field types the layout is identical). */

/* Control segment, 16 bytes, first in every WQE. */
typedef struct rshmem_mlx5_ctrl_seg {
    uint32_t opmod_idx_opcode; /* BE: opmod << 24 | wqe_index(16) << 8 | opcode */
    uint32_t qpn_ds;           /* BE: qpn(24) << 8 | ds (16-byte units in this WQE) */
    uint8_t signature;
    uint8_t dci_stream_channel_id[2]; /* BE16; 0 for us */
    uint8_t fm_ce_se;          /* fence mode | completion request | solicited */
    uint32_t imm;              /* immediate data (RDMA_WRITE_IMM), as given */
} rshmem_mlx5_ctrl_seg;

/* Remote address segment, 16 bytes. */
typedef struct rshmem_mlx5_raddr_seg {
    uint64_t raddr; /* BE */
    uint32_t rkey;  /* BE */
    uint32_t reserved;
} rshmem_mlx5_raddr_seg;

/* Data (scatter/gather pointer) segment, 16 bytes. */
typedef struct rshmem_mlx5_data_seg {
    uint32_t byte_count; /* BE */
    uint32_t lkey;       /* BE */
    uint64_t addr;       /* BE */
} rshmem_mlx5_data_seg;

/* Inline data header, 4 bytes, followed by the bytes; the whole is padded to 16. */
typedef struct rshmem_mlx5_inl_data_seg {
    uint32_t byte_count; /* BE: length | RSHMEM_MLX5_INLINE_SEG */
} rshmem_mlx5_inl_data_seg;

/* Standard 8-byte atomic segment (ATOMIC_FA / ATOMIC_CS), 16 bytes. */
typedef struct rshmem_mlx5_atomic_seg {
    uint64_t swap_add; /* BE: swap value (CS) or addend (FA) */
    uint64_t compare;  /* BE: compare value (CS) */
} rshmem_mlx5_atomic_seg;

/* Masked (extended) atomics. Not in mlx5dv.h; from the PRM (see the top of this file).
 * Masked CS: if ((old & compare_mask) == (compare & compare_mask))
 *                new = (old & ~swap_mask) | (swap & swap_mask).
 * Masked FA: add per field; a set bit in field_boundary ends a field (its carry is dropped),
 *            so field_boundary = ~0 makes the add a XOR and 0 a plain add. */
typedef struct rshmem_mlx5_masked_cs32_seg { /* 16 bytes */
    uint32_t swap;         /* BE */
    uint32_t compare;      /* BE */
    uint32_t swap_mask;    /* BE */
    uint32_t compare_mask; /* BE */
} rshmem_mlx5_masked_cs32_seg;

typedef struct rshmem_mlx5_masked_fa32_seg { /* 16 bytes */
    uint32_t add;            /* BE */
    uint32_t field_boundary; /* BE */
    uint64_t reserved;
} rshmem_mlx5_masked_fa32_seg;

typedef struct rshmem_mlx5_masked_cs64_seg { /* 32 bytes: two octowords */
    uint64_t swap;         /* BE */
    uint64_t compare;      /* BE */
    uint64_t swap_mask;    /* BE */
    uint64_t compare_mask; /* BE */
} rshmem_mlx5_masked_cs64_seg;

typedef struct rshmem_mlx5_masked_fa64_seg { /* 16 bytes */
    uint64_t add;            /* BE */
    uint64_t field_boundary; /* BE */
} rshmem_mlx5_masked_fa64_seg;

/* Address vector (DC initiator WQEs): 16-byte half form or 48-byte extended form. */
typedef struct rshmem_mlx5_av {
    uint64_t dc_key;      /* BE (UD: qkey in the first 4 bytes) */
    uint32_t dqp_dct;     /* BE: target DCT number | EXTENDED_UD_AV */
    uint8_t stat_rate_sl;
    uint8_t fl_mlid;
    uint16_t rlid;        /* BE */
    uint8_t reserved0[4];
    uint8_t rmac[6];
    uint8_t tclass;
    uint8_t hop_limit;
    uint32_t grh_gid_fl;  /* BE */
    uint8_t rgid[16];
} rshmem_mlx5_av;

/* Datagram segment of a DC initiator (or UD) WQE: the address vector, placed right after the
 * control segment. A DCI WQE may carry only its first 16 bytes (key, dqp_dct, sl, rlid: enough
 * on an InfiniBand fabric addressed by LID) or all 48 (with the GRH: RoCE, or IB across subnets);
 * the EXTENDED_UD_AV bit of dqp_dct says which. */
typedef struct rshmem_mlx5_datagram_seg {
    rshmem_mlx5_av av;
} rshmem_mlx5_datagram_seg;
#define RSHMEM_MLX5_AV_HALF_BYTES 16u

/* 64-byte CQE, the fields we read (and the model writes). */
typedef struct rshmem_mlx5_cqe64 {
    uint8_t rsvd0[2];
    uint16_t wqe_id;          /* BE (striding RQ only) */
    uint8_t rsvd4[28];
    uint32_t srqn_uidx;       /* BE */
    uint32_t imm_inval_pkey;  /* BE */
    uint8_t app;
    uint8_t app_op;
    uint16_t app_info;        /* BE */
    uint32_t byte_cnt;        /* BE: bytes transferred (read / atomic) */
    uint64_t timestamp;       /* BE */
    uint32_t sop_drop_qpn;    /* BE: qpn in the low 24 bits */
    uint16_t wqe_counter;     /* BE: index of the first WQEBB of the completed WQE */
    uint8_t signature;
    uint8_t op_own;           /* opcode << 4 | ... | owner */
} rshmem_mlx5_cqe64;

/* The same 64 bytes seen as an error CQE (op_own opcode REQ_ERR or RESP_ERR). */
typedef struct rshmem_mlx5_err_cqe {
    uint8_t rsvd0[32];
    uint32_t srqn;            /* BE */
    uint8_t rsvd1[18];
    uint8_t vendor_err_synd;
    uint8_t syndrome;
    uint32_t s_wqe_opcode_qpn; /* BE: WQE opcode << 24 | qpn */
    uint16_t wqe_counter;     /* BE */
    uint8_t signature;
    uint8_t op_own;
} rshmem_mlx5_err_cqe;

#if defined(__cplusplus)
static_assert(sizeof(rshmem_mlx5_ctrl_seg) == 16, "ctrl segment is 16 bytes");
static_assert(sizeof(rshmem_mlx5_raddr_seg) == 16, "raddr segment is 16 bytes");
static_assert(sizeof(rshmem_mlx5_data_seg) == 16, "data segment is 16 bytes");
static_assert(sizeof(rshmem_mlx5_inl_data_seg) == 4, "inline header is 4 bytes");
static_assert(sizeof(rshmem_mlx5_atomic_seg) == 16, "atomic segment is 16 bytes");
static_assert(sizeof(rshmem_mlx5_masked_cs32_seg) == 16, "masked cs32 is 16 bytes");
static_assert(sizeof(rshmem_mlx5_masked_fa32_seg) == 16, "masked fa32 is 16 bytes");
static_assert(sizeof(rshmem_mlx5_masked_cs64_seg) == 32, "masked cs64 is 32 bytes");
static_assert(sizeof(rshmem_mlx5_masked_fa64_seg) == 16, "masked fa64 is 16 bytes");
static_assert(sizeof(rshmem_mlx5_av) == 48, "address vector is 48 bytes");
static_assert(sizeof(rshmem_mlx5_datagram_seg) == 48, "datagram segment is 48 bytes");
static_assert(sizeof(rshmem_mlx5_cqe64) == 64, "CQE is 64 bytes");
static_assert(sizeof(rshmem_mlx5_err_cqe) == 64, "error CQE is 64 bytes");
#else
_Static_assert(sizeof(rshmem_mlx5_ctrl_seg) == 16, "ctrl segment is 16 bytes");
_Static_assert(sizeof(rshmem_mlx5_cqe64) == 64, "CQE is 64 bytes");
#endif

/* ---- byte order: the wire is big-endian; hosts and GPUs are little-endian ------------------ */
RSHMEM_MLX5_FN uint16_t rshmem_bswap16(uint16_t x) { return (uint16_t)((x >> 8) | (x << 8)); }

RSHMEM_MLX5_FN uint32_t rshmem_bswap32(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __byte_perm(x, 0, 0x0123);
#else
    return __builtin_bswap32(x);
#endif
}

RSHMEM_MLX5_FN uint64_t rshmem_bswap64(uint64_t x) {
#if defined(__CUDA_ARCH__)
    uint32_t lo = (uint32_t)x, hi = (uint32_t)(x >> 32);
    return ((uint64_t)__byte_perm(lo, 0, 0x0123) << 32) | (uint64_t)__byte_perm(hi, 0, 0x0123);
#else
    return __builtin_bswap64(x);
#endif
}

#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RSHMEM_MLX5_HOST_IS_BE 1
#endif

#if defined(RSHMEM_MLX5_HOST_IS_BE)
RSHMEM_MLX5_FN uint16_t rshmem_htobe16(uint16_t x) { return x; }
RSHMEM_MLX5_FN uint32_t rshmem_htobe32(uint32_t x) { return x; }
RSHMEM_MLX5_FN uint64_t rshmem_htobe64(uint64_t x) { return x; }
#else
RSHMEM_MLX5_FN uint16_t rshmem_htobe16(uint16_t x) { return rshmem_bswap16(x); }
RSHMEM_MLX5_FN uint32_t rshmem_htobe32(uint32_t x) { return rshmem_bswap32(x); }
RSHMEM_MLX5_FN uint64_t rshmem_htobe64(uint64_t x) { return rshmem_bswap64(x); }
#endif
RSHMEM_MLX5_FN uint16_t rshmem_be16toh(uint16_t x) { return rshmem_htobe16(x); }
RSHMEM_MLX5_FN uint32_t rshmem_be32toh(uint32_t x) { return rshmem_htobe32(x); }
RSHMEM_MLX5_FN uint64_t rshmem_be64toh(uint64_t x) { return rshmem_htobe64(x); }

/* ---- field builders --------------------------------------------------------------------------- */
RSHMEM_MLX5_FN uint32_t rshmem_mlx5_opmod_idx_opcode(uint32_t opmod, uint32_t wqe_idx, uint32_t opcode) {
    return rshmem_htobe32((opmod << 24) | ((wqe_idx & 0xffffu) << 8) | (opcode & 0xffu));
}
RSHMEM_MLX5_FN uint32_t rshmem_mlx5_qpn_ds(uint32_t qpn, uint32_t ds) {
    return rshmem_htobe32(((qpn & 0xffffffu) << 8) | (ds & 0xffu));
}
/* CQE accessors (op_own is a single byte: no byte swap). */
RSHMEM_MLX5_FN uint32_t rshmem_mlx5_cqe_opcode(uint8_t op_own) { return (uint32_t)(op_own >> 4); }
RSHMEM_MLX5_FN uint32_t rshmem_mlx5_cqe_owner(uint8_t op_own) { return (uint32_t)(op_own & 1u); }

#endif /* RSHMEM_IBGDA_MLX5_LAYOUT_H */
