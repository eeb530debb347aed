//! How PEs reach each other: node identity, the per-PE route table built once at init, and one
//! module per transport.
//!
//! Every host-side operation asks the route table first (the RMA and AMO entry points through
//! the shm table that mirrors it, `shm::Shm`; GPU-memory operations through `gpu_route`):
//! - `shm`: CPU memory of PEs on this host, through the shared mappings (inline and generic:
//!   the hot path makes no indirect call);
//! - `fabric`: PEs on other hosts, over libfabric, behind the `Transport` interface below;
//! - `p2p`: GPU memory of PEs on this host, through the peer mappings of their GPU heaps;
//! - `ibgda`: GPU memory reached by the GPU's own NIC queues (the host side: the choice at init);
//! - `proxy`: GPU memory on other hosts without IBGDA: host-side operations through the
//!   mailboxes of this PE's proxy (`src/proxy`), which posts through `Transport`.
//!
//! Host-side operations on GPU memory (`nvshmem_putmem`, AMOs, on-stream forms) reach a PE
//! through the `GpuTransport` that `gpu_path` picks for its GPU route.
//!
//! See docs/ARCHITECTURE.md.

pub mod fabric;
pub mod ibgda;
pub mod node;
pub mod p2p;
pub mod proxy;
pub mod shm;

use crate::bootstrap::Bootstrap;
use crate::cuda::kernels::{AmoOp, Kernels};
use crate::cuda::sys::CUstream;
use crate::error::{Error, Result};
use node::NodeId;

/// How this PE reaches another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// CPU memory on this host: through the shared mapping of its memory (`shm`).
    Shm,
    /// CPU memory on another host: through the network transport (`fabric`).
    Network,
    /// GPU memory on this host: through the peer mapping of its GPU heap (`p2p`).
    P2p,
    /// GPU memory reached by the GPU's own NIC queues (`ibgda`).
    Ibgda,
    /// GPU memory on another host, through this PE's proxy thread and the network transport.
    Proxy,
}

impl Route {
    /// The device state's byte for a GPU route (`RshmemDeviceState::routes`).
    pub fn device_byte(self) -> u8 {
        match self {
            Route::Ibgda => crate::abi::RSHMEM_ROUTE_IBGDA,
            Route::Proxy => crate::abi::RSHMEM_ROUTE_PROXY,
            Route::P2p | Route::Shm | Route::Network => crate::abi::RSHMEM_ROUTE_P2P,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Route::Shm => "shm",
            Route::Network => "network",
            Route::P2p => "p2p",
            Route::Ibgda => "ibgda",
            Route::Proxy => "proxy",
        }
    }
}

/// Routes to every PE (built once at init).
pub struct RouteTable {
    /// To each PE's CPU memory, as seen from this PE: `Shm` or `Network`.
    routes: Vec<Route>,
    /// To each PE's GPU memory (GPU mode only, else empty): `P2p`, `Ibgda` or `Proxy`, set by
    /// `set_gpu` once IBGDA was chosen or not.
    gpu: Vec<Route>,
    /// Host index of each PE (hosts numbered in order of their lowest PE).
    pub hosts: Vec<usize>,
    pub ids: Vec<NodeId>,
    me: usize,
}

