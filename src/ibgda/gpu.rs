//! IBGDA in the GPU runtime: at nvshmem_init, for the peers the device cannot reach by loads and
//! stores (NVSHMEM_DISABLE_P2P=1), this builds the queues the device library posts to
//! (device/ibgda/ibgda_device.cuh), the registration keys of the heaps, and the per-PE state the
//! device state points to; with `RSHMEM_IBGDA_NIC=model` the software HCA model plays the NIC.
//!
//! Transport: RC by default, `NVSHMEM_IBGDA_NUM_RC_PER_PE` QPs per remote PE. With
//! `NVSHMEM_IBGDA_NUM_RC_PER_PE=0`, DC: `NVSHMEM_IBGDA_NUM_DCI` DC initiators (<= 0: one per SM,
//! at most 256) shared by every target, and `NVSHMEM_IBGDA_NUM_DCT` DC targets per PE whose
//! numbers and DC access key every PE learns through the bootstrap (see [`super::dc`]). No
//! mixed mode: every remote PE goes the same way.
//!
//! Where the queues live (model NIC):
//! ```text
//! QP descriptors (rshmem_ibgda_qp[npes * num_rc]   GPU memory  hot counters: GPU atomics only
//!   or [num_dci]), QP-used bitmap, DCT table
//! send queues                                      GPU memory  as with a NIC; the model copies a doorbell's
//!                                                              WQEs out in one cuMemcpy (IBGDA_MODEL_SQ=host:
//!                                                              pinned host memory mapped into the GPU instead)
//! send doorbell records                           GPU memory (as NVSHMEM keeps them); the model takes
//!                                                  the producer index from the doorbell word instead
//! CQs, CQ doorbell records, doorbell words         pinned host memory mapped into the GPU (the model
//!                                                  polls them in place; the GPU reaches them over PCIe)
//! PE state, peer table, fetch landing slots        GPU memory
//! ```
//! Each QP is "connected" at init by a warm-up ([`super::warmup`]): the host posts one zero-byte
//! RDMA WRITE on it (a DCI: to one of the DCTs, round robin over the targets), rings, and waits
//! for its completion, before the device ever sees the QP.
//!
//! Registration: a key per PE heap (both lkey and rkey) covering the mapped part of the heap
//! (`heap_grew` extends it), one for this PE's fetch slots, and one per buffer the program
//! registers (`register_buffer`, listed for the device in [`super::regs`]). The model addresses a peer's heap
//! where it is mapped in this process, so `peers[pe].heap_base` is that address.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::bootstrap::Bootstrap;
use crate::cuda::kernels::Kernels;
use crate::cuda::sys::CUcontext;
use crate::env::{self, Setting};
use crate::error::{Error, ErrorKind, Result};

use super::abi::{PeState, PeerState, QpState, MAP_BY_CTA, QP_DCI, QP_RC};
use super::cuda::{CudaMemory, DevBuf, PinnedBuf};
use super::dc::{self, DcTargets};
use super::host_rma::{stage_key, HostQueues, RemoteHeap, Stage};
use super::mlx5::*;
use super::model::{Fabric, MemoryAccess, ModelConfig, Nic};
use super::regs::{self, Registrations};
use super::warmup::{warm_up, SqMem, Target};
use super::IbgdaConfig;

/// The key of PE `pe`'s heap registration.
pub fn heap_key(pe: usize) -> u32 {
    0x0010_0000 + pe as u32
}
/// The key of this PE's fetch slots.
pub fn fetch_key(pe: usize) -> u32 {
    0x0020_0000 + pe as u32
}
/// The first key of buffers registered by nvshmemx_buffer_register (each gets a new one, so a
/// stale key never names a later buffer).
const FIRST_BUFFER_KEY: u32 = 0x0100_0000;

/// Landing slots for fetched values: one per resident GPU thread (SM < 256, 64 warps, 32 lanes;
/// see fetch_slot_index in ibgda_port.h), plus the discard slot.
pub const FETCH_SLOTS: u32 = 1 << 19;
/// Bytes of the host's staging buffer for host-initiated RMA over IBGDA.
const HOST_STAGE_BYTES: usize = 256 << 10;
/// Largest inline payload on an RC QP whose WQE still fits one 64-byte block.
pub const INLINE_MAX: u16 = 28;

