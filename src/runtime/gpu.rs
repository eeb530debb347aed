//! GPU mode of the runtime (NVSHMEM): one PE per GPU, a CUDA symmetric heap shared over
//! NVLink/PCIe P2P, the device state handed to the header-only device library, and the host
//! and on-stream operations on GPU memory.
//!
//! A GPU job is an ordinary job plus `State::gpu`: the host side (bootstrap, CPU barrier
//! counters, scratch for argument checks) is the CPU runtime's, with a small host heap; the
//! symmetric heap that `nvshmem_malloc` serves is `GpuState::heap`.
//!
//! Runtime area at the start of every PE's GPU heap (offsets; n = number of PEs, each array
//! padded to 256 bytes):
//! ```text
//! 0        peer_bases[n]     PE p's heap base as mapped in this process (device pointers)
//! A        sync_counters[n]  device barriers: PE j adds 1 to sync_counters[j] on PE i
//! 2A       sync_consumed[n]  how many of those this PE has consumed (only this PE touches it)
//! 3A       stream_flags[n]   on-stream collectives: u32 per PE; PE j writes its step count with
//!                            PE i to [j] on PE i (see src/cuda/kernels/common.cuh)
//! 3A+4n    stream_steps[n]   u32 per PE: the steps this PE's kernels took with PE j
//! 4A       result            8 bytes: the old value of a host-initiated atomic
//! 4A+256   tickets           TICKET_SLOTS pairs of u32: last-block tickets of collective kernels
//! 4A+768   teams             RshmemDeviceTeam[MAX_DEVICE_TEAMS]: the device's team table
//! 4A+2048  coll_scratch      COLL_SCRATCH bytes: device collectives' staging (in-place reductions)
//! +        stage             STAGE_BYTES: on-stream in-place reductions' staged sources
//! +        coll_calls        u64[LL_TEAMS][2]: small device collectives started per team and family
//! +        coll_acks         u64[LL_TEAMS][n + 2]: small broadcasts' acknowledgements
//! +        coll_ll           [LL_TEAMS][2 families][2 parities][n] slots of LL_SLOT bytes:
//!                            small collectives' mailboxes
//! +        stream_chunks[n]  u32[CHUNKS] per PE: PE j flags the chunks of its slice that a
//!                            two-phase on-stream collective made into [j][c] on PE i
//! ```
//! The device collectives' per-team state (calls, acks, slots) is zero whenever no live team
//! has that handle: zeroed at init and when a split creates the team, before its members
//! synchronise (see gpu/team.rs).

mod coll;
mod coll_first;
mod coll_hosts;
pub mod host_rma;
pub mod mpi;
pub mod proxy;
mod team;
mod user_buffer;

pub use coll::{Gather, GatherCall, ReduceCall};
pub use team::{MAX_DEVICE_TEAMS, TEAMS_MIN};

use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::abi::{
    RshmemDeviceState, RSHMEM_DEVICE_FLAG_ALL_P2P, RSHMEM_DEVICE_FLAG_CHECKS, RSHMEM_DEVICE_FLAG_PROXY, RSHMEM_DEVICE_STATE_MAGIC,
    RSHMEM_DEVICE_STATE_SIZE, RSHMEM_DEVICE_STATE_VERSION,
};
use crate::bootstrap::Bootstrap;
use crate::cuda::kernels::{AmoOp, Kernels};
use crate::cuda::{self, sys, Device, DeviceMem, PrimaryContext, Stream};
use crate::env::{parse_size, Config};
use crate::error::{Error, ErrorKind, Result};
use crate::heap::alloc::Allocator;
use crate::heap::gpu::GpuHeap;
use crate::transport::{ibgda, Route, RouteTable};
use std::time::Duration;

use super::alloc::Heap;
use super::State;

/// The name of the device state variable in every module that includes the device headers.
pub const DEVICE_STATE_SYMBOL: &CStr = c"rshmemi_device_state_d";

/// Bytes of each PE's GPU heap the device collectives stage through.
pub const COLL_SCRATCH: usize = 64 << 10;

/// Bytes of each PE's GPU heap that small in-place on-stream reductions stage their source in
/// (one block's worth: such a reduction then needs two synchronisation steps, not three).
pub const STAGE_BYTES: usize = 32 << 10;

/// Team handles (below this) whose device collectives have low-latency slots.
pub const LL_TEAMS: usize = 16;

/// Bytes of one low-latency slot: 16-byte units of 8 payload bytes, so a member can send up to
/// LL_SLOT / 2 bytes to another in one small collective.
pub const LL_SLOT: usize = 4 << 10;

/// Proxy channel of a GPU PE: at most this many rings (a CTA posts to ring `CTA % lanes`), of
/// this many commands each.
const PROXY_LANES: usize = 64;
const PROXY_SLOTS: usize = 256;

/// Bytes of host heap a GPU job keeps (runtime header and scratch live there, not user data).
pub const HOST_HEAP_BYTES: usize = 8 << 20;

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

/// Where the runtime's arrays lie in every GPU heap.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    pub array: usize,
    pub npes: usize,
}