impl RouteTable {
    /// Collective: exchanges node identities and decides each PE's route.
    pub fn build(boot: &dyn Bootstrap) -> Result<RouteTable> {
        let all = boot.allgather(&NodeId::current().to_bytes())?;
        let ids = all
            .iter()
            .enumerate()
            .map(|(pe, b)| {
                NodeId::from_bytes(b).ok_or_else(|| Error::bootstrap(format!("PE {pe} sent a malformed node identity ({} bytes)", b.len())))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RouteTable::from_ids(ids, boot.rank()))
    }

    pub fn from_ids(ids: Vec<NodeId>, me: usize) -> RouteTable {
        let hosts = node::host_of_each(&ids);
        let routes = hosts.iter().map(|h| if *h == hosts[me] { Route::Shm } else { Route::Network }).collect();
        RouteTable { routes, gpu: Vec::new(), hosts, ids, me }
    }

    /// The route to `pe`'s CPU memory (`pe` range-checked by the caller).
    #[inline(always)]
    pub fn route(&self, pe: usize) -> Route {
        self.routes[pe]
    }

    /// GPU mode: the routes to every PE's GPU memory (transport/ibgda.rs `plan_routes`).
    pub fn set_gpu(&mut self, gpu: Vec<Route>) {
        debug_assert_eq!(gpu.len(), self.routes.len());
        self.gpu = gpu;
    }

    /// The route to `pe`'s GPU memory (`pe` range-checked by the caller); `P2p` in a job
    /// without GPU memory, where nothing asks.
    #[inline]
    pub fn gpu_route(&self, pe: usize) -> Route {
        self.gpu.get(pe).copied().unwrap_or(Route::P2p)
    }

    /// Whether any PE of the job is on another host than some other (the same on every PE).
    pub fn spans_hosts(&self) -> bool {
        self.hosts.iter().any(|h| *h != 0)
    }

    pub fn host_count(&self) -> usize {
        self.hosts.iter().max().map_or(0, |h| h + 1)
    }

    /// One line per host, for the INFO log and rshmem-info: which PEs, and how we reach them.
    pub fn describe(&self, network: &str) -> Vec<String> {
        (0..self.host_count())
            .map(|h| {
                let pes: Vec<String> = (0..self.hosts.len()).filter(|p| self.hosts[*p] == h).map(|p| p.to_string()).collect();
                let first = self.hosts.iter().position(|x| *x == h).unwrap_or(0);
                let how = if h == self.hosts[self.me] { "shm (this host)".to_string() } else { network.to_string() };
                format!("host {h} {}: PEs {} via {how}", self.ids[first].describe(), pes.join(","))
            })
            .collect()
    }

    /// One line per PE pair from this PE, for the INFO log and `rshmem-info --routes`:
    /// "PE 0 -> PE 1: fabric(tcp;ofi_rxm)", and in GPU mode the GPU memory's route after it
    /// ("PE 0 -> PE 1: shm; GPU memory: p2p"). `network` is the transport's `describe()`.
    pub fn pair_lines(&self, network: &str) -> Vec<String> {
        let net = short_name(network);
        (0..self.routes.len())
            .map(|pe| {
                let how = match self.routes[pe] {
                    Route::Network => &net,
                    other => other.name(),
                };
                match self.gpu.get(pe) {
                    Some(g) => format!("PE {} -> PE {pe}: {how}; GPU memory: {}", self.me, g.name()),
                    None => format!("PE {} -> PE {pe}: {how}", self.me),
                }
            })
            .collect()
    }
}

/// "fabric(tcp;ofi_rxm)" from "fabric tcp;ofi_rxm on eth0 (…)"; "none" when no transport runs.
fn short_name(network: &str) -> String {
    let mut words = network.split_whitespace();
    match (words.next(), words.next()) {
        (Some(kind), Some(provider)) => format!("{kind}({provider})"),
        (Some(kind), None) => kind.to_string(),
        _ => "none (no network transport)".to_string(),
    }
}

/// Where a symmetric address lies: which segment, and the offset in it (the same on every PE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    Heap,
    Statics,
}

/// The element types network AMOs carry, as bit patterns in a u64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmoType {
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

