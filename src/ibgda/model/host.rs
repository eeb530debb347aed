//! Queue memory in host RAM for the software HCA model: the send queue, completion queue, doorbell
//! records and the doorbell word of one QP, plus its `QpState` descriptor pointing at them.
//! On the GPU machine the same descriptors point at GPU (or pinned host) memory instead; the
//! posting code does not care where they live.

use std::mem::size_of;
use std::sync::atomic::AtomicU64;

use crate::ibgda::abi::{QpState, MAX_LOG_NWQES, QP_DCI, QP_RC};
use crate::ibgda::mlx5::{CQE_INVALID, CQE_SIZE, SEND_WQE_BB};

/// A zeroed, 64-byte aligned heap buffer that never moves. Its bytes are atomics, so others may
/// write them through its address (device code, the model NIC, a real NIC's DMA) while it is
/// shared; as plain values of the standard library it needs no unsafe Send, Sync or Drop.
pub struct AlignedBuf {
    lines: Box<[Line]>,
    len: usize,
}

/// One 64-byte line of an [`AlignedBuf`].
#[repr(C, align(64))]
#[derive(Default)]
struct Line([AtomicU64; 8]);

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(64);
        let n = len.div_ceil(size_of::<Line>());
        let mut lines = Vec::new();
        if lines.try_reserve_exact(n).is_err() {
            panic!("out of memory allocating {len} bytes of queue memory");
        }
        lines.resize_with(n, Line::default);
        AlignedBuf { lines: lines.into_boxed_slice(), len }
    }
    pub fn addr(&self) -> u64 {
        self.lines.as_ptr() as u64
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Fills the buffer with `byte` (only before anyone else sees it).
    pub fn fill(&mut self, byte: u8) {
        for word in self.lines.iter_mut().flat_map(|l| l.0.iter_mut()) {
            *word.get_mut() = u64::from_ne_bytes([byte; 8]);
        }
    }
}

/// Parameters of one host-memory QP.
#[derive(Clone, Copy, Debug)]
pub struct QpParams {
    pub qpn: u32,
    pub peer_pe: u32,
    pub log_nwqes: u16,
    pub signal_every: u16,
    pub batch: u16,
    pub inline_max: u16,
    pub dci: bool,
    pub cpu_doorbell: bool,
}

impl Default for QpParams {
    fn default() -> QpParams {
        QpParams { qpn: 0x100, peer_pe: 0, log_nwqes: 7, signal_every: 16, batch: 32, inline_max: 28, dci: false, cpu_doorbell: false }
    }
}

/// Per-QP settings of the posting protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    pub signal_every: u16,
    pub batch: u16,
    pub inline_max: u16,
}

/// A descriptor with what every QP sets alike, on the model and on a NIC: its QP and CQ
/// numbers, both rings of `1 << log_nwqes` entries, the posting settings and the doorbell path
/// (rung by a CPU thread when `cpu_doorbell`). The rest is zero.
pub fn descriptor(qpn: u32, cqn: u32, log_nwqes: u16, p: &Posting, cpu_doorbell: bool) -> QpState {
    let mut d = QpState::zeroed();
    (d.qpn, d.cqn, d.log_nwqes, d.log_ncqes) = (qpn, cqn, log_nwqes, log_nwqes);
    (d.signal_every, d.batch, d.inline_max) = (p.signal_every, p.batch, p.inline_max);
    d.flags = if cpu_doorbell { crate::ibgda::abi::QP_CPU_DOORBELL } else { 0 };
    d
}

/// The buffers behind one QP's descriptor (send queue, CQ, doorbell records, doorbell word).
/// Keep it alive as long as the descriptor is in use.
pub struct QueueMem {
    _sq: AlignedBuf,
    _cq: AlignedBuf,
    _dbrec: AlignedBuf,
}

/// Allocates one QP's queues and returns its descriptor (place it wherever the device expects
/// it: a single box or an array) together with the memory it points at. Panics on parameters
/// the protocol cannot run with (a programming error in the caller, not user input).
pub fn new_queues(p: QpParams) -> (QpState, QueueMem) {
    assert!((1..=MAX_LOG_NWQES).contains(&p.log_nwqes), "log_nwqes must be 1..=15");
    let nwqes = 1usize << p.log_nwqes;
    assert!(
        p.signal_every.is_power_of_two() && (p.signal_every as usize) <= nwqes / 2,
        "signal_every must be a power of two at most half the queue"
    );
    assert!(p.batch.is_power_of_two(), "batch must be a power of two");
    let sq = AlignedBuf::new(nwqes * SEND_WQE_BB);
    let mut cq = AlignedBuf::new(nwqes * CQE_SIZE);
    cq.fill(CQE_INVALID << 4); // every CQE invalid, owner bit 0
                               // One 64-byte line: SQ doorbell record at 0 (2 words), CQ doorbell record at 16, doorbell word at 32.
    let dbrec = AlignedBuf::new(64);
    let posting = Posting { signal_every: p.signal_every, batch: p.batch, inline_max: p.inline_max };
    let mut state = descriptor(p.qpn, p.qpn, p.log_nwqes, &posting, p.cpu_doorbell);
    state.peer_pe = if p.dci { u32::MAX } else { p.peer_pe };
    state.kind = if p.dci { QP_DCI } else { QP_RC };
    state.sq_buf = sq.addr();
    state.sq_dbrec = dbrec.addr();
    state.cq_dbrec = dbrec.addr() + 16;
    state.bf_reg = dbrec.addr() + 32;
    state.cq_buf = cq.addr();
    (state, QueueMem { _sq: sq, _cq: cq, _dbrec: dbrec })
}

/// One QP with its own boxed descriptor. `state_ptr()` is what device code gets.
pub struct HostQp {
    state: Box<QpState>,
    _mem: QueueMem,
}

impl HostQp {
    pub fn new(p: QpParams) -> HostQp {
        let (state, mem) = new_queues(p);
        HostQp { state: Box::new(state), _mem: mem }
    }

    /// The descriptor's address (what device code receives).
    pub fn state_ptr(&self) -> *mut QpState {
        &*self.state as *const QpState as *mut QpState
    }

    /// A snapshot of the descriptor (device-updated fields may be changing underneath).
    pub fn snapshot(&self) -> QpState {
        // SAFETY: our own live descriptor.
        unsafe { snapshot(self.state_ptr()) }
    }
}

/// A volatile copy of a descriptor that device code may be updating (diagnostics and tests).
///
/// # Safety
/// `qp` must point to a live `QpState`.
pub unsafe fn snapshot(qp: *const QpState) -> QpState {
    // SAFETY: live per the contract; a volatile copy of plain integer fields tolerates
    // concurrent updates (a torn counter in a snapshot is harmless for its uses).
    unsafe { std::ptr::read_volatile(qp) }
}
