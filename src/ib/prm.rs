//! mlx5 PRM command layouts for the DevX path, encoded by hand: a small big-endian bit-field
//! writer ([`Cmd`]) and one function per command (CREATE_CQ, CREATE_QP, RST2INIT_QP,
//! INIT2RTR_QP, RTR2RTS_QP, CREATE_DCT) that fills exactly the fields we rely on; QUERY_HCA_CAP
//! and the capabilities we read from its answer are in [`caps`].
//!
//! Conventions (those of the public mlx5 PRM field tables, `mlx5_ifc` in rdma-core and Linux):
//! a layout is a run of bits; a field is named by its bit offset from the start and its width.
//! Bit offsets count from the most significant bit of the first big-endian 32-bit word, so a
//! field at offset `o` of width `w` (inside one word) lives in word `o / 32`, shifted left by
//! `32 - w - o % 32`. 64-bit fields are two big-endian words, high word first; byte arrays
//! (GIDs, MACs) are stored byte for byte. Nested contexts (qpc, cqc, dctc, the address path)
//! are placed at a fixed bit offset inside their command; their fields below are given relative
//! to the context, with the context's own offset added by [`Cmd::set_in`].
//!
//! Every value here is written from the field tables; the unit tests (prm_tests.rs) check each
//! command field by field against byte images worked out independently from the same tables.
//! NEVER MET HARDWARE: no firmware has parsed these commands.

pub mod caps;
pub use caps::{query_hca_cap, HcaCaps};

/// A field: bit offset from the start of its layout, width in bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub bit: u32,
    pub width: u32,
}

const fn f(bit: u32, width: u32) -> Field {
    Field { bit, width }
}

/// A command (or any PRM layout) being written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cmd {
    pub bytes: Vec<u8>,
}

impl Cmd {
    /// A zeroed layout of `bits` bits (a multiple of 32).
    pub fn new(bits: u32) -> Cmd {
        debug_assert!(bits.is_multiple_of(32));
        Cmd { bytes: vec![0; (bits / 8) as usize] }
    }

    /// Writes `value` into `field`, which must lie inside one 32-bit word. Bits of `value` above
    /// the width are dropped (callers check ranges before encoding).
    pub fn set(&mut self, field: Field, value: u64) {
        self.set_in(0, field, value)
    }

    /// As [`Cmd::set`], for a field of a context that starts at bit `base`.
    pub fn set_in(&mut self, base: u32, field: Field, value: u64) {
        let bit = base + field.bit;
        let (w, in_word) = (field.width, bit % 32);
        if w == 64 {
            debug_assert!(in_word == 0, "64-bit fields are word aligned");
            let at = (bit / 8) as usize;
            self.bytes[at..at + 8].copy_from_slice(&value.to_be_bytes());
            return;
        }
        debug_assert!(w >= 1 && in_word + w <= 32, "field {bit}+{w} crosses a word");
        debug_assert!(w == 32 || value >> w == 0, "value {value:#x} does not fit {w} bits");
        let mask: u32 = if w == 32 { u32::MAX } else { ((1u32 << w) - 1) << (32 - w - in_word) };
        let at = (bit / 32 * 4) as usize;
        let word = u32::from_be_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"));
        let shifted = ((value as u32) << (32 - w - in_word)) & mask;
        self.bytes[at..at + 4].copy_from_slice(&((word & !mask) | shifted).to_be_bytes());
    }

    /// Copies `data` to the byte-aligned bit offset `bit`.
    pub fn set_bytes(&mut self, bit: u32, data: &[u8]) {
        debug_assert!(bit.is_multiple_of(8));
        let at = (bit / 8) as usize;
        self.bytes[at..at + data.len()].copy_from_slice(data);
    }
}