/// The interface of a transport to PEs on other hosts. Operations name the remote memory by
/// segment and offset; local buffers are the caller's. Errors are unnamed: the C boundary (or
/// the proxy thread, which no C routine runs) names the routine.
pub trait Transport: Send + Sync {
    /// For logs: e.g. "fabric tcp;ofi_rxm on eth0 (10.77.0.0/24)".
    fn describe(&self) -> String;
    /// Writes `src` to `pe`; returns when `src` may be reused.
    fn put(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()>;
    /// A put whose receiver polls for it (a collective's message): as `put`, but no later
    /// `quiet` has to make it visible, so a transport that flushes writes at quiet skips it.
    fn put_message(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        self.put(pe, seg, off, src)
    }
    /// Reads from `pe` into `dst`; returns when the data is there.
    fn get(&self, pe: usize, seg: Segment, off: usize, dst: &mut [u8]) -> Result<()>;
    /// Starts writing `len` bytes at `src` to `pe`; complete at `quiet`. This default waits.
    ///
    /// # Safety
    /// `src` must stay valid and unchanged until the next `quiet` returns.
    unsafe fn put_nbi(&self, pe: usize, seg: Segment, off: usize, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: the caller's `len` bytes at `src` (see above).
        self.put(pe, seg, off, unsafe { std::slice::from_raw_parts(src, len) })
    }
    /// Starts reading `len` bytes from `pe` into `dst`; the data is there at `quiet`. This
    /// default waits.
    ///
    /// # Safety
    /// `dst` must stay valid, and not be touched, until the next `quiet` returns.
    unsafe fn get_nbi(&self, pe: usize, seg: Segment, off: usize, dst: *mut u8, len: usize) -> Result<()> {
        // SAFETY: the caller's `len` writable bytes at `dst` (see above).
        self.get(pe, seg, off, unsafe { std::slice::from_raw_parts_mut(dst, len) })
    }
    /// A non-fetching AMO (complete at quiet).
    #[allow(clippy::too_many_arguments)]
    fn amo(&self, pe: usize, seg: Segment, off: usize, op: crate::fabric::AtomicOp, ty: AmoType, value: u64) -> Result<()>;
    /// A fetching AMO; returns the old value's bits.
    #[allow(clippy::too_many_arguments)]
    fn fetch_amo(&self, pe: usize, seg: Segment, off: usize, op: crate::fabric::AtomicOp, ty: AmoType, value: u64) -> Result<u64>;
    /// compare_swap; returns the old value's bits.
    #[allow(clippy::too_many_arguments)]
    fn compare_swap(&self, pe: usize, seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64) -> Result<u64>;
    /// Orders earlier puts/AMOs to each PE before later ones.
    fn fence(&self) -> Result<()>;
    /// Completes every operation posted so far.
    fn quiet(&self) -> Result<()>;
    /// Drives the transport from this thread (where data moves only while someone does),
    /// then, with `block` > 0, sleeps until it has work or `block` has passed. How a thread
    /// waiting for memory that other hosts write spends its time. Default: sleeps `block`.
    fn progress(&self, block: std::time::Duration) {
        if !block.is_zero() {
            std::thread::sleep(block);
        }
    }
    /// A waiting thread's pause between two looks while it still polls (no sleep yet): by
    /// default a yield. The fabric's also notices a yield that lost the core for a time slice
    /// and then sleeps until the network has work, at most `max`, instead.
    fn pause(&self, _max: std::time::Duration) {
        std::thread::yield_now();
    }
}

/// When a host-side operation on GPU memory takes effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Complete when the call returns (`nvshmem_putmem`, AMOs).
    Now,
    /// Queued behind earlier host RMA on the library's stream; complete at the next quiet
    /// (`_nbi` forms).
    Queued,
    /// In order on the caller's stream (`_on_stream` forms): done when the stream passes it.
    Stream(CUstream),
}

/// Which way a transfer goes, relative to this PE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Put,
    Get,
}

/// A place in PE `pe`'s GPU heap: its offset (the same on every PE) and its address as mapped
/// in this process (usable only where the heap is mapped: P2P, and the same host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuAddr {
    pub pe: usize,
    pub off: usize,
    pub mapped: u64,
}

impl GpuAddr {
    /// The place `bytes` further on (negative: before).
    pub fn plus(self, bytes: isize) -> GpuAddr {
        GpuAddr { pe: self.pe, off: self.off.wrapping_add_signed(bytes), mapped: self.mapped.wrapping_add_signed(bytes as i64) }
    }
}

