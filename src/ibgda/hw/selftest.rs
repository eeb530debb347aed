//! The IBGDA self-test at init, and the choice of route to PEs across the network.
//!
//! Before the device is trusted with the NIC, each PE runs, on its first QP toward the next
//! remote PE (ring order), an RDMA READ of the word it owns in that PE's heap (at
//! `heap_base + 8 * me`, so no two PEs touch the same word), an RDMA WRITE of a pattern, a READ
//! back, a fetch-add of 1, a READ of the sum, and a WRITE of the old value: each waited for with
//! a deadline, each checked. Every PE's outcome then travels through the bootstrap, so all PEs
//! take the same route. Along the ring every PE's QPs post, and every PE's heap registration
//! (key, dma-buf) is the target of its predecessor's test; RC QPs reach only other PEs, so
//! "to itself" is covered through the predecessor, not through a loopback QP.
//!
//! [`choose_remote_path`] turns the outcome into the route: IBGDA when it passed; otherwise the
//! proxy transport (the reason logged at WARN) unless `RSHMEM_IBGDA_NIC=hw` was set explicitly,
//! which makes a failure a named error.
//!
//! What runs where: the sequence, its checks and the decision run in CI against the software
//! HCA model on host memory, also with injected faults (a lost completion: the timeout reason;
//! corrupted landed data: the data reason). The operations are posted and polled by the host
//! on the QPs the device uses (`HostPost`), not by a GPU kernel. NEVER MET HARDWARE.

use std::fmt;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::ibgda::{IbgdaConfig, NicKind};

use super::post::{HostPost, Landing, OneOp, QueueIo, Target, Waited};

/// How long the whole self-test of one PE may take.
pub const SELF_TEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Why IBGDA is not trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Setting up the NIC failed (the set-up's error, which names what is missing).
    Setup(String),
    /// An operation got no completion before the deadline.
    Timeout { op: &'static str, after: Duration },
    /// An operation completed with an error CQE (in words).
    Completion(String),
    /// An operation completed, but the data is wrong.
    Data { op: &'static str, expected: u64, got: u64 },
}

/// A failed self-test: from which PE to which, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub from: usize,
    pub to: usize,
    pub reason: Reason,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (from, to) = (self.from, self.to);
        match &self.reason {
            Reason::Setup(m) => write!(f, "PE {from}: the NIC set-up failed: {m}"),
            Reason::Timeout { op, after } => write!(
                f,
                "PE {from} -> PE {to}: the self-test's {op} got no completion within {} ms (check that the port is up, \
                 the peers' GIDs/LIDs are reachable (RoCE: NVSHMEM_IB_GID_INDEX), and the MTU and routing match)",
                after.as_millis()
            ),
            Reason::Completion(m) => write!(f, "PE {from} -> PE {to}: the self-test failed: {m}"),
            Reason::Data { op, expected, got } => write!(
                f,
                "PE {from} -> PE {to}: the self-test's {op} completed but returned {got:#018x} instead of {expected:#018x} \
                 (GPU memory seen by the NIC is not the GPU's memory: check nvidia-peermem or dma-buf support)"
            ),
        }
    }
}

fn op_name(op: OneOp) -> &'static str {
    match op {
        OneOp::Write => "RDMA WRITE",
        OneOp::Read => "RDMA READ",
        OneOp::FetchAdd => "fetch-add",
    }
}