/// Reads a field (of at most 32 bits, inside one word) from a layout: command outputs, and the
/// command-sequence tests.
pub fn get(bytes: &[u8], field: Field) -> u32 {
    let (w, in_word) = (field.width, field.bit % 32);
    let at = (field.bit / 32 * 4) as usize;
    let word = u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    if w == 32 {
        word
    } else {
        (word >> (32 - w - in_word)) & ((1 << w) - 1)
    }
}

// ---- opcodes and values (PRM command opcode table, qpc/cqc/dctc enumerations) ----
pub const CREATE_CQ: u16 = 0x400;
pub const CREATE_QP: u16 = 0x500;
pub const RST2INIT_QP: u16 = 0x502;
pub const INIT2RTR_QP: u16 = 0x503;
pub const RTR2RTS_QP: u16 = 0x504;
pub const CREATE_DCT: u16 = 0x710;

/// qpc.st: reliable connected, DC initiator.
pub const ST_RC: u64 = 0x0;
pub const ST_DCI: u64 = 0x5;
/// qpc.pm_state "migrated": no alternate path.
pub const PM_MIGRATED: u64 = 0x3;
/// qpc.rq_type: zero-size receive queue (we never post receives).
pub const RQ_ZERO_SIZE: u64 = 0x3;
/// qpc.ts_format: the device's default timestamp format.
pub const TS_DEFAULT: u64 = 0x1;
/// qpc/dctc.atomic_mode: atomics of up to 8 bytes, including the masked (extended) forms.
pub const ATOMIC_UP_TO_8B: u64 = 0x3;
/// Largest message: 2^30 bytes.
pub const LOG_MSG_MAX: u64 = 30;

// ---- common command header and output ----
/// `opcode` [0x00, 16) and `op_mod` [0x30, 16) of every command input.
pub const HDR_OPCODE: Field = f(0x00, 16);
pub const HDR_OP_MOD: Field = f(0x30, 16);
/// Every command output: `status` [0x00, 8), `syndrome` [0x20, 32); a CREATE command returns
/// the new object's number (cqn, qpn, dctn) in [0x48, 24).
pub const OUT_STATUS: Field = f(0x00, 8);
pub const OUT_SYNDROME: Field = f(0x20, 32);
pub const OUT_OBJ: Field = f(0x48, 24);
/// Bytes of every output we use (create_*_out, *_qp_out).
pub const OUT_BYTES: usize = 16;

/// The firmware's answer in a command output: `Err((status, syndrome))` unless status is 0.
pub fn out_status(out: &[u8]) -> Result<(), (u8, u32)> {
    match get(out, OUT_STATUS) {
        0 => Ok(()),
        s => Err((s as u8, get(out, OUT_SYNDROME))),
    }
}

/// The object number a CREATE command returned.
pub fn out_obj(out: &[u8]) -> u32 {
    get(out, OUT_OBJ)
}

// ---- cqc: completion queue context (0x200 bits), at 0x80 in create_cq_in ----
pub mod cqc {
    use super::{f, Field};
    pub const DBR_UMEM_VALID: Field = f(0x06, 1);
    pub const CQE_SZ: Field = f(0x08, 3);
    pub const OI: Field = f(0x0e, 1);
    pub const DBR_UMEM_ID: Field = f(0x20, 32);
    pub const PAGE_OFFSET: Field = f(0x54, 6);
    pub const LOG_CQ_SIZE: Field = f(0x63, 5);
    pub const UAR_PAGE: Field = f(0x68, 24);
    pub const C_EQN: Field = f(0xb8, 8);
    pub const LOG_PAGE_SIZE: Field = f(0xc3, 5);
    pub const DBR_ADDR: Field = f(0x1c0, 64);
}
pub const CREATE_CQ_BITS: u32 = 0x880;
pub const CREATE_CQ_CQC: u32 = 0x80;
pub const CQ_UMEM_OFFSET: Field = f(0x280, 64);
pub const CQ_UMEM_ID: Field = f(0x2c0, 32);
pub const CQ_UMEM_VALID: Field = f(0x2e0, 1);

