//! The IBGDA descriptors shared with device code and the NIC (model): Rust owns these layouts.
//! device/ibgda/ibgda_state.h declares the same structs for C/C++/CUDA; tests/ibgda_layout.rs
//! checks that both agree field by field (the C side prints its offsets).
//!
//! Addresses are `u64` so host, device and Rust see one layout. Fields the device updates are
//! accessed with atomics (`AtomicU64::from_ptr`) by the host side, never through `&mut`.

use std::mem::{offset_of, size_of};

/// Bump on every layout change (checked against `RSHMEM_IBGDA_STATE_VERSION`).
pub const STATE_VERSION: u32 = 3;

pub const QP_RC: u16 = 0;
pub const QP_DCI: u16 = 1;
pub const QP_CPU_DOORBELL: u32 = 0x1;

pub const MAP_BY_CTA: u32 = 0;
pub const MAP_BY_SM: u32 = 1;
pub const MAP_BY_WARP: u32 = 2;
pub const MAP_BY_DCT: u32 = 3;

pub const MAX_LOG_NWQES: u16 = 15;

/// Local buffers registered with the NIC at once (`nvshmemx_buffer_register`).
pub const MAX_REGS: usize = 64;

/// Vendor syndromes the software HCA model writes into its error CQEs where the mlx5 syndrome
/// alone would not say what went wrong (a ConnectX's own vendor syndromes are undocumented).
pub const MODEL_VENDOR_DC_KEY: u8 = 0xd1;
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

/// `rshmem_ibgda_qp`: one send queue with its completion queue.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct QpState {
    pub version: u32,
    pub qpn: u32,
    pub peer_pe: u32,
    pub cqn: u32,
    pub log_nwqes: u16,
    pub log_ncqes: u16,
    pub signal_every: u16,
    pub batch: u16,
    pub inline_max: u16,
    pub kind: u16,
    pub flags: u32,
    pub sq_buf: u64,
    pub sq_dbrec: u64,
    pub bf_reg: u64,
    pub cq_buf: u64,
    pub cq_dbrec: u64,
    pub reserved0: [u8; 56],
    pub resv_head: u64,
    pub pad1: [u8; 56],
    pub ready_head: u64,
    pub pad2: [u8; 56],
    pub posted_head: u64,
    pub signaled_head: u64,
    pub post_lock: u32,
    pub fence_pending: u32,
    pub pad3: [u8; 40],
    pub completed_head: u64,
    pub cq_cons: u64,
    pub cq_lock: u32,
    pub err_syndrome: u8,
    pub err_vendor: u8,
    pub err_opcode: u8,
    pub err_cqe_opcode: u8,
    pub err_wqe_index: u32,
    pub err_count: u32,
    /// DCI only: the DCT number (24 bits) and the LID the failed WQE addressed (its address
    /// vector), so the error can name the PE.
    pub err_dct: u32,
    pub err_rlid: u16,
    pub pad4: [u8; 26],
}

/// `rshmem_ibgda_peer`: how to address one remote PE's heap.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PeerState {
    pub heap_base: u64,
    pub heap_size: u64,
    pub rkey: u32,
    pub av_size: u32,
    pub reserved0: u64,
    pub av: [u8; 48],
}

/// `rshmem_ibgda_state`: the per-PE IBGDA state the device reads.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PeState {
    pub version: u32,
    pub my_pe: u32,
    pub npes: u32,
    pub num_rc_per_pe: u32,
    pub num_dci: u32,
    pub rc_map_by: u32,
    pub dci_map_by: u32,
    pub heap_lkey: u32,
    pub heap_base: u64,
    pub heap_size: u64,
    pub rc_qps: u64,
    pub dci_qps: u64,
    pub peers: u64,
    pub fetch_buf: u64,
    pub fetch_lkey: u32,
    pub fetch_slots: u32,
    pub fetch_next: u64,
    /// DC: DCTs per PE, and `dcts` points at their numbers (`u32[npes * num_dct]`, PE-major).
    pub num_dct: u32,
    /// Entries of the QP array in use (RC: `npes * num_rc_per_pe`, DC: `num_dci`).
    pub num_qps: u32,
    pub dcts: u64,
    /// Device-updated bitmap (`u64[(num_qps + 63) / 64]`) of the QPs that have carried work;
    /// quiet visits only those. 0: no bitmap (quiet visits every QP).
    pub qp_used: u64,
    /// `RegTable`: local buffers registered with the NIC (0: none).
    pub regs: u64,
}

/// `rshmem_ibgda_reg`: a local buffer the NIC may read and write.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RegEntry {
    pub base: u64,
    pub size: u64,
    pub lkey: u32,
    pub reserved0: u32,
    pub reserved1: u64,
}

/// `rshmem_ibgda_regs`: entries `[0, count)` are live.
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
    macro_rules! rows {
        ($t:ty, $name:literal, [$($f:ident),*]) => {
            v.push(format!("size {} {}", $name, size_of::<$t>()));
            $( v.push(format!("field {}.{} {}", $name, stringify!($f), offset_of!($t, $f))); )*
        };
    }
    rows!(
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
    rows!(PeerState, "peer", [heap_base, heap_size, rkey, av_size, av]);
    rows!(
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
    rows!(RegEntry, "reg", [base, size, lkey]);
    rows!(RegTable, "regs", [count, reg]);
    v
}