impl Area {
    pub fn new(npes: usize) -> Area {
        Area { array: round_up(8 * npes, 256), npes }
    }
    pub fn peer_bases(&self) -> usize {
        0
    }
    pub fn sync_counters(&self) -> usize {
        self.array
    }
    pub fn sync_consumed(&self) -> usize {
        2 * self.array
    }
    pub fn stream_flags(&self) -> usize {
        3 * self.array
    }
    /// Next to the flags, in the same array (8 bytes per PE).
    pub fn stream_steps(&self) -> usize {
        3 * self.array + 4 * self.npes
    }
    pub fn result(&self) -> usize {
        4 * self.array
    }
    pub fn tickets(&self) -> usize {
        4 * self.array + 256
    }
    pub fn teams(&self) -> usize {
        4 * self.array + 768
    }
    pub fn coll_scratch(&self) -> usize {
        4 * self.array + 2048
    }
    pub fn stage(&self) -> usize {
        self.coll_scratch() + COLL_SCRATCH
    }
    pub fn coll_calls(&self) -> usize {
        self.stage() + STAGE_BYTES
    }
    pub fn coll_acks(&self) -> usize {
        self.coll_calls() + 16 * LL_TEAMS
    }
    pub fn coll_ll(&self) -> usize {
        round_up(self.coll_acks() + 8 * LL_TEAMS * (self.npes + 2), 256)
    }
    /// Bytes of one team's slots (2 families x 2 parities x n senders).
    fn coll_ll_team_bytes(&self) -> usize {
        4 * self.npes * LL_SLOT
    }
    /// Team `team`'s small-collective state (call numbers, acks, slots), as (offset, bytes)
    /// ranges to clear; none for handles without slots.
    pub fn coll_team_ranges(&self, team: usize) -> Vec<(usize, usize)> {
        if team >= LL_TEAMS {
            return Vec::new();
        }
        vec![
            (self.coll_calls() + 16 * team, 16),
            (self.coll_acks() + 8 * team * (self.npes + 2), 8 * (self.npes + 2)),
            (self.coll_ll() + team * self.coll_ll_team_bytes(), self.coll_ll_team_bytes()),
        ]
    }
    /// Two-phase on-stream collectives' chunk flags (CHUNKS u32 per PE).
    pub fn stream_chunks(&self) -> usize {
        self.coll_ll() + LL_TEAMS * self.coll_ll_team_bytes()
    }
    /// Bytes reserved for the runtime; user allocations start here.
    pub fn reserved(&self) -> usize {
        round_up(self.stream_chunks() + 4 * crate::cuda::coll::CHUNKS * self.npes, 4096)
    }
}

/// GPU memory the library itself holds on this PE, measured at init.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryReport {
    /// Bytes of this PE's heap backed by GPU memory right after init.
    pub heap_mapped: usize,
    /// Of which the runtime's own area.
    pub runtime_area: usize,
    /// Drop in the device's free memory across the heap set-up (driver's view: includes
    /// page-table and mapping overheads).
    pub measured: usize,
}

pub struct GpuState {
    /// This PE's proxy thread (jobs that span hosts): first, so that it stops before anything
    /// it uses goes.
    proxy: Mutex<Option<crate::proxy::Proxy>>,
    proxy_channel: Option<std::sync::Arc<crate::proxy::Channel>>,
    /// The mailboxes through which host-side operations reach the GPU heaps of PEs on other
    /// hosts (`Route::Proxy`; set when the proxy starts: gpu/proxy.rs).
    mailboxes: std::sync::OnceLock<std::sync::Arc<crate::proxy::gpu::Mailboxes>>,
    /// The device's route bytes (`RshmemDeviceState::routes`).
    _route_mem: Option<DeviceMem>,
    pub device: Device,
    pub ordinal: usize,
    pub name: String,
    pub pci: String,
    pub node_mype: usize,
    pub node_npes: usize,
    /// PEs of the job on this PE's GPU (this one included).
    pub gpu_share: usize,
    pub area: Area,
    /// This PE's heap base and the distance between PEs' heaps (copies of the heap's values,
    /// for lock-free translation).
    pub base: u64,
    pub stride: usize,
    mapped: AtomicUsize,
    /// Smallest step in which the heap grows (CUMEM_GRANULARITY).
    chunk: usize,
    /// Where the heap's part of every PE's window ends; from here to `stride`, the user
    /// allocations of nvshmemx_buffer_register_symmetric (gpu/user_buffer.rs).
    heap_end: usize,
    pub alloc: Mutex<Allocator>,
    pub dstate: RshmemDeviceState,
    pub memory: MemoryReport,
    /// IBGDA toward the peers reached through the network (NVSHMEM_DISABLE_P2P=1); dropped
    /// before the heap it addresses.
    pub ibgda: Option<crate::ibgda::Ibgda>,
    /// The library's own kernels (kernels.ptx), loaded on first use.
    kernels: std::sync::OnceLock<Kernels>,
    kernels_lock: Mutex<()>,
    /// Serialises host atomics (they share the result word).
    amo_lock: Mutex<()>,
    /// Local buffers named by nvshmemx_buffer_register: (address, length).
    registered: Mutex<Vec<(u64, usize)>>,
    /// The library's own stream for blocking host operations.
    stream: Stream,
    /// Multiprocessors of the GPU (the collective kernels use at most one block on each).
    pub sms: u32,
    /// On-stream collectives: the library's kernels (coll.ptx and reduce_*.ptx), loaded on
    /// first use; the next ticket slot.
    coll_kernels: std::sync::OnceLock<crate::cuda::coll::CollKernels>,
    /// Small on-stream broadcast/fcollect/alltoall (ll.ptx), loaded on first use.
    ll_kernel: std::sync::OnceLock<crate::cuda::coll::LlKernel>,
    ticket_slot: AtomicUsize,
    /// Mapped before the heap's window is freed (fields drop in declaration order).
    symmetric: Mutex<user_buffer::Registry>,
    heap: Mutex<GpuHeap>,
    /// Declared last: released only after every mapping and the stream are gone.
    pub ctx: PrimaryContext,
}

fn cu<T>(r: cuda::CuResult<T>) -> Result<T> {
    r.map_err(Error::from)
}

/// A setting of the GPU runtime that `Config` does not carry (read through env.rs).
fn size_setting(name: crate::env::Setting) -> Result<usize> {
    let (var, v) = crate::env::current(name);
    parse_size(&v).filter(|s| *s > 0).ok_or_else(|| {
        Error::invalid_value(format!("environment variable {var}={v:?} is not valid: expected a positive size such as 512M"))
    })
}

