//! The IBGDA descriptors shared with device code and the NIC (model): Rust owns these layouts,
//! cbindgen writes device/ibgda/ibgda_state.h from this file (`make header`; CI fails when the
//! committed header is stale). tests/ibgda_layout.rs still compiles that header and compares it
//! field by field with [`layout_table`].
//!
//! Addresses are `u64` so host, device and Rust see one layout. Fields the device updates are
//! accessed with atomics (`AtomicU64::from_ptr`) by the host side, never through `&mut`.
//! Bump [`STATE_VERSION`] on every change of these structs.

use std::mem::{offset_of, size_of};

use super::rows::layout_rows;

/// Bump on every layout change (device code checks `RSHMEM_IBGDA_STATE_VERSION`).
pub const STATE_VERSION: u32 = 3;

/// A QP's `kind`: an RC QP.
pub const QP_RC: u16 = 0;
/// A QP's `kind`: a DC initiator.
pub const QP_DCI: u16 = 1;
/// A QP's `flags`: the device only advances `posted_head`; a CPU thread rings.
pub const QP_CPU_DOORBELL: u32 = 0x1;

/// `map_by` values (NVSHMEM_IBGDA_RC_MAP_BY / _DCI_MAP_BY).
pub const MAP_BY_CTA: u32 = 0;
pub const MAP_BY_SM: u32 = 1;
pub const MAP_BY_WARP: u32 = 2;
pub const MAP_BY_DCT: u32 = 3;

/// Largest send queue: WQE indices travel as 16 bits, completions are matched within half of that.
pub const MAX_LOG_NWQES: u16 = 15;

/// Local buffers registered with the NIC at once (`nvshmemx_buffer_register`).
pub const MAX_REGS: usize = 64;

/// Vendor syndromes the software HCA model writes into its error CQEs where the mlx5 syndrome
/// alone would not say what went wrong (a ConnectX's own vendor syndromes are undocumented):
/// the DC target rejected the DC access key.
pub const MODEL_VENDOR_DC_KEY: u8 = 0xd1;
/// Model vendor syndrome: no DC target with that number at that LID.
pub const MODEL_VENDOR_NO_DCT: u8 = 0xd2;

/// What a model vendor syndrome means, in words (None for anything else).
pub fn model_vendor_note(vendor: u8) -> Option<&'static str> {
    match vendor {
        MODEL_VENDOR_DC_KEY => Some(
            "the DC target rejected the DC access key (the key in the address vector is not the one the target PE's DCT was created with)",
        ),
        MODEL_VENDOR_NO_DCT => Some("no DC target with that number at that address (LID)"),
        _ => None,
    }
}

