//! The IBGDA descriptors shared with device code and the NIC (model): Rust owns these layouts.
//! device/ibgda/ibgda_state.h declares the same structs for C/C++/CUDA; tests/ibgda_layout.rs
//! checks that both agree field by field (the C side prints its offsets).
//!
//! Addresses are `u64` so host, device and Rust see one layout. Fields the device updates are
//! accessed with atomics (`AtomicU64::from_ptr`) by the host side, never through `&mut`.

use std::mem::{offset_of, size_of};

/// Bump on every layout change (checked against `RSHMEM_IBGDA_STATE_VERSION`).
pub const STATE_VERSION: u32 = 1;

pub const QP_RC: u16 = 0;
pub const QP_DCI: u16 = 1;
pub const QP_CPU_DOORBELL: u32 = 0x1;

pub const MAP_BY_CTA: u32 = 0;
pub const MAP_BY_SM: u32 = 1;
pub const MAP_BY_WARP: u32 = 2;
pub const MAP_BY_DCT: u32 = 3;

pub const MAX_LOG_NWQES: u16 = 15;

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
    pub pad4: [u8; 32],
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
    pub reserved0: [u8; 32],
}

const _: () = {
    assert!(size_of::<QpState>() == 384);
    assert!(offset_of!(QpState, resv_head) == 128);
    assert!(offset_of!(QpState, ready_head) == 192);
    assert!(offset_of!(QpState, posted_head) == 256);
    assert!(offset_of!(QpState, completed_head) == 320);
    assert!(size_of::<PeerState>() == 80);
    assert!(size_of::<PeState>() == 128);
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
    rows!(QpState, "qp", [version, qpn, peer_pe, cqn, log_nwqes, log_ncqes, signal_every, batch, inline_max,
        kind, flags, sq_buf, sq_dbrec, bf_reg, cq_buf, cq_dbrec, resv_head, ready_head, posted_head,
        signaled_head, post_lock, fence_pending, completed_head, cq_cons, cq_lock, err_syndrome, err_vendor,
        err_opcode, err_cqe_opcode, err_wqe_index, err_count]);
    rows!(PeerState, "peer", [heap_base, heap_size, rkey, av_size, av]);
    rows!(PeState, "state", [version, my_pe, npes, num_rc_per_pe, num_dci, rc_map_by, dci_map_by, heap_lkey,
        heap_base, heap_size, rc_qps, dci_qps, peers, fetch_buf, fetch_lkey, fetch_slots, fetch_next]);
    v
}
