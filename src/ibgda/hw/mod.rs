//! IBGDA on a real ConnectX through rdma-core/DevX: the hardware counterpart of
//! [`super::gpu::GpuIbgda`] (which builds the same descriptors for the software HCA model);
//! [`super::Ibgda`] picks one of the two from `RSHMEM_IBGDA_NIC`.
//!
//! At nvshmem_init, for the PEs reached through the network, [`HwIbgda::create`]:
//! 1. picks the NIC (`NVSHMEM_HCA_LIST`, else the one closest to the GPU on PCIe / NUMA), opens
//!    it, reads port 1 (LID, MTU, link layer, GID at `NVSHMEM_IB_GID_INDEX`);
//! 2. allocates a UAR page and tries to map it into the GPU (`cuMemHostRegister` with
//!    IOMEMORY, then its device pointer); when the driver refuses, a CPU thread rings instead
//!    ([`crate::ib::doorbell::CpuRinger`]) and the descriptors and doorbell records move to pinned
//!    host memory so that thread can read them; the reason is logged in plain words;
//! 3. reads the NIC's capabilities (QUERY_HCA_CAP) and fits the plan to them: the queue depth
//!    clamped to the largest QP and CQ (logged, naming `NVSHMEM_QP_DEPTH`), DC refused on a NIC
//!    without DC targets (`caps`);
//! 4. allocates the send queues, CQs and doorbell records in GPU memory and registers them as
//!    DevX umems (dma-buf first); creates per send queue a CQ then the QP (RC: one per remote PE
//!    × `NVSHMEM_IBGDA_NUM_RC_PER_PE`; DCIs: `NVSHMEM_IBGDA_NUM_DCI`), and the DC targets
//!    (`NVSHMEM_IBGDA_NUM_DCT`) on a verbs CQ and SRQ: `plan`;
//! 5. registers the heap and the fetch slots (dma-buf first) and exchanges heap address, key,
//!    port address, QP and DCT numbers with every PE through the bootstrap's allgather (when
//!    the heap grows later, [`HwIbgda::heap_grew`] registers it again whole and swaps the new
//!    keys: `grow`);
//! 6. drives every QP RESET → INIT → RTR → RTS with DevX modify commands, fills the device
//!    descriptors (`abi::QpState`, `PeerState`, `PeState` with, for DC, the table of every PE's
//!    DC targets), and warms each QP up with one zero-byte RDMA WRITE from the host, waited for
//!    (`post`);
//! 7. runs the self-test toward the next remote PE and gathers every PE's outcome (`selftest`);
//!    [`super::Ibgda::choose`] turns it into the route (IBGDA, the proxy transport, or an error).
//!
//! Steps 1-5 are local (`set_up_locally`); their outcome travels in the address exchange, so a
//! PE that failed stops the others with its reason.
//!
//! Files: `hw/plan.rs` (the set-up as data and a DevX command sequence), `hw/caps.rs` (the
//! plan fitted to QUERY_HCA_CAP), `hw/post.rs` (host posting: warm-up and host quiet),
//! `hw/gpumem.rs` (UAR mapping, dma-buf, aligned buffers), `hw/grow.rs` (heap growth),
//! `hw/probe.rs` (rshmem-info lines), `hw/selftest.rs` (the self-test and the route decision).
//!
//! Ran in CI: `plan` (the command sequence against a recording call table, descriptors, peer
//! table, DCT table, bootstrap encoding), `caps` (the query and the fitting, on canned
//! outputs), `grow` (the key message, gathering and re-keying), `post` (warm-up, error CQE, host quiet with wrap-around, against the software HCA
//! model on host memory), `selftest` (passing, and failing by timeout and by wrong data on the
//! model with injected faults; the decision table), [`super::Ibgda::choose`] and [`HwIbgda::create`] up to their clean failure
//! (no RDMA device here; and with libibverbs masked, no rdma-core: tests/ib_devx.rs), and
//! [`info_lines`]. NEVER MET HARDWARE: every step of [`HwIbgda::create`] past NIC choice,
//! [`map_uar`], [`HwIbgda::drain`] and the warm-up on GPU memory, the CPU ringer storing to a real
//! UAR, QUERY_HCA_CAP on a real device (the capability offsets come from the public
//! `mlx5_ifc.h`, never from a firmware answer), [`HwIbgda::heap_grew`],
//! [`HwIbgda::register_buffer`] (the MRs of `nvshmemx_buffer_register`), and [`doorbell_probe`]
//! and [`caps_probe`] past "no device". None of it has run on a GPU either (this session had no
//! GPU machine).

mod caps;
mod gpumem;
mod grow;
mod plan;
pub(crate) mod post;
mod probe;
mod selftest;

pub use gpumem::{map_uar, GpuUar};
pub use plan::{PeInfo, Plan, Role};
pub use probe::{caps_probe, doorbell_probe, info_lines};
pub use selftest::{choose_remote_path, pair_lines, RemotePath, SELF_TEST_TIMEOUT};

use std::ffi::c_int;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::{Error, ErrorKind, Result};
use crate::ib::devx::DevxCtx;
use crate::ib::doorbell::{CpuRinger, DoorbellPath, RingTarget};
use crate::ib::{self, Context, Mr, Pd, QpAddress, Uar};