/// Where a queue (or a doorbell record) lives: a DevX umem and the byte offset inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct UmemRef {
    pub id: u32,
    pub offset: u64,
}

/// A completion queue of `2^log_size` 64-byte CQEs in `buf`, its doorbell record (consumer
/// index, arm word) at `dbr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqParams {
    pub log_size: u8,
    pub uar_page: u32,
    pub eqn: u32,
    pub buf: UmemRef,
    pub dbr: UmemRef,
}

/// CREATE_CQ. Sets: opcode; cqc: cqe_sz 0 (64-byte CQEs), oi 1 (overrun ignored: the device
/// reads CQEs by owner bit and never lets more than a queue's worth be outstanding, so a lagging
/// consumer index must not put the CQ in error), log_cq_size, uar_page, c_eqn (the EQ that would
/// take events; we never arm), log_page_size 0 (4 KiB pages, as the umems are registered),
/// page_offset 0, dbr_umem_valid 1 with dbr_umem_id and dbr_addr (an offset into that umem);
/// cq_umem_valid 1 with cq_umem_id and cq_umem_offset for the CQE buffer.
pub fn create_cq(p: &CqParams) -> Cmd {
    let mut c = Cmd::new(CREATE_CQ_BITS);
    c.set(HDR_OPCODE, CREATE_CQ as u64);
    let b = CREATE_CQ_CQC;
    c.set_in(b, cqc::CQE_SZ, 0);
    c.set_in(b, cqc::OI, 1);
    c.set_in(b, cqc::LOG_CQ_SIZE, p.log_size as u64);
    c.set_in(b, cqc::UAR_PAGE, p.uar_page as u64);
    c.set_in(b, cqc::C_EQN, p.eqn as u64);
    c.set_in(b, cqc::LOG_PAGE_SIZE, 0);
    c.set_in(b, cqc::PAGE_OFFSET, 0);
    c.set_in(b, cqc::DBR_UMEM_VALID, 1);
    c.set_in(b, cqc::DBR_UMEM_ID, p.dbr.id as u64);
    c.set_in(b, cqc::DBR_ADDR, p.dbr.offset);
    c.set(CQ_UMEM_OFFSET, p.buf.offset);
    c.set(CQ_UMEM_ID, p.buf.id as u64);
    c.set(CQ_UMEM_VALID, 1);
    c
}

// ---- ads: address path (0x160 bits), at 0xc0 inside qpc ----
pub mod ads {
    use super::{f, Field};
    pub const PKEY_INDEX: Field = f(0x10, 16);
    pub const GRH: Field = f(0x28, 1);
    pub const RLID: Field = f(0x30, 16);
    pub const ACK_TIMEOUT: Field = f(0x40, 5);
    pub const SRC_ADDR_INDEX: Field = f(0x48, 8);
    pub const HOP_LIMIT: Field = f(0x58, 8);
    pub const TCLASS: Field = f(0x64, 8);
    pub const RGID: u32 = 0x80;
    pub const SL: Field = f(0x124, 4);
    pub const VHCA_PORT_NUM: Field = f(0x128, 8);
    pub const RMAC_47_32: Field = f(0x130, 16);
    pub const RMAC_31_0: Field = f(0x140, 32);
}

