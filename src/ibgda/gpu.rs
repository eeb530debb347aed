//! IBGDA in the GPU runtime: at nvshmem_init, for every peer the device cannot reach by loads
//! and stores (NVSHMEM_DISABLE_P2P=1), this builds RC QPs that the device library posts to
//! (device/ibgda/ibgda_device.cuh), the registration keys of the heaps, and the per-PE state the
//! device state points to; with `RSHMEM_IBGDA_NIC=model` the software HCA model plays the NIC.
//!
//! Where the queues live (model NIC):
//! ```text
//! QP descriptors (rshmem_ibgda_qp[npes * num_rc])  GPU memory  hot counters: GPU atomics only
//! send queues                                      GPU memory  as with a NIC; the model copies a doorbell's
//!                                                              WQEs out in one cuMemcpy (IBGDA_MODEL_SQ=host:
//!                                                              pinned host memory mapped into the GPU instead)
//! send doorbell records                           GPU memory (as NVSHMEM keeps them); the model takes
//!                                                  the producer index from the doorbell word instead
//! CQs, CQ doorbell records, doorbell words         pinned host memory mapped into the GPU (the model
//!                                                  polls them in place; the GPU reaches them over PCIe)
//! PE state, peer table, fetch landing slots        GPU memory
//! ```
//! Each QP is "connected" at init by a warm-up: the host posts one zero-byte RDMA WRITE to the
//! peer's heap on it, rings, and waits for its completion, before the device ever sees the QP.
//!
//! Registration: a key per PE heap (both lkey and rkey) covering the mapped part of the heap
//! (`heap_grew` extends it), and one for this PE's fetch slots. The model addresses a peer's heap
//! where it is mapped in this process, so `peers[pe].heap_base` is that address.

use std::sync::Arc;
use std::time::Duration;

use crate::cuda::kernels::Kernels;
use crate::cuda::sys::CUcontext;
use crate::error::{Error, ErrorKind, Result};

use super::abi::{PeState, PeerState, QpState, MAP_BY_CTA, QP_RC};
use super::cuda::{CudaMemory, DevBuf, PinnedBuf};
use super::mlx5::*;
use super::model::{Fabric, HostMemory, MemoryAccess, ModelConfig, Nic};
use super::{IbgdaConfig, NicKind};

/// The key of PE `pe`'s heap registration.
pub fn heap_key(pe: usize) -> u32 {
    0x0010_0000 + pe as u32
}
/// The key of this PE's fetch slots.
pub fn fetch_key(pe: usize) -> u32 {
    0x0020_0000 + pe as u32
}

/// Landing slots for fetched values: one per resident GPU thread (SM < 256, 64 warps, 32 lanes;
/// see fetch_slot_index in ibgda_port.h), plus the discard slot.
pub const FETCH_SLOTS: u32 = 1 << 19;
/// Largest inline payload on an RC QP whose WQE still fits one 64-byte block.
pub const INLINE_MAX: u16 = 28;

/// What the runtime tells IBGDA about this PE.
pub struct Setup {
    pub me: usize,
    pub npes: usize,
    pub ctx: CUcontext,
    /// PE p's heap as mapped in this process.
    pub heap_bases: Vec<u64>,
    /// Bytes reserved per heap (what device code may address) and bytes mapped now.
    pub stride: usize,
    pub mapped: usize,
    /// PEs reached through IBGDA.
    pub remote: Vec<bool>,
}

/// The settings beyond IbgdaConfig that the GPU queues use.
#[derive(Clone, Copy, Debug)]
pub struct QueueConfig {
    pub log_nwqes: u16,
    pub batch: u16,
    pub model_threads: usize,
    pub sink: bool,
    pub sq_host: bool,
}

fn bad(var: &str, value: &str, expected: &str) -> Error {
    Error::invalid("nvshmem_init", format!("environment variable {var}={value:?} is not valid: expected {expected}"))
}

