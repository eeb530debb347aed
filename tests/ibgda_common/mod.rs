//! Shared by the IBGDA integration tests: compiling the C++ sources in ctest/ibgda with the
//! system C++ compiler (`$CXX`, else `c++`), loading the host build of the device posting code,
//! and a small "world" of PEs in one process, each with a heap, QPs and a model NIC.
#![allow(dead_code, unused_macros)]

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use rshmem::ibgda::abi::{PeState, PeerState, QpState};
use rshmem::ibgda::host::{new_queues, AlignedBuf, QpParams, QueueMem};
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

/// One PE: heap, fetch buffer, QPs toward every PE, peers table and the device-visible state.
pub struct Pe {
    pub heap: AlignedBuf,
    pub fetch: AlignedBuf,
    pub qps: Vec<QpState>,
    pub queues: Vec<QueueMem>,
    pub peers: Vec<PeerState>,
    pub state: Box<PeState>,
}

impl Pe {
    pub fn st(&self) -> *mut PeState {
        &*self.state as *const PeState as *mut PeState
    }
    pub fn heap_ptr(&self, off: usize) -> *mut u8 {
        (self.heap.addr() as usize + off) as *mut u8
    }
    pub fn qp(&self, pe: usize, i: usize) -> *mut QpState {
        let n = self.state.num_rc_per_pe as usize;
        &self.qps[pe * n + i] as *const QpState as *mut QpState
    }
    pub fn heap_bytes(&self, off: usize, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        // SAFETY: the range is inside the heap (callers use offsets below heap size).
        unsafe { std::ptr::copy(self.heap_ptr(off), v.as_mut_ptr(), len) };
        v
    }
    pub fn write_heap(&self, off: usize, data: &[u8]) {
        // SAFETY: as above.
        unsafe { std::ptr::copy(data.as_ptr(), self.heap_ptr(off), data.len()) };
    }
}

/// `npes` PEs in this process, RC QPs everywhere, one model NIC per PE.
pub struct World {
    // NICs first: they must stop before the memory they serve is freed.
    pub nics: Vec<Nic>,
    pub fabric: Arc<Fabric>,
    pub pes: Vec<Pe>,
}

impl World {
    pub fn new(npes: usize, heap: usize, num_rc: usize, p: QpParams, cfg: ModelConfig) -> World {
        let fabric = Fabric::new();
        let mut pes = Vec::new();
        for me in 0..npes {
            let heap_buf = AlignedBuf::new(heap);
            let fetch = AlignedBuf::new(64 * 8 + 8); // 64 slots and the discard slot
            fabric.register(me as u32, HEAP_KEY + me as u32, heap_buf.addr(), heap as u64);
            fabric.register(me as u32, FETCH_KEY + me as u32, fetch.addr(), fetch.len() as u64);
            let mut qps = Vec::new();
            let mut queues = Vec::new();
            for peer in 0..npes {
                for i in 0..num_rc {
                    let qpn = 0x1000 * (me as u32 + 1) + 0x10 * peer as u32 + i as u32;
                    let (s, m) = new_queues(QpParams { qpn, peer_pe: peer as u32, ..p });
                    qps.push(s);
                    queues.push(m);
                }
            }
            let mut st = Box::new(PeState::zeroed());
            st.my_pe = me as u32;
            st.npes = npes as u32;
            st.num_rc_per_pe = num_rc as u32;
            st.heap_lkey = HEAP_KEY + me as u32;
            st.heap_base = heap_buf.addr();
            st.heap_size = heap as u64;
            st.fetch_buf = fetch.addr();
            st.fetch_lkey = FETCH_KEY + me as u32;
            st.fetch_slots = 64;
            pes.push(Pe { heap: heap_buf, fetch, qps, queues, peers: Vec::new(), state: st });
        }
        let bases: Vec<u64> = pes.iter().map(|p| p.heap.addr()).collect();
        for pe in pes.iter_mut() {
            pe.peers = (0..npes)
                .map(|j| {
                    let mut ps = PeerState::zeroed();
                    ps.heap_base = bases[j];
                    ps.heap_size = heap as u64;
                    ps.rkey = HEAP_KEY + j as u32;
                    ps
                })
                .collect();
            pe.state.rc_qps = pe.qps.as_ptr() as u64;
            pe.state.peers = pe.peers.as_ptr() as u64;
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