use super::abi::{PeState, QpState};
use super::cuda::{DevBuf, PinnedBuf};
use super::gpu::{QueueConfig, Setup, FETCH_SLOTS, INLINE_MAX};
use super::regs::{self, Registrations};
use super::IbgdaConfig;
use gpumem::{dmabuf_of, Aligned};
use plan::{Built, Layout, Local, Posting, QueueAddrs, Resources};
use post::{GpuIo, HostIo, HostPost, Landing, QueueIo, Target};

const ROUTINE: &str = "nvshmem_init";
/// The DC access key every PE's targets accept.
pub const DC_KEY: u64 = 0x5253_484d_454d_0001;
const WARM_UP_TIMEOUT: Duration = Duration::from_secs(20);

// ---- NIC choice and settings ----

fn no_device(s: &Setup, why: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        ROUTINE,
        format!(
            "PE {} reaches {} peer(s) only through the network (NVSHMEM_DISABLE_P2P=1), and IBGDA there needs a ConnectX, but {why}; \
             set RSHMEM_IBGDA_NIC=model to run IBGDA on the software HCA model instead",
            s.me,
            s.remote.iter().filter(|r| **r).count()
        ),
    )
}

/// What is wrong with `port` of NIC `name` for IBGDA, in words with the fix; None when usable.
fn port_problem(name: &str, port: u8, a: &ib::sys::IbvPortAttr, gid_index: u8, gid: &[u8; 16]) -> Option<String> {
    use ib::sys::{IBV_PORT_ACTIVE, IBV_PORT_ACTIVE_DEFER, IBV_PORT_ARMED, IBV_PORT_DOWN, IBV_PORT_INIT};
    let state = match a.state {
        IBV_PORT_DOWN => "DOWN",
        IBV_PORT_INIT => "INIT",
        IBV_PORT_ARMED => "ARMED",
        IBV_PORT_ACTIVE | IBV_PORT_ACTIVE_DEFER => "ACTIVE",
        _ => "in an unknown state",
    };
    let ethernet = a.link_layer == ib::sys::IBV_LINK_LAYER_ETHERNET;
    if a.state != IBV_PORT_ACTIVE && a.state != IBV_PORT_ACTIVE_DEFER {
        let hint = if a.state == IBV_PORT_INIT && !ethernet {
            "no subnet manager has configured it: run opensm (or the switch's SM) on the fabric"
        } else {
            "check the cable, the switch port and the link (`ibstat`, `ip link`)"
        };
        return Some(format!("port {port} of {name} is {state}, not ACTIVE: {hint}"));
    }
    if ethernet && gid.iter().all(|b| *b == 0) {
        return Some(format!(
            "RoCE GID index {gid_index} of port {port} on {name} is empty: give the interface an IP address, list the GIDs \
             (`show_gids`, or /sys/class/infiniband/{name}/ports/{port}/gids/) and set NVSHMEM_IB_GID_INDEX to a RoCE v2 one"
        ));
    }
    if !ethernet && a.lid == 0 {
        return Some(format!("port {port} of {name} has no LID: no subnet manager has assigned one (run opensm)"));
    }
    if !(1..=5).contains(&a.active_mtu) {
        return Some(format!(
            "port {port} of {name} reports active MTU code {}, not one of 256..4096 bytes (codes 1..5): check the link's MTU",
            a.active_mtu
        ));
    }
    None
}

/// This PE's port and those of the PEs it reaches must speak the same link layer (InfiniBand
/// or Ethernet/RoCE).
fn check_link_layers(peers: &[PeInfo], remote: &[bool], me: usize) -> Result<()> {
    let name = |l: u8| if l == ib::sys::IBV_LINK_LAYER_ETHERNET { "Ethernet (RoCE)" } else { "InfiniBand" };
    let used = |p: usize| p == me || remote[p];
    let Some(first) = (0..peers.len()).find(|&p| used(p)) else { return Ok(()) };
    match (0..peers.len()).find(|&p| used(p) && peers[p].addr.link_layer != peers[first].addr.link_layer) {
        None => Ok(()),
        Some(p) => Err(Error::new(
            ErrorKind::Unsupported,
            ROUTINE,
            format!(
                "IBGDA: PE {first}'s NIC port is {} but PE {p}'s is {}: every PE must use the same kind of network (set NVSHMEM_HCA_LIST)",
                name(peers[first].addr.link_layer),
                name(peers[p].addr.link_layer)
            ),
        )),
    }
}

/// The PCIe path and NUMA node of the current context's GPU.
fn gpu_placement() -> Option<(String, Option<i32>)> {
    let (_, dev) = crate::cuda::current_context().ok()??;
    let bus = dev.pci_bus_id().ok()?.to_ascii_lowercase();
    let sys = format!("/sys/bus/pci/devices/{bus}");
    let path = std::fs::canonicalize(&sys).ok().and_then(|p| ib::pci_path_of(&p.to_string_lossy()))?;
    let numa = std::fs::read_to_string(format!("{sys}/numa_node")).ok().and_then(|n| n.trim().parse().ok());
    Some((path, numa))
}

