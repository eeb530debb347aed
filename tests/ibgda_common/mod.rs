//! Shared by the IBGDA integration tests: compiling the C++ sources in ctest/ibgda with the
//! system C++ compiler (`$CXX`, else `c++`), loading the host build of the device posting code,
//! and a small "world" of PEs in one process, each with a heap, QPs and a model NIC.
#![allow(dead_code, unused_macros)]

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use rshmem::ibgda::abi::{PeState, PeerState, QpState};
use rshmem::ibgda::dc::{dct_table, DcTargets};
use rshmem::ibgda::model::host::{new_queues, AlignedBuf, QpParams, QueueMem};
use rshmem::ibgda::model::{Fabric, HostMemory, ModelConfig, Nic};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles `src` (relative to the repo) with `args` into `out_name` under the test temp dir.
pub fn compile(src: &str, out_name: &str, args: &[&str]) -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out_name);
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let status = Command::new(&cxx)
        .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(format!("-I{}", repo().display()))
        .args(args)
        .arg(repo().join(src))
        .arg("-o")
        .arg(&tmp)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C++ compiler `{cxx}` (install g++): {e}"));
    assert!(status.success(), "compiling {src} failed");
    std::fs::rename(&tmp, &out).unwrap();
    out
}

/// The host build of device/ibgda/ibgda_post.h (ctest/ibgda/harness.cpp), loaded once.
pub struct Harness {
    handle: *mut libc::c_void,
}
// SAFETY: the handle is only used to look up symbols; the library stays loaded for the process.
unsafe impl Send for Harness {}
// SAFETY: as above.
unsafe impl Sync for Harness {}

impl Harness {
    pub fn get() -> &'static Harness {
        static H: OnceLock<Harness> = OnceLock::new();
        H.get_or_init(|| {
            let so = compile("ctest/ibgda/harness.cpp", "libibgda_harness.so", &["-fPIC", "-shared"]);
            let path = CString::new(so.to_str().unwrap()).unwrap();
            // SAFETY: dlopen of a library we just built; it has no constructors with side effects.
            let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            assert!(!handle.is_null(), "dlopen of the harness failed");
            Harness { handle }
        })
    }
    /// The address of an exported symbol.
    pub fn sym(&self, name: &str) -> *mut libc::c_void {
        let c = CString::new(name).unwrap();
        // SAFETY: handle is a live dlopen handle.
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        assert!(!p.is_null(), "harness has no symbol {name}");
        p
    }
}

/// Typed access to a harness function: `hfn!(name: fn(args) -> ret)`.
#[macro_export]
macro_rules! hfn {
    ($name:ident : fn($($arg:ty),*) -> $ret:ty) => {{
        let p = $crate::ibgda_common::Harness::get().sym(stringify!($name));
        // SAFETY: the harness defines this symbol with exactly this C signature.
        unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn($($arg),*) -> $ret>(p) }
    }};
}

pub const HEAP_KEY: u32 = 0x1000;
pub const FETCH_KEY: u32 = 0x2000;

/// How a world's PEs reach each other.
#[derive(Clone, Copy, Debug)]
pub enum Net {
    /// `num_rc` RC QPs toward every PE.
    Rc { num_rc: usize },
    /// DC: `num_dci` initiators per PE chosen by `map_by` (abi::MAP_BY_*), `num_dct` targets per
    /// PE, address vectors of `av_bytes` (16: half, 48: extended).
    Dc { num_dci: usize, num_dct: usize, map_by: u32, av_bytes: u32 },
}

/// One PE: heap, fetch buffer, its QPs (RC: toward every PE; DC: its DCIs), peers table, DCT
/// table, QP-used bitmap and the device-visible state.
pub struct Pe {
    pub heap: AlignedBuf,
    pub fetch: AlignedBuf,
    pub qps: Vec<QpState>,
    pub queues: Vec<QueueMem>,
    pub peers: Vec<PeerState>,
    pub dcts: Vec<u32>,
    pub used: Vec<u64>,
    /// This PE's DC targets (DC worlds).
    pub targets: Option<DcTargets>,
    pub state: Box<PeState>,
}