/// What the runtime tells IBGDA about this PE.
pub struct Setup<'a> {
    pub me: usize,
    pub npes: usize,
    pub ctx: CUcontext,
    /// For the DC target exchange (collective: every PE creates its IBGDA state together).
    pub boot: &'a dyn Bootstrap,
    /// Multiprocessors of this PE's GPU (the automatic DCI count).
    pub sms: u32,
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
    pub fn parse(f: impl Fn(Setting) -> (String, String)) -> Result<QueueConfig> {
        let num = |name: Setting, lo: u64, hi: u64| -> Result<u64> {
            let (var, v) = f(name);
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (lo..=hi).contains(n))
                .ok_or_else(|| bad(&var, &v, &format!("a whole number from {lo} to {hi}")))
        };
        let depth = num(env::QP_DEPTH, 16, 1 << super::abi::MAX_LOG_NWQES)?;
        if !depth.is_power_of_two() {
            let (var, v) = f(env::QP_DEPTH);
            return Err(bad(&var, &v, "a power of two (16, 32, ..., 32768)"));
        }
        // Rounded up to a power of two: the device tests "crossed a batch boundary" with a mask.
        let batch = num(env::IBGDA_NUM_REQUESTS_IN_BATCH, 1, 32768)?.next_power_of_two();
        let threads = num(env::IBGDA_MODEL_THREADS, 1, 64)?;
        let flag = |name: Setting| -> Result<bool> {
            let (var, v) = f(name);
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "y" | "yes" | "true" | "on" => Ok(true),
                "0" | "n" | "no" | "false" | "off" | "" => Ok(false),
                _ => Err(bad(&var, &v, "0 or 1")),
            }
        };
        let sink = flag(env::IBGDA_MODEL_SINK)?;
        let (var, v) = f(env::IBGDA_MODEL_SQ);
        let sq_host = match v.trim().to_ascii_lowercase().as_str() {
            "gpu" => false,
            "host" => true,
            _ => return Err(bad(&var, &v, "gpu or host")),
        };
        Ok(QueueConfig { log_nwqes: depth.trailing_zeros() as u16, batch: batch as u16, model_threads: threads as usize, sink, sq_host })
    }
}

/// Lazy loading (CUDA's default since 12.2) makes a kernel's first launch wait until the GPU is
/// idle, and meanwhile the driver holds up the model NIC thread's copies and atomics: a kernel
/// waiting for the model (a device barrier, a get, a fetching atomic) while the host launches
/// another kernel for the first time never ends (ctest/cuda/coll.cu and first_launch.cu, session
/// 31: results/gpu-crosshost-2026-11-29g-ibgdacoll). CUDA reads the setting once, at its start.
const MODEL_LAZY_LOADING: &str = "CUDA loads kernels lazily (CUDA_MODULE_LOADING is unset or LAZY): a kernel's first launch then waits for the GPU to go idle and holds up the IBGDA model NIC's copies and atomics, so device code that waits for another PE (a device barrier, a get, a fetching atomic) while the host launches a kernel for the first time can hang; set CUDA_MODULE_LOADING=EAGER in the job's environment";

/// The warning for the model NIC, given `cuda::lazy_loading()`: only when the driver says LAZY.
fn lazy_loading_warning(lazy: Option<bool>) -> Option<&'static str> {
    (lazy == Some(true)).then_some(MODEL_LAZY_LOADING)
}