/// The NIC to use: the first of `NVSHMEM_HCA_LIST` that exists, else the closest to the GPU.
fn choose_nic(s: &Setup) -> Result<String> {
    let nics = match ib::devices() {
        Err(e) => return Err(no_device(s, &e.message)),
        Ok(d) if d.is_empty() => {
            return Err(no_device(s, "this machine has no RDMA device (the kernel reports no InfiniBand/RoCE device)"))
        }
        Ok(d) => d,
    };
    if let Some((_, list)) = crate::env::lookup(crate::env::HCA_LIST) {
        let wanted: Vec<&str> = list.split(',').map(|n| n.trim().split(':').next().unwrap_or("")).collect();
        return nics.iter().find(|n| wanted.contains(&n.name.as_str())).map(|n| n.name.clone()).ok_or_else(|| {
            no_device(
                s,
                &format!(
                    "none of NVSHMEM_HCA_LIST={list:?} exists (devices: {})",
                    nics.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )
        });
    }
    let (pci, numa) = gpu_placement().unwrap_or_default();
    Ok(ib::closest_nic(&nics, &pci, numa).map_or_else(|| nics[0].name.clone(), |n| n.name.clone()))
}

/// Multiprocessors of the current context's GPU: NVSHMEM_IBGDA_NUM_DCI <= 0 asks for one DCI each.
fn sm_count() -> usize {
    const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
    crate::cuda::current_context()
        .ok()
        .flatten()
        .and_then(|(_, d)| d.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).ok())
        .map_or(1, |n| n.max(1) as usize)
}

/// A small whole-number setting of the env table (its default when unset).
fn small_setting(name: crate::env::Setting) -> Result<u8> {
    let (var, v) = crate::env::current(name);
    v.trim()
        .parse()
        .map_err(|_| Error::invalid(ROUTINE, format!("environment variable {var}={v:?} is not valid: expected a number from 0 to 255")))
}

// ---- the hardware IBGDA ----

/// Doorbell records: GPU memory when the GPU rings, pinned host memory when a CPU thread does.
enum Records {
    Gpu(Aligned),
    Host(PinnedBuf),
}

/// The QP descriptors: GPU memory, or pinned host memory (mapped into the GPU) with a CPU
/// doorbell, where the ringing thread reads the producer counters.
enum Descs {
    Gpu(DevBuf),
    Host(PinnedBuf),
}

impl Descs {
    fn addr(&self) -> u64 {
        match self {
            Descs::Gpu(b) => b.addr,
            Descs::Host(b) => b.addr,
        }
    }
}

/// IBGDA on a ConnectX. Field order is drop order: the ringing thread stops first, the NIC
/// objects go before the memory they use, the device context last.
pub struct HwIbgda {
    _ringer: Option<CpuRinger>,
    _devx: DevxCtx,
    _dct_cq: Option<ib::Cq>,
    _srq: Option<ib::Srq>,
    _gpu_uar: Option<GpuUar>,
    uar: Uar,
    grown: Mutex<grow::Grown>,
    _fetch_mr: Mr,
    /// Buffers registered by the program (their MRs) and the device's table of them.
    regs: Mutex<Registrations<Mr>>,
    reg_table: DevBuf,
    rc: Descs,
    dci: Descs,
    peers: DevBuf,
    _dcts: DevBuf,
    state: DevBuf,
    _fetch: DevBuf,
    _sq: Aligned,
    _cq: Aligned,
    records: Records,
    pd: Arc<Pd>,
    ctx: Arc<Context>,
    me: usize,
    heap_base: u64,
    /// Indices of the RC descriptors that exist, and the number of DCIs.
    active: Vec<usize>,
    num_dci: usize,
    pub doorbell: DoorbellPath,
    /// The job's self-test outcome: the first failure of any PE, in words.
    pub self_test: std::result::Result<(), String>,
}

fn sys_err(what: &str) -> impl Fn(crate::cuda::CuError) -> Error + '_ {
    move |e| Error::new(ErrorKind::System, ROUTINE, format!("IBGDA set-up: {what}: {e}"))
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data repr(C) descriptors of integers; any byte view of them is valid.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn put_descs(v: &[QpState], cpu: bool, what: &str) -> Result<Descs> {
    let bytes = bytes_of(v);
    if cpu {
        let b = PinnedBuf::new(bytes.len()).map_err(sys_err(what))?;
        // SAFETY: the pinned buffer holds at least bytes.len() bytes; nobody else uses it yet.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.addr as *mut u8, bytes.len()) };
        Ok(Descs::Host(b))
    } else {
        let b = DevBuf::new(bytes.len()).map_err(sys_err(what))?;
        b.upload(0, bytes).map_err(sys_err(what))?;
        Ok(Descs::Gpu(b))
    }
}