fn flag_setting(name: crate::env::Setting) -> bool {
    crate::env::enabled(name)
}

/// Whether an MPS control daemon is listening where this process's CUDA driver looks for it
/// (`$CUDA_MPS_PIPE_DIRECTORY`, default /tmp/nvidia-mps): its `control` pipe exists there.
/// PEs sharing a GPU are warned only when it is not (the driver then time-slices them).
fn mps_daemon_listening() -> bool {
    mps_control_pipe(std::env::var_os("CUDA_MPS_PIPE_DIRECTORY")).exists()
}

fn mps_control_pipe(dir: Option<std::ffi::OsString>) -> std::path::PathBuf {
    let dir = dir.filter(|d| !d.is_empty()).unwrap_or_else(|| "/tmp/nvidia-mps".into());
    std::path::Path::new(&dir).join("control")
}

impl GpuState {
    /// Collective: picks this PE's GPU, builds the symmetric heap and the device state.
    /// `routes`: which PEs are on this host (P2P) and which on others; gets every PE's GPU
    /// route (`RouteTable::set_gpu`).
    /// Its errors are reported under nvshmem_init, whichever routine started the job.
    pub fn create(boot: &dyn Bootstrap, cfg: &Config, routes: &mut RouteTable) -> Result<GpuState> {
        Self::set_up(boot, cfg, routes).map_err(|e| e.named("nvshmem_init"))
    }