/// `rshmem_ibgda_qp`: one send queue (RC QP or DC initiator) with its completion queue. 384
/// bytes; the device-updated counters sit on their own 64-byte lines. The first 128 bytes are
/// written by the host at set-up and read-only for the device.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct QpState {
    /// `RSHMEM_IBGDA_STATE_VERSION`.
    pub version: u32,
    /// QP number (24 bits), goes into every ctrl segment and doorbell.
    pub qpn: u32,
    /// RC: the remote PE; DCI: 0xffffffff.
    pub peer_pe: u32,
    /// CQ number (diagnostics).
    pub cqn: u32,
    /// The send queue has 1 << log_nwqes 64-byte blocks (WQEBBs).
    pub log_nwqes: u16,
    /// The CQ has 1 << log_ncqes 64-byte CQEs (>= log_nwqes).
    pub log_ncqes: u16,
    /// A WQE asks for a completion when it covers a block index = N-1 mod N.
    pub signal_every: u16,
    /// Ring the doorbell at least every `batch` blocks (a power of two) when others post.
    pub batch: u16,
    /// Largest put payload sent inline (bytes).
    pub inline_max: u16,
    /// `RSHMEM_IBGDA_QP_RC` or `_DCI`.
    pub kind: u16,
    /// `RSHMEM_IBGDA_QP_*` flags.
    pub flags: u32,
    /// WQE ring.
    pub sq_buf: u64,
    /// Doorbell record: two big-endian u32, [1] = send producer counter.
    pub sq_dbrec: u64,
    /// Doorbell register (UAR / BlueFlame): one 8-byte store per ring.
    pub bf_reg: u64,
    /// CQE ring.
    pub cq_buf: u64,
    /// CQ doorbell record: [0] = consumer index (big-endian, 24 bits).
    pub cq_dbrec: u64,
    pub reserved0: [u8; 56],
    /// Device-updated from here on, one hot counter per line. Next block index to reserve
    /// (monotonic, 64-bit).
    pub resv_head: u64,
    pub pad1: [u8; 56],
    /// Every block below it is written and published, in order.
    pub ready_head: u64,
    pub pad2: [u8; 56],
    /// Producer index last written to the doorbell record and rung.
    pub posted_head: u64,
    /// End of the furthest WQE that asked for a completion.
    pub signaled_head: u64,
    /// Taken while ringing.
    pub post_lock: u32,
    /// The next WQE carries the fence flag.
    pub fence_pending: u32,
    pub pad3: [u8; 40],
    /// Every block below it has completed.
    pub completed_head: u64,
    /// CQEs consumed (monotonic).
    pub cq_cons: u64,
    /// Taken while polling the CQ.
    pub cq_lock: u32,
    /// The first error CQE seen (0 = none): its syndrome, vendor syndrome, the failed WQE's
    /// opcode, the CQE's opcode (REQ_ERR or RESP_ERR) and the 16-bit WQE index.
    pub err_syndrome: u8,
    pub err_vendor: u8,
    pub err_opcode: u8,
    pub err_cqe_opcode: u8,
    pub err_wqe_index: u32,
    /// Error CQEs seen.
    pub err_count: u32,
    /// DCI only: the DCT number (24 bits) and the LID the failed WQE addressed (its address
    /// vector), so the error can name the PE.
    pub err_dct: u32,
    pub err_rlid: u16,
    pub pad4: [u8; 26],
}

/// `rshmem_ibgda_peer`: what a PE needs to address another PE's heap. 80 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PeerState {
    /// The remote PE's heap base as its NIC sees it (raddr of offset 0).
    pub heap_base: u64,
    pub heap_size: u64,
    /// Remote key of the remote heap registration.
    pub rkey: u32,
    /// DC: bytes of `av` to copy into a DCI WQE (16 or 48); 0 for RC-only.
    pub av_size: u32,
    pub reserved0: u64,
    /// DC: the address vector of the remote PE's DCT, wire format (rshmem_mlx5_av, big-endian
    /// fields), built by the host.
    pub av: [u8; 48],
}

/// `rshmem_ibgda_state`: the per-PE IBGDA state the device reads (pointed to by the device
/// state). 128 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PeState {
    /// `RSHMEM_IBGDA_STATE_VERSION`.
    pub version: u32,
    pub my_pe: u32,
    pub npes: u32,
    /// RC QPs per remote PE (0: DC only).
    pub num_rc_per_pe: u32,
    pub num_dci: u32,
    /// `RSHMEM_IBGDA_MAP_BY_*`.
    pub rc_map_by: u32,
    pub dci_map_by: u32,
    /// Local key of my heap registration.
    pub heap_lkey: u32,
    /// My heap base (local addresses).
    pub heap_base: u64,
    pub heap_size: u64,
    /// `rshmem_ibgda_qp[npes * num_rc_per_pe]`, PE-major.
    pub rc_qps: u64,
    /// `rshmem_ibgda_qp[num_dci]`.
    pub dci_qps: u64,
    /// `rshmem_ibgda_peer[npes]`.
    pub peers: u64,
    /// Landing area for fetch results that need one (8 bytes per slot).
    pub fetch_buf: u64,
    pub fetch_lkey: u32,
    /// A power of two.
    pub fetch_slots: u32,
    /// Device-updated: next fetch slot (monotonic).
    pub fetch_next: u64,
    /// DC: DCTs per PE.
    pub num_dct: u32,
    /// Entries of the QP array in use: `npes * num_rc_per_pe` (RC) or `num_dci` (DC).
    pub num_qps: u32,
    /// DC: `uint32_t[npes * num_dct]`, the DCT numbers of every PE, PE-major.
    pub dcts: u64,
    /// Device-updated: `uint64_t[(num_qps + 63) / 64]`, bit i = QP i has carried work (quiet
    /// visits only those); 0 = no bitmap, quiet visits every QP.
    pub qp_used: u64,
    /// `rshmem_ibgda_regs`: local buffers registered with the NIC (0: none).
    pub regs: u64,
}

