//! The software HCA model (`RSHMEM_IBGDA_NIC=model`): one host thread per NIC plays a ConnectX for
//! the WQEs our device code emits. It watches each QP's doorbell word (the "BlueFlame register"),
//! reads the producer counter from the doorbell record, parses the real mlx5 WQE formats from the
//! send queue, performs RDMA WRITE (also inline), READ and the atomics on target memory, and writes
//! real 64-byte CQEs (owner bit per pass, WQE counter, opcode, byte count) or error CQEs (bad key,
//! address outside a registration, malformed WQE) into the completion queue.
//!
//! Semantics chosen where hardware leaves freedom, so tests catch a missing fence or quiet:
//! - With `reorder`, the WQEs of one doorbell batch execute in a shuffled order, except that no
//!   WQE moves across one carrying the FENCE flag. CQEs are still written in WQE order.
//! - After an error CQE the QP is in error: later WQEs are not executed and every later signaled
//!   WQE completes with a flush error (WR_FLUSH_ERR).
//! - Atomics work in host byte order on the target word and return the old value in host order
//!   (the QP is assumed set up for host-endian atomics). Operands come big-endian from the WQE.
//! - `sink` mode moves no data: it consumes doorbells, parses only control segments and writes
//!   CQEs for signaled WQEs, so the device-side post rate can be measured.
//! - DC: a DCI WQE's address vector names a DCT by (LID, DCT number) in the [`Fabric`]; the
//!   DCT's PE is the target. A DCT that does not exist, or whose DC access key differs from the
//!   vector's, completes the WQE with TRANSPORT_RETRY_EXC_ERR (we believe a ConnectX target drops
//!   such packets silently, so the initiator's retries run out) and a model vendor syndrome
//!   saying which (`abi::MODEL_VENDOR_*`). In a job of several processes each process's fabric
//!   holds the DC targets every PE published at init, so the key check is against what the
//!   target announced, not against the target's own NIC.
//!
//! Memory registration is a table of (key, base, len) per PE; a key is both lkey and rkey.
//! Target memory is reached through [`MemoryAccess`]: plain memory ([`HostMemory`]) or GPU
//! memory through CUDA copies and kernels (`super::cuda::CudaMemory`). A batch's data movement
//! may be asynchronous: the model calls [`MemoryAccess::flush`] before it writes the batch's CQEs.
//!
//! Queues: the CQ, both doorbell records and the doorbell word are always in host-addressable
//! memory (plain or pinned and mapped into the GPU). The send queue may be in host memory (read
//! directly) or in GPU memory (read in one bulk copy per doorbell through the `MemoryAccess`),
//! and the QP descriptor itself may be GPU memory the model never touches ([`Nic::attach_config`]).

pub mod host;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use std::mem::size_of;

use super::abi::{QpState, MODEL_VENDOR_DC_KEY, MODEL_VENDOR_NO_DCT, QP_CPU_DOORBELL, QP_DCI};
use super::mlx5::*;

/// Why a memory access of the model failed (it becomes an error CQE).
pub type MemResult<T> = std::result::Result<T, String>;

/// How the model touches target and source memory. Every address has been checked against the
/// registration table before it gets here.
pub trait MemoryAccess: Send + Sync {
    fn read(&self, addr: u64, out: &mut [u8]) -> MemResult<()>;
    /// May complete asynchronously (before the next `flush` returns); `data` may be dropped at once.
    fn write(&self, addr: u64, data: &[u8]) -> MemResult<()>;
    /// Atomically replaces the `size`-byte (4 or 8) word at `addr` by `f(old)` when `f` returns
    /// `Some`; returns the old value.
    fn atomic_rmw(&self, addr: u64, size: u32, f: &dyn Fn(u64) -> Option<u64>) -> MemResult<u64>;
    /// Copies `len` bytes from `src` to `dst` (may complete asynchronously, in order with the
    /// other operations of this memory).
    fn copy(&self, dst: u64, src: u64, len: u64) -> MemResult<()> {
        let mut v = vec![0u8; len as usize];
        self.read(src, &mut v)?;
        self.write(dst, &v)
    }
    /// The atomic `kind` on the `size`-byte word at `addr`; the old value's `size` bytes (host
    /// order) go to `result` (may complete asynchronously, in order).
    fn atomic(&self, addr: u64, size: u32, kind: AtomicKind, result: u64) -> MemResult<()> {
        let old = self.atomic_rmw(addr, size, &|old| kind.apply(old, size))?;
        self.write(result, &old.to_le_bytes()[..size as usize])
    }
    /// Waits until every operation above has completed.
    fn flush(&self) -> MemResult<()> {
        Ok(())
    }
    /// Called once on the NIC thread before it serves (e.g. to make a CUDA context current).
    fn on_thread_start(&self) {}
}

/// Plain process memory. Addresses are checked against the registration table before use.
pub struct HostMemory;