    fn set_up(boot: &dyn Bootstrap, cfg: &Config, routes: &mut RouteTable) -> Result<GpuState> {
        let (me, npes) = (boot.rank(), boot.size());
        cu(cuda::driver())?;

        // Node-local rank: PEs on the same host, in rank order; the others are reached through
        // the proxy (src/proxy/gpu.rs).
        let local: Vec<bool> = (0..npes).map(|p| routes.route(p) == Route::Shm).collect();
        let node: Vec<usize> = (0..npes).filter(|&p| local[p]).collect();
        let node_mype = node.iter().position(|&p| p == me).unwrap_or(0);

        // One PE per GPU: the device current on this thread if the program chose one,
        // otherwise the node-local rank modulo the visible devices (CUDA_VISIBLE_DEVICES).
        let count = cu(cuda::device_count())?;
        if count == 0 {
            return Err(Error::of(
                ErrorKind::NoGpu,
                "no usable GPU: the CUDA driver sees no device (check CUDA_VISIBLE_DEVICES and nvidia-smi)",
            ));
        }
        let device = match cu(cuda::current_context())? {
            Some((_, dev)) => dev,
            None => cu(Device::get(node_mype % count))?,
        };
        let ordinal = (0..count).find(|&i| Device::get(i).ok() == Some(device)).unwrap_or(device.0 as usize);
        if node.len() > count && !mps_daemon_listening() {
            crate::log::warn(&format!(
                "{} PEs share {count} GPU(s) on this host. Without MPS their contexts take turns on the GPU (time slices): one PE's kernels stall another's, and a kernel spinning on a peer's data holds the GPU while that peer cannot run. Start MPS first (`nvidia-cuda-mps-control -d`; stop it with `echo quit | nvidia-cuda-mps-control`), or run one PE per GPU",
                node.len()
            ));
        }
        let ctx = cu(PrimaryContext::retain(device))?;
        cu(ctx.make_current())?;
        for (attr, what) in [
            (sys::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, "virtual memory management"),
            (sys::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, "POSIX file descriptor memory handles"),
            (sys::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing"),
        ] {
            if cu(device.attribute(attr))? == 0 {
                return Err(Error::of(
                    ErrorKind::Unsupported,
                    format!("GPU {ordinal} does not support {what}, which the symmetric heap needs"),
                ));
            }
        }
        let name = cu(device.name())?;
        let pci = cu(device.pci_bus_id())?;
        let sms = cu(device.attribute(sys::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT))?.max(1) as u32;

        // Every pair of GPUs must reach each other by loads and stores (P2P).
        let pcis = boot.allgather(pci.as_bytes())?;
        let gpu_share = pcis.iter().enumerate().filter(|(pe, p)| local[*pe] && p.as_slice() == pci.as_bytes()).count();
        let visible: Vec<(Device, String)> =
            (0..count).filter_map(|i| Device::get(i).ok()).filter_map(|d| d.pci_bus_id().ok().map(|p| (d, p))).collect();
        for (pe, their) in pcis.iter().enumerate().filter(|(pe, _)| local[*pe]) {
            let their = String::from_utf8_lossy(their);
            if let Some((peer, _)) = visible.iter().find(|(_, p)| *p == their) {
                let (access, _atomics) = cu(device.p2p(*peer))?;
                if !access {
                    return Err(Error::of(
                        ErrorKind::Unsupported, format!("PE {me}'s GPU ({pci}) has no peer access to PE {pe}'s GPU ({their}); GPUs without NVLink/PCIe P2P need a proxy transport, which this build does not have yet"),
                    ));
                }
            }
        }

        let (free_before, _) = cu(ctx.memory_info())?;
        let area = Area::new(npes);
        // The program may allocate NVSHMEM_SYMMETRIC_SIZE, and as with NVSHMEM more, up to
        // NVSHMEM_MAX_MEMORY_PER_GPU (heap::gpu_user_limit); the runtime area comes on top.
        // Registered user allocations (gpu/user_buffer.rs) take the address space after the heap's.
        let user_limit = crate::heap::gpu_user_limit(cfg.symmetric_size, size_setting(crate::env::MAX_MEMORY_PER_GPU)?, npes);
        let heap_bytes = crate::heap::heap_bytes(area.reserved(), user_limit)
            .ok_or_else(|| Error::invalid_value("NVSHMEM_SYMMETRIC_SIZE is too large"))?;
        let register_space = size_setting(crate::env::REGISTER_SYMMETRIC_SPACE)?;
        let chunk = size_setting(crate::env::CUMEM_GRANULARITY)?;
        let ahead = if flag_setting(crate::env::HEAP_MAP_AHEAD) { chunk } else { 0 };
        let heap = GpuHeap::create(boot, device, heap_bytes.saturating_add(register_space), area.reserved(), ahead, local.clone())?;
        let heap_end = heap_bytes.div_ceil(heap.granularity) * heap.granularity;
        let stream = cu(Stream::create())?;
        let (base, stride, mapped, held) = (heap.my_base(), heap.stride, heap.mapped, heap.own_bytes());

        // PEs not reached by loads and stores: IBGDA where its self-test passes, else the proxy
        // (PEs on other hosts only). Collective.
        let no_p2p: Vec<bool> = (0..npes).map(|p| p != me && local[p] && flag_setting(crate::env::DISABLE_P2P)).collect();
        let remote: Vec<bool> = (0..npes).map(|p| no_p2p[p] || !local[p]).collect();
        let (ibgda, ibgda_why_not) = if remote.iter().any(|r| *r) {
            let setup = crate::ibgda::gpu::Setup {
                me,
                npes,
                ctx: ctx.ctx,
                boot,
                sms,
                heap_bases: (0..npes).map(|p| heap.base_of(p)).collect(),
                stride,
                mapped,
                remote: remote.clone(),
            };
            ibgda::choose(&setup)?
        } else {
            (None, None)
        };
        let gpu_routes = ibgda::plan_routes(me, &local, &no_p2p, ibgda_why_not.as_deref())?;
        let route_bytes: Vec<u8> = gpu_routes.iter().map(|r| r.device_byte()).collect();

        // Zero the runtime area and write the peer table (0: reached through IBGDA or the proxy,
        // not P2P) and the route bytes.
        let route_mem = if remote.iter().any(|r| *r) { Some(cu(DeviceMem::alloc(npes, stream.0))?) } else { None };
        let peers: Vec<u64> = (0..npes).map(|p| if remote[p] { 0 } else { heap.base_of(p) }).collect();
        // SAFETY: the runtime area lies in the chunk just mapped; `peers` outlives the copy,
        // which completes at the synchronize below.
        unsafe {
            cu(cuda::memset_async(base, 0, area.reserved(), stream.0))?;
            cu(cuda::memcpy_async(base + area.peer_bases() as u64, peers.as_ptr() as u64, 8 * npes, stream.0))?;
            if let Some(r) = &route_mem {
                cu(cuda::memcpy_async(r.ptr, route_bytes.as_ptr() as u64, npes, stream.0))?;
            }
        }
        cu(cuda::stream_synchronize(stream.0))?;
        let (free_after, _) = cu(ctx.memory_info())?;

        let mut flags = RSHMEM_DEVICE_FLAG_ALL_P2P;
        if flag_setting(crate::env::DEVICE_CHECKS) {
            flags |= RSHMEM_DEVICE_FLAG_CHECKS;
        }
        if ibgda.is_some() {
            flags = (flags & !RSHMEM_DEVICE_FLAG_ALL_P2P) | crate::abi::RSHMEM_DEVICE_FLAG_IBGDA;
        }
        // PEs on other hosts without IBGDA: a command channel to this PE's proxy thread
        // (started by gpu/proxy.rs once the job's state exists).
        let proxy_channel = if !gpu_routes.contains(&Route::Proxy) {
            None
        } else {
            flags = (flags & !RSHMEM_DEVICE_FLAG_ALL_P2P) | RSHMEM_DEVICE_FLAG_PROXY;
            crate::proxy::route_flag_warning(&gpu_routes, crate::proxy::route_compiled()).inspect(|w| crate::log::warn(w));
            let stall = if cfg.hang_timeout_s > 0.0 { Duration::from_secs_f64(cfg.hang_timeout_s) } else { Duration::from_secs(10) };
            let lanes = (sms as usize).clamp(1, PROXY_LANES);
            let mem = crate::proxy::gpu::PinnedChannelMemory { stream: &stream };
            Some(std::sync::Arc::new(crate::proxy::Channel::new_in(&mem, me, lanes, PROXY_SLOTS, stall)?))
        };
        let dstate = RshmemDeviceState {
            magic: RSHMEM_DEVICE_STATE_MAGIC,
            version: RSHMEM_DEVICE_STATE_VERSION,
            mype: me as i32,
            npes: npes as i32,
            node_mype: node_mype as i32,
            node_npes: node.len() as i32,
            flags,
            heap_base: base,
            heap_stride: stride as u64,
            window_base: heap.window_base(),
            peer_bases: base + area.peer_bases() as u64,
            sync_counters: base + area.sync_counters() as u64,
            sync_consumed: base + area.sync_consumed() as u64,
            stream_flags: base + area.stream_flags() as u64,
            coll_scratch: base + area.coll_scratch() as u64,
            coll_scratch_bytes: COLL_SCRATCH as u64,
            teams: base + area.teams() as u64,
            max_teams: MAX_DEVICE_TEAMS as u32,
            ibgda: ibgda.as_ref().map_or(0, |i| i.state_addr()),
            coll_calls: base + area.coll_calls() as u64,
            coll_acks: base + area.coll_acks() as u64,
            coll_ll: base + area.coll_ll() as u64,
            coll_ll_slot: LL_SLOT as u32,
            coll_ll_teams: LL_TEAMS as u32,
            proxy: proxy_channel.as_ref().map_or(0, |c| c.as_ptr() as u64),
            routes: route_mem.as_ref().map_or(0, |r| r.ptr),
            ..Default::default()
        };
        let memory = MemoryReport { heap_mapped: held, runtime_area: area.reserved(), measured: free_before.saturating_sub(free_after) };
        crate::log::info(&format!(
            "GPU {ordinal} ({name}, PCI {pci}) for node PE {node_mype} of {}; heap: {stride} bytes reserved per PE, {mapped} mapped; GPU memory used by rshmem: {} bytes (runtime area {} bytes; driver-measured {} bytes)",
            node.len(),
            memory.heap_mapped,
            memory.runtime_area,
            memory.measured
        ));
        routes.set_gpu(gpu_routes);
        Ok(GpuState {
            proxy: Mutex::new(None),
            proxy_channel,
            mailboxes: std::sync::OnceLock::new(),
            _route_mem: route_mem,
            device,
            ordinal,
            name,
            pci,
            node_mype,
            node_npes: node.len(),
            gpu_share,
            area,
            base,
            stride,
            mapped: AtomicUsize::new(mapped),
            chunk,
            heap_end,
            alloc: Mutex::new(Allocator::new(area.reserved(), heap_bytes)),
            dstate,
            memory,
            ibgda,
            kernels: std::sync::OnceLock::new(),
            kernels_lock: Mutex::new(()),
            amo_lock: Mutex::new(()),
            registered: Mutex::new(Vec::new()),
            stream,
            sms,
            coll_kernels: std::sync::OnceLock::new(),
            ll_kernel: std::sync::OnceLock::new(),
            ticket_slot: AtomicUsize::new(0),
            symmetric: Mutex::new(user_buffer::Registry::default()),
            heap: Mutex::new(heap),
            ctx,
        })
    }

    #[inline]
    pub fn mapped(&self) -> usize {
        self.mapped.load(Ordering::Acquire)
    }

    /// Device address of PE `pe`'s heap in this process.
    #[inline]
    pub fn base_of(&self, pe: usize) -> u64 {
        self.dstate.window_base + (pe * self.stride) as u64
    }

    /// Offset of `addr..addr+len` in this PE's heap, if it lies in the mapped part after the
    /// runtime area (which is not symmetric memory for the program), or in a user allocation
    /// registered with nvshmemx_buffer_register_symmetric.
    #[inline]
    pub fn offset_of(&self, addr: u64, len: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.base) as usize;
        let mapped = self.mapped();
        if off >= self.area.reserved() && off < mapped && len <= mapped - off {
            return Some(off);
        }
        (off >= self.heap_end && off < self.stride && self.symmetric.lock().unwrap_or_else(|p| p.into_inner()).covers(off, len))
            .then_some(off)
    }