/// `nelems` elements of `size` bytes between PE memory at `remote` (element 0) and the local
/// buffer `local`, strides in bytes (negative: downward); `dir` says which way.
#[derive(Clone, Copy, Debug)]
pub struct Strided {
    pub dir: Direction,
    pub remote: GpuAddr,
    pub remote_stride: isize,
    pub local: *const u8,
    pub local_stride: isize,
    pub nelems: usize,
    pub size: usize,
}

/// What the GPU-memory transports use of this PE's own GPU (the runtime's GPU state).
pub trait LocalGpu {
    /// Makes this PE's context current on the calling thread.
    fn make_current(&self) -> Result<()>;
    /// The library's own stream (host RMA is queued there).
    fn stream(&self) -> CUstream;
    /// Blocks until the library's stream is idle.
    fn sync(&self) -> Result<()>;
    /// Copies `len` bytes between two unified addresses on the library's stream, complete on
    /// return (after everything queued before it).
    fn copy_now(&self, dst: u64, src: u64, len: usize) -> Result<()>;
    /// The library's kernels (loaded on first use).
    fn kernels(&self) -> Result<&Kernels>;
    /// The atomic kernel on the `size`-byte word at `mapped` (a heap word mapped here,
    /// aligned), complete on return; the old value's bits.
    #[allow(clippy::too_many_arguments)]
    fn amo_at(&self, mapped: u64, a: u64, b: u64, op: AmoOp, size: usize) -> Result<u64>;
    /// The mailboxes to PEs on other hosts (once this PE's proxy runs).
    fn mailboxes(&self) -> Option<&crate::proxy::gpu::Mailboxes>;
    /// The host's own IBGDA queues (where IBGDA runs and has them).
    fn ibgda_host(&self) -> Option<&crate::ibgda::host_rma::HostQueues>;
    /// Whether PE `pe`'s GPU heap is mapped in this process (the PE is on this host).
    fn heap_mapped(&self, pe: usize) -> bool;
}

/// Host-initiated operations on one PE's GPU memory; one implementation per GPU route
/// (`p2p`, `proxy`), picked by `gpu_path`. Local buffers (`src`, `dst`, `local`) are the
/// caller's, host or device memory, valid for the bytes named until the operation is complete
/// (`When`); the remote side was range-checked by the caller.
pub trait GpuTransport: Sync {
    /// Writes `bytes` from `src` to `to`.
    fn put(&self, gpu: &dyn LocalGpu, to: GpuAddr, src: *const u8, bytes: usize, when: When) -> Result<()>;
    /// Reads `bytes` from `from` into `dst`.
    fn get(&self, gpu: &dyn LocalGpu, from: GpuAddr, dst: *mut u8, bytes: usize, when: When) -> Result<()>;
    /// Stores the low `size` bytes of `value` at `to` (p_on_stream).
    fn p(&self, gpu: &dyn LocalGpu, to: GpuAddr, value: u64, size: usize, when: When) -> Result<()>;
    /// A strided transfer (`Strided`). This default: element by element, each complete
    /// before the next (an on-stream form first waits for its stream).
    fn strided(&self, gpu: &dyn LocalGpu, x: &Strided, when: When) -> Result<()> {
        let Strided { dir, remote, remote_stride, local, local_stride, nelems, size } = *x;
        wait_for_stream(when)?;
        for i in 0..nelems as isize {
            let (r, l) = (remote.plus(i * remote_stride), local.wrapping_offset(i * local_stride));
            match dir {
                Direction::Put => self.put(gpu, r, l, size, When::Now)?,
                Direction::Get => self.get(gpu, r, l.cast_mut(), size, When::Now)?,
            }
        }
        Ok(())
    }
    /// An atomic on the `size`-byte word at `at` (aligned), complete on return: the old value.
    #[allow(clippy::too_many_arguments)]
    fn amo(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64>;
    /// A signal (`AmoOp::Set` or `AmoOp::Add` of `value` on the 8-byte word at `at`).
    fn signal(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, value: u64, when: When) -> Result<()>;
}

/// The transport of host-side operations for a PE whose GPU memory's route is `route`.
pub fn gpu_path(route: Route) -> &'static dyn GpuTransport {
    match route {
        Route::Proxy => &proxy::ProxyHost,
        Route::Ibgda => &ibgda::IbgdaHost,
        Route::P2p | Route::Shm | Route::Network => &p2p::P2p,
    }
}

