//! How PEs reach each other: node identity, the per-PE route table built once at init, and the
//! interface of a network transport.
//!
//! Every host-side operation asks the route table first (through `State::remote` and the RMA
//! entry points): PEs on this host share memory and are reached through the shared mappings
//! (the shm path, inline in `runtime`, unchanged in speed); PEs on other hosts are reached
//! through the network transport, behind `Transport`. See docs/ARCHITECTURE.md.

pub mod fabric;
pub mod node;
pub mod shm;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use node::NodeId;

/// How this PE reaches another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Same host: through the shared mapping of its memory.
    Shm,
    /// Another host: through the network transport.
    Network,
}

/// Routes to every PE, the same table on every PE (built from one allgather at init).
pub struct RouteTable {
    routes: Vec<Route>,
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
        RouteTable { routes, hosts, ids, me }
    }

    /// The route to `pe` (which the caller has range-checked).
    #[inline(always)]
    pub fn route(&self, pe: usize) -> Route {
        self.routes[pe]
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
    /// "PE 0 -> PE 1: fabric(tcp;ofi_rxm)". `network` is the transport's `describe()`.
    pub fn pair_lines(&self, network: &str) -> Vec<String> {
        let net = short_name(network);
        (0..self.routes.len())
            .map(|pe| {
                let how = match self.routes[pe] {
                    Route::Shm => "shm",
                    Route::Network => &net,
                };
                format!("PE {} -> PE {pe}: {how}", self.me)
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
}
