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
//! - GPU memory on other hosts without IBGDA: this PE's proxy thread (`src/proxy`), which posts
//!   through `Transport`.
//!
//! See docs/ARCHITECTURE.md.

pub mod fabric;
pub mod ibgda;
pub mod node;
pub mod p2p;
pub mod shm;

use crate::bootstrap::Bootstrap;
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
/// segment and offset; local buffers are the caller's. Errors name the routine.
pub trait Transport: Send + Sync {
    /// For logs: e.g. "fabric tcp;ofi_rxm on eth0 (10.77.0.0/24)".
    fn describe(&self) -> String;
    /// Writes `src` to `pe`; returns when `src` may be reused.
    fn put(&self, pe: usize, seg: Segment, off: usize, src: &[u8], routine: &'static str) -> Result<()>;
    /// A put whose receiver polls for it (a collective's message): as `put`, but no later
    /// `quiet` has to make it visible, so a transport that flushes writes at quiet skips it.
    fn put_message(&self, pe: usize, seg: Segment, off: usize, src: &[u8], routine: &'static str) -> Result<()> {
        self.put(pe, seg, off, src, routine)
    }
    /// Reads from `pe` into `dst`; returns when the data is there.
    fn get(&self, pe: usize, seg: Segment, off: usize, dst: &mut [u8], routine: &'static str) -> Result<()>;
    /// Starts writing `len` bytes at `src` to `pe`; complete at `quiet`. This default waits.
    ///
    /// # Safety
    /// `src` must stay valid and unchanged until the next `quiet` returns.
    unsafe fn put_nbi(&self, pe: usize, seg: Segment, off: usize, src: *const u8, len: usize, routine: &'static str) -> Result<()> {
        // SAFETY: the caller's `len` bytes at `src` (see above).
        self.put(pe, seg, off, unsafe { std::slice::from_raw_parts(src, len) }, routine)
    }
    /// Starts reading `len` bytes from `pe` into `dst`; the data is there at `quiet`. This
    /// default waits.
    ///
    /// # Safety
    /// `dst` must stay valid, and not be touched, until the next `quiet` returns.
    unsafe fn get_nbi(&self, pe: usize, seg: Segment, off: usize, dst: *mut u8, len: usize, routine: &'static str) -> Result<()> {
        // SAFETY: the caller's `len` writable bytes at `dst` (see above).
        self.get(pe, seg, off, unsafe { std::slice::from_raw_parts_mut(dst, len) }, routine)
    }
    /// A non-fetching AMO (complete at quiet).
    #[allow(clippy::too_many_arguments)]
    fn amo(
        &self,
        pe: usize,
        seg: Segment,
        off: usize,
        op: crate::fabric::AtomicOp,
        ty: AmoType,
        value: u64,
        routine: &'static str,
    ) -> Result<()>;
    /// A fetching AMO; returns the old value's bits.
    #[allow(clippy::too_many_arguments)]
    fn fetch_amo(
        &self,
        pe: usize,
        seg: Segment,
        off: usize,
        op: crate::fabric::AtomicOp,
        ty: AmoType,
        value: u64,
        routine: &'static str,
    ) -> Result<u64>;
    /// compare_swap; returns the old value's bits.
    #[allow(clippy::too_many_arguments)]
    fn compare_swap(&self, pe: usize, seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64, routine: &'static str) -> Result<u64>;
    /// Orders earlier puts/AMOs to each PE before later ones.
    fn fence(&self, routine: &'static str) -> Result<()>;
    /// Completes every operation posted so far.
    fn quiet(&self, routine: &'static str) -> Result<()>;
    /// Drives the transport from this thread (where data moves only while someone does),
    /// then, with `block` > 0, sleeps until it has work or `block` has passed. How a thread
    /// waiting for memory that other hosts write spends its time. Default: sleeps `block`.
    fn progress(&self, block: std::time::Duration) {
        if !block.is_zero() {
            std::thread::sleep(block);
        }
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