    /// Collective: makes sure `want` bytes of every heap are backed (the allocator decides
    /// identically on every PE, so all PEs call this together).
    fn ensure_mapped(&self, boot: &dyn Bootstrap, want: usize) -> Result<()> {
        if want <= self.mapped() {
            return Ok(());
        }
        cu(self.ctx.make_current())?;
        let mut heap = self.heap.lock().unwrap_or_else(|p| p.into_inner());
        let target = want.max(heap.mapped.saturating_add(self.chunk)).min(self.heap_end).max(want);
        heap.grow(boot, target)?;
        if let Some(ib) = &self.ibgda {
            // Collective like the growth itself; on failure the new part stays unpublished
            // (`mapped` unchanged), and the next allocation that needs it registers again.
            ib.heap_grew(boot, heap.mapped)?;
        }
        self.mapped.store(heap.mapped, Ordering::Release);
        crate::log::info(&format!("GPU heap grew to {} bytes per PE", heap.mapped));
        Ok(())
    }

    /// `cell`'s value, made by `make` with the context current the first time (one maker at a
    /// time: each of the library's modules is loaded once). `make` must not call `loaded`: the
    /// lock is not reentrant.
    fn loaded<'a, T>(&self, cell: &'a std::sync::OnceLock<T>, make: impl FnOnce() -> Result<T>) -> Result<&'a T> {
        if let Some(v) = cell.get() {
            return Ok(v);
        }
        let _once = self.kernels_lock.lock().unwrap_or_else(|p| p.into_inner());
        if cell.get().is_none() {
            cu(self.ctx.make_current())?;
            let _ = cell.set(make()?);
        }
        Ok(cell.get().expect("set above"))
    }

    /// The library's kernels, loading them into the context on first use.
    fn kernels(&self) -> Result<&Kernels> {
        self.loaded(&self.kernels, || cu(Kernels::load()))
    }

    /// The atomic kernel on the `size`-byte word at device address `mapped` (a heap word mapped
    /// here, aligned), its old value returned: host AMOs on P2P peers, and what the proxy
    /// applies for PEs on other hosts (on the runtime area too, where barrier counters are).
    pub fn amo_at(&self, mapped: u64, a: u64, b: u64, op: AmoOp, size: usize) -> Result<u64> {
        let k = self.kernels()?;
        let _one = self.amo_lock.lock().unwrap_or_else(|p| p.into_inner());
        cu(self.ctx.make_current())?;
        let result = self.base + self.area.result() as u64;
        let mut old = 0u64;
        // SAFETY: `mapped` is a `size`-aligned word in a heap mapped here (the callers' check)
        // and `result` this PE's result word; `old` outlives the copy, complete at sync below.
        unsafe {
            cu(k.amo(self.stream.0, mapped, a, b, result, op, size as u32))?;
            cu(cuda::memcpy_async((&mut old as *mut u64) as u64, result, 8, self.stream.0))?;
        }
        self.sync()?;
        Ok(old)
    }

    /// Copies `len` bytes between any two unified addresses on the library's stream, complete
    /// on return (after everything queued on the stream before it).
    fn copy_now(&self, dst: u64, src: u64, len: usize) -> Result<()> {
        cu(self.ctx.make_current())?;
        // SAFETY: the callers pass `len` bytes valid at both addresses until this returns.
        cu(unsafe { cuda::memcpy_async(dst, src, len, self.stream.0) })?;
        self.sync()
    }

    /// Blocks until the library's own stream is idle (host RMA is complete).
    fn sync(&self) -> Result<()> {
        cu(cuda::stream_synchronize(self.stream.0))
    }
}