/// For transports whose host operations block: an on-stream form first waits for its stream,
/// so it stays in stream order.
pub fn wait_for_stream(when: When) -> Result<()> {
    match when {
        When::Stream(s) => crate::cuda::stream_synchronize(s).map_err(Error::from),
        When::Now | When::Queued => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(host: &str) -> NodeId {
        NodeId { hostname: host.into(), boot_id: "b".into(), netns: 1 }
    }

    #[test]
    fn routes_follow_hosts() {
        let ids = vec![id("a"), id("b"), id("a"), id("b")];
        let t = RouteTable::from_ids(ids.clone(), 1);
        assert_eq!((0..4).map(|p| t.route(p)).collect::<Vec<_>>(), vec![Route::Network, Route::Shm, Route::Network, Route::Shm]);
        assert!(t.spans_hosts());
        assert_eq!(t.host_count(), 2);
        let lines = t.describe("fabric X");
        assert!(lines[0].starts_with("host 0 a (boot b, netns 1): PEs 0,2 via fabric X"), "{lines:?}");
        assert!(lines[1].contains("PEs 1,3 via shm (this host)"), "{lines:?}");
        let pairs = t.pair_lines("fabric tcp;ofi_rxm on eth0 (10.77.0.0/24); mr_mode []");
        assert_eq!(
            pairs,
            ["PE 1 -> PE 0: fabric(tcp;ofi_rxm)", "PE 1 -> PE 1: shm", "PE 1 -> PE 2: fabric(tcp;ofi_rxm)", "PE 1 -> PE 3: shm"]
        );
        assert_eq!(t.pair_lines("")[0], "PE 1 -> PE 0: none (no network transport)");
        let one = RouteTable::from_ids(vec![id("a"), id("a")], 0);
        assert_eq!(one.pair_lines(""), ["PE 0 -> PE 0: shm", "PE 0 -> PE 1: shm"]);
        assert!(!one.spans_hosts());
        assert_eq!(one.route(1), Route::Shm);
    }

    /// GPU mode adds the GPU memory's route to each pair line; the device bytes follow abi.
    #[test]
    fn gpu_routes_join_the_table() {
        let mut t = RouteTable::from_ids(vec![id("a"), id("a"), id("b")], 0);
        assert_eq!(t.gpu_route(2), Route::P2p, "no GPU routes before set_gpu");
        t.set_gpu(vec![Route::P2p, Route::Ibgda, Route::Proxy]);
        assert_eq!((t.route(2), t.gpu_route(2)), (Route::Network, Route::Proxy));
        assert_eq!(
            t.pair_lines("fabric tcp;ofi_rxm on eth0"),
            [
                "PE 0 -> PE 0: shm; GPU memory: p2p",
                "PE 0 -> PE 1: shm; GPU memory: ibgda",
                "PE 0 -> PE 2: fabric(tcp;ofi_rxm); GPU memory: proxy"
            ]
        );
        use crate::abi::{RSHMEM_ROUTE_IBGDA, RSHMEM_ROUTE_P2P, RSHMEM_ROUTE_PROXY};
        let bytes: Vec<u8> = [Route::P2p, Route::Ibgda, Route::Proxy].iter().map(|r| r.device_byte()).collect();
        assert_eq!(bytes, [RSHMEM_ROUTE_P2P, RSHMEM_ROUTE_IBGDA, RSHMEM_ROUTE_PROXY]);
    }
}