/// `rshmem_ibgda_reg`: a local buffer the NIC may read and write (`nvshmemx_buffer_register`).
/// 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegEntry {
    pub base: u64,
    pub size: u64,
    /// Local key of its registration.
    pub lkey: u32,
    pub reserved0: u32,
    pub reserved1: u64,
}

/// `rshmem_ibgda_regs`: the registered buffers, `reg[0, count)` are live. Rewritten by the host
/// on every register or unregister; a device lookup that misses takes the path for
/// unregistered memory.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RegTable {
    pub count: u32,
    pub reserved: [u32; 3],
    pub reg: [RegEntry; MAX_REGS],
}

const _: () = {
    assert!(size_of::<QpState>() == 384);
    assert!(offset_of!(QpState, resv_head) == 128);
    assert!(offset_of!(QpState, ready_head) == 192);
    assert!(offset_of!(QpState, posted_head) == 256);
    assert!(offset_of!(QpState, completed_head) == 320);
    assert!(size_of::<PeerState>() == 80);
    assert!(size_of::<PeState>() == 128);
    assert!(offset_of!(QpState, err_dct) == 352);
    assert!(offset_of!(PeState, num_dct) == 96);
    assert!(offset_of!(PeState, qp_used) == 112);
    assert!(size_of::<RegEntry>() == 32);
    assert!(size_of::<RegTable>() == 16 + 32 * MAX_REGS);
};

impl QpState {
    /// A descriptor with every field zero except the version.
    pub fn zeroed() -> QpState {
        // SAFETY: all fields are integers or byte arrays; all-zero is a valid value.
        let mut q: QpState = unsafe { std::mem::zeroed() };
        q.version = STATE_VERSION;
        q
    }
}

impl PeerState {
    pub fn zeroed() -> PeerState {
        PeerState { heap_base: 0, heap_size: 0, rkey: 0, av_size: 0, reserved0: 0, av: [0; 48] }
    }
}

impl PeState {
    pub fn zeroed() -> PeState {
        // SAFETY: all fields are integers or byte arrays; all-zero is a valid value.
        let mut s: PeState = unsafe { std::mem::zeroed() };
        s.version = STATE_VERSION;
        s
    }
}

/// `field <struct>.<name> <offset>` / `size <struct> <bytes>` lines, as
/// ctest/ibgda/state_layout.cpp prints them for the C header.
pub fn layout_table() -> Vec<String> {
    let mut v = Vec::new();
    layout_rows!(
        v,
        QpState,
        "qp",
        [
            version,
            qpn,
            peer_pe,
            cqn,
            log_nwqes,
            log_ncqes,
            signal_every,
            batch,
            inline_max,
            kind,
            flags,
            sq_buf,
            sq_dbrec,
            bf_reg,
            cq_buf,
            cq_dbrec,
            resv_head,
            ready_head,
            posted_head,
            signaled_head,
            post_lock,
            fence_pending,
            completed_head,
            cq_cons,
            cq_lock,
            err_syndrome,
            err_vendor,
            err_opcode,
            err_cqe_opcode,
            err_wqe_index,
            err_count,
            err_dct,
            err_rlid
        ]
    );
    layout_rows!(v, PeerState, "peer", [heap_base, heap_size, rkey, av_size, av]);
    layout_rows!(
        v,
        PeState,
        "state",
        [
            version,
            my_pe,
            npes,
            num_rc_per_pe,
            num_dci,
            rc_map_by,
            dci_map_by,
            heap_lkey,
            heap_base,
            heap_size,
            rc_qps,
            dci_qps,
            peers,
            fetch_buf,
            fetch_lkey,
            fetch_slots,
            fetch_next,
            num_dct,
            num_qps,
            dcts,
            qp_used,
            regs
        ]
    );
    layout_rows!(v, RegEntry, "reg", [base, size, lkey]);
    layout_rows!(v, RegTable, "regs", [count, reg]);
    v
}