// ---- qpc: queue pair context (0x740 bits), at 0xc0 in create_qp_in and the modify commands ----
pub mod qpc {
    use super::{f, Field};
    pub const ST: Field = f(0x08, 8);
    pub const PM_STATE: Field = f(0x13, 2);
    pub const PD: Field = f(0x28, 24);
    pub const MTU: Field = f(0x40, 3);
    pub const LOG_MSG_MAX: Field = f(0x43, 5);
    pub const LOG_RQ_SIZE: Field = f(0x49, 4);
    pub const NO_SQ: Field = f(0x50, 1);
    pub const LOG_SQ_SIZE: Field = f(0x51, 4);
    pub const TS_FORMAT: Field = f(0x58, 2);
    pub const UAR_PAGE: Field = f(0x68, 24);
    pub const LOG_PAGE_SIZE: Field = f(0xa3, 5);
    pub const REMOTE_QPN: Field = f(0xa8, 24);
    pub const PRIMARY_PATH: u32 = 0xc0;
    pub const LOG_SRA_MAX: Field = f(0x388, 3);
    pub const RETRY_COUNT: Field = f(0x38d, 3);
    pub const RNR_RETRY: Field = f(0x390, 3);
    pub const NEXT_SEND_PSN: Field = f(0x3c8, 24);
    pub const CQN_SND: Field = f(0x3e8, 24);
    pub const LOG_RRA_MAX: Field = f(0x488, 3);
    pub const ATOMIC_MODE: Field = f(0x48c, 4);
    pub const RRE: Field = f(0x490, 1);
    pub const RWE: Field = f(0x491, 1);
    pub const RAE: Field = f(0x492, 1);
    pub const PAGE_OFFSET: Field = f(0x494, 6);
    pub const MIN_RNR_NAK: Field = f(0x4a3, 5);
    pub const NEXT_RCV_PSN: Field = f(0x4a8, 24);
    pub const CQN_RCV: Field = f(0x4e8, 24);
    pub const DBR_ADDR: Field = f(0x500, 64);
    pub const RQ_TYPE: Field = f(0x565, 3);
    pub const DBR_UMEM_VALID: Field = f(0x683, 1);
    pub const DBR_UMEM_ID: Field = f(0x720, 32);
}
/// create_qp_in and rst2init/init2rtr/rtr2rts_qp_in are all 0x880 bits with the qpc at 0xc0.
pub const QP_CMD_BITS: u32 = 0x880;
pub const QP_CMD_QPC: u32 = 0xc0;
/// The QP number a modify command acts on (modify commands only).
pub const QP_CMD_QPN: Field = f(0x48, 24);
/// opt_param_mask (modify commands): 0, we set only fields each transition requires.
pub const QP_CMD_OPT_PARAM_MASK: Field = f(0x80, 32);
pub const WQ_UMEM_OFFSET: Field = f(0x800, 64);
pub const WQ_UMEM_ID: Field = f(0x840, 32);
pub const WQ_UMEM_VALID: Field = f(0x860, 1);

/// Which kind of send queue a QP is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpKind {
    /// Reliable connected: one remote QP.
    Rc,
    /// DC initiator: each WQE names its target with an address vector.
    Dci,
}

/// A send queue of `2^log_sq_size` 64-byte blocks in `sq`, its doorbell record (receive counter,
/// send counter) at `dbr`, completions to `cqn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpParams {
    pub kind: QpKind,
    pub pdn: u32,
    pub uar_page: u32,
    pub cqn: u32,
    pub log_sq_size: u8,
    pub sq: UmemRef,
    pub dbr: UmemRef,
}