impl QueueConfig {
    pub fn parse(f: impl Fn(&str) -> (String, String)) -> Result<QueueConfig> {
        let num = |name: &str, lo: u64, hi: u64| -> Result<u64> {
            let (var, v) = f(name);
            v.trim().parse::<u64>().ok().filter(|n| (lo..=hi).contains(n)).ok_or_else(|| bad(&var, &v, &format!("a whole number from {lo} to {hi}")))
        };
        let depth = num("QP_DEPTH", 16, 1 << super::abi::MAX_LOG_NWQES)?;
        if !depth.is_power_of_two() {
            let (var, v) = f("QP_DEPTH");
            return Err(bad(&var, &v, "a power of two (16, 32, ..., 32768)"));
        }
        let batch = num("IBGDA_NUM_REQUESTS_IN_BATCH", 1, 32768)?;
        let threads = num("IBGDA_MODEL_THREADS", 1, 64)?;
        let flag = |name: &str| -> Result<bool> {
            let (var, v) = f(name);
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "y" | "yes" | "true" | "on" => Ok(true),
                "0" | "n" | "no" | "false" | "off" | "" => Ok(false),
                _ => Err(bad(&var, &v, "0 or 1")),
            }
        };
        let sink = flag("IBGDA_MODEL_SINK")?;
        let (var, v) = f("IBGDA_MODEL_SQ");
        let sq_host = match v.trim().to_ascii_lowercase().as_str() {
            "gpu" => false,
            "host" => true,
            _ => return Err(bad(&var, &v, "gpu or host")),
        };
        Ok(QueueConfig { log_nwqes: depth.trailing_zeros() as u16, batch: batch as u16, model_threads: threads as usize, sink, sq_host })
    }
}

/// Queue memory of one QP kind, as one block per kind for all QPs.
enum SqMem {
    Gpu(DevBuf),
    Host(PinnedBuf),
}

impl SqMem {
    fn addr(&self) -> u64 {
        match self {
            SqMem::Gpu(b) => b.addr,
            SqMem::Host(b) => b.addr,
        }
    }
}

pub struct GpuIbgda {
    // Field order is drop order: the NIC threads stop before the memory they use goes away.
    nics: Vec<Nic>,
    fabric: Arc<Fabric>,
    qps: DevBuf,
    _peers: DevBuf,
    state: DevBuf,
    _fetch: DevBuf,
    _sq: SqMem,
    _cq: PinnedBuf,
    _db: PinnedBuf,
    _dbr: DevBuf,
    me: usize,
    npes: usize,
    num_rc: usize,
    /// Indices (in the QP array) of the QPs that exist.
    active: Vec<usize>,
    pub config: IbgdaConfig,
    pub queues: QueueConfig,
}

fn cu<T>(r: crate::cuda::CuResult<T>, what: &str) -> Result<T> {
    r.map_err(|e| Error::new(ErrorKind::System, "nvshmem_init", format!("IBGDA set-up: {what}: {e}")))
}

/// Views a descriptor as bytes (for uploading).
fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data repr(C) structs of integers; any byte view of them is valid.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