/// The self-test's steps on `hp` toward `t` (PE `to`'s heap word of PE `from`); landed values
/// are read from `land` through `land_io`. Leaves the word as it found it when it passes.
pub fn run(
    hp: &mut HostPost<'_>,
    land_io: &dyn QueueIo,
    t: &Target<'_>,
    land: &Landing,
    from: usize,
    to: usize,
    timeout: Duration,
) -> std::result::Result<(), Failure> {
    let start = Instant::now();
    let deadline = start + timeout;
    let fail = |reason| Failure { from, to, reason };
    let step = |hp: &mut HostPost<'_>, op: OneOp, value: u64| -> std::result::Result<u64, Failure> {
        let waited = hp.one_op(op, t, value, land, deadline, from as u32).map_err(|e| fail(Reason::Setup(e.message)))?;
        match waited {
            Waited::Done => {}
            Waited::ErrorCqe(e) => return Err(fail(Reason::Completion(e.message))),
            Waited::TimedOut => return Err(fail(Reason::Timeout { op: op_name(op), after: start.elapsed() })),
        }
        let mut b = [0u8; 8];
        land_io.read(land.addr, &mut b).map_err(|e| fail(Reason::Setup(e.message)))?;
        Ok(u64::from_le_bytes(b))
    };
    let check =
        |op: &'static str, expected: u64, got: u64| if got == expected { Ok(()) } else { Err(fail(Reason::Data { op, expected, got })) };
    let old = step(hp, OneOp::Read, 0)?;
    let pattern = 0x5253_4d45_0000_0000 | ((from as u64 & 0xffff) << 16) | (to as u64 & 0xffff);
    step(hp, OneOp::Write, pattern)?;
    check("RDMA READ after an RDMA WRITE", pattern, step(hp, OneOp::Read, 0)?)?;
    check("fetch-add", pattern, step(hp, OneOp::FetchAdd, 1)?)?;
    check("RDMA READ after a fetch-add", pattern + 1, step(hp, OneOp::Read, 0)?)?;
    step(hp, OneOp::Write, old)?;
    Ok(())
}

/// One PE's outcome for the bootstrap exchange: empty when it passed, else the reason in words.
pub fn encode(outcome: &std::result::Result<(), String>) -> Vec<u8> {
    match outcome {
        Ok(()) => Vec::new(),
        // Bounded: a reason is a sentence or two.
        Err(m) => m.as_bytes()[..m.len().min(2048)].to_vec(),
    }
}

/// Every PE's outcome (as [`encode`] wrote them) as one: the first failure, naming its PE.
pub fn combine(all: &[Vec<u8>]) -> std::result::Result<(), String> {
    match all.iter().find(|b| !b.is_empty()) {
        None => Ok(()),
        Some(b) => Err(String::from_utf8_lossy(b).into_owned()),
    }
}

/// The route device operations to PEs across the network take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemotePath {
    /// GPU threads post to the NIC themselves.
    Ibgda,
    /// The host proxy transport carries them; the reason IBGDA is not used.
    Proxy(String),
}

/// The decision from the settings and the job's self-test outcome (`Err`: the first failure,
/// in words). A failure falls back to the proxy transport (logged at INFO) when
/// `RSHMEM_IBGDA_NIC` was left to `auto`; it is an error when `hw` (or `model`) was asked for.
pub fn choose_remote_path(config: &IbgdaConfig, self_test: &std::result::Result<(), String>) -> Result<RemotePath> {
    let why = match self_test {
        Ok(()) => return Ok(RemotePath::Ibgda),
        Err(why) => why,
    };
    match (config.nic, config.nic_explicit) {
        (NicKind::Hardware, false) => {
            crate::log::info(&format!(
                "IBGDA is not used: {why}. Device operations to PEs on other hosts go through the proxy transport instead \
                 (fix the cause to get IBGDA; RSHMEM_IBGDA_NIC=hw makes this an error)"
            ));
            Ok(RemotePath::Proxy(why.clone()))
        }
        (NicKind::Hardware, true) => Err(Error::new(
            ErrorKind::Unsupported,
            "nvshmem_init",
            format!(
                "IBGDA on the ConnectX failed its check at init: {why}. RSHMEM_IBGDA_NIC=hw was set, so rshmem stops instead of \
                 using the proxy transport: fix the cause, or unset RSHMEM_IBGDA_NIC (auto) to fall back to the proxy"
            ),
        )),
        (NicKind::Model, _) => Err(Error::new(
            ErrorKind::System,
            "nvshmem_init",
            format!("IBGDA on the software HCA model (RSHMEM_IBGDA_NIC=model) failed: {why}"),
        )),
    }
}