impl MemoryAccess for HostMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> MemResult<()> {
        // SAFETY: the model only passes ranges inside a registration, which the registrant
        // guarantees stays mapped while registered.
        unsafe { std::ptr::copy(addr as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }
    fn write(&self, addr: u64, data: &[u8]) -> MemResult<()> {
        // SAFETY: as in `read`.
        unsafe { std::ptr::copy(data.as_ptr(), addr as *mut u8, data.len()) };
        Ok(())
    }
    fn atomic_rmw(&self, addr: u64, size: u32, f: &dyn Fn(u64) -> Option<u64>) -> MemResult<u64> {
        Ok(if size == 8 {
            // SAFETY: registered, 8-byte aligned (checked by the caller), valid for the
            // registration's lifetime; every concurrent access to it is atomic.
            let a = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
            match a.fetch_update(Ordering::AcqRel, Ordering::Acquire, f) {
                Ok(o) | Err(o) => o,
            }
        } else {
            // SAFETY: as above, 4-byte aligned.
            let a = unsafe { AtomicU32::from_ptr(addr as *mut u32) };
            match a.fetch_update(Ordering::AcqRel, Ordering::Acquire, |o| f(o as u64).map(|n| n as u32)) {
                Ok(o) | Err(o) => o as u64,
            }
        })
    }
}

/// One memory registration.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub key: u32,
    pub base: u64,
    pub len: u64,
}

/// A DC target as the fabric knows it: the PE whose NIC owns it and the DC access key it was
/// created with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dct {
    pub pe: u32,
    pub key: u64,
}

/// What all model NICs share: registrations per PE and the DC targets. A DCT is addressed as on
/// an InfiniBand fabric: by the LID of its NIC and its number (unique only within that NIC).
#[derive(Default)]
pub struct Fabric {
    regions: RwLock<HashMap<u32, Vec<Region>>>,
    dcts: RwLock<HashMap<(u16, u32), Dct>>,
}

impl Fabric {
    pub fn new() -> Arc<Fabric> {
        Arc::new(Fabric::default())
    }
    /// Registers `[base, base+len)` of `pe` under `key`.
    pub fn register(&self, pe: u32, key: u32, base: u64, len: u64) {
        self.regions.write().unwrap_or_else(|e| e.into_inner()).entry(pe).or_default().push(Region { key, base, len });
    }
    /// Removes `pe`'s registration `key`: later WQEs naming it fail with a protection error.
    pub fn unregister(&self, pe: u32, key: u32) {
        if let Some(v) = self.regions.write().unwrap_or_else(|e| e.into_inner()).get_mut(&pe) {
            v.retain(|r| r.key != key);
        }
    }
    /// Changes the length of `pe`'s registration `key` (a heap that grew).
    pub fn resize(&self, pe: u32, key: u32, len: u64) {
        if let Some(v) = self.regions.write().unwrap_or_else(|e| e.into_inner()).get_mut(&pe) {
            v.iter_mut().filter(|r| r.key == key).for_each(|r| r.len = len);
        }
    }
    /// Declares DCT number `dct` of the NIC at `lid`, owned by `pe`, created with DC access key `key`.
    pub fn add_dct(&self, lid: u16, dct: u32, pe: u32, key: u64) {
        self.dcts.write().unwrap_or_else(|e| e.into_inner()).insert((lid, dct & 0xff_ffff), Dct { pe, key });
    }
    /// The DCT at (`lid`, `dct`), if there is one.
    pub fn dct(&self, lid: u16, dct: u32) -> Option<Dct> {
        self.dcts.read().unwrap_or_else(|e| e.into_inner()).get(&(lid, dct & 0xff_ffff)).copied()
    }
    fn check(&self, pe: u32, key: u32, addr: u64, len: u64) -> bool {
        let regions = self.regions.read().unwrap_or_else(|e| e.into_inner());
        regions.get(&pe).is_some_and(|v| v.iter().any(|r| r.key == key && addr >= r.base && len <= r.len && addr - r.base <= r.len - len))
    }
}

/// Behaviour switches.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelConfig {
    /// Move no data; only consume doorbells and complete signaled WQEs.
    pub sink: bool,
    /// Shuffle execution within fence-delimited runs of a doorbell batch.
    pub reorder: bool,
    /// Seed for `reorder`.
    pub seed: u64,
    /// Sleep this long before executing each batch (makes completions late, to test waits).
    pub delay_us: u64,
    /// A fault to inject (the IBGDA self-test's tests).
    pub fault: Fault,
}

/// Faults the model can inject, as a broken NIC, driver or fabric would show them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fault {
    #[default]
    None,
    /// Work executes, but no successful completion is ever written (a lost CQE).
    DropCompletions,
    /// What lands locally (RDMA READ data, fetched atomic values) is overwritten with 0xA5
    /// bytes (a broken data path that still completes).
    CorruptLanded,
}

/// Counters the tests and benchmarks read.
#[derive(Default, Debug)]
pub struct Stats {
    pub doorbells: AtomicU64,
    pub wqes: AtomicU64,
    pub bytes: AtomicU64,
    pub cqes: AtomicU64,
    pub error_cqes: AtomicU64,
    pub fenced_wqes: AtomicU64,
    pub inline_wqes: AtomicU64,
    /// Doorbells whose qpn did not match the QP, or whose index ran ahead of the doorbell record.
    pub bad_doorbells: AtomicU64,
    /// Times the CQ was full when a CQE had to be written (the model waits; hardware would fail).
    pub cq_full_waits: AtomicU64,
}