impl GpuIbgda {
    /// Builds the QPs, starts the model NICs, warms every QP up. Call with the PE's context
    /// current.
    pub fn create(s: &Setup) -> Result<GpuIbgda> {
        let config = IbgdaConfig::from_env()?;
        let queues = QueueConfig::parse(crate::env::current)?;
        if config.nic != NicKind::Model {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "nvshmem_init",
                format!(
                    "PE {} reaches {} peer(s) only through the network (NVSHMEM_DISABLE_P2P=1), but this build cannot yet drive a ConnectX from the GPU runtime (RSHMEM_IBGDA_NIC=hw); set RSHMEM_IBGDA_NIC=model to use the software HCA model",
                    s.me,
                    s.remote.iter().filter(|r| **r).count()
                ),
            ));
        }
        if config.num_rc_per_pe == 0 {
            return Err(Error::invalid("nvshmem_init", "NVSHMEM_IBGDA_NUM_RC_PER_PE=0 asks for DC only, which the GPU runtime does not offer yet; use 1 or more RC QPs per PE"));
        }
        let (me, npes, num_rc) = (s.me, s.npes, config.num_rc_per_pe as usize);
        let nwqes = 1usize << queues.log_nwqes;
        let active: Vec<usize> = (0..npes).filter(|&p| s.remote[p]).flat_map(|p| (0..num_rc).map(move |i| p * num_rc + i)).collect();
        let nq = active.len();

        // Registrations (model fabric: per process; keys computed, as an address exchange would give them).
        let fabric = Fabric::new();
        for (pe, base) in s.heap_bases.iter().enumerate() {
            fabric.register(pe as u32, heap_key(pe), *base, s.mapped as u64);
        }
        let fetch = cu(DevBuf::new(FETCH_SLOTS as usize * 8 + 8), "allocating the fetch slots")?;
        fabric.register(me as u32, fetch_key(me), fetch.addr, fetch.len as u64);

        // Queue memory.
        let sq_bytes = nq.max(1) * nwqes * SEND_WQE_BB;
        let sq = if queues.sq_host {
            SqMem::Host(cu(PinnedBuf::new(sq_bytes), "allocating send queues (pinned host memory)")?)
        } else {
            SqMem::Gpu(cu(DevBuf::new(sq_bytes), "allocating send queues (GPU memory)")?)
        };
        let cq = cu(PinnedBuf::new(nq.max(1) * nwqes * CQE_SIZE), "allocating completion queues")?;
        cq.fill(CQE_INVALID << 4);
        let db = cu(PinnedBuf::new(nq.max(1) * 64), "allocating doorbell words and CQ doorbell records")?;
        let dbr = cu(DevBuf::new(nq.max(1) * 64), "allocating send doorbell records")?;

        // Descriptors.
        let signal_every = (nwqes / 4).min(64) as u16;
        let mut descs = vec![QpState::zeroed(); npes * num_rc];
        for (k, &idx) in active.iter().enumerate() {
            let q = &mut descs[idx];
            q.qpn = 0x100 + idx as u32;
            q.cqn = q.qpn;
            q.peer_pe = (idx / num_rc) as u32;
            q.log_nwqes = queues.log_nwqes;
            q.log_ncqes = queues.log_nwqes;
            q.signal_every = signal_every;
            q.batch = queues.batch;
            q.inline_max = INLINE_MAX;
            q.kind = QP_RC;
            q.flags = 0;
            q.sq_buf = sq.addr() + (k * nwqes * SEND_WQE_BB) as u64;
            q.cq_buf = cq.addr + (k * nwqes * CQE_SIZE) as u64;
            q.sq_dbrec = dbr.addr + (k * 64) as u64;
            q.cq_dbrec = db.addr + (k * 64) as u64;
            q.bf_reg = q.cq_dbrec + 32;
        }

        // The NICs: QP k is served by NIC k mod threads.
        let model = ModelConfig { sink: queues.sink, ..ModelConfig::default() };
        let kernels = Arc::new(cu(Kernels::load(), "loading the library kernels for the model's atomics")?);
        let mut nics = Vec::new();
        for _ in 0..queues.model_threads.min(nq.max(1)) {
            let mem: Arc<dyn MemoryAccess> = Arc::new(cu(CudaMemory::new(s.ctx, kernels.clone()), "creating the model's stream")?);
            nics.push(Nic::start(me as u32, fabric.clone(), mem, model));
        }

        // Connect: attach, then one zero-byte write per QP, completed before the device sees it.
        for (k, &idx) in active.iter().enumerate() {
            // SAFETY: the queues named in the descriptor live as long as the NICs (fields above).
            unsafe { nics[k % nics.len()].attach_config(descs[idx], queues.sq_host) };
            let peer = idx / num_rc;
            warm_up(&mut descs[idx], &sq, &dbr, s.heap_bases[peer], heap_key(peer), me)?;
        }

        let qps = cu(DevBuf::new(std::mem::size_of_val(&descs[..])), "allocating QP descriptors")?;
        cu(qps.upload(0, bytes_of(&descs)), "uploading QP descriptors")?;
        let mut peers = vec![PeerState::zeroed(); npes];
        for (pe, p) in peers.iter_mut().enumerate() {
            p.heap_base = s.heap_bases[pe];
            p.heap_size = s.stride as u64;
            p.rkey = heap_key(pe);
        }
        let peers_buf = cu(DevBuf::new(std::mem::size_of_val(&peers[..])), "allocating the peer table")?;
        cu(peers_buf.upload(0, bytes_of(&peers)), "uploading the peer table")?;
        let mut st = PeState::zeroed();
        st.my_pe = me as u32;
        st.npes = npes as u32;
        st.num_rc_per_pe = num_rc as u32;
        st.num_dci = 0;
        st.rc_map_by = config.rc_map_by;
        st.dci_map_by = MAP_BY_CTA;
        st.heap_lkey = heap_key(me);
        st.heap_base = s.heap_bases[me];
        st.heap_size = s.stride as u64;
        st.rc_qps = qps.addr;
        st.peers = peers_buf.addr;
        st.fetch_buf = fetch.addr;
        st.fetch_lkey = fetch_key(me);
        st.fetch_slots = FETCH_SLOTS;
        let state = cu(DevBuf::new(std::mem::size_of::<PeState>()), "allocating the IBGDA state")?;
        cu(state.upload(0, bytes_of(std::slice::from_ref(&st))), "uploading the IBGDA state")?;

        crate::runtime::log::info(&format!(
            "IBGDA ({} NIC): {nq} RC QPs ({num_rc} per remote PE, map by {}), {nwqes} WQE blocks each, doorbell batch {}, signal every {signal_every}; send queues in {} memory; {} model thread(s){}",
            if config.nic == NicKind::Model { "software model" } else { "hardware" },
            ["cta", "sm", "warp", "dct"][config.rc_map_by as usize % 4],
            queues.batch,
            if queues.sq_host { "pinned host" } else { "GPU" },
            nics.len(),
            if queues.sink { ", sink mode (no data moves)" } else { "" }
        ));
        Ok(GpuIbgda { nics, fabric, qps, _peers: peers_buf, state, _fetch: fetch, _sq: sq, _cq: cq, _db: db, _dbr: dbr, me, npes, num_rc, active, config, queues })
    }

    /// Device address of the `rshmem_ibgda_state` for the device state.
    pub fn state_addr(&self) -> u64 {
        self.state.addr
    }

    /// The heaps grew to `mapped` bytes each: the registrations follow.
    pub fn heap_grew(&self, mapped: usize) {
        for pe in 0..self.npes {
            self.fabric.resize(pe as u32, heap_key(pe), mapped as u64);
        }
    }

    /// Host-side quiet: every WQE the device has rung so far has executed; then the first error
    /// CQE any QP saw, as an error naming the operation and the PEs.
    pub fn drain(&self, routine: &'static str) -> Result<()> {
        for nic in &self.nics {
            if !nic.drain(Duration::from_secs(60)) {
                return Err(Error::new(ErrorKind::System, routine, format!("PE {}: the IBGDA model NIC did not finish the posted work within 60 s", self.me)));
            }
        }
        self.check(routine)
    }

    /// The first error completion of this PE's QPs: as the device recorded it, else as the
    /// model NIC wrote it (the device may not have polled it yet).
    pub fn check(&self, routine: &'static str) -> Result<()> {
        let mut descs = vec![QpState::zeroed(); self.npes * self.num_rc];
        // SAFETY: QpState is plain data; the byte view is filled by the download.
        let bytes = unsafe { std::slice::from_raw_parts_mut(descs.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(&descs[..])) };
        cu(self.qps.download(0, bytes), "reading QP descriptors").map_err(|e| e.in_routine(routine))?;
        for &i in &self.active {
            if let Some(e) = super::qp_error(&descs[i], self.me as u32, routine) {
                return Err(e);
            }
        }
        for nic in &self.nics {
            if let Some(e) = nic.first_error().and_then(|d| super::qp_error(&d, self.me as u32, routine)) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// One line of model counters per NIC (for RSHMEM_DEBUG=INFO at finalize).
    pub fn stats_line(&self) -> String {
        use std::sync::atomic::Ordering::Relaxed;
        let (mut db, mut w, mut c, mut e) = (0, 0, 0, 0);
        for n in &self.nics {
            let s = n.stats();
            db += s.doorbells.load(Relaxed);
            w += s.wqes.load(Relaxed);
            c += s.cqes.load(Relaxed);
            e += s.error_cqes.load(Relaxed);
        }
        format!("IBGDA model NIC of PE {}: {db} doorbells, {w} WQEs, {c} CQEs ({e} errors)", self.me)
    }
}

impl Drop for GpuIbgda {
    fn drop(&mut self) {
        crate::runtime::log::info(&self.stats_line());
    }
}

/// Posts one signaled zero-byte RDMA WRITE to `raddr` on the QP described by `q` (whose NIC is
/// attached), rings, waits for its CQE and consumes it: afterwards the descriptor's counters
/// stand at 1, as if the device had posted and completed it.
fn warm_up(q: &mut QpState, sq: &SqMem, dbr: &DevBuf, raddr: u64, rkey: u32, me: usize) -> Result<()> {
    let mut wqe = [0u8; SEND_WQE_BB];
    let ds = 3u32; // ctrl, raddr, inline header
    wqe[0..4].copy_from_slice(&((OPCODE_RDMA_WRITE as u32) & 0xff).to_be_bytes()); // opmod 0, index 0
    wqe[4..8].copy_from_slice(&((q.qpn << 8) | ds).to_be_bytes());
    wqe[11] = CTRL_CQ_UPDATE;
    wqe[16..24].copy_from_slice(&raddr.to_be_bytes());
    wqe[24..28].copy_from_slice(&rkey.to_be_bytes());
    wqe[32..36].copy_from_slice(&INLINE_SEG.to_be_bytes());
    match sq {
        SqMem::Gpu(b) => cu(b.upload((q.sq_buf - b.addr) as usize, &wqe), "writing the warm-up WQE")?,
        SqMem::Host(_) => HostMemory.write(q.sq_buf, &wqe).map_err(|e| Error::new(ErrorKind::System, "nvshmem_init", e))?,
    }
    let atomic_u32 = |a: u64| {
        // SAFETY: doorbell-record and CQ words in this QP's pinned host memory, 4-byte aligned.
        unsafe { std::sync::atomic::AtomicU32::from_ptr(a as *mut u32) }
    };
    let rec = 1u32.to_be_bytes();
    cu(dbr.upload((q.sq_dbrec - dbr.addr) as usize + 4 * SND_DBR, &rec), "writing the send doorbell record")?;
    // The doorbell carries the producer index (1) in the ctrl word's index field.
    wqe[0..4].copy_from_slice(&((1u32 << 8) | OPCODE_RDMA_WRITE as u32).to_be_bytes());
    let db = u64::from_le_bytes(wqe[0..8].try_into().expect("8 bytes"));
    // SAFETY: the doorbell word in this QP's pinned host memory, 8-byte aligned.
    unsafe { std::sync::atomic::AtomicU64::from_ptr(q.bf_reg as *mut u64) }.store(db, std::sync::atomic::Ordering::Release);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let tail = loop {
        let t = atomic_u32(q.cq_buf + 60).load(std::sync::atomic::Ordering::Acquire);
        if (t >> 28) as u8 != CQE_INVALID {
            break t;
        }
        if std::time::Instant::now() > deadline {
            return Err(Error::new(ErrorKind::System, "nvshmem_init", format!("PE {me}: the IBGDA warm-up write to PE {} got no completion within 20 s", q.peer_pe)));
        }
        std::thread::sleep(Duration::from_micros(50));
    };
    let opcode = (tail >> 28) as u8;
    if opcode != CQE_REQ {
        // SAFETY: the CQE just written by the NIC, in pinned host memory.
        let cqe: [u8; 64] = unsafe { std::ptr::read_volatile(q.cq_buf as *const [u8; 64]) };
        q.err_count = 1;
        q.err_syndrome = cqe[55];
        q.err_vendor = cqe[54];
        q.err_opcode = OPCODE_RDMA_WRITE;
        return Err(super::qp_error(q, me as u32, "nvshmem_init").expect("error recorded"));
    }
    q.resv_head = 1;
    q.ready_head = 1;
    q.posted_head = 1;
    q.signaled_head = 1;
    q.completed_head = 1;
    q.cq_cons = 1;
    atomic_u32(q.cq_dbrec).store(1u32.to_be(), std::sync::atomic::Ordering::Release);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table<'a>(over: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> (String, String) + 'a {
        move |name| {
            over.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (format!("NVSHMEM_{name}"), v.to_string()))
                .unwrap_or_else(|| ("default".into(), crate::env::SETTINGS.iter().find(|s| s.name == name).unwrap().default.into()))
        }
    }

    #[test]
    fn queue_settings_parse_and_name_bad_values() {
        let q = QueueConfig::parse(table(&[])).unwrap();
        assert_eq!((q.log_nwqes, q.batch, q.model_threads, q.sink, q.sq_host), (10, 32, 1, false, false));
        let q = QueueConfig::parse(table(&[("QP_DEPTH", "16"), ("IBGDA_MODEL_SINK", "1"), ("IBGDA_MODEL_SQ", "host")])).unwrap();
        assert_eq!((q.log_nwqes, q.sink, q.sq_host), (4, true, true));
        let e = QueueConfig::parse(table(&[("QP_DEPTH", "100")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_QP_DEPTH") && e.contains("power of two"), "{e}");
        assert!(QueueConfig::parse(table(&[("QP_DEPTH", "8")])).is_err());
        assert!(QueueConfig::parse(table(&[("IBGDA_MODEL_SQ", "nic")])).is_err());
        assert!(QueueConfig::parse(table(&[("IBGDA_MODEL_THREADS", "0")])).is_err());
    }
}
