/* rshmem IBGDA: the descriptors the device posting path reads and updates (one per QP, one per
 * PE), shared with the host runtime and the software HCA model.
 *
 * Rust owns these layouts: src/ibgda/abi.rs declares the same structs (#[repr(C)]) with size and
 * offset assertions, and tests/ibgda_layout.rs checks that this header agrees field by field.
 * Addresses are stored as uint64_t so the layout is the same for host, device and Rust.
 * Bump RSHMEM_IBGDA_STATE_VERSION on every change of these structs.
 */
#ifndef RSHMEM_IBGDA_STATE_H
#define RSHMEM_IBGDA_STATE_H

#if !defined(__CUDACC_RTC__) /* NVRTC: rshmem_common.h has the types */
#include <stdint.h>
#endif

#define RSHMEM_IBGDA_STATE_VERSION 3u

/* rshmem_ibgda_qp.kind */
#define RSHMEM_IBGDA_QP_RC  0u
#define RSHMEM_IBGDA_QP_DCI 1u

/* rshmem_ibgda_qp.flags */
#define RSHMEM_IBGDA_QP_CPU_DOORBELL 0x1u /* the device only advances posted_head; a CPU thread rings */

/* map_by values (NVSHMEM_IBGDA_RC_MAP_BY / _DCI_MAP_BY) */
#define RSHMEM_IBGDA_MAP_BY_CTA  0u
#define RSHMEM_IBGDA_MAP_BY_SM   1u
#define RSHMEM_IBGDA_MAP_BY_WARP 2u
#define RSHMEM_IBGDA_MAP_BY_DCT  3u

/* Vendor syndromes the software HCA model writes where the mlx5 syndrome alone says too little. */
#define RSHMEM_IBGDA_MODEL_VENDOR_DC_KEY 0xd1u /* the DCT rejected the DC access key */
#define RSHMEM_IBGDA_MODEL_VENDOR_NO_DCT 0xd2u /* no DCT with that number at that LID */

/* Local buffers registered with the NIC at once (nvshmemx_buffer_register) */
#define RSHMEM_IBGDA_MAX_REGS 64u

/* Largest send queue: WQE indices travel as 16 bits, completions are matched within half of that. */
#define RSHMEM_IBGDA_MAX_LOG_NWQES 15u

/* One send queue (RC QP or DC initiator) with its completion queue. 384 bytes; the device-updated
 * counters sit on their own 64-byte lines. */
typedef struct rshmem_ibgda_qp {
    /* ---- written by the host at set-up; read-only for the device (128 bytes) ---- */
    uint32_t version;      /* RSHMEM_IBGDA_STATE_VERSION */
    uint32_t qpn;          /* QP number (24 bits), goes into every ctrl segment and doorbell */
    uint32_t peer_pe;      /* RC: the remote PE; DCI: 0xffffffff */
    uint32_t cqn;          /* CQ number (diagnostics) */
    uint16_t log_nwqes;    /* the send queue has 1 << log_nwqes 64-byte blocks (WQEBBs) */
    uint16_t log_ncqes;    /* the CQ has 1 << log_ncqes 64-byte CQEs (>= log_nwqes) */
    uint16_t signal_every; /* a WQE asks for a completion when it covers a block index = N-1 mod N */
    uint16_t batch;        /* ring the doorbell at least every `batch` blocks (a power of two) when others post */
    uint16_t inline_max;   /* largest put payload sent inline (bytes) */
    uint16_t kind;         /* RSHMEM_IBGDA_QP_RC or _DCI */
    uint32_t flags;        /* RSHMEM_IBGDA_QP_* */
    uint64_t sq_buf;       /* WQE ring */
    uint64_t sq_dbrec;     /* doorbell record: two big-endian u32, [1] = send producer counter */
    uint64_t bf_reg;       /* doorbell register (UAR / BlueFlame): one 8-byte store per ring */
    uint64_t cq_buf;       /* CQE ring */
    uint64_t cq_dbrec;     /* CQ doorbell record: [0] = consumer index (big-endian, 24 bits) */
    uint8_t reserved0[56];
    /* ---- device-updated (each line: one hot counter) ---- */
    uint64_t resv_head;    /* next block index to reserve (monotonic, 64-bit) */
    uint8_t pad1[56];
    uint64_t ready_head;   /* every block below it is written and published, in order */
    uint8_t pad2[56];
    uint64_t posted_head;  /* producer index last written to the doorbell record and rung */
    uint64_t signaled_head;/* end of the furthest WQE that asked for a completion */
    uint32_t post_lock;    /* taken while ringing */
    uint32_t fence_pending;/* the next WQE carries the fence flag */
    uint8_t pad3[40];
    uint64_t completed_head; /* every block below it has completed */
    uint64_t cq_cons;      /* CQEs consumed (monotonic) */
    uint32_t cq_lock;      /* taken while polling the CQ */
    /* first error CQE seen (0 = none) */
    uint8_t err_syndrome;
    uint8_t err_vendor;
    uint8_t err_opcode;    /* WQE opcode of the failed WQE */
    uint8_t err_cqe_opcode;/* REQ_ERR or RESP_ERR */
    uint32_t err_wqe_index;/* 16-bit WQE index of the failed WQE */
    uint32_t err_count;    /* error CQEs seen */
    uint32_t err_dct;      /* DCI: DCT number and LID the failed WQE addressed (its address vector), */
    uint16_t err_rlid;     /*      so that the error can name the PE */
    uint8_t pad4[26];
} rshmem_ibgda_qp;