/// CREATE_QP. Sets: opcode; qpc: st (RC or DCI), pm_state migrated, pd, uar_page (where its
/// doorbells ring), log_sq_size, rq_type zero-size (no receive queue: RDMA WRITE without
/// immediate, READ and atomics consume no receive WQE) with log_rq_size 0, cqn_snd and cqn_rcv
/// (one CQ), log_msg_max 30, ts_format default, log_page_size 0 and page_offset 0 (4 KiB umem
/// pages), dbr_umem_valid 1 with dbr_umem_id and dbr_addr (offset); wq_umem_valid 1 with
/// wq_umem_id and wq_umem_offset (the send queue starts the work queue buffer, there being no RQ).
pub fn create_qp(p: &QpParams) -> Cmd {
    let mut c = Cmd::new(QP_CMD_BITS);
    c.set(HDR_OPCODE, CREATE_QP as u64);
    let b = QP_CMD_QPC;
    c.set_in(b, qpc::ST, if p.kind == QpKind::Rc { ST_RC } else { ST_DCI });
    c.set_in(b, qpc::PM_STATE, PM_MIGRATED);
    c.set_in(b, qpc::PD, p.pdn as u64);
    c.set_in(b, qpc::UAR_PAGE, p.uar_page as u64);
    c.set_in(b, qpc::LOG_SQ_SIZE, p.log_sq_size as u64);
    c.set_in(b, qpc::NO_SQ, 0);
    c.set_in(b, qpc::RQ_TYPE, RQ_ZERO_SIZE);
    c.set_in(b, qpc::LOG_RQ_SIZE, 0);
    c.set_in(b, qpc::CQN_SND, p.cqn as u64);
    c.set_in(b, qpc::CQN_RCV, p.cqn as u64);
    c.set_in(b, qpc::LOG_MSG_MAX, LOG_MSG_MAX);
    c.set_in(b, qpc::TS_FORMAT, TS_DEFAULT);
    c.set_in(b, qpc::LOG_PAGE_SIZE, 0);
    c.set_in(b, qpc::PAGE_OFFSET, 0);
    c.set_in(b, qpc::DBR_UMEM_VALID, 1);
    c.set_in(b, qpc::DBR_UMEM_ID, p.dbr.id as u64);
    c.set_in(b, qpc::DBR_ADDR, p.dbr.offset);
    c.set(WQ_UMEM_OFFSET, p.sq.offset);
    c.set(WQ_UMEM_ID, p.sq.id as u64);
    c.set(WQ_UMEM_VALID, 1);
    c
}

fn modify(opcode: u16, qpn: u32) -> Cmd {
    let mut c = Cmd::new(QP_CMD_BITS);
    c.set(HDR_OPCODE, opcode as u64);
    c.set(QP_CMD_QPN, qpn as u64);
    c.set(QP_CMD_OPT_PARAM_MASK, 0);
    c
}

/// RST2INIT_QP. Sets: opcode, qpn; qpc: pm_state migrated, primary path vhca_port_num and
/// pkey_index 0; for an RC QP also remote read, write and atomic enable (rre, rwe, rae: the
/// peers' operations on our heap arrive on it) and atomic_mode up to 8 bytes.
pub fn rst2init_qp(qpn: u32, kind: QpKind, port: u8) -> Cmd {
    let mut c = modify(RST2INIT_QP, qpn);
    let (b, path) = (QP_CMD_QPC, QP_CMD_QPC + qpc::PRIMARY_PATH);
    c.set_in(b, qpc::PM_STATE, PM_MIGRATED);
    c.set_in(path, ads::VHCA_PORT_NUM, port as u64);
    c.set_in(path, ads::PKEY_INDEX, 0);
    if kind == QpKind::Rc {
        c.set_in(b, qpc::RRE, 1);
        c.set_in(b, qpc::RWE, 1);
        c.set_in(b, qpc::RAE, 1);
        c.set_in(b, qpc::ATOMIC_MODE, ATOMIC_UP_TO_8B);
    }
    c
}

/// The global route of a path (RoCE, or InfiniBand across subnets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grh {
    pub rgid: [u8; 16],
    pub sgid_index: u8,
    pub hop_limit: u8,
    pub tclass: u8,
    /// RoCE: the next hop's Ethernet address (None on InfiniBand).
    pub rmac: Option<[u8; 6]>,
}

/// The remote end of an RC QP, as INIT2RTR needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtrParams {
    /// enum ibv_mtu (1 = 256 .. 5 = 4096); the qpc uses the same code.
    pub mtu: u8,
    pub remote_qpn: u32,
    pub next_rcv_psn: u32,
    /// log2 of the RDMA READ / atomic requests we answer at once.
    pub log_rra_max: u8,
    pub min_rnr_nak: u8,
    pub port: u8,
    pub rlid: u16,
    pub sl: u8,
    pub grh: Option<Grh>,
}