pub struct GpuIbgda {
    // Field order is drop order: the NIC threads stop before the memory they use goes away.
    nics: Vec<Nic>,
    /// The host's own QPs (host-initiated RMA), served by `nics[0]`.
    pub host: Option<HostQueues>,
    fabric: Arc<Fabric>,
    qps: DevBuf,
    _peers: DevBuf,
    _dcts: DevBuf,
    _used: DevBuf,
    state: DevBuf,
    _fetch: DevBuf,
    /// Buffers registered by the program (handle: their model key) and the device's table.
    regs: Mutex<Registrations<u32>>,
    reg_table: DevBuf,
    next_key: AtomicU32,
    _sq: SqMem,
    _cq: PinnedBuf,
    _db: PinnedBuf,
    _dbr: DevBuf,
    me: usize,
    npes: usize,
    /// Entries of the QP array (RC: npes * num_rc, DC: the DCIs) and the indices of those that
    /// exist (RC: toward remote PEs only).
    nslots: usize,
    active: Vec<usize>,
    /// DC: every PE's targets, which name the PE behind a failed DCI WQE. Empty for RC.
    dc_targets: Vec<DcTargets>,
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

/// A device buffer holding `data` (at least 64 bytes, zeroed beyond it).
fn dev_copy<T: Copy>(data: &[T], what: &str) -> Result<DevBuf> {
    let b = cu(DevBuf::new(std::mem::size_of_val(data)), &format!("allocating {what}"))?;
    cu(b.upload(0, bytes_of(data)), &format!("uploading {what}"))?;
    Ok(b)
}

impl GpuIbgda {
    /// Builds the QPs, starts the model NICs, warms every QP up. Collective (DC targets travel
    /// through the bootstrap). Call with the PE's context current. Only `Ibgda::choose` calls it,
    /// for RSHMEM_IBGDA_NIC=model (a ConnectX goes to `hw::HwIbgda`).
    pub fn create(s: &Setup) -> Result<GpuIbgda> {
        let config = IbgdaConfig::from_env()?;
        let queues = QueueConfig::parse(crate::env::current)?;
        let (me, npes) = (s.me, s.npes);
        let is_dc = config.num_rc_per_pe == 0;
        let num_rc = config.num_rc_per_pe as usize;
        let num_dci = if is_dc { dc::dci_count(config.num_dci, s.sms) as usize } else { 0 };
        let nwqes = 1usize << queues.log_nwqes;
        let remote_pes: Vec<usize> = (0..npes).filter(|&p| s.remote[p]).collect();
        let (nslots, active): (usize, Vec<usize>) = if is_dc {
            (num_dci, (0..num_dci).collect())
        } else {
            (npes * num_rc, remote_pes.iter().flat_map(|&p| (0..num_rc).map(move |i| p * num_rc + i)).collect())
        };
        let nq = active.len();

        // Registrations (model fabric: per process; keys computed, as an address exchange would give them).
        let fabric = Fabric::new();
        for (pe, base) in s.heap_bases.iter().enumerate() {
            fabric.register(pe as u32, heap_key(pe), *base, s.mapped as u64);
        }
        let fetch = cu(DevBuf::new(FETCH_SLOTS as usize * 8 + 8), "allocating the fetch slots")?;
        fabric.register(me as u32, fetch_key(me), fetch.addr, fetch.len as u64);
        // DC: this PE's NIC creates its DCTs; every PE learns everybody's through the bootstrap.
        let mine = is_dc.then(|| DcTargets::model(me, config.num_dct));
        let dc_targets = dc::exchange(s.boot, mine.as_ref())?.unwrap_or_default();
        for (pe, t) in dc_targets.iter().enumerate() {
            for &d in &t.dcts {
                fabric.add_dct(t.lid, d, pe as u32, t.key);
            }
        }

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
        let mut descs = vec![QpState::zeroed(); nslots];
        for (k, &idx) in active.iter().enumerate() {
            let q = &mut descs[idx];
            q.qpn = 0x100 + idx as u32;
            q.cqn = q.qpn;
            (q.peer_pe, q.kind) = if is_dc { (u32::MAX, QP_DCI) } else { ((idx / num_rc) as u32, QP_RC) };
            q.log_nwqes = queues.log_nwqes;
            q.log_ncqes = queues.log_nwqes;
            q.signal_every = signal_every;
            q.batch = queues.batch;
            q.inline_max = INLINE_MAX;
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
        // DCI k writes to remote PE k mod R, through that PE's DCT (k / R) mod num_dct.
        let describe =
            |q: &QpState| super::qp_error_dc(q, me as u32, &|lid, dct| dc::owner(&dc_targets, lid, dct)).expect("an error is recorded");
        for (k, &idx) in active.iter().enumerate() {
            // SAFETY: the queues named in the descriptor live as long as the NICs (fields above).
            unsafe { nics[k % nics.len()].attach_config(descs[idx], queues.sq_host) };
            let peer = if is_dc { remote_pes[k % remote_pes.len()] } else { idx / num_rc };
            let (av, av_len) = match dc_targets.get(peer) {
                Some(t) => dc::av_image(t.key, t.dcts[(k / remote_pes.len()) % t.dcts.len()], t.lid, false),
                None => ([0; 48], 0),
            };
            let target = Target { raddr: s.heap_bases[peer], rkey: heap_key(peer), av: is_dc.then_some(&av[..av_len as usize]) };
            warm_up(&mut descs[idx], &sq, &dbr, &target, me, &describe)?;
        }

        // The host's own QPs toward the same PEs (RC, whatever the device uses), and the
        // staging buffer its RMA goes through.
        let host = match nics.first() {
            Some(nic) if !remote_pes.is_empty() => {
                let mem = cu(PinnedBuf::new(HOST_STAGE_BYTES), "allocating the host staging buffer")?;
                let stage = Stage { addr: mem.addr, len: mem.len, key: stage_key(me), owner: Box::new(mem) };
                let heaps = (0..npes).map(|pe| RemoteHeap { base: s.heap_bases[pe], rkey: heap_key(pe) }).collect();
                // SAFETY: `nic` is in `nics`, which drops before `host` (field order).
                Some(unsafe { HostQueues::on_model(me, &s.remote, heaps, nic, &fabric, stage) }?)
            }
            _ => None,
        };

        let qps = dev_copy(&descs, "QP descriptors")?;
        let mut peers = vec![PeerState::zeroed(); npes];
        for (pe, p) in peers.iter_mut().enumerate() {
            p.heap_base = s.heap_bases[pe];
            p.heap_size = s.stride as u64;
            p.rkey = heap_key(pe);
            if let Some(t) = dc_targets.get(pe) {
                (p.av, p.av_size) = t.av(false);
            }
        }
        let peers_buf = dev_copy(&peers, "the peer table")?;
        let dcts = dev_copy(&dc::dct_table(&dc_targets), "the DCT table")?;
        let used = cu(DevBuf::new(nslots.div_ceil(64) * 8), "allocating the QP-used bitmap")?;
        let mut st = PeState::zeroed();
        st.my_pe = me as u32;
        st.npes = npes as u32;
        st.num_rc_per_pe = num_rc as u32;
        st.num_dci = num_dci as u32;
        st.rc_map_by = config.rc_map_by;
        st.dci_map_by = if is_dc { config.dci_map_by } else { MAP_BY_CTA };
        st.heap_lkey = heap_key(me);
        st.heap_base = s.heap_bases[me];
        st.heap_size = s.stride as u64;
        if is_dc {
            st.dci_qps = qps.addr;
            st.num_dct = config.num_dct;
            st.dcts = dcts.addr;
        } else {
            st.rc_qps = qps.addr;
        }
        st.num_qps = nslots as u32;
        st.qp_used = used.addr;
        st.peers = peers_buf.addr;
        st.fetch_buf = fetch.addr;
        st.fetch_lkey = fetch_key(me);
        st.fetch_slots = FETCH_SLOTS;
        let reg_table = regs::new_table()?;
        st.regs = reg_table.addr;
        let state = dev_copy(std::slice::from_ref(&st), "the IBGDA state")?;

        const MAP: [&str; 4] = ["cta", "sm", "warp", "dct"];
        let transport = if is_dc {
            format!(
                "DC: {num_dci} DCIs{} (map by {}), {} DCTs per PE",
                if config.num_dci.is_none() { format!(" (one per SM of {}, at most {})", s.sms, dc::AUTO_DCI_CAP) } else { String::new() },
                MAP[config.dci_map_by as usize % 4],
                config.num_dct
            )
        } else {
            format!("RC: {nq} QPs ({num_rc} per remote PE, map by {})", MAP[config.rc_map_by as usize % 4])
        };
        crate::log::info(&format!(
            "IBGDA (software model NIC): {transport}, {nwqes} WQE blocks each, doorbell batch {}, signal every {signal_every}; send queues in {} memory; {} model thread(s){}",
            queues.batch,
            if queues.sq_host { "pinned host" } else { "GPU" },
            nics.len(),
            if queues.sink { ", sink mode (no data moves)" } else { "" }
        ));
        if let Some(w) = lazy_loading_warning(crate::cuda::lazy_loading()) {
            crate::log::warn(w);
        }
        Ok(GpuIbgda {
            nics,
            host,
            fabric,
            qps,
            _peers: peers_buf,
            _dcts: dcts,
            _used: used,
            state,
            _fetch: fetch,
            regs: Mutex::default(),
            reg_table,
            next_key: AtomicU32::new(FIRST_BUFFER_KEY),
            _sq: sq,
            _cq: cq,
            _db: db,
            _dbr: dbr,
            me,
            npes,
            nslots,
            active,
            dc_targets,
            config,
            queues,
        })
    }

    /// Device address of the `rshmem_ibgda_state` for the device state.
    pub fn state_addr(&self) -> u64 {
        self.state.addr
    }

    /// Whether this PE reaches its peers over DC.
    pub fn is_dc(&self) -> bool {
        !self.dc_targets.is_empty()
    }

    /// nvshmemx_buffer_register: the model NIC may read and write `[addr, addr+len)` of this PE
    /// under a new key, which the device finds in the table.
    pub fn register_buffer(&self, addr: u64, len: usize) -> Result<()> {
        let mut r = self.regs.lock().unwrap_or_else(|e| e.into_inner());
        r.check_room()?;
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        self.fabric.register(self.me as u32, key, addr, len as u64);
        r.add(addr, len as u64, key, key);
        r.publish(&self.reg_table)
    }

    /// nvshmemx_buffer_unregister (`Some(addr)`, as registered) or _unregister_all (`None`).
    pub fn unregister_buffer(&self, addr: Option<u64>) -> Result<()> {
        let mut r = self.regs.lock().unwrap_or_else(|e| e.into_inner());
        let keys = match addr {
            Some(a) => r.remove(a).into_iter().collect(),
            None => r.clear(),
        };
        // The device stops naming the keys first, then the NIC forgets them.
        r.publish(&self.reg_table)?;
        for key in keys {
            self.fabric.unregister(self.me as u32, key);
        }
        Ok(())
    }

    /// The heaps grew to `mapped` bytes each: the registrations follow.
    pub fn heap_grew(&self, mapped: usize) {
        for pe in 0..self.npes {
            self.fabric.resize(pe as u32, heap_key(pe), mapped as u64);
        }
    }

    /// Host-side quiet: every WQE the device has rung so far has executed; then the first error
    /// CQE any QP saw, as an error naming the operation and the PEs.
    pub fn drain(&self) -> Result<()> {
        for nic in &self.nics {
            if !nic.drain(Duration::from_secs(60)) {
                return Err(Error::of(
                    ErrorKind::System,
                    format!("PE {}: the IBGDA model NIC did not finish the posted work within 60 s", self.me),
                ));
            }
        }
        self.check()
    }

    /// The first error completion of this PE's QPs: as the device recorded it, else as the
    /// model NIC wrote it (the device may not have polled it yet).
    pub fn check(&self) -> Result<()> {
        let mut descs = vec![QpState::zeroed(); self.nslots];
        // SAFETY: QpState is plain data; the byte view is filled by the download.
        let bytes = unsafe { std::slice::from_raw_parts_mut(descs.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(&descs[..])) };
        cu(self.qps.download(0, bytes), "reading QP descriptors")?;
        let owner = |lid: u16, dct: u32| dc::owner(&self.dc_targets, lid, dct);
        let me = self.me as u32;
        let recorded = self.active.iter().find_map(|&i| super::qp_error_dc(&descs[i], me, &owner));
        let from_nic = || self.nics.iter().find_map(|n| n.first_error().and_then(|d| super::qp_error_dc(&d, me, &owner)));
        match recorded.or_else(from_nic) {
            Some(e) => Err(e),
            None => Ok(()),
        }
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
        crate::log::info(&self.stats_line());
    }
}

#[cfg(test)]
mod tests {
    use super::super::table;
    use super::*;