/* What a PE needs to address another PE's heap. 80 bytes. */
typedef struct rshmem_ibgda_peer {
    uint64_t heap_base;    /* the remote PE's heap base as its NIC sees it (raddr of offset 0) */
    uint64_t heap_size;
    uint32_t rkey;         /* remote key of the remote heap registration */
    uint32_t av_size;      /* DC: bytes of `av` to copy into a DCI WQE (16 or 48); 0 for RC-only */
    uint64_t reserved0;
    uint8_t av[48];        /* DC: the address vector of the remote PE's DCT, wire format
                              (rshmem_mlx5_av, big-endian fields), built by the host */
} rshmem_ibgda_peer;

/* A local buffer the NIC may read and write (nvshmemx_buffer_register). 32 bytes. */
typedef struct rshmem_ibgda_reg {
    uint64_t base;
    uint64_t size;
    uint32_t lkey;         /* local key of its registration */
    uint32_t reserved0;
    uint64_t reserved1;
} rshmem_ibgda_reg;

/* The registered buffers: reg[0, count) are live. Rewritten by the host on every register or
 * unregister; a device lookup that misses takes the path for unregistered memory. */
typedef struct rshmem_ibgda_regs {
    uint32_t count;
    uint32_t reserved[3];
    rshmem_ibgda_reg reg[RSHMEM_IBGDA_MAX_REGS];
} rshmem_ibgda_regs;

/* Per-PE IBGDA state the device reads (pointed to by the device state). 128 bytes. */
typedef struct rshmem_ibgda_state {
    uint32_t version;      /* RSHMEM_IBGDA_STATE_VERSION */
    uint32_t my_pe;
    uint32_t npes;
    uint32_t num_rc_per_pe;/* RC QPs per remote PE (0: DC only) */
    uint32_t num_dci;
    uint32_t rc_map_by;    /* RSHMEM_IBGDA_MAP_BY_* */
    uint32_t dci_map_by;
    uint32_t heap_lkey;    /* local key of my heap registration */
    uint64_t heap_base;    /* my heap base (local addresses) */
    uint64_t heap_size;
    uint64_t rc_qps;       /* rshmem_ibgda_qp[npes * num_rc_per_pe], PE-major */
    uint64_t dci_qps;      /* rshmem_ibgda_qp[num_dci] */
    uint64_t peers;        /* rshmem_ibgda_peer[npes] */
    uint64_t fetch_buf;    /* landing area for fetch results that need one (8 bytes per slot) */
    uint32_t fetch_lkey;
    uint32_t fetch_slots;  /* power of two */
    uint64_t fetch_next;   /* device-updated: next fetch slot (monotonic) */
    uint32_t num_dct;      /* DC: DCTs per PE */
    uint32_t num_qps;      /* entries of the QP array in use: npes * num_rc_per_pe (RC) or num_dci (DC) */
    uint64_t dcts;         /* DC: uint32_t[npes * num_dct], the DCT numbers of every PE, PE-major */
    uint64_t qp_used;      /* device-updated: uint64_t[(num_qps + 63) / 64], bit i = QP i has carried work
                              (quiet visits only those); 0 = no bitmap, quiet visits every QP */
    uint64_t regs;         /* rshmem_ibgda_regs: local buffers registered with the NIC (0: none) */
} rshmem_ibgda_state;

#if defined(__cplusplus)
static_assert(sizeof(rshmem_ibgda_qp) == 384, "rshmem_ibgda_qp is 384 bytes");
#if !defined(__CUDACC_RTC__) /* NVRTC has neither <cstddef> nor a constant offsetof */
#include <cstddef>
static_assert(offsetof(rshmem_ibgda_qp, resv_head) == 128, "resv_head starts line 2");
static_assert(offsetof(rshmem_ibgda_qp, ready_head) == 192, "ready_head starts line 3");
static_assert(offsetof(rshmem_ibgda_qp, posted_head) == 256, "posted_head starts line 4");
static_assert(offsetof(rshmem_ibgda_qp, completed_head) == 320, "completed_head starts line 5");
#endif
static_assert(sizeof(rshmem_ibgda_peer) == 80, "rshmem_ibgda_peer is 80 bytes");
static_assert(sizeof(rshmem_ibgda_state) == 128, "rshmem_ibgda_state is 128 bytes");
static_assert(sizeof(rshmem_ibgda_reg) == 32, "rshmem_ibgda_reg is 32 bytes");
#else
_Static_assert(sizeof(rshmem_ibgda_qp) == 384, "rshmem_ibgda_qp is 384 bytes");
_Static_assert(sizeof(rshmem_ibgda_peer) == 80, "rshmem_ibgda_peer is 80 bytes");
_Static_assert(sizeof(rshmem_ibgda_state) == 128, "rshmem_ibgda_state is 128 bytes");
_Static_assert(sizeof(rshmem_ibgda_reg) == 32, "rshmem_ibgda_reg is 32 bytes");
#endif

#endif /* RSHMEM_IBGDA_STATE_H */