/// INIT2RTR_QP. Sets: opcode, qpn; qpc: mtu; for RC also remote_qpn, next_rcv_psn, log_rra_max,
/// min_rnr_nak and the primary path: vhca_port_num, rlid, sl, and with a global route grh 1,
/// rgid, src_addr_index, hop_limit, tclass and (RoCE) rmac. A DCI takes only the mtu and port:
/// its peers are named per WQE.
pub fn init2rtr_qp(qpn: u32, kind: QpKind, p: &RtrParams) -> Cmd {
    let mut c = modify(INIT2RTR_QP, qpn);
    let (b, path) = (QP_CMD_QPC, QP_CMD_QPC + qpc::PRIMARY_PATH);
    c.set_in(b, qpc::MTU, p.mtu as u64);
    c.set_in(path, ads::VHCA_PORT_NUM, p.port as u64);
    if kind == QpKind::Dci {
        return c;
    }
    c.set_in(b, qpc::REMOTE_QPN, p.remote_qpn as u64);
    c.set_in(b, qpc::NEXT_RCV_PSN, (p.next_rcv_psn & 0xff_ffff) as u64);
    c.set_in(b, qpc::LOG_RRA_MAX, p.log_rra_max as u64);
    c.set_in(b, qpc::MIN_RNR_NAK, p.min_rnr_nak as u64);
    c.set_in(path, ads::RLID, p.rlid as u64);
    c.set_in(path, ads::SL, p.sl as u64);
    if let Some(g) = &p.grh {
        c.set_in(path, ads::GRH, 1);
        c.set_bytes(path + ads::RGID, &g.rgid);
        c.set_in(path, ads::SRC_ADDR_INDEX, g.sgid_index as u64);
        c.set_in(path, ads::HOP_LIMIT, g.hop_limit as u64);
        c.set_in(path, ads::TCLASS, g.tclass as u64);
        if let Some(mac) = g.rmac {
            c.set_in(path, ads::RMAC_47_32, u16::from_be_bytes([mac[0], mac[1]]) as u64);
            c.set_in(path, ads::RMAC_31_0, u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]) as u64);
        }
    }
    c
}

/// What RTR2RTS needs: our first PSN and the retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtsParams {
    pub next_send_psn: u32,
    /// 4.096 µs × 2^ack_timeout before a retry.
    pub ack_timeout: u8,
    pub retry_count: u8,
    pub rnr_retry: u8,
    /// log2 of the RDMA READ / atomic requests we have outstanding at once.
    pub log_sra_max: u8,
}

/// RTR2RTS_QP. Sets: opcode, qpn; qpc: next_send_psn, retry_count, rnr_retry, log_sra_max, and
/// the primary path's ack_timeout.
pub fn rtr2rts_qp(qpn: u32, p: &RtsParams) -> Cmd {
    let mut c = modify(RTR2RTS_QP, qpn);
    let (b, path) = (QP_CMD_QPC, QP_CMD_QPC + qpc::PRIMARY_PATH);
    c.set_in(b, qpc::NEXT_SEND_PSN, (p.next_send_psn & 0xff_ffff) as u64);
    c.set_in(b, qpc::RETRY_COUNT, p.retry_count as u64);
    c.set_in(b, qpc::RNR_RETRY, p.rnr_retry as u64);
    c.set_in(b, qpc::LOG_SRA_MAX, p.log_sra_max as u64);
    c.set_in(path, ads::ACK_TIMEOUT, p.ack_timeout as u64);
    c
}