struct QpRun {
    /// The descriptor, when the model may read it (host memory); null for GPU descriptors.
    qp: *mut QpState,
    /// The send queue is in host memory (read directly) rather than behind `MemoryAccess`.
    sq_host: bool,
    /// The send doorbell record is host-readable; otherwise the doorbell's index is used.
    dbr_host: bool,
    /// Doorbell-index mode: the block index the model has taken a doorbell for.
    target: Arc<AtomicU64>,
    /// WQE blocks fully executed and completed (for `Nic::drain`).
    done: Arc<AtomicU64>,
    /// An error CQE of this QP was already logged.
    logged: bool,
    cfg: QpState,
    /// Local PE (whose NIC this is).
    pe: u32,
    /// Next WQE block index to execute (the NIC's SQ consumer counter).
    ci: u64,
    /// Next CQE index to write.
    cq_pi: u64,
    in_error: bool,
    /// CPU-doorbell mode: the posted_head value processed up to.
    seen_posted: u64,
}

// SAFETY: the QP memory is shared with the posting threads by design (like a NIC's DMA); every
// access the model makes goes through atomics or is ordered by the doorbell protocol.
unsafe impl Send for QpRun {}

struct NicShared {
    pe: u32,
    fabric: Arc<Fabric>,
    mem: Arc<dyn MemoryAccess>,
    cfg: ModelConfig,
    qps: Mutex<Vec<QpRun>>,
    stop: AtomicBool,
    stats: Stats,
    /// The descriptor of the first QP that completed a WQE with an error (not a flush), with
    /// its err_* fields filled in, for host-side reporting.
    first_error: Mutex<Option<QpState>>,
}

/// One model NIC with its thread.
pub struct Nic {
    shared: Arc<NicShared>,
    thread: Option<JoinHandle<()>>,
}