impl HwIbgda {
    /// See the module docs for the steps. Call with the PE's context current, on every PE
    /// together (it uses the bootstrap). NEVER MET HARDWARE past the NIC choice.
    pub fn create(s: &Setup) -> Result<HwIbgda> {
        let boot = s.boot;
        let config = IbgdaConfig::from_env()?;
        let queues = QueueConfig::parse(crate::env::current)?;
        let (me, npes) = (s.me, s.npes);
        let here = set_up_locally(s, &config, &queues);
        // Every PE learns whether every other got this far (a failure travels instead of the
        // address), so none waits in a later step for one that stopped.
        let msg = match &here {
            Ok(l) => [&[0u8][..], &l.mine.encode(npes, l.plan.num_rc)].concat(),
            Err(e) => [&[1u8][..], &e.message.as_bytes()[..e.message.len().min(2048)]].concat(),
        };
        let all = boot.allgather(&msg)?;
        let mut l = here?;
        let name = &l.name;
        if let Some(e) = first_set_up_failure(&all) {
            return Err(e);
        }
        let peers = all
            .iter()
            .enumerate()
            .map(|(pe, b)| PeInfo::decode(&b[1..], pe, npes, l.plan.num_rc, l.plan.num_dct))
            .collect::<Result<Vec<_>>>()?;
        check_link_layers(&peers, &s.remote, me)?;
        // From here on a local failure becomes this PE's self-test outcome, so every PE still
        // reaches the barrier and the outcome exchange, and all decide together.
        let avs: Vec<Option<[u8; 48]>> = (0..npes)
            .map(|p| {
                if s.remote[p] {
                    l.pd.address_vector(l.local.port, l.gid_index, &peers[p].addr, l.traffic_class, l.sl).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect::<Result<_>>()
            .unwrap_or_else(|e| {
                crate::log::warn(&format!("IBGDA (hardware NIC {name}): {e}"));
                vec![None; npes]
            });
        let at = std::mem::offset_of!(super::mlx5::Av, rmac);
        let rmac = |p: usize| {
            (l.local.addr.link_layer == ib::sys::IBV_LINK_LAYER_ETHERNET)
                .then(|| avs[p].map(|av| av[at..at + 6].try_into().expect("6 bytes")))
                .flatten()
        };
        let missing_av = (0..npes).find(|&p| s.remote[p] && avs[p].is_none());
        let connected = match missing_av {
            Some(p) => Err(format!("no address handle toward PE {p} (see the warning above)")),
            None => plan::connect(&mut l.devx, &l.plan, &l.built, &l.local, &peers, &rmac).map_err(|e| e.message),
        };
        boot.barrier()?;

        // Descriptors, warm-up, self-test, upload.
        let nwqes = 1usize << l.plan.log_nwqes;
        let posting = Posting { signal_every: (nwqes / 4).min(64) as u16, batch: queues.batch, inline_max: INLINE_MAX };
        let addrs = QueueAddrs { sq: l.sq.addr, cq: l.cq.addr, dbr: l.dbr_addr, bf_reg: l.bf_reg, cpu_doorbell: l.cpu };
        let (mut rc, mut dci) = plan::descriptors(&l.plan, &l.layout, &l.built, &addrs, &posting);
        let peer_table = plan::peer_table(&peers, &avs, s.stride as u64, DC_KEY);
        let setup_failed = |m: String| selftest::Failure { from: me, to: me, reason: selftest::Reason::Setup(m) };
        let mut posted =
            Posted { plan: &l.plan, rc: &mut rc, dci: &mut dci, peers: &peer_table, records: &l.records, ring: l.uar.reg_addr() };
        let tested =
            connected.and_then(|()| warm_up_all(&mut posted, &l.built, me).map_err(|e| e.message)).map_err(setup_failed).and_then(|()| {
                let land = Landing { addr: l.fetch.addr, lkey: l.fetch_mr.lkey };
                self_test_next(&mut posted, &land, s.mapped)
            });
        let self_test = selftest::combine(&boot.allgather(&selftest::encode(&tested.map_err(|f| f.to_string())))?);
        let active: Vec<usize> = rc.iter().enumerate().filter(|(_, d)| d.qpn != 0).map(|(i, _)| i).collect();
        let num_dci = dci.len();
        let rc_descs = put_descs(&rc, l.cpu, "RC QP descriptors")?;
        let dci_descs = put_descs(&dci, l.cpu, "DCI descriptors")?;
        let peers_buf = DevBuf::new(std::mem::size_of_val(&peer_table[..])).map_err(sys_err("the peer table"))?;
        peers_buf.upload(0, bytes_of(&peer_table)).map_err(sys_err("the peer table"))?;
        let dct_table = plan::dct_table(&peers, l.plan.num_dct);
        let dcts_buf = DevBuf::new(std::mem::size_of_val(&dct_table[..]).max(4)).map_err(sys_err("the DCT table"))?;
        dcts_buf.upload(0, bytes_of(&dct_table)).map_err(sys_err("the DCT table"))?;
        let mut st = PeState::zeroed();
        st.my_pe = me as u32;
        st.npes = npes as u32;
        st.num_rc_per_pe = l.plan.num_rc as u32;
        st.num_dci = num_dci as u32;
        st.rc_map_by = config.rc_map_by;
        st.dci_map_by = config.dci_map_by;
        st.heap_lkey = l.heap_mr.lkey;
        st.heap_base = s.heap_bases[me];
        st.heap_size = s.stride as u64;
        st.rc_qps = rc_descs.addr();
        st.dci_qps = dci_descs.addr();
        st.peers = peers_buf.addr;
        if l.plan.num_rc == 0 {
            // DC (as the model sets them): a thread's WQEs toward PE p name DCT
            // dcts[p * num_dct + warp % num_dct], spreading the targets.
            st.num_dct = l.plan.num_dct as u32;
            st.dcts = dcts_buf.addr;
        }
        st.fetch_buf = l.fetch.addr;
        st.fetch_lkey = l.fetch_mr.lkey;
        st.fetch_slots = FETCH_SLOTS;
        let reg_table = regs::new_table()?;
        st.regs = reg_table.addr;
        let state = DevBuf::new(std::mem::size_of::<PeState>()).map_err(sys_err("the IBGDA state"))?;
        state.upload(0, bytes_of(std::slice::from_ref(&st))).map_err(sys_err("the IBGDA state"))?;

        let ringer = match (&rc_descs, &dci_descs, l.cpu) {
            (Descs::Host(r), Descs::Host(d), true) => {
                let at = |base: u64, i: usize| base + (i * std::mem::size_of::<QpState>()) as u64;
                let posted = std::mem::offset_of!(QpState, posted_head) as u64;
                let targets = active
                    .iter()
                    .map(|&i| (at(r.addr, i), &rc[i]))
                    .chain((0..num_dci).map(|i| (at(d.addr, i), &dci[i])))
                    .map(|(desc, q)| RingTarget { posted: desc + posted, dbrec: q.sq_dbrec, qpn: q.qpn })
                    .collect();
                // SAFETY: descriptors and records are pinned host memory and the UAR register is
                // mapped, all owned by the value returned here, which drops the ringer first.
                Some(unsafe { CpuRinger::start(targets, l.uar.reg_addr()) })
            }
            _ => None,
        };
        crate::log::info(&format!(
            "IBGDA (hardware NIC {name}): {} RC QPs ({} per remote PE), {num_dci} DCIs, {} DC targets, {nwqes} WQE blocks each; heap registered by {}; {}; NIC caps: {}",
            active.len(),
            l.plan.num_rc,
            l.plan.num_dct,
            l.heap_mr.how,
            l.doorbell.describe(),
            l.hca.describe()
        ));
        Ok(HwIbgda {
            _ringer: ringer,
            _devx: l.devx,
            _dct_cq: Some(l.dct_cq),
            _srq: Some(l.srq),
            _gpu_uar: l.gpu_uar,
            uar: l.uar,
            grown: Mutex::new(grow::Grown { registered: s.mapped, peers: peer_table, state: st, mrs: vec![l.heap_mr] }),
            _fetch_mr: l.fetch_mr,
            regs: Mutex::default(),
            reg_table,
            rc: rc_descs,
            dci: dci_descs,
            peers: peers_buf,
            _dcts: dcts_buf,
            state,
            _fetch: l.fetch,
            _sq: l.sq,
            _cq: l.cq,
            records: l.records,
            pd: l.pd,
            ctx: l.ctx,
            me,
            heap_base: s.heap_bases[me],
            active,
            num_dci,
            doorbell: l.doorbell,
            self_test,
        })
    }

    pub fn state_addr(&self) -> u64 {
        self.state.addr
    }

    /// nvshmemx_buffer_register: an MR for `[addr, addr+len)` (dma-buf first), listed for the
    /// device. NEVER MET HARDWARE.
    pub fn register_buffer(&self, addr: u64, len: usize) -> Result<()> {
        let mut r = self.regs.lock().unwrap_or_else(|e| e.into_inner());
        r.check_room()?;
        let fd = dmabuf_of(addr, len);
        let mr = self.pd.register(addr, len, fd.as_ref().map(|f| (f.as_raw_fd(), 0)))?;
        r.add(addr, len as u64, mr.lkey, mr);
        r.publish(&self.reg_table)
    }

    /// nvshmemx_buffer_unregister (`Some(addr)`) or _unregister_all (`None`): the device stops
    /// naming the MRs, then they are deregistered (dropped).
    pub fn unregister_buffer(&self, addr: Option<u64>) -> Result<()> {
        let mut r = self.regs.lock().unwrap_or_else(|e| e.into_inner());
        let gone: Vec<Mr> = match addr {
            Some(a) => r.remove(a).into_iter().collect(),
            None => r.clear(),
        };
        let published = r.publish(&self.reg_table);
        drop(gone);
        published
    }

    /// Host quiet with no kernel running: each QP's rung WQEs completed (see `post`); the
    /// first error CQE, in words. NEVER MET HARDWARE.
    pub fn drain(&self) -> Result<()> {
        let size = std::mem::size_of::<QpState>();
        // SAFETY: GpuIo addresses are the queues of this value in the current context's memory.
        let gpu = unsafe { GpuIo::new()? };
        // SAFETY: HostIo addresses are pinned host memory of this value.
        let host = unsafe { HostIo::new() };
        let records: &dyn QueueIo = if matches!(self.records, Records::Host(_)) { &host } else { &gpu };
        let slots = self.active.iter().map(|&i| (&self.rc, i)).chain((0..self.num_dci).map(|i| (&self.dci, i)));
        for (descs, i) in slots {
            let at = descs.addr() + (i * size) as u64;
            let io: &dyn QueueIo = if matches!(descs, Descs::Host(_)) { &host } else { &gpu };
            let mut raw = vec![0u8; size];
            io.read(at, &mut raw)?;
            // SAFETY: `raw` holds a QpState's bytes; every bit pattern of its integers is valid.
            let mut q: QpState = unsafe { std::ptr::read_unaligned(raw.as_ptr().cast()) };
            let mut hp = HostPost { queues: &gpu, records, q: &mut q, ring: self.uar.reg_addr() };
            let r = hp.quiet(self.me as u32, Duration::from_secs(60));
            io.write(at, bytes_of(std::slice::from_ref(&q)))?;
            r?;
        }
        Ok(())
    }
}

/// The first PE whose exchange message (see [`HwIbgda::create`]) says its set-up failed.
fn first_set_up_failure(all: &[Vec<u8>]) -> Option<Error> {
    let (pe, b) = all.iter().enumerate().find(|(_, b)| b.first() != Some(&0))?;
    let why = String::from_utf8_lossy(b.get(1..).unwrap_or_default());
    Some(Error::new(ErrorKind::Unsupported, ROUTINE, format!("PE {pe} could not set up its NIC: {why}")))
}

/// What one PE sets up on its own before the address exchange of [`HwIbgda::create`].
struct LocalNic {
    name: String,
    ctx: Arc<Context>,
    pd: Arc<Pd>,
    uar: Uar,
    gpu_uar: Option<GpuUar>,
    bf_reg: u64,
    doorbell: DoorbellPath,
    cpu: bool,
    plan: Plan,
    devx: DevxCtx,
    hca: crate::ib::prm::HcaCaps,
    layout: Layout,
    sq: Aligned,
    cq: Aligned,
    records: Records,
    dbr_addr: u64,
    dct_cq: ib::Cq,
    srq: ib::Srq,
    built: Built,
    heap_mr: Mr,
    fetch: DevBuf,
    fetch_mr: Mr,
    /// This PE's part of the exchange.
    mine: PeInfo,
    local: Local,
    gid_index: u8,
    traffic_class: u8,
    sl: u8,
}

/// Steps 1-5 of the module docs up to the exchange: the NIC, its port, the doorbell, the queues
/// and their objects, the registrations. Local: no bootstrap call.
fn set_up_locally(s: &Setup, config: &IbgdaConfig, queues: &QueueConfig) -> Result<LocalNic> {
    let name = choose_nic(s)?;
    let (me, npes) = (s.me, s.npes);
    let ctx = Context::open(&name)?;
    let port = 1u8;
    let pattr = ctx.query_port(port)?;
    let gid_index = small_setting(crate::env::IB_GID_INDEX)?;
    let traffic_class = small_setting(crate::env::IB_TRAFFIC_CLASS)?;
    let sl = small_setting(crate::env::IB_SL)?;
    let gid = ctx.query_gid(port, gid_index)?;
    if let Some(why) = port_problem(&name, port, &pattr, gid_index, &gid) {
        return Err(Error::new(ErrorKind::Unsupported, ROUTINE, format!("IBGDA: {why}")));
    }
    let addr =
        QpAddress { qpn: 0, psn: 0, lid: pattr.lid, port, mtu: pattr.active_mtu as u8, link_layer: pattr.link_layer, gid_index, gid };
    let local = Local { port, addr, traffic_class, sl };
    let pd = Pd::alloc(&ctx)?;
    let uar = ctx.alloc_uar()?;

    // The doorbell: GPU-mapped UAR, else a CPU thread.
    let (gpu_uar, bf_reg, doorbell) = match map_uar(&uar) {
        Ok((m, reg)) => (Some(m), reg, DoorbellPath::Gpu),
        Err(why) => (None, 0, DoorbellPath::from_mapping(Err(why))),
    };
    let cpu = bf_reg == 0;

    // Queues in GPU memory, registered as umems.
    let mut plan = Plan {
        me,
        npes,
        num_rc: config.num_rc_per_pe as usize,
        num_dci: config.num_dci.map_or_else(sm_count, |n| n as usize),
        num_dct: config.num_dct as usize,
        log_nwqes: queues.log_nwqes,
        remote: s.remote.clone(),
    };
    let mut devx = DevxCtx::new(&ctx)?;
    let hca = caps::query(&mut devx)?;
    for note in caps::fit(&mut plan, &hca, &name, crate::env::current(crate::env::QP_DEPTH))? {
        crate::log::warn(&format!("IBGDA (hardware NIC {name}): {note}"));
    }
    let layout = Layout::new(plan.roles().len(), plan.log_nwqes);
    let sq = Aligned::new(layout.sq_bytes() as usize, "send queues (GPU memory)")?;
    let cq = Aligned::new(layout.cq_bytes() as usize, "completion queues (GPU memory)")?;
    let stream = crate::cuda::Stream::create().map_err(sys_err("a stream"))?;
    // SAFETY: the CQ buffer was just allocated; every CQE starts invalid with owner bit 0.
    unsafe { crate::cuda::memset_async(cq.addr, super::mlx5::CQE_INVALID << 4, cq.len, stream.0) }.map_err(sys_err("initialising CQs"))?;
    crate::cuda::stream_synchronize(stream.0).map_err(sys_err("initialising CQs"))?;
    let records = if cpu {
        Records::Host(PinnedBuf::new(layout.dbr_bytes() as usize).map_err(sys_err("doorbell records (pinned host memory)"))?)
    } else {
        Records::Gpu(Aligned::new(layout.dbr_bytes() as usize, "doorbell records (GPU memory)")?)
    };
    let dbr_addr = match &records {
        Records::Gpu(a) => a.addr,
        Records::Host(p) => p.addr,
    };
    let (sq_fd, cq_fd) = (dmabuf_of(sq.addr, sq.len), dmabuf_of(cq.addr, cq.len));
    let fd0 = |f: &Option<OwnedFd>| f.as_ref().map(|f| (f.as_raw_fd(), 0u64));
    let umems = plan::register_umems(&mut devx, &layout, [sq.addr, cq.addr, dbr_addr], [fd0(&sq_fd), fd0(&cq_fd), None])?;
    drop((sq_fd, cq_fd));

    // Objects: CQ + QP per send queue, DC targets on a verbs CQ and SRQ.
    let dct_cq = ctx.create_cq(1)?;
    let srq = pd.create_srq(1)?;
    let res = Resources {
        pdn: pd.pdn()?,
        uar_page: uar.page_id(),
        eqn: ctx.query_eqn(0)?,
        dct_cqn: dct_cq.cqn()?,
        srqn: srq.srqn()?,
        dc_key: DC_KEY,
    };
    let built = plan::create_objects(&mut devx, &plan, &layout, umems, &res, &local)?;

    // Registrations and the exchange.
    let heap_fd = dmabuf_of(s.heap_bases[me], s.mapped);
    let heap_mr = pd.register(s.heap_bases[me], s.mapped, heap_fd.as_ref().map(|f| (f.as_raw_fd(), 0)))?;
    drop(heap_fd);
    let fetch = DevBuf::new(FETCH_SLOTS as usize * 8 + 8).map_err(sys_err("the fetch slots"))?;
    let fetch_mr = pd.register(fetch.addr, fetch.len, None)?;
    let mut rc_numbers = vec![0u32; npes * plan.num_rc];
    for q in &built.qps {
        if let Role::Rc { peer, index } = q.role {
            rc_numbers[peer * plan.num_rc + index] = q.qpn;
        }
    }
    let mine = PeInfo { heap_base: s.heap_bases[me], rkey: heap_mr.rkey, addr, rc: rc_numbers, dct: built.dcts.clone() };
    Ok(LocalNic {
        name,
        ctx,
        pd,
        uar,
        gpu_uar,
        bf_reg,
        doorbell,
        cpu,
        plan,
        devx,
        hca,
        layout,
        sq,
        cq,
        records,
        dbr_addr,
        dct_cq,
        srq,
        built,
        heap_mr,
        fetch,
        fetch_mr,
        mine,
        local,
        gid_index,
        traffic_class,
        sl,
    })
}

/// The queues that the set-up's warm-up and self-test post on from the host: the RC and DCI
/// descriptors, the peers' table, the doorbell records and the doorbell register (`ring`).
struct Posted<'a> {
    plan: &'a Plan,
    rc: &'a mut [QpState],
    dci: &'a mut [QpState],
    peers: &'a [super::abi::PeerState],
    records: &'a Records,
    ring: u64,
}

/// The self-test of this PE toward the next remote PE in ring order (see `selftest`), on the
/// first QP that reaches it; results land in `land` (a fetch slot, unused until the device runs).
fn self_test_next(q: &mut Posted, land: &Landing, mapped: usize) -> std::result::Result<(), selftest::Failure> {
    let &mut Posted { plan, ref mut rc, ref mut dci, peers, records, ring } = q;
    let me = plan.me;
    let Some(to) = (1..plan.npes).map(|k| (me + k) % plan.npes).find(|&p| plan.remote[p]) else { return Ok(()) };
    let setup = |m: String| selftest::Failure { from: me, to, reason: selftest::Reason::Setup(m) };
    if mapped < 8 * plan.npes {
        return Err(setup(format!("the heap has {mapped} bytes mapped, fewer than the self-test's 8 per PE")));
    }
    // SAFETY: the queues and the landing slot are GPU memory of the current context.
    let gpu = unsafe { GpuIo::new() }.map_err(|e| setup(e.message))?;
    // SAFETY: with a CPU doorbell the records are pinned host memory owned by the caller.
    let host = unsafe { HostIo::new() };
    let rec_io: &dyn QueueIo = if matches!(records, Records::Host(_)) { &host } else { &gpu };
    let raddr = peers[to].heap_base + 8 * me as u64;
    let (desc, t) = match dci.first_mut() {
        Some(d) if plan.num_rc == 0 => (d, Target { raddr, rkey: peers[to].rkey, av: Some(&peers[to].av) }),
        _ => (&mut rc[to * plan.num_rc], Target { raddr, rkey: peers[to].rkey, av: None }),
    };
    selftest::run(&mut HostPost { queues: &gpu, records: rec_io, q: desc, ring }, &gpu, &t, land, me, to, SELF_TEST_TIMEOUT)
}

/// One zero-byte RDMA WRITE per QP, waited for: RC QPs to their peer's heap, DCI k to the heap
/// of the k-th remote PE (round robin) through its DC target.
fn warm_up_all(q: &mut Posted, built: &Built, me: usize) -> Result<()> {
    let &mut Posted { plan, ref mut rc, ref mut dci, peers, records, ring } = q;
    // SAFETY: the queues named by the descriptors are GPU memory of the current context.
    let gpu = unsafe { GpuIo::new()? };
    // SAFETY: with a CPU doorbell the records are pinned host memory owned by the caller.
    let host = unsafe { HostIo::new() };
    let rec_io: &dyn QueueIo = if matches!(records, Records::Host(_)) { &host } else { &gpu };
    let remote: Vec<usize> = (0..plan.npes).filter(|&p| plan.remote[p]).collect();
    for q in &built.qps {
        let (desc, target) = match q.role {
            Role::Rc { peer, index } => {
                (&mut rc[peer * plan.num_rc + index], Target { raddr: peers[peer].heap_base, rkey: peers[peer].rkey, av: None })
            }
            Role::Dci { index } => {
                let Some(&p) = remote.get(index % remote.len().max(1)) else { continue };
                (&mut dci[index], Target { raddr: peers[p].heap_base, rkey: peers[p].rkey, av: Some(&peers[p].av) })
            }
        };
        HostPost { queues: &gpu, records: rec_io, q: desc, ring }.warm_up(&target, me as u32, WARM_UP_TIMEOUT)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_device_the_hardware_path_fails_cleanly_and_names_the_model() {
        let boot = crate::bootstrap::Single;
        let s = Setup {
            me: 1,
            npes: 2,
            ctx: std::ptr::null_mut(),
            boot: &boot,
            sms: 1,
            heap_bases: vec![0, 0],
            stride: 0,
            mapped: 0,
            remote: vec![true, false],
        };
        if ib::devices().map(|d| !d.is_empty()).unwrap_or(false) {
            return; // a machine with a NIC: not this test's case
        }
        let e = choose_nic(&s).unwrap_err().to_string();
        assert!(e.contains("PE 1 reaches 1 peer(s) only through the network"), "{e}");
        assert!(e.contains("RSHMEM_IBGDA_NIC=model") && (e.contains("no RDMA device") || e.contains("no RDMA")), "{e}");
        let e = no_device(&s, "this machine has no RDMA device").to_string();
        assert!(e.starts_with("nvshmem_init: "), "{e}");
    }

    #[test]
    fn info_lines_say_the_devices_and_why_there_is_no_doorbell_yet() {
        let lines = info_lines();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("NICs: "));
        if ib::devices().map(|d| d.is_empty()).unwrap_or(true) {
            assert!(lines[1].starts_with("IBGDA doorbell: not decided: "), "{}", lines[1]);
            assert!(lines[2].starts_with("IBGDA NIC caps: not read: "), "{}", lines[2]);
        }
    }

    fn active_port(link_layer: u8) -> ib::sys::IbvPortAttr {
        ib::sys::IbvPortAttr { state: 4, active_mtu: 5, lid: 7, link_layer, ..Default::default() }
    }

    #[test]
    fn port_problems_are_named_with_their_fix() {
        let (ib_ll, eth) = (ib::sys::IBV_LINK_LAYER_INFINIBAND, ib::sys::IBV_LINK_LAYER_ETHERNET);
        let gid = [1u8; 16];
        assert_eq!(port_problem("mlx5_0", 1, &active_port(ib_ll), 0, &gid), None);
        assert_eq!(port_problem("mlx5_0", 1, &ib::sys::IbvPortAttr { lid: 0, ..active_port(eth) }, 3, &gid), None, "RoCE has no LID");
        let down = port_problem("mlx5_0", 1, &ib::sys::IbvPortAttr { state: 1, ..active_port(eth) }, 0, &gid).unwrap();
        assert_eq!(down, "port 1 of mlx5_0 is DOWN, not ACTIVE: check the cable, the switch port and the link (`ibstat`, `ip link`)");
        let init = port_problem("mlx5_1", 1, &ib::sys::IbvPortAttr { state: 2, ..active_port(ib_ll) }, 0, &gid).unwrap();
        assert!(init.contains("is INIT") && init.contains("run opensm"), "{init}");
        let no_gid = port_problem("mlx5_0", 1, &active_port(eth), 3, &[0; 16]).unwrap();
        assert!(
            no_gid.starts_with("RoCE GID index 3 of port 1 on mlx5_0 is empty") && no_gid.contains("set NVSHMEM_IB_GID_INDEX"),
            "{no_gid}"
        );
        let no_lid = port_problem("mlx5_0", 1, &ib::sys::IbvPortAttr { lid: 0, ..active_port(ib_ll) }, 0, &gid).unwrap();
        assert!(no_lid.contains("has no LID"), "{no_lid}");
        let mtu = port_problem("mlx5_0", 1, &ib::sys::IbvPortAttr { active_mtu: 0, ..active_port(ib_ll) }, 0, &gid).unwrap();
        assert!(mtu.contains("active MTU code 0"), "{mtu}");
    }

    #[test]
    fn mixed_link_layers_are_refused_naming_both_pes() {
        let pe = |link_layer: u8| PeInfo {
            heap_base: 0,
            rkey: 0,
            addr: QpAddress { qpn: 0, psn: 0, lid: 0, port: 1, mtu: 5, link_layer, gid_index: 0, gid: [0; 16] },
            rc: Vec::new(),
            dct: Vec::new(),
        };
        let (ib_ll, eth) = (ib::sys::IBV_LINK_LAYER_INFINIBAND, ib::sys::IBV_LINK_LAYER_ETHERNET);
        assert!(check_link_layers(&[pe(eth), pe(eth), pe(eth)], &[false, true, true], 0).is_ok());
        // PE 1 is reached by loads and stores: its port does not matter.
        assert!(check_link_layers(&[pe(eth), pe(ib_ll), pe(eth)], &[false, false, true], 0).is_ok());
        let e = check_link_layers(&[pe(ib_ll), pe(eth), pe(ib_ll)], &[false, true, true], 0).unwrap_err().to_string();
        assert_eq!(e, "nvshmem_init: IBGDA: PE 0's NIC port is InfiniBand but PE 1's is Ethernet (RoCE): every PE must use the same kind of network (set NVSHMEM_HCA_LIST)");
    }

    #[test]
    fn a_peer_whose_set_up_failed_stops_every_pe_with_its_reason() {
        assert!(first_set_up_failure(&[vec![0, 9, 9], vec![0]]).is_none());
        let e = first_set_up_failure(&[vec![0, 9], vec![1, b'n', b'o', b' ', b'G', b'I', b'D'], vec![1, b'x']]).unwrap().to_string();
        assert_eq!(e, "nvshmem_init: PE 1 could not set up its NIC: no GID");
        let e = first_set_up_failure(&[vec![0], vec![]]).unwrap().to_string();
        assert_eq!(e, "nvshmem_init: PE 1 could not set up its NIC: ", "an empty message is a failure too");
    }
}