// ---- dctc: DC target context (0x200 bits), at 0x80 in create_dct_in ----
pub mod dctc {
    use super::{f, Field};
    pub const CQN: Field = f(0x48, 24);
    pub const ATOMIC_MODE: Field = f(0x68, 4);
    pub const RRE: Field = f(0x6c, 1);
    pub const RWE: Field = f(0x6d, 1);
    pub const RAE: Field = f(0x6e, 1);
    pub const CS_RES: Field = f(0x88, 8);
    pub const MIN_RNR_NAK: Field = f(0x93, 5);
    pub const SRQN: Field = f(0xa8, 24);
    pub const PD: Field = f(0xc8, 24);
    pub const TCLASS: Field = f(0xe0, 8);
    pub const DC_ACCESS_KEY: Field = f(0x100, 64);
    pub const MTU: Field = f(0x145, 3);
    pub const PORT: Field = f(0x148, 8);
    pub const PKEY_INDEX: Field = f(0x150, 16);
    pub const MY_ADDR_INDEX: Field = f(0x168, 8);
    pub const HOP_LIMIT: Field = f(0x178, 8);
}
pub const CREATE_DCT_BITS: u32 = 0x400;
pub const CREATE_DCT_DCTC: u32 = 0x80;

/// A DC target: where DCIs of other PEs deliver their operations on our heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctParams {
    pub pdn: u32,
    pub cqn: u32,
    /// DC targets require a shared receive queue, though RDMA WRITE/READ/atomics never use it.
    pub srqn: u32,
    pub access_key: u64,
    pub mtu: u8,
    pub port: u8,
    pub gid_index: u8,
    pub hop_limit: u8,
    pub tclass: u8,
    pub min_rnr_nak: u8,
}

/// CREATE_DCT. Sets: opcode; dctc: cqn, srqn_xrqn, pd, rre/rwe/rae 1, atomic_mode up to 8 bytes,
/// cs_res 0 (no scatter to CQE), min_rnr_nak, dc_access_key, mtu, port, pkey_index 0,
/// my_addr_index (our GID index), hop_limit and tclass. The target is active once created.
pub fn create_dct(p: &DctParams) -> Cmd {
    let mut c = Cmd::new(CREATE_DCT_BITS);
    c.set(HDR_OPCODE, CREATE_DCT as u64);
    let b = CREATE_DCT_DCTC;
    c.set_in(b, dctc::CQN, p.cqn as u64);
    c.set_in(b, dctc::SRQN, p.srqn as u64);
    c.set_in(b, dctc::PD, p.pdn as u64);
    c.set_in(b, dctc::RRE, 1);
    c.set_in(b, dctc::RWE, 1);
    c.set_in(b, dctc::RAE, 1);
    c.set_in(b, dctc::ATOMIC_MODE, ATOMIC_UP_TO_8B);
    c.set_in(b, dctc::CS_RES, 0);
    c.set_in(b, dctc::MIN_RNR_NAK, p.min_rnr_nak as u64);
    c.set_in(b, dctc::DC_ACCESS_KEY, p.access_key);
    c.set_in(b, dctc::MTU, p.mtu as u64);
    c.set_in(b, dctc::PORT, p.port as u64);
    c.set_in(b, dctc::PKEY_INDEX, 0);
    c.set_in(b, dctc::MY_ADDR_INDEX, p.gid_index as u64);
    c.set_in(b, dctc::HOP_LIMIT, p.hop_limit as u64);
    c.set_in(b, dctc::TCLASS, p.tclass as u64);
    c
}

/// The name of a command opcode, for error messages and logs.
pub fn opcode_name(opcode: u16) -> &'static str {
    match opcode {
        CREATE_CQ => "CREATE_CQ",
        CREATE_QP => "CREATE_QP",
        RST2INIT_QP => "RST2INIT_QP",
        INIT2RTR_QP => "INIT2RTR_QP",
        RTR2RTS_QP => "RTR2RTS_QP",
        CREATE_DCT => "CREATE_DCT",
        caps::QUERY_HCA_CAP => "QUERY_HCA_CAP",
        _ => "unknown command",
    }
}

#[cfg(test)]
#[path = "prm_tests.rs"]
mod tests;