impl Pe {
    pub fn st(&self) -> *mut PeState {
        &*self.state as *const PeState as *mut PeState
    }
    pub fn heap_ptr(&self, off: usize) -> *mut u8 {
        (self.heap.addr() as usize + off) as *mut u8
    }
    /// RC QP `i` toward `pe`.
    pub fn qp(&self, pe: usize, i: usize) -> *mut QpState {
        let n = self.state.num_rc_per_pe as usize;
        &self.qps[pe * n + i] as *const QpState as *mut QpState
    }
    /// DCI `i`.
    pub fn dci(&self, i: usize) -> *mut QpState {
        assert_eq!(self.state.num_rc_per_pe, 0, "not a DC world");
        &self.qps[i] as *const QpState as *mut QpState
    }
    /// The QP-used bitmap as the device left it.
    pub fn used_bits(&self) -> Vec<u64> {
        // SAFETY: reading words of our own live bitmap; the device side updates them atomically.
        self.used.iter().map(|w| unsafe { std::ptr::read_volatile(w) }).collect()
    }
    pub fn heap_bytes(&self, off: usize, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        // SAFETY: the range is inside the heap (callers use offsets below heap size).
        unsafe { std::ptr::copy(self.heap_ptr(off), v.as_mut_ptr(), len) };
        v
    }
    pub fn heap_u64(&self, off: usize) -> u64 {
        u64::from_le_bytes(self.heap_bytes(off, 8).try_into().unwrap())
    }
    pub fn write_heap(&self, off: usize, data: &[u8]) {
        // SAFETY: as above.
        unsafe { std::ptr::copy(data.as_ptr(), self.heap_ptr(off), data.len()) };
    }
}

/// `npes` PEs in this process, one model NIC per PE.
pub struct World {
    // NICs first: they must stop before the memory they serve is freed.
    pub nics: Vec<Nic>,
    pub fabric: Arc<Fabric>,
    pub pes: Vec<Pe>,
}

impl World {
    /// RC QPs everywhere.
    pub fn new(npes: usize, heap: usize, num_rc: usize, p: QpParams, cfg: ModelConfig) -> World {
        World::build(npes, heap, Net::Rc { num_rc }, p, cfg)
    }