impl Nic {
    /// Starts the NIC thread of PE `pe`.
    pub fn start(pe: u32, fabric: Arc<Fabric>, mem: Arc<dyn MemoryAccess>, cfg: ModelConfig) -> Nic {
        let shared = Arc::new(NicShared {
            pe,
            fabric,
            mem,
            cfg,
            qps: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            stats: Stats::default(),
            first_error: Mutex::new(None),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("rshmem-hca-model-{pe}"))
            .spawn(move || run(&s))
            .expect("spawning the HCA model thread");
        Nic { shared, thread: Some(thread) }
    }

    /// Attaches a QP: from now on this NIC serves its doorbells.
    ///
    /// # Safety
    /// `qp` must point to a valid `QpState` whose queue buffers (sq_buf, cq_buf, sq_dbrec,
    /// cq_dbrec, bf_reg) stay valid until this NIC is dropped.
    pub unsafe fn attach(&self, qp: *mut QpState) {
        // SAFETY: valid per the caller's contract; the set-up fields are not changed any more.
        let cfg = unsafe { std::ptr::read_volatile(qp) };
        self.push(qp, cfg, true, true);
    }

    /// Attaches a QP whose descriptor the model cannot read (GPU memory): `cfg` is a copy of its
    /// set-up fields, taken before any host-side warm-up (its counters say where the queues
    /// are). The CQ, its doorbell record and the doorbell word must be host-addressable; the
    /// send queue is read through this NIC's `MemoryAccess` unless `sq_host`; the send doorbell
    /// record may be GPU memory (the doorbell word's index tells how far to go). No CPU-doorbell
    /// mode.
    ///
    /// # Safety
    /// The queue buffers named in `cfg` must stay valid until this NIC is dropped.
    pub unsafe fn attach_config(&self, cfg: QpState, sq_host: bool) {
        assert!(cfg.flags & QP_CPU_DOORBELL == 0, "a GPU descriptor cannot use the CPU doorbell mode");
        self.push(std::ptr::null_mut(), cfg, sq_host, false);
    }

    fn push(&self, qp: *mut QpState, cfg: QpState, sq_host: bool, dbr_host: bool) {
        // Warm-up WQEs the host posted (and completed) before attaching are already consumed.
        let start = cfg.completed_head;
        self.shared.qps.lock().unwrap_or_else(|e| e.into_inner()).push(QpRun {
            qp,
            sq_host,
            dbr_host,
            target: Arc::new(AtomicU64::new(start)),
            done: Arc::new(AtomicU64::new(start)),
            logged: false,
            cfg,
            pe: self.shared.pe,
            ci: start,
            cq_pi: cfg.cq_cons,
            in_error: false,
            seen_posted: start,
        });
    }

    /// Waits until every WQE rung so far on every QP of this NIC has executed (its data moved
    /// and its completion written), or `timeout` passes (returns false then).
    pub fn drain(&self, timeout: Duration) -> bool {
        type Watch = (bool, u64, u64, Arc<AtomicU64>, Arc<AtomicU64>);
        let targets: Vec<Watch> = {
            let qps = self.shared.qps.lock().unwrap_or_else(|e| e.into_inner());
            qps.iter()
                .filter(|q| q.cfg.flags & QP_CPU_DOORBELL == 0)
                .map(|q| (q.dbr_host, q.cfg.sq_dbrec + 4 * SND_DBR as u64, q.cfg.bf_reg, q.target.clone(), q.done.clone()))
                .collect()
        };
        let deadline = std::time::Instant::now() + timeout;
        for (dbr_host, dbr, bf, target, done) in targets {
            loop {
                let drained = if dbr_host {
                    let want = u32::from_be(atomic_u32(dbr).load(Ordering::Acquire)) as u16;
                    done.load(Ordering::Acquire) as u16 == want
                } else {
                    // No doorbell waiting, and everything taken has been executed.
                    atomic_u64(bf).load(Ordering::Acquire) == 0 && done.load(Ordering::Acquire) == target.load(Ordering::Acquire)
                };
                if drained {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    return false;
                }
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        true
    }

    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// The first error completion this NIC wrote: the QP's descriptor with its err_* fields set
    /// (see `super::qp_error`).
    pub fn first_error(&self) -> Option<QpState> {
        *self.shared.first_error.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Nic {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(s: &NicShared) {
    s.mem.on_thread_start();
    let mut idle = 0u32;
    let mut rng = Rng(s.cfg.seed | 1);
    while !s.stop.load(Ordering::Acquire) {
        let mut busy = false;
        {
            let mut qps = s.qps.lock().unwrap_or_else(|e| e.into_inner());
            for q in qps.iter_mut() {
                busy |= serve(s, q, &mut rng);
            }
        }
        if busy {
            idle = 0;
        } else {
            idle += 1;
            if idle < 64 {
                std::hint::spin_loop();
            } else if idle < 256 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }
}

fn atomic_u64(addr: u64) -> &'static AtomicU64 {
    // SAFETY: only called with addresses inside an attached QP's memory (valid per `attach`),
    // 8-byte aligned by construction.
    unsafe { AtomicU64::from_ptr(addr as *mut u64) }
}
fn atomic_u32(addr: u64) -> &'static AtomicU32 {
    // SAFETY: as in `atomic_u64`, 4-byte aligned.
    unsafe { AtomicU32::from_ptr(addr as *mut u32) }
}

/// Serves one QP: returns whether it did any work.
fn serve(s: &NicShared, q: &mut QpRun, rng: &mut Rng) -> bool {
    let cfg = &q.cfg;
    let target16: u16;
    if cfg.flags & QP_CPU_DOORBELL != 0 {
        // The device only advanced posted_head; the model plays the CPU thread that rings.
        // SAFETY: `q.qp` is valid per `attach`.
        let posted = atomic_u64(unsafe { std::ptr::addr_of!((*q.qp).posted_head) } as u64).load(Ordering::Acquire);
        if posted == q.seen_posted {
            return false;
        }
        q.seen_posted = posted;
        s.stats.doorbells.fetch_add(1, Ordering::Relaxed);
        target16 = posted as u16;
    } else {
        // Look before taking: a plain load keeps the line shared while the device writes it.
        let word = atomic_u64(cfg.bf_reg);
        let first = word.load(Ordering::Acquire);
        if first == 0 {
            return false;
        }
        // The doorbell is a ctrl segment's first 8 bytes: BE32(idx << 8), BE32(qpn << 8).
        let idx_of = |db: u64| (u32::from_be(db as u32) >> 8) as u16;
        let ahead_of_ci = |i: u16| i.wrapping_sub(q.ci as u16);
        if !q.dbr_host {
            // Publish what is being taken before taking it (Nic::drain reads both).
            q.target.store(q.ci + ahead_of_ci(idx_of(first)) as u64, Ordering::Release);
        }
        let mut db = word.swap(0, Ordering::AcqRel);
        if db == 0 {
            db = first;
        } else if ahead_of_ci(idx_of(db)) < ahead_of_ci(idx_of(first)) {
            db = first; // doorbells only move forward: keep the further one
        }
        s.stats.doorbells.fetch_add(1, Ordering::Relaxed);
        if s.cfg.delay_us > 0 {
            // A slow NIC: more WQEs pile up behind the doorbell record meanwhile.
            std::thread::sleep(Duration::from_micros(s.cfg.delay_us));
        }
        let w1 = u32::from_be((db >> 32) as u32);
        let db_idx = idx_of(db);
        if q.dbr_host {
            let dbr = u32::from_be(atomic_u32(cfg.sq_dbrec + 4 * SND_DBR as u64).load(Ordering::Acquire));
            target16 = dbr as u16;
            // The rung index may not be ahead of the record the NIC reads.
            if ahead_of_ci(db_idx) > ahead_of_ci(target16) {
                s.stats.bad_doorbells.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            // The record is in GPU memory: the doorbell's index says how far to go (as a
            // BlueFlame doorbell tells a ConnectX).
            target16 = db_idx;
            q.target.store(q.ci + ahead_of_ci(db_idx) as u64, Ordering::Release);
        }
        if (w1 >> 8) != cfg.qpn {
            s.stats.bad_doorbells.fetch_add(1, Ordering::Relaxed);
        }
    }
    let n = target16.wrapping_sub(q.ci as u16) as u64;
    if n == 0 {
        return true;
    }
    // One read of the whole range (two where it wraps): WQEs never straddle the doorbell record.
    let ring = match read_ring(s, q, q.ci, n) {
        Ok(r) => r,
        Err(why) => {
            crate::log::warn(&format!("IBGDA model: PE {} cannot read the send queue of QP {:#x}: {why}", q.pe, cfg.qpn));
            return false;
        }
    };
    let end = q.ci + n;
    let mut batch = Vec::new();
    while q.ci < end {
        let off = ((q.ci - (end - n)) as usize) * SEND_WQE_BB;
        let w = parse_wqe(&ring, off, q.ci, !s.cfg.sink);
        let nbb = (w.ctrl.num_bb() as u64).max(1);
        q.ci += nbb;
        batch.push(w);
    }
    execute_batch(s, q, &mut batch, rng);
    q.done.store(q.ci, Ordering::Release);
    true
}

/// `n` blocks of the send queue from block index `from`, as one contiguous buffer.
fn read_ring(s: &NicShared, q: &QpRun, from: u64, n: u64) -> MemResult<Vec<u8>> {
    let nw = 1u64 << q.cfg.log_nwqes;
    let mut out = vec![0u8; (n as usize) * SEND_WQE_BB];
    let first = (from & (nw - 1)) as usize;
    let head = (n as usize).min(nw as usize - first);
    let mem: &dyn MemoryAccess = if q.sq_host { &HostMemory } else { &*s.mem };
    let (a, b) = out.split_at_mut(head * SEND_WQE_BB);
    mem.read(q.cfg.sq_buf + (first * SEND_WQE_BB) as u64, a)?;
    if !b.is_empty() {
        mem.read(q.cfg.sq_buf, b)?;
    }
    Ok(out)
}

struct Wqe {
    index: u64,
    ctrl: CtrlSeg,
    /// All ds*16 bytes of the WQE (ctrl included), gathered across the ring.
    bytes: Vec<u8>,
    /// Ok(byte count) or Err(CQE syndrome).
    result: Result<u32, u8>,
    /// The vendor syndrome of its error CQE; 0: the default (0x80 | syndrome).
    vendor: u8,
    /// DCI WQEs: the (LID, DCT number) of the address vector.
    dc: Option<(u16, u32)>,
}

/// The WQE at byte `off` of `ring` (a copy of the send queue from some block on), whose block
/// index is `index`. A WQE whose ds runs past the copy is cut short (decode rejects it).
fn parse_wqe(ring: &[u8], off: usize, index: u64, keep_bytes: bool) -> Wqe {
    let ctrl_bytes: [u8; 16] = ring[off..off + 16].try_into().expect("16 bytes");
    // SAFETY: CtrlSeg is plain data of 16 bytes.
    let ctrl: CtrlSeg = unsafe { std::mem::transmute(ctrl_bytes) };
    let len = (ctrl.ds() as usize * DS_BYTES).max(16);
    let end = (off + len).min(ring.len());
    let bytes = if keep_bytes { ring[off..end].to_vec() } else { Vec::new() };
    Wqe { index, ctrl, bytes, result: Ok(0), vendor: 0, dc: None }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(b[at..at + 2].try_into().unwrap())
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// A decoded operation, validated and ready to run.
enum Op {
    Nop,
    Write { raddr: u64, local: Option<u64>, inline: Vec<u8>, len: u64 },
    Read { raddr: u64, laddr: u64, len: u64 },
    Atomic { raddr: u64, laddr: u64, size: u32, kind: AtomicKind },
}

/// An atomic as the NIC executes it (operands in host order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    Fa(u64),
    Cs { swap: u64, compare: u64 },
    MaskedCs { swap: u64, compare: u64, swap_mask: u64, compare_mask: u64 },
    MaskedFa { add: u64, boundary: u64 },
}

impl AtomicKind {
    /// The new value of a `size`-byte word that held `old`, or None when the word stays.
    pub fn apply(self, old: u64, size: u32) -> Option<u64> {
        let ones = if size == 8 { u64::MAX } else { 0xffff_ffff };
        Some(match self {
            AtomicKind::Fa(a) => old.wrapping_add(a) & ones,
            AtomicKind::Cs { swap, compare } => {
                if old != compare {
                    return None;
                }
                swap
            }
            AtomicKind::MaskedCs { swap, compare, swap_mask, compare_mask } => {
                if old & compare_mask != compare & compare_mask {
                    return None;
                }
                ((old & !swap_mask) | (swap & swap_mask)) & ones
            }
            AtomicKind::MaskedFa { add, boundary } => masked_add(old, add, boundary, size * 8),
        })
    }
}

/// The target of a DCI WQE from its address vector (at byte `at`): the PE owning the DCT, and
/// the vector's length. A DCT that does not exist, or that the key does not open, never answers
/// (we believe a ConnectX target drops such packets, so the initiator's retries run out):
/// syndrome TRANSPORT_RETRY_EXC_ERR, with a model vendor syndrome saying which it was.
fn dc_target(s: &NicShared, w: &mut Wqe, at: usize) -> Result<(u32, usize), u8> {
    let b = &w.bytes;
    if b.len() < at + AV_HALF_BYTES {
        return Err(SYND_LOCAL_QP_OP_ERR);
    }
    let (key, dqp, rlid) = (be64(b, at), be32(b, at + 8), be16(b, at + 14));
    let len = if dqp & EXTENDED_UD_AV != 0 { size_of::<Av>() } else { AV_HALF_BYTES };
    w.dc = Some((rlid, dqp & 0xff_ffff));
    match s.fabric.dct(rlid, dqp) {
        None => {
            w.vendor = MODEL_VENDOR_NO_DCT;
            Err(SYND_TRANSPORT_RETRY_EXC_ERR)
        }
        Some(d) if d.key != key => {
            w.vendor = MODEL_VENDOR_DC_KEY;
            Err(SYND_TRANSPORT_RETRY_EXC_ERR)
        }
        Some(d) => Ok((d.pe, len)),
    }
}

/// Parses and checks a WQE; Err is the error CQE syndrome.
fn decode(s: &NicShared, q: &QpRun, w: &mut Wqe) -> Result<(Op, u32), u8> {
    let c = w.ctrl;
    if c.qpn() != q.cfg.qpn || c.wqe_index() != w.index as u16 {
        return Err(SYND_LOCAL_QP_OP_ERR);
    }
    let mut at = 16;
    let target = if q.cfg.kind == QP_DCI && c.opcode() != OPCODE_NOP {
        let (pe, av_len) = dc_target(s, w, at)?;
        at += av_len;
        pe
    } else {
        q.cfg.peer_pe
    };
    let b = &w.bytes;
    let need = |at: usize, n: usize| if b.len() >= at + n { Ok(()) } else { Err(SYND_LOCAL_QP_OP_ERR) };
    let remote_ok = |raddr: u64, rkey: u32, len: u64| {
        if s.fabric.check(target, rkey, raddr, len) {
            Ok(())
        } else {
            Err(SYND_REMOTE_ACCESS_ERR)
        }
    };
    let local_ok = |laddr: u64, lkey: u32, len: u64| {
        if s.fabric.check(q.pe, lkey, laddr, len) {
            Ok(())
        } else {
            Err(SYND_LOCAL_PROT_ERR)
        }
    };
    match c.opcode() {
        OPCODE_NOP => Ok((Op::Nop, 0)),
        OPCODE_RDMA_WRITE => {
            need(at, 20)?;
            let raddr = be64(b, at);
            let rkey = be32(b, at + 8);
            at += 16;
            let bc = be32(b, at);
            if bc & INLINE_SEG != 0 {
                let len = (bc & !INLINE_SEG) as usize;
                need(at + 4, len)?;
                remote_ok(raddr, rkey, len as u64)?;
                s.stats.inline_wqes.fetch_add(1, Ordering::Relaxed);
                Ok((Op::Write { raddr, local: None, inline: b[at + 4..at + 4 + len].to_vec(), len: len as u64 }, len as u32))
            } else {
                need(at, 16)?;
                let (len, lkey, laddr) = (bc as u64, be32(b, at + 4), be64(b, at + 8));
                local_ok(laddr, lkey, len)?;
                remote_ok(raddr, rkey, len)?;
                Ok((Op::Write { raddr, local: Some(laddr), inline: Vec::new(), len }, bc))
            }
        }
        OPCODE_RDMA_READ => {
            need(at, 32)?;
            let (raddr, rkey) = (be64(b, at), be32(b, at + 8));
            let (len, lkey, laddr) = (be32(b, at + 16) as u64, be32(b, at + 20), be64(b, at + 24));
            local_ok(laddr, lkey, len)?;
            remote_ok(raddr, rkey, len)?;
            Ok((Op::Read { raddr, laddr, len }, len as u32))
        }
        op @ (OPCODE_ATOMIC_FA | OPCODE_ATOMIC_CS | OPCODE_ATOMIC_MASKED_CS | OPCODE_ATOMIC_MASKED_FA) => {
            need(at, 16)?;
            let (raddr, rkey) = (be64(b, at), be32(b, at + 8));
            at += 16;
            let masked = op == OPCODE_ATOMIC_MASKED_CS || op == OPCODE_ATOMIC_MASKED_FA;
            let size = match (masked, c.opmod()) {
                (false, _) => 8,
                (true, OPMOD_EXT_AMO_4B) => 4,
                (true, OPMOD_EXT_AMO_8B) => 8,
                _ => return Err(SYND_LOCAL_QP_OP_ERR),
            };
            let (kind, seg) = match op {
                OPCODE_ATOMIC_FA => (AtomicKind::Fa(be64(b, at)), 16),
                OPCODE_ATOMIC_CS => (AtomicKind::Cs { swap: be64(b, at), compare: be64(b, at + 8) }, 16),
                OPCODE_ATOMIC_MASKED_FA if size == 4 => {
                    (AtomicKind::MaskedFa { add: be32(b, at) as u64, boundary: be32(b, at + 4) as u64 }, 16)
                }
                OPCODE_ATOMIC_MASKED_FA => (AtomicKind::MaskedFa { add: be64(b, at), boundary: be64(b, at + 8) }, 16),
                _ if size == 4 => (
                    AtomicKind::MaskedCs {
                        swap: be32(b, at) as u64,
                        compare: be32(b, at + 4) as u64,
                        swap_mask: be32(b, at + 8) as u64,
                        compare_mask: be32(b, at + 12) as u64,
                    },
                    16,
                ),
                _ => {
                    need(at, 32)?;
                    (
                        AtomicKind::MaskedCs {
                            swap: be64(b, at),
                            compare: be64(b, at + 8),
                            swap_mask: be64(b, at + 16),
                            compare_mask: be64(b, at + 24),
                        },
                        32,
                    )
                }
            };
            at += seg;
            need(at, 16)?;
            let (bc, lkey, laddr) = (be32(b, at), be32(b, at + 4), be64(b, at + 8));
            if bc != size {
                return Err(SYND_LOCAL_LENGTH_ERR);
            }
            if raddr % size as u64 != 0 {
                return Err(SYND_REMOTE_INVAL_REQ_ERR);
            }
            local_ok(laddr, lkey, size as u64)?;
            remote_ok(raddr, rkey, size as u64)?;
            Ok((Op::Atomic { raddr, laddr, size, kind }, size))
        }
        _ => Err(SYND_LOCAL_QP_OP_ERR),
    }
}

/// Masked fetch-add: add per field; a set boundary bit drops the carry out of that bit.
pub fn masked_add(old: u64, add: u64, boundary: u64, bits: u32) -> u64 {
    let mut r = 0u64;
    let mut carry = 0u64;
    for i in 0..bits {
        let s = ((old >> i) & 1) + ((add >> i) & 1) + carry;
        r |= (s & 1) << i;
        carry = if (boundary >> i) & 1 == 1 { 0 } else { s >> 1 };
    }
    r
}

/// Starts one operation (it may complete asynchronously, at the next flush).
fn execute(s: &NicShared, op: &Op) -> MemResult<()> {
    let mem = &*s.mem;
    match op {
        Op::Nop => {}
        Op::Write { raddr, local, inline, len } => {
            match local {
                Some(laddr) => mem.copy(*raddr, *laddr, *len)?,
                None => mem.write(*raddr, inline)?,
            }
            s.stats.bytes.fetch_add(*len, Ordering::Relaxed);
        }
        Op::Read { raddr, laddr, len } => {
            mem.copy(*laddr, *raddr, *len)?;
            s.stats.bytes.fetch_add(*len, Ordering::Relaxed);
            if s.cfg.fault == Fault::CorruptLanded {
                mem.write(*laddr, &vec![0xa5; *len as usize])?;
            }
        }
        Op::Atomic { raddr, laddr, size, kind } => {
            mem.atomic(*raddr, *size, *kind, *laddr)?;
            s.stats.bytes.fetch_add(*size as u64, Ordering::Relaxed);
            if s.cfg.fault == Fault::CorruptLanded {
                mem.write(*laddr, &vec![0xa5; *size as usize])?;
            }
        }
    }
    Ok(())
}

fn execute_batch(s: &NicShared, q: &mut QpRun, batch: &mut [Wqe], rng: &mut Rng) {
    s.stats.wqes.fetch_add(batch.len() as u64, Ordering::Relaxed);
    // Decode in order; the first failure puts the QP in error and flushes the rest.
    let mut ops: Vec<(usize, Op)> = Vec::new();
    for (i, w) in batch.iter_mut().enumerate() {
        if w.ctrl.fm_ce_se & CTRL_FM_MASK == CTRL_FENCE {
            s.stats.fenced_wqes.fetch_add(1, Ordering::Relaxed);
        }
        if q.in_error {
            w.result = Err(SYND_WR_FLUSH_ERR);
            continue;
        }
        if s.cfg.sink {
            continue;
        }
        match decode(s, q, w) {
            Ok((op, n)) => {
                w.result = Ok(n);
                ops.push((i, op));
            }
            Err(synd) => {
                w.result = Err(synd);
                q.in_error = true;
            }
        }
    }
    // Execute, shuffled within runs that no fenced WQE splits.
    let mut start = 0;
    while start < ops.len() {
        let mut end = start + 1;
        while end < ops.len() && batch[ops[end].0].ctrl.fm_ce_se & CTRL_FM_MASK != CTRL_FENCE {
            end += 1;
        }
        let run = &mut ops[start..end];
        if s.cfg.reorder {
            for i in (1..run.len()).rev() {
                let j = (rng.next() % (i as u64 + 1)) as usize;
                run.swap(i, j);
            }
        }
        for (i, op) in run.iter() {
            if q.in_error {
                batch[*i].result = Err(SYND_WR_FLUSH_ERR);
                continue;
            }
            if let Err(why) = execute(s, op) {
                crate::log::warn(&format!(
                    "IBGDA model: PE {}: {} on QP {:#x} failed: {why}",
                    q.pe,
                    opcode_name(batch[*i].ctrl.opcode()),
                    q.cfg.qpn
                ));
                batch[*i].result = Err(SYND_REMOTE_ACCESS_ERR);
                q.in_error = true;
            }
        }
        start = end;
    }
    // Asynchronous data movement finishes before any completion is reported.
    if !ops.is_empty() {
        if let Err(why) = s.mem.flush() {
            crate::log::warn(&format!("IBGDA model: PE {}: data movement on QP {:#x} failed: {why}", q.pe, q.cfg.qpn));
            for w in batch.iter_mut().filter(|w| w.result.is_ok()) {
                w.result = Err(SYND_REMOTE_OP_ERR);
            }
            q.in_error = true;
        }
    }
    // Completions, in WQE order.
    for w in batch.iter() {
        let signaled = w.ctrl.fm_ce_se & CTRL_CE_MASK == CTRL_CQ_UPDATE;
        match w.result {
            Ok(_) if s.cfg.fault == Fault::DropCompletions => {}
            Ok(n) if signaled => write_cqe(s, q, w, CQE_REQ, 0, n),
            Err(synd) if synd != SYND_WR_FLUSH_ERR || signaled => {
                // The failing WQE always completes with an error; flushed ones when signaled.
                write_cqe(s, q, w, CQE_REQ_ERR, synd, 0);
            }
            _ => {}
        }
    }
}

fn write_cqe(s: &NicShared, q: &mut QpRun, w: &Wqe, opcode: u8, syndrome: u8, byte_cnt: u32) {
    let cfg = &q.cfg;
    let ncqes = 1u64 << cfg.log_ncqes;
    // Wait for room: the consumer index (24 bits) is in the CQ doorbell record.
    let mut waited = false;
    loop {
        let ci = u32::from_be(atomic_u32(cfg.cq_dbrec).load(Ordering::Acquire)) & 0xff_ffff;
        let outstanding = (q.cq_pi as u32).wrapping_sub(ci) & 0xff_ffff;
        if (outstanding as u64) < ncqes || s.stop.load(Ordering::Acquire) {
            break;
        }
        if !waited {
            s.stats.cq_full_waits.fetch_add(1, Ordering::Relaxed);
            waited = true;
        }
        std::thread::yield_now();
    }
    let addr = cfg.cq_buf + ((q.cq_pi & (ncqes - 1)) << 6);
    let owner = ((q.cq_pi >> cfg.log_ncqes) & 1) as u8;
    let mut cqe = [0u8; 64];
    if opcode == CQE_REQ {
        cqe[44..48].copy_from_slice(&byte_cnt.to_be_bytes());
        cqe[56..60].copy_from_slice(&(cfg.qpn & 0xff_ffff).to_be_bytes());
    } else {
        // Vendor syndrome: a model-specific marker, or the model's reason (see abi::model_vendor_note).
        let vendor = if w.vendor != 0 { w.vendor } else { 0x80 | syndrome };
        cqe[54] = vendor;
        cqe[55] = syndrome;
        cqe[56..60].copy_from_slice(&(((w.ctrl.opcode() as u32) << 24) | (cfg.qpn & 0xff_ffff)).to_be_bytes());
        s.stats.error_cqes.fetch_add(1, Ordering::Relaxed);
        if !q.logged && syndrome != SYND_WR_FLUSH_ERR {
            q.logged = true;
            let mut first = s.first_error.lock().unwrap_or_else(|e| e.into_inner());
            if first.is_none() {
                let mut d = q.cfg;
                d.err_count = 1;
                d.err_syndrome = syndrome;
                d.err_vendor = vendor;
                d.err_opcode = w.ctrl.opcode();
                d.err_cqe_opcode = opcode;
                d.err_wqe_index = w.index as u16 as u32;
                if let Some((rlid, dct)) = w.dc {
                    (d.err_rlid, d.err_dct) = (rlid, dct);
                }
                *first = Some(d);
            }
            let to = match w.dc {
                Some((rlid, dct)) => match s.fabric.dct(rlid, dct) {
                    Some(d) => format!("PE {} over DC (DCT {dct:#x} at LID {rlid})", d.pe),
                    None => format!("DCT {dct:#x} at LID {rlid}, which no PE owns,"),
                },
                None if cfg.kind == QP_DCI => "a PE over DC".to_string(),
                None => format!("PE {}", cfg.peer_pe),
            };
            crate::log::info(&format!(
                "IBGDA model: {} from PE {} to {to} completed with an error: {}{} (QP {:#x}, WQE index {})",
                opcode_name(w.ctrl.opcode()),
                q.pe,
                syndrome_name(syndrome),
                super::abi::model_vendor_note(vendor).map(|n| format!(": {n}")).unwrap_or_default(),
                cfg.qpn,
                w.index as u16
            ));
        }
    }
    // SAFETY: the CQ is host-addressable memory of an attached QP (valid per `attach`).
    unsafe { std::ptr::copy_nonoverlapping(cqe.as_ptr(), addr as *mut u8, 60) };
    // The last word (wqe_counter, signature, op_own) goes last, with release: it makes the CQE valid.
    let tail = [(w.index as u16).to_be_bytes()[0], (w.index as u16).to_be_bytes()[1], 0, (opcode << 4) | owner];
    atomic_u32(addr + 60).store(u32::from_le_bytes(tail), Ordering::Release);
    q.cq_pi += 1;
    s.stats.cqes.fetch_add(1, Ordering::Relaxed);
}

/// xorshift64: the model's shuffles need no quality, only reproducibility.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// Whether the environment selects the model (`RSHMEM_IBGDA_NIC=model`).
pub fn selected() -> bool {
    crate::env::current(crate::env::IBGDA_NIC).1.trim().eq_ignore_ascii_case("model")
    // same rule as IbgdaConfig
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_add_is_add_without_boundaries_and_xor_with_all() {
        assert_eq!(masked_add(5, 7, 0, 64), 12);
        assert_eq!(masked_add(u64::MAX, 1, 0, 64), 0);
        assert_eq!(masked_add(0b1100, 0b1010, u64::MAX, 64), 0b0110);
        assert_eq!(masked_add(0xffff_ffff, 1, 0, 32), 0);
        // two 4-bit fields: carry out of bit 3 is dropped
        assert_eq!(masked_add(0x0f, 0x01, 0x08, 8), 0x00);
    }

    #[test]
    fn fabric_checks_key_and_range() {
        let f = Fabric::new();
        f.register(1, 0x55, 1000, 100);
        assert!(f.check(1, 0x55, 1000, 100));
        assert!(f.check(1, 0x55, 1099, 1));
        assert!(!f.check(1, 0x55, 1099, 2));
        assert!(!f.check(1, 0x56, 1000, 1));
        assert!(!f.check(0, 0x55, 1000, 1));
        assert!(!f.check(1, 0x55, 999, 1));
    }
}