impl Drop for GpuState {
    fn drop(&mut self) {
        // Kernels still running may touch the heap: let them finish before unmapping.
        if self.ctx.synchronize().is_err() {
            crate::log::warn("nvshmem_finalize: the GPU reported an error while finishing outstanding work");
        }
        if let Ok(mut w) = PUBLISHED.lock() {
            *w = None;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Device state registration

/// A per-translation-unit writer (device/rshmem_state.cuh): copies the state into that unit's
/// `__constant__` copy with cudaMemcpyToSymbol; returns a cudaError_t.
pub type StateWriter = unsafe extern "C" fn(*const RshmemDeviceState, usize) -> c_int;

enum Target {
    Writer(StateWriter),
    Module(usize),
    Library(usize),
}

impl PartialEq for Target {
    fn eq(&self, other: &Target) -> bool {
        match (self, other) {
            (Target::Writer(a), Target::Writer(b)) => std::ptr::fn_addr_eq(*a, *b),
            (Target::Module(a), Target::Module(b)) | (Target::Library(a), Target::Library(b)) => a == b,
            _ => false,
        }
    }
}

static TARGETS: Mutex<Vec<Target>> = Mutex::new(Vec::new());
/// The state last published (None before nvshmem_init and after nvshmem_finalize).
static PUBLISHED: Mutex<Option<RshmemDeviceState>> = Mutex::new(None);

/// Writes `state` into one target; Err says why (the target is skipped, not fatal).
fn write_target(t: &Target, state: &RshmemDeviceState, stream: sys::CUstream) -> std::result::Result<(), String> {
    let size = RSHMEM_DEVICE_STATE_SIZE;
    let copy = |found: cuda::CuResult<Option<(u64, usize)>>| -> std::result::Result<(), String> {
        match found.map_err(|e| e.to_string())? {
            None => Err(format!("it has no {} (was it compiled against rshmem's nvshmem.h?)", DEVICE_STATE_SYMBOL.to_string_lossy())),
            Some((_, n)) if n != size => {
                Err(format!("its device state has {n} bytes, this library {size}: rebuild it with this version's headers"))
            }
            Some((addr, _)) => {
                // SAFETY: `addr` is the module's state variable of exactly `size` bytes (checked
                // above); `state` outlives the copy, which completes at the synchronize below.
                unsafe { cuda::memcpy_async(addr, state as *const _ as u64, size, stream) }.map_err(|e| e.to_string())?;
                cuda::stream_synchronize(stream).map_err(|e| e.to_string())
            }
        }
    };
    match t {
        // SAFETY: the writer was registered by device/rshmem_state.cuh and stays valid until
        // it unregisters itself (static destructor of its translation unit).
        Target::Writer(w) => match unsafe { w(state, size) } {
            0 => Ok(()),
            rc => Err(format!("cudaMemcpyToSymbol returned CUDA runtime error {rc}")),
        },
        Target::Module(m) => copy(cuda::module_global(*m as sys::CUmodule, DEVICE_STATE_SYMBOL)),
        Target::Library(l) => copy(cuda::library_global(*l as sys::CUlibrary, DEVICE_STATE_SYMBOL)),
    }
}

/// Writes the current state into every registered target (after init, on the init thread).
pub fn publish(g: &GpuState) -> Result<()> {
    cu(g.ctx.make_current())?;
    if let Ok(st) = crate::runtime::state() {
        st.gpu_teams_init(g)?;
    }
    *PUBLISHED.lock().unwrap_or_else(|p| p.into_inner()) = Some(g.dstate);
    let targets = TARGETS.lock().unwrap_or_else(|p| p.into_inner());
    for t in targets.iter() {
        if let Err(why) = write_target(t, &g.dstate, g.stream.0) {
            crate::log::warn(&format!("nvshmem_init: could not give the device state to a CUDA module: {why}"));
        }
    }
    Ok(())
}

/// Registers a target; writes the state into it at once if the GPU runtime is up.
fn register(t: Target) -> Result<()> {
    let mut targets = TARGETS.lock().unwrap_or_else(|p| p.into_inner());
    if !targets.contains(&t) {
        if let Some(st) = crate::runtime::state().ok().filter(|s| s.gpu.is_some()) {
            let g = st.gpu.as_ref().unwrap();
            cu(g.ctx.make_current())?;
            write_target(&t, &g.dstate, g.stream.0).map_err(Error::invalid_value)?;
        }
        targets.push(t);
    }
    Ok(())
}

fn unregister(t: Target) {
    TARGETS.lock().unwrap_or_else(|p| p.into_inner()).retain(|x| *x != t);
}

pub fn register_writer(w: StateWriter) -> Result<()> {
    register(Target::Writer(w))
}
pub fn unregister_writer(w: StateWriter) {
    unregister(Target::Writer(w))
}
/// A module's or library's handle as the table keeps it; NULL (`what` names it) is refused.
fn handle(h: *mut std::ffi::c_void, what: &str) -> Result<usize> {
    if h.is_null() {
        return Err(Error::invalid_value(format!("the {what} is NULL")));
    }
    Ok(h as usize)
}
pub fn register_module(m: sys::CUmodule) -> Result<()> {
    register(Target::Module(handle(m, "module")?))
}
pub fn unregister_module(m: sys::CUmodule) {
    unregister(Target::Module(m as usize))
}
pub fn register_library(l: sys::CUlibrary) -> Result<()> {
    register(Target::Library(handle(l, "library")?))
}
pub fn unregister_library(l: sys::CUlibrary) {
    unregister(Target::Library(l as usize))
}

/// The state as published (for tests and rshmem-info).
pub fn published() -> Option<RshmemDeviceState> {
    *PUBLISHED.lock().unwrap_or_else(|p| p.into_inner())
}

// ---------------------------------------------------------------------------------------------
// Host operations on GPU memory

/// The GPU heap in the allocation protocol (runtime/alloc.rs).
pub(crate) struct Gpu<'a> {
    st: &'a State,
    g: &'a GpuState,
}

impl Heap for Gpu<'_> {
    const OPS: u64 = 10;
    const ROUTINES: &'static str = "nvshmem_malloc/nvshmem_align/nvshmem_calloc";

    fn state(&self) -> &State {
        self.st
    }
    fn base_align(&self) -> usize {
        // Heaps start at multiples of the granularity in every process (heap/gpu.rs).
        self.g.heap.lock().unwrap_or_else(|p| p.into_inner()).granularity
    }
    fn min_align(&self) -> usize {
        crate::heap::gpu::ALLOC_ALIGN
    }
    fn exchange(&self, mine: [u64; 3]) -> Result<[u64; 3]> {
        let st = self.st;
        if st.multi_host {
            // PE 0's host heap is not mapped on other hosts: agree through the bootstrap.
            let bytes: Vec<u8> = mine.iter().flat_map(|v| v.to_le_bytes()).collect();
            let all = st.boot.allgather(&bytes)?;
            let word = |i: usize| all[0].get(8 * i..8 * i + 8).map_or(u64::MAX, |w| u64::from_le_bytes(w.try_into().unwrap_or([0xff; 8])));
            return Ok([word(0), word(1), word(2)]);
        }
        let slot = st.my_header().scratch() as *mut [u64; 3];
        // SAFETY: scratch is this PE's own runtime area; only it writes there, between syncs.
        unsafe { slot.write_volatile(mine) };
        st.barrier_all();
        // SAFETY: PE 0's scratch, written before the sync above and not rewritten before the
        // next sync.
        Ok(unsafe { (st.headers[0].scratch() as *const [u64; 3]).read_volatile() })
    }
    fn sync(&self) {
        self.st.barrier_all();
        // Every PE is past the growth (if this allocation grew the heap): the chunk it planned
        // ahead of need is mapped from now on, beside the program (heap/gpu.rs).
        self.g.heap.lock().unwrap_or_else(|p| p.into_inner()).start_ahead();
    }
    fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.g.alloc.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn base(&self) -> usize {
        self.g.base as usize
    }
    fn offset_of(&self, addr: usize) -> Option<usize> {
        self.g.offset_of(addr as u64, 1)
    }
    fn back(&self, end: usize) -> Result<()> {
        match self.g.ensure_mapped(self.st.boot.as_ref(), end) {
            // No PE could grow its heap (they agree: GpuHeap::grow): the call returns NULL.
            Err(e) if e.kind == ErrorKind::OutOfMemory => Err(Error { kind: ErrorKind::HeapFull, ..e }),
            other => other,
        }
    }
    fn full(&self, size: usize, a: &Allocator) -> Error {
        Error::of(
            ErrorKind::HeapFull,
            format!(
                "cannot allocate {size} bytes: the GPU symmetric heap ({} bytes per PE for the program) has at most {} bytes free in one block; set NVSHMEM_MAX_MEMORY_PER_GPU (or NVSHMEM_SYMMETRIC_SIZE) higher",
                a.capacity(),
                a.largest_free()
            ),
        )
    }
    fn settle(&self) -> Result<()> {
        // Queued non-blocking host RMA may still target the block: complete it first.
        self.g.sync()
    }
    fn zero(&self, p: *mut u8, bytes: usize) -> Result<()> {
        let g = self.g;
        cu(g.ctx.make_current())?;
        // SAFETY: the protocol passes a block it just allocated on this PE's heap.
        cu(unsafe { cuda::memset_async(p as u64, 0, bytes, g.stream.0) })?;
        g.sync()
    }
}

impl State {
    /// The GPU side of the runtime, or an error saying nvshmem_init was not used.
    pub fn gpu(&self) -> Result<&GpuState> {
        self.gpu.as_ref().ok_or_else(|| {
            Error::of(
                ErrorKind::NotInitialized,
                "this job was started with shmem_init (CPU memory only); call nvshmem_init (or nvshmemx_init_attr) to use GPU memory",
            )
        })
    }