    #[test]
    fn lazy_loading_warns_only_when_the_driver_says_lazy() {
        let w = lazy_loading_warning(Some(true)).expect("a warning under lazy loading");
        assert!(w.contains("CUDA_MODULE_LOADING=EAGER") && w.contains("IBGDA model NIC"), "{w}");
        assert_eq!(lazy_loading_warning(Some(false)), None);
        assert_eq!(lazy_loading_warning(None), None);
    }

    #[test]
    fn queue_settings_parse_and_name_bad_values() {
        let q = QueueConfig::parse(table(&[])).unwrap();
        assert_eq!((q.log_nwqes, q.batch, q.model_threads, q.sink, q.sq_host), (10, 32, 1, false, false));
        let q = QueueConfig::parse(table(&[(env::QP_DEPTH, "16"), (env::IBGDA_MODEL_SINK, "1"), (env::IBGDA_MODEL_SQ, "host")])).unwrap();
        assert_eq!((q.log_nwqes, q.sink, q.sq_host), (4, true, true));
        // The doorbell batch is rounded up to a power of two (the device tests it with a mask).
        let batch = |v: &str| QueueConfig::parse(table(&[(env::IBGDA_NUM_REQUESTS_IN_BATCH, v)])).unwrap().batch;
        assert_eq!((batch("1"), batch("33"), batch("64"), batch("32768")), (1, 64, 64, 32768));
        let e = QueueConfig::parse(table(&[(env::QP_DEPTH, "100")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_QP_DEPTH") && e.contains("power of two"), "{e}");
        assert!(QueueConfig::parse(table(&[(env::QP_DEPTH, "8")])).is_err());
        assert!(QueueConfig::parse(table(&[(env::IBGDA_MODEL_SQ, "nic")])).is_err());
        assert!(QueueConfig::parse(table(&[(env::IBGDA_MODEL_THREADS, "0")])).is_err());
    }
}