/// The route from this PE to each other PE, one line each (`remote[p]`: reached through the
/// network; the others by loads and stores).
pub fn pair_lines(me: usize, remote: &[bool], path: &RemotePath) -> Vec<String> {
    (0..remote.len())
        .filter(|&p| p != me)
        .map(|p| match (remote[p], path) {
            (false, _) => format!("PE {me} -> PE {p}: loads and stores (P2P: same host, peer access)"),
            (true, RemotePath::Ibgda) => format!("PE {me} -> PE {p}: IBGDA (every PE's self-test passed)"),
            (true, RemotePath::Proxy(why)) => format!("PE {me} -> PE {p}: proxy transport, because {why}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::post::HostIo;
    use super::*;
    use crate::ibgda::abi::QpState;
    use crate::ibgda::model::host::{new_queues, AlignedBuf, QpParams, QueueMem};
    use crate::ibgda::model::{Fabric, Fault, HostMemory, ModelConfig, Nic};
    use crate::ibgda::table;
    use std::sync::Arc;

    const HEAP_KEY: u32 = 0x31;
    const LAND_KEY: u32 = 0x32;

    /// PE 0 with one QP toward PE 1, both heaps and PE 0's landing slot on one model fabric.
    struct Pair {
        nic: Option<Nic>,
        q: QpState,
        _mem: QueueMem,
        heap1: AlignedBuf,
        land: AlignedBuf,
    }

    fn pair(fault: Fault) -> Pair {
        let (heap1, land) = (AlignedBuf::new(4096), AlignedBuf::new(64));
        let fabric = Fabric::new();
        fabric.register(1, HEAP_KEY, heap1.addr(), 4096);
        fabric.register(0, LAND_KEY, land.addr(), 64);
        let (q, mem) = new_queues(QpParams { qpn: 0x44, peer_pe: 1, log_nwqes: 4, signal_every: 4, ..Default::default() });
        let nic = Nic::start(0, fabric, Arc::new(HostMemory), ModelConfig { fault, ..Default::default() });
        // SAFETY: the queues in `mem` outlive the NIC (dropped first, in `self_test`).
        unsafe { nic.attach_config(q, true) };
        Pair { nic: Some(nic), q, _mem: mem, heap1, land }
    }

    /// PE 0's self-test toward PE 1's heap word 0 (which holds `before`); the outcome and the
    /// word afterwards.
    fn self_test(fault: Fault, before: u64, timeout: Duration) -> (std::result::Result<(), Failure>, u64) {
        let mut p = pair(fault);
        let word = p.heap1.addr();
        // SAFETY: `word` is the first 8 bytes of heap1, alive here.
        unsafe { std::ptr::write_volatile(word as *mut u64, before) };
        // SAFETY: every address used is host memory of `p`, alive in this function.
        let io = unsafe { HostIo::new() };
        let ring = p.q.bf_reg;
        let mut hp = HostPost { queues: &io, records: &io, q: &mut p.q, ring };
        let t = Target { raddr: word, rkey: HEAP_KEY, av: None };
        let land = Landing { addr: p.land.addr(), lkey: LAND_KEY };
        let r = run(&mut hp, &io, &t, &land, 0, 1, timeout);
        drop(p.nic.take());
        // SAFETY: as above; the NIC has stopped.
        (r, unsafe { std::ptr::read_volatile(word as *const u64) })
    }

    #[test]
    fn self_test_passes_on_the_model_and_leaves_the_word_as_it_was() {
        let (r, after) = self_test(Fault::None, 0x1234, SELF_TEST_TIMEOUT);
        assert_eq!(r, Ok(()));
        assert_eq!(after, 0x1234, "the old value is written back");
    }

    #[test]
    fn a_lost_completion_is_a_timeout_reason() {
        let (r, _) = self_test(Fault::DropCompletions, 0, Duration::from_millis(300));
        let f = r.unwrap_err();
        assert!(matches!(f.reason, Reason::Timeout { op: "RDMA READ", .. }), "{f:?}");
        let m = f.to_string();
        assert!(m.starts_with("PE 0 -> PE 1: the self-test's RDMA READ got no completion within"), "{m}");
        assert!(m.contains("NVSHMEM_IB_GID_INDEX"), "{m}");
    }

    #[test]
    fn corrupted_landed_data_is_a_data_reason() {
        let (r, _) = self_test(Fault::CorruptLanded, 0, SELF_TEST_TIMEOUT);
        let f = r.unwrap_err();
        let expected = 0x5253_4d45_0000_0001;
        assert_eq!(f.reason, Reason::Data { op: "RDMA READ after an RDMA WRITE", expected, got: 0xa5a5_a5a5_a5a5_a5a5 });
        let m = f.to_string();
        assert!(m.contains("returned 0xa5a5a5a5a5a5a5a5 instead of 0x52534d4500000001") && m.contains("nvidia-peermem"), "{m}");
    }

    #[test]
    fn a_bad_key_is_a_completion_reason_naming_the_operation() {
        let mut p = pair(Fault::None);
        // SAFETY: host memory of `p`, alive in this test.
        let io = unsafe { HostIo::new() };
        let ring = p.q.bf_reg;
        let mut hp = HostPost { queues: &io, records: &io, q: &mut p.q, ring };
        let t = Target { raddr: p.heap1.addr(), rkey: HEAP_KEY + 7, av: None };
        let f = run(&mut hp, &io, &t, &Landing { addr: p.land.addr(), lkey: LAND_KEY }, 0, 1, SELF_TEST_TIMEOUT).unwrap_err();
        drop(p.nic.take());
        let m = f.to_string();
        assert!(
            m.starts_with("PE 0 -> PE 1: the self-test failed:") && m.contains("RDMA READ") && m.contains("remote access error"),
            "{m}"
        );
    }

    #[test]
    fn outcomes_travel_and_the_first_failure_wins() {
        let all = vec![encode(&Ok(())), encode(&Err("PE 1 -> PE 2: lost".into())), encode(&Err("PE 2 -> PE 0: bad".into()))];
        assert_eq!(combine(&all), Err("PE 1 -> PE 2: lost".to_string()));
        assert_eq!(combine(&[encode(&Ok(())), encode(&Ok(()))]), Ok(()));
        assert_eq!(encode(&Err("x".repeat(5000))).len(), 2048, "a reason is bounded");
    }

    #[test]
    fn decision_table_auto_falls_back_explicit_hw_stops() {
        let cfg = |nic: &str| IbgdaConfig::parse(table(&[(crate::env::IBGDA_NIC, nic)])).unwrap();
        let failed: std::result::Result<(), String> = Err("PE 0 -> PE 1: lost".into());
        for nic in ["auto", "hw", "model"] {
            assert_eq!(choose_remote_path(&cfg(nic), &Ok(())).unwrap(), RemotePath::Ibgda, "{nic}");
        }
        assert_eq!(choose_remote_path(&cfg("auto"), &failed).unwrap(), RemotePath::Proxy("PE 0 -> PE 1: lost".into()));
        // The default is auto.
        let default = IbgdaConfig::parse(table(&[])).unwrap();
        assert_eq!(choose_remote_path(&default, &failed).unwrap(), RemotePath::Proxy("PE 0 -> PE 1: lost".into()));
        let e = choose_remote_path(&cfg("hw"), &failed).unwrap_err().to_string();
        assert!(e.starts_with("nvshmem_init: IBGDA on the ConnectX failed its check at init: PE 0 -> PE 1: lost."), "{e}");
        assert!(e.contains("RSHMEM_IBGDA_NIC=hw was set") && e.contains("unset RSHMEM_IBGDA_NIC (auto)"), "{e}");
        let e = choose_remote_path(&cfg("model"), &failed).unwrap_err().to_string();
        assert!(e.contains("software HCA model") && e.contains("lost"), "{e}");
    }

    #[test]
    fn pair_lines_say_the_route_and_why() {
        let remote = [false, false, true];
        let p = pair_lines(0, &remote, &RemotePath::Proxy("PE 2: the NIC set-up failed: no RDMA device".into()));
        assert_eq!(
            p,
            vec![
                "PE 0 -> PE 1: loads and stores (P2P: same host, peer access)".to_string(),
                "PE 0 -> PE 2: proxy transport, because PE 2: the NIC set-up failed: no RDMA device".to_string(),
            ]
        );
        assert_eq!(
            pair_lines(1, &[true, false], &RemotePath::Ibgda),
            vec!["PE 1 -> PE 0: IBGDA (every PE's self-test passed)".to_string()]
        );
    }
}