    pub fn build(npes: usize, heap: usize, net: Net, p: QpParams, cfg: ModelConfig) -> World {
        let fabric = Fabric::new();
        let targets: Vec<DcTargets> = match net {
            Net::Dc { num_dct, .. } => (0..npes).map(|pe| DcTargets::model(pe, num_dct as u32)).collect(),
            Net::Rc { .. } => Vec::new(),
        };
        for (pe, t) in targets.iter().enumerate() {
            for &d in &t.dcts {
                fabric.add_dct(t.lid, d, pe as u32, t.key);
            }
        }
        let mut pes = Vec::new();
        for me in 0..npes {
            let heap_buf = AlignedBuf::new(heap);
            let fetch = AlignedBuf::new(64 * 8 + 8); // 64 slots and the discard slot
            fabric.register(me as u32, HEAP_KEY + me as u32, heap_buf.addr(), heap as u64);
            fabric.register(me as u32, FETCH_KEY + me as u32, fetch.addr(), fetch.len() as u64);
            let mut qps = Vec::new();
            let mut queues = Vec::new();
            let mut st = Box::new(PeState::zeroed());
            match net {
                Net::Rc { num_rc } => {
                    for peer in 0..npes {
                        for i in 0..num_rc {
                            let qpn = 0x1000 * (me as u32 + 1) + 0x10 * peer as u32 + i as u32;
                            let (s, m) = new_queues(QpParams { qpn, peer_pe: peer as u32, ..p });
                            qps.push(s);
                            queues.push(m);
                        }
                    }
                    st.num_rc_per_pe = num_rc as u32;
                }
                Net::Dc { num_dci, num_dct, map_by, .. } => {
                    for i in 0..num_dci {
                        // DCI numbers are per NIC: every PE's start at 0x100.
                        let (s, m) = new_queues(QpParams { qpn: 0x100 + i as u32, dci: true, ..p });
                        qps.push(s);
                        queues.push(m);
                    }
                    st.num_dci = num_dci as u32;
                    st.dci_map_by = map_by;
                    st.num_dct = num_dct as u32;
                }
            }
            st.my_pe = me as u32;
            st.npes = npes as u32;
            st.num_qps = qps.len() as u32;
            st.heap_lkey = HEAP_KEY + me as u32;
            st.heap_base = heap_buf.addr();
            st.heap_size = heap as u64;
            st.fetch_buf = fetch.addr();
            st.fetch_lkey = FETCH_KEY + me as u32;
            st.fetch_slots = 64;
            let used = vec![0u64; qps.len().div_ceil(64)];
            let mine = targets.get(me).cloned();
            pes.push(Pe {
                heap: heap_buf,
                fetch,
                qps,
                queues,
                peers: Vec::new(),
                dcts: dct_table(&targets),
                used,
                targets: mine,
                state: st,
            });
        }
        let bases: Vec<u64> = pes.iter().map(|p| p.heap.addr()).collect();
        for pe in pes.iter_mut() {
            pe.peers = (0..npes)
                .map(|j| {
                    let mut ps = PeerState::zeroed();
                    ps.heap_base = bases[j];
                    ps.heap_size = heap as u64;
                    ps.rkey = HEAP_KEY + j as u32;
                    if let Net::Dc { av_bytes, .. } = net {
                        (ps.av, ps.av_size) = targets[j].av(av_bytes == 48);
                    }
                    ps
                })
                .collect();
            let qps = pe.qps.as_ptr() as u64;
            if let Net::Dc { .. } = net {
                pe.state.dci_qps = qps;
                pe.state.dcts = pe.dcts.as_ptr() as u64;
            } else {
                pe.state.rc_qps = qps;
            }
            pe.state.peers = pe.peers.as_ptr() as u64;
            pe.state.qp_used = pe.used.as_ptr() as u64;
        }
        let mut nics = Vec::new();
        for (me, pe) in pes.iter().enumerate() {
            let nic = Nic::start(me as u32, fabric.clone(), Arc::new(HostMemory), cfg);
            for q in pe.qps.iter() {
                // SAFETY: the descriptors and their queues live in `pes`, which outlives `nics`
                // (field order of World), and the Vec is never resized after this point.
                unsafe { nic.attach(q as *const QpState as *mut QpState) };
            }
            nics.push(nic);
        }
        World { nics, fabric, pes }
    }

    /// The PE owning DCT `dct` at LID `lid` (what an error message names).
    pub fn dct_owner(&self, lid: u16, dct: u32) -> Option<u32> {
        self.fabric.dct(lid, dct).map(|d| d.pe)
    }
}

/// The AMO operations, numbered as `amo_op` in device/ibgda/ibgda_post.h.
pub mod amo {
    pub const FETCH_ADD: u32 = 0;
    pub const ADD: u32 = 1;
    pub const COMPARE_SWAP: u32 = 2;
    pub const SWAP: u32 = 3;
    pub const FETCH: u32 = 4;
    pub const SET: u32 = 5;
    pub const FETCH_AND: u32 = 6;
    pub const AND: u32 = 7;
    pub const FETCH_OR: u32 = 8;
    pub const OR: u32 = 9;
    pub const FETCH_XOR: u32 = 10;
    pub const XOR: u32 = 11;
}