    /// The GPU heap, for the allocation protocol (`runtime::alloc`).
    pub(crate) fn gpu_heap(&self) -> Result<Gpu<'_>> {
        Ok(Gpu { st: self, g: self.gpu()? })
    }

    /// Address of `len` bytes at symmetric `addr` on PE `pe`, as mapped here.
    pub fn gpu_translate(&self, addr: *const u8, len: usize, pe: i32) -> Result<u64> {
        let g = self.gpu()?;
        let pe = self.check_pe(pe)?;
        match g.offset_of(addr as u64, len) {
            Some(off) => Ok(g.base_of(pe) + off as u64),
            None => Err(Error::of(
                ErrorKind::NotSymmetric,
                format!(
                    "address {addr:p} ({len} bytes) is not inside the GPU symmetric heap [{:#x}, {:#x}){}; allocate it with nvshmem_malloc",
                    g.base + g.area.reserved() as u64,
                    g.base + g.mapped() as u64,
                    if (addr as u64) < g.base + g.area.reserved() as u64 && (addr as u64).saturating_add(len.max(1) as u64) > g.base {
                        " (it reaches into the runtime's reserved area at the start of the heap)"
                    } else {
                        ""
                    }
                ),
            )),
        }
    }

    /// nvshmem_ptr on the host: the peer's copy as a device pointer, NULL when not symmetric or
    /// when the peer is on another host (its heap is not mapped here).
    pub fn gpu_ptr(&self, addr: *const u8, pe: i32) -> Result<*mut u8> {
        self.check_pe(pe)?;
        if self.routes.gpu_route(pe as usize) == Route::Proxy {
            return Ok(std::ptr::null_mut());
        }
        Ok(self.gpu_translate(addr, 1, pe).map(|a| a as *mut u8).unwrap_or(std::ptr::null_mut()))
    }