/// Expected (old value returned, new memory value) of AMO `op`.
pub fn amo_model(op: u32, old: u64, v: u64, c: u64, ones: u64) -> (u64, u64) {
    use amo::*;
    let new = match op {
        FETCH_ADD | ADD => old.wrapping_add(v) & ones,
        COMPARE_SWAP if old == c => v,
        COMPARE_SWAP => old,
        SWAP | SET => v,
        FETCH => old,
        FETCH_AND | AND => old & v,
        FETCH_OR | OR => old | v,
        FETCH_XOR | XOR => old ^ v,
        _ => unreachable!(),
    };
    (old, new)
}

/// Whether AMO `op` returns the old value.
pub fn amo_fetches(op: u32) -> bool {
    use amo::*;
    matches!(op, FETCH_ADD | COMPARE_SWAP | SWAP | FETCH | FETCH_AND | FETCH_OR | FETCH_XOR)
}

/// The fence tests' data: round i writes A_i (64 bytes at heap offset 64 i of `pe`) to a place,
/// then, after a fence, B_i (at 8192 + 64 i) to the same place; B_i must be what stays.
pub fn fence_sources(pe: &Pe, rounds: usize) {
    for i in 0..rounds {
        pe.write_heap(i * 64, &[0xa0 | (i as u8 & 0xf); 64]);
        pe.write_heap(8192 + i * 64, &fenced_value(i));
    }
}
pub fn fenced_value(round: usize) -> Vec<u8> {
    vec![0xb0 | (round as u8 & 0xf); 64]
}

/// After a fence test: quiet has returned, so every round's place (on PE `target_of(round)`, at
/// heap offset 32768 + 64 round) must hold B_round, and the NIC saw a fenced WQE per round.
pub fn assert_fenced(w: &World, rounds: usize, target_of: impl Fn(usize) -> usize) {
    for i in 0..rounds {
        let got = w.pes[target_of(i)].heap_bytes(32768 + i * 64, 64);
        assert_eq!(got, fenced_value(i), "round {i}: the write after the fence was overtaken");
    }
    assert!(w.nics[0].stats().fenced_wqes.load(Ordering::Relaxed) >= rounds as u64);
}

/// No protocol trouble seen by any NIC: doorbells agreed with their records and QPs, no CQ
/// overflowed, no error CQE.
pub fn assert_clean(w: &World) {
    for n in &w.nics {
        let s = n.stats();
        assert_eq!(s.bad_doorbells.load(Ordering::Relaxed), 0, "a doorbell disagreed with its doorbell record or qpn");
        assert_eq!(s.cq_full_waits.load(Ordering::Relaxed), 0, "the CQ overflowed (hardware would fail)");
        assert_eq!(s.error_cqes.load(Ordering::Relaxed), 0, "error CQEs");
    }
}

/// Deterministic test bytes.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Ends the test process with a message if the guard is still alive after `secs`: the posting
/// code spins by design, so a protocol bug shows up as a hang; this turns it into a failure.
pub struct Watchdog(Arc<std::sync::atomic::AtomicBool>);

pub fn watchdog(secs: u64, what: &'static str) -> Watchdog {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        while t0.elapsed().as_secs() < secs {
            if d.load(std::sync::atomic::Ordering::Acquire) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // Straight to stderr: the test harness's capture would swallow eprintln! on exit.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("{what}: no progress after {secs} s (a lost doorbell, a stuck completion or a ring overrun)\n").as_bytes(),
        );
        std::process::exit(101);
    });
    Watchdog(done)
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// nvcc from CUDA_HOME, PATH, or the pip wheel layout in /opt/cuda13.
pub fn find_nvcc() -> Option<std::path::PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(h) = std::env::var("CUDA_HOME") {
        candidates.push(std::path::PathBuf::from(h).join("bin/nvcc"));
    }
    if let Ok(path) = std::env::var("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|p| p.join("nvcc")));
    }
    candidates.push("/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc".into());
    candidates.into_iter().find(|p| p.is_file())
}