    /// Host quiet: every host-initiated operation is complete (they are blocking already), and
    /// so is what finished kernels posted toward IBGDA peers or the proxy.
    pub fn gpu_quiet(&self) -> Result<()> {
        let g = self.gpu()?;
        cu(g.ctx.make_current())?;
        g.sync()?;
        if let Some(ib) = &g.ibgda {
            ib.drain()?; // what device code posted toward IBGDA peers has executed
        }
        proxy::drain(g)?;
        self.quiet();
        Ok(())
    }

    /// Host barrier_all in GPU mode: host operations complete, then the CPU barrier.
    pub fn gpu_barrier_all(&self) -> Result<()> {
        self.gpu_quiet()?;
        let _serial = self.serialize_collectives();
        self.barrier_all();
        Ok(())
    }

    /// signal_wait_until ordered on `stream`: later work on the stream waits for the signal.
    pub(crate) fn gpu_signal_wait_on_stream(&self, sig: *mut u64, cmp: i32, value: u64, stream: sys::CUstream) -> Result<()> {
        let mine = self.gpu_translate(sig.cast(), 8, self.me as i32)?;
        if !(0..=5).contains(&cmp) {
            return Err(Error::invalid_value(format!("comparison {cmp} is not one of NVSHMEM_CMP_EQ..NVSHMEM_CMP_GE (0..5)")));
        }
        let g = self.gpu()?;
        cu(g.ctx.make_current())?;
        // SAFETY: `mine` is an 8-byte word inside this PE's mapped heap.
        cu(unsafe { g.kernels()?.wait_u64(stream, mine, cmp as u32, value) })
    }
}

pub const SIGNAL_SET: i32 = 9;
pub const SIGNAL_ADD: i32 = 10;

pub fn bad_signal_op(op: i32) -> Error {
    Error::invalid_value(format!("signal operation {op} is neither NVSHMEM_SIGNAL_SET (9) nor NVSHMEM_SIGNAL_ADD (10)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MPS check looks where the driver does: the named pipe directory, else the default;
    /// a daemon's `control` pipe there counts, an empty directory does not.
    #[test]
    fn mps_check_finds_the_daemons_control_pipe() {
        assert_eq!(mps_control_pipe(None), std::path::Path::new("/tmp/nvidia-mps/control"));
        assert_eq!(mps_control_pipe(Some("".into())), std::path::Path::new("/tmp/nvidia-mps/control"));
        let dir = std::env::temp_dir().join(format!("rshmem-mps-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!mps_control_pipe(Some(dir.clone().into())).exists(), "an empty pipe directory counted as a daemon");
        std::fs::write(dir.join("control"), b"").unwrap();
        assert!(mps_control_pipe(Some(dir.clone().into())).exists(), "the daemon's control pipe was not found");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The runtime area's arrays, in order, never overlap, stay inside the reserved bytes, and
    /// every team's small-collective state lies inside its own arrays.
    #[test]
    fn area_arrays_are_disjoint_and_reserved() {
        for npes in [1, 2, 3, 8, 16, 64] {
            let a = Area::new(npes);
            let ends = [
                (a.sync_counters(), 8 * npes),
                (a.sync_consumed(), 8 * npes),
                (a.stream_flags(), 4 * npes),
                (a.stream_steps(), 4 * npes),
                (a.result(), 8),
                (a.tickets(), 512),
                (a.teams(), MAX_DEVICE_TEAMS * std::mem::size_of::<crate::abi::RshmemDeviceTeam>()),
                (a.coll_scratch(), COLL_SCRATCH),
                (a.stage(), STAGE_BYTES),
                (a.coll_calls(), 16 * LL_TEAMS),
                (a.coll_acks(), 8 * LL_TEAMS * (npes + 2)),
                (a.coll_ll(), LL_TEAMS * 4 * npes * LL_SLOT),
                (a.stream_chunks(), 4 * crate::cuda::coll::CHUNKS * npes),
            ];
            assert!(8 * npes <= a.sync_counters(), "peer_bases overlaps for {npes} PEs");
            for w in ends.windows(2) {
                assert!(w[0].0 + w[0].1 <= w[1].0, "{npes} PEs: array at {} ({} bytes) runs into {}", w[0].0, w[0].1, w[1].0);
            }
            let (last, len) = ends[ends.len() - 1];
            assert!(last + len <= a.reserved() && a.reserved().is_multiple_of(4096));
            assert_eq!(a.coll_ll() % 256, 0, "slots start on a line");
            for team in 0..LL_TEAMS {
                let r = a.coll_team_ranges(team);
                assert_eq!(r.len(), 3);
                assert!(r[0].0 >= a.coll_calls() && r[0].0 + r[0].1 <= a.coll_acks());
                assert!(r[1].0 >= a.coll_acks() && r[1].0 + r[1].1 <= a.coll_ll());
                assert!(r[2].0 >= a.coll_ll() && r[2].0 + r[2].1 <= a.reserved());
            }
            assert!(a.coll_team_ranges(LL_TEAMS).is_empty() && a.coll_team_ranges(MAX_DEVICE_TEAMS - 1).is_empty());
        }
    }
}
