//! The proxy command channel end to end on the host build: the issuing side the GPU runs
//! (device/rshmem_proxy.cuh, compiled as host C++ in ctest/proxy/harness.cpp), host threads
//! standing in for CTAs, the real proxy loop (src/proxy/), and a fake transport that delivers
//! writes and AMOs in a random order except where a fence or quiet forbids it, checking an
//! ordering invariant after every delivery. No GPU and no network: this is the channel's logic.

mod ibgda_common;

use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rshmem::abi::*;
use rshmem::cuda::kernels::AmoOp;
use rshmem::error::{Error, ErrorKind, Result};
use rshmem::fabric::AtomicOp;
use rshmem::proxy::gpu::{AmoDoorbell, AmoKernel};
use rshmem::proxy::{Channel, ProcessMemory, Proxy, ProxyConfig};
use rshmem::transport::{AmoType, Segment, Transport};

// ---- the harness -------------------------------------------------------------------------

fn harness() -> usize {
    static H: OnceLock<usize> = OnceLock::new();
    *H.get_or_init(|| {
        let include = format!("-I{}/include", env!("CARGO_MANIFEST_DIR"));
        let so = ibgda_common::compile("ctest/proxy/harness.cpp", "libproxy_harness.so", &["-fPIC", "-shared", &include]);
        let path = CString::new(so.to_str().unwrap()).unwrap();
        // SAFETY: dlopen of the library just built; its only static is the report hook.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!handle.is_null(), "dlopen of the proxy harness failed");
        // SAFETY: the symbol is defined by the harness with this signature.
        let set: extern "C" fn(extern "C" fn(*const c_char)) = unsafe { std::mem::transmute(sym(handle as usize, "h_set_report")) };
        set(collect_report);
        handle as usize
    })
}

fn sym(handle: usize, name: &str) -> *mut libc::c_void {
    let c = CString::new(name).unwrap();
    // SAFETY: handle is a live dlopen handle.
    let p = unsafe { libc::dlsym(handle as *mut libc::c_void, c.as_ptr()) };
    assert!(!p.is_null(), "the proxy harness has no symbol {name}");
    p
}

/// A harness function by name and C signature.
macro_rules! h {
    ($name:ident : fn($($arg:ty),*) -> $ret:ty) => {{
        let p = sym(harness(), stringify!($name));
        // SAFETY: the harness defines this symbol with exactly this C signature.
        unsafe { std::mem::transmute::<*mut libc::c_void, extern "C" fn($($arg),*) -> $ret>(p) }
    }};
}

type Ch = *mut RshmemProxyChannel;

static REPORTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

extern "C" fn collect_report(line: *const c_char) {
    // SAFETY: the harness passes a NUL-terminated line.
    let s = unsafe { CStr::from_ptr(line) }.to_string_lossy().into_owned();
    REPORTS.lock().unwrap().push(s);
}

/// Reports of the channel of PE `mype` (each test uses its own `mype`).
fn reports_of(mype: usize) -> Vec<String> {
    let tag = format!("rshmem: PE {mype}:");
    REPORTS.lock().unwrap().iter().filter(|r| r.starts_with(&tag)).cloned().collect()
}

/// Channel pointers cross threads in the tests (the channel outlives every thread).
#[derive(Clone, Copy)]
struct Shared(Ch);
// SAFETY: the channel is built for concurrent use; see src/proxy/channel.rs.
unsafe impl Send for Shared {}
// SAFETY: as above (shared by reference between threads that only call the harness with it).
unsafe impl Sync for Shared {}

// ---- the fake transport ------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Event {
    Put { pe: usize, off: usize, len: usize },
    Get { pe: usize, off: usize },
    Amo { pe: usize, off: usize },
    Fetch { pe: usize, off: usize },
    Fence,
    Quiet,
}

enum Change {
    Write(Vec<u8>),
    Amo(AtomicOp, AmoType, u64),
}

struct Pending {
    epoch: u64,
    pe: usize,
    off: usize,
    change: Change,
}

type Check = Box<dyn Fn(&[Vec<u8>]) -> Option<String> + Send>;

struct Net {
    mem: Vec<Vec<u8>>,
    pending: Vec<Pending>,
    epoch: u64,
    log: Vec<Event>,
    rng: u64,
    check: Option<Check>,
    violations: Vec<String>,
}

/// Posted writes and AMOs wait in `pending`; at every call some of the oldest fence epoch are
/// applied, in random order. Fetching operations, gets and quiet apply everything first.
struct Fake {
    net: Mutex<Net>,
    fail_pe: Option<usize>,
    panic_pe: Option<usize>,
    /// How long each AMO takes to post (a slow network keeps commands waiting in the rings).
    amo_delay: Duration,
}

fn width(ty: AmoType) -> usize {
    match ty {
        AmoType::I32 | AmoType::U32 | AmoType::F32 => 4,
        _ => 8,
    }
}

fn apply_amo(word: &mut [u8], op: AtomicOp, ty: AmoType, v: u64, cond: u64) -> u64 {
    let w = width(ty);
    let mut b = [0u8; 8];
    b[..w].copy_from_slice(&word[..w]);
    let old = u64::from_le_bytes(b);
    let new = match op {
        AtomicOp::Add => old.wrapping_add(v),
        AtomicOp::And => old & v,
        AtomicOp::Or => old | v,
        AtomicOp::Xor => old ^ v,
        AtomicOp::Set => v,
        AtomicOp::Read => old,
        AtomicOp::CompareSwap => {
            if old == cond {
                v
            } else {
                old
            }
        }
    };
    word[..w].copy_from_slice(&new.to_le_bytes()[..w]);
    old
}

impl Net {
    fn random(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn apply(&mut self, p: Pending) {
        let word = &mut self.mem[p.pe][p.off..];
        match p.change {
            Change::Write(d) => word[..d.len()].copy_from_slice(&d),
            Change::Amo(op, ty, v) => {
                apply_amo(word, op, ty, v, 0);
            }
        }
        if let Some(check) = &self.check {
            if let Some(v) = check(&self.mem) {
                self.violations.push(v);
            }
        }
    }

    /// Applies some (or, with `all`, every) pending change, never one of a later fence epoch
    /// while one of an earlier epoch waits.
    fn deliver(&mut self, all: bool) {
        while let Some(oldest) = self.pending.iter().map(|p| p.epoch).min() {
            let mut now: Vec<usize> = (0..self.pending.len()).filter(|i| self.pending[*i].epoch == oldest).collect();
            if !all {
                now.retain(|_| self.random().is_multiple_of(2));
                if now.is_empty() {
                    return;
                }
            }
            // Apply in a random order: swap each pick to a random place first.
            for k in (1..now.len()).rev() {
                let j = (self.random() as usize) % (k + 1);
                now.swap(k, j);
            }
            let mut taken: Vec<Option<Pending>> = std::mem::take(&mut self.pending).into_iter().map(Some).collect();
            for i in &now {
                let p = taken[*i].take().unwrap();
                self.apply(p);
            }
            self.pending = taken.into_iter().flatten().collect();
            if !all {
                return;
            }
        }
    }
}

impl Fake {
    fn new(npes: usize, heap: usize) -> Arc<Fake> {
        Fake::with(npes, heap, None, None, None)
    }

    fn with(npes: usize, heap: usize, check: Option<Check>, fail_pe: Option<usize>, panic_pe: Option<usize>) -> Arc<Fake> {
        let net = Net {
            mem: vec![vec![0; heap]; npes],
            pending: Vec::new(),
            epoch: 0,
            log: Vec::new(),
            rng: 0x9e37_79b9_7f4a_7c15,
            check,
            violations: Vec::new(),
        };
        Arc::new(Fake { net: Mutex::new(net), fail_pe, panic_pe, amo_delay: Duration::ZERO })
    }

    fn slow(npes: usize, heap: usize, amo_delay: Duration) -> Arc<Fake> {
        let f = Fake::new(npes, heap);
        Arc::new(Fake { amo_delay, ..Arc::into_inner(f).unwrap() })
    }

    fn net(&self) -> std::sync::MutexGuard<'_, Net> {
        self.net.lock().unwrap()
    }

    fn enter(&self, pe: usize) -> Result<std::sync::MutexGuard<'_, Net>> {
        if self.fail_pe == Some(pe) {
            return Err(Error::of(ErrorKind::System, format!("fabric: fake: PE {pe} is unreachable")));
        }
        assert!(self.panic_pe != Some(pe), "fake transport told to panic on PE {pe}");
        Ok(self.net())
    }

    fn read(&self, pe: usize, off: usize, len: usize) -> Vec<u8> {
        self.net().mem[pe][off..off + len].to_vec()
    }

    fn u64_at(&self, pe: usize, off: usize) -> u64 {
        u64::from_le_bytes(self.read(pe, off, 8).try_into().unwrap())
    }
}

impl Transport for Fake {
    fn describe(&self) -> String {
        "fake".into()
    }
    fn put(&self, pe: usize, _seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        let mut n = self.enter(pe)?;
        n.log.push(Event::Put { pe, off, len: src.len() });
        let epoch = n.epoch;
        n.pending.push(Pending { epoch, pe, off, change: Change::Write(src.to_vec()) });
        n.deliver(false);
        Ok(())
    }
    fn get(&self, pe: usize, _seg: Segment, off: usize, dst: &mut [u8]) -> Result<()> {
        let mut n = self.enter(pe)?;
        n.log.push(Event::Get { pe, off });
        n.deliver(true);
        dst.copy_from_slice(&n.mem[pe][off..off + dst.len()]);
        Ok(())
    }
    fn amo(&self, pe: usize, _seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<()> {
        std::thread::sleep(self.amo_delay);
        let mut n = self.enter(pe)?;
        n.log.push(Event::Amo { pe, off });
        let epoch = n.epoch;
        n.pending.push(Pending { epoch, pe, off, change: Change::Amo(op, ty, value) });
        n.deliver(false);
        Ok(())
    }
    fn fetch_amo(&self, pe: usize, _seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<u64> {
        let mut n = self.enter(pe)?;
        n.log.push(Event::Fetch { pe, off });
        n.deliver(true);
        Ok(apply_amo(&mut n.mem[pe][off..], op, ty, value, 0))
    }
    fn compare_swap(&self, pe: usize, _seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64) -> Result<u64> {
        let mut n = self.enter(pe)?;
        n.log.push(Event::Fetch { pe, off });
        n.deliver(true);
        Ok(apply_amo(&mut n.mem[pe][off..], AtomicOp::CompareSwap, ty, value, cond))
    }
    fn fence(&self) -> Result<()> {
        let mut n = self.net();
        n.log.push(Event::Fence);
        n.epoch += 1;
        Ok(())
    }
    fn quiet(&self) -> Result<()> {
        let mut n = self.net();
        n.log.push(Event::Quiet);
        n.deliver(true);
        Ok(())
    }
}

// ---- set-up --------------------------------------------------------------------------------

const NPES: usize = 4;
const HEAP: usize = 1 << 20;

fn channel(mype: usize, lanes: usize, slots: usize, stall: Duration) -> Arc<Channel> {
    harness(); // compiled before any timing starts
    Arc::new(Channel::new_host(mype, lanes, slots, stall).unwrap())
}

fn start(ch: &Arc<Channel>, fake: &Arc<Fake>) -> Proxy {
    Proxy::start(ch.clone(), fake.clone(), Arc::new(ProcessMemory), ProxyConfig::new(NPES))
}

/// Runs `body(thread index)` on `n` threads, each playing CTA `index`.
fn on_threads(n: usize, ch: &Arc<Channel>, body: impl Fn(Ch, usize) + Send + Sync + 'static) {
    let body = Arc::new(body);
    let threads: Vec<_> = (0..n)
        .map(|i| {
            let (body, c) = (body.clone(), Shared(ch.as_ptr()));
            std::thread::spawn(move || {
                let c = c;
                h!(h_set_cta: fn(u32) -> ())(i as u32);
                body(c.0, i)
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

// ---- tests ----------------------------------------------------------------------------------

#[test]
fn many_threads_lose_and_duplicate_no_command_across_wraps() {
    let _w = ibgda_common::watchdog(120, "many_threads_lose_and_duplicate_no_command_across_wraps");
    let (threads, each) = (8usize, 400usize);
    let ch = channel(10, 3, 8, Duration::from_secs(30));
    let fake = Fake::new(NPES, HEAP);
    let _proxy = start(&ch, &fake);
    on_threads(threads, &ch, move |c, i| {
        let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
        for k in 0..each {
            let off = ((i * each + k) * 8) as u64;
            assert_eq!(p(c, 1 + (k % 3) as i32, off, ((i as u64) << 32) | k as u64, 8), 0);
        }
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0);
    });
    for i in 0..threads {
        for k in 0..each {
            let off = (i * each + k) * 8;
            assert_eq!(fake.u64_at(1 + k % 3, off), ((i as u64) << 32) | k as u64, "thread {i} command {k}");
        }
    }
    let log = fake.net().log.clone();
    let mut puts: Vec<(usize, usize)> =
        log.iter().filter_map(|e| if let Event::Put { pe, off, .. } = e { Some((*pe, *off)) } else { None }).collect();
    assert_eq!(puts.len(), threads * each, "every command ran once");
    puts.sort();
    puts.dedup();
    assert_eq!(puts.len(), threads * each, "no command ran twice");
    let mut posted = 0;
    for l in 0..ch.lanes() {
        let t = ch.tickets(l).load(Ordering::Acquire);
        assert_eq!(ch.consumed(l).load(Ordering::Acquire), t, "lane {l}: every credit returned");
        posted += t;
    }
    assert_eq!(posted as usize, threads * (each + 1), "8 slots per lane wrapped {}x", posted / 24);
}

#[test]
fn a_full_ring_stalls_says_so_then_proceeds() {
    let _w = ibgda_common::watchdog(60, "a_full_ring_stalls_says_so_then_proceeds");
    let ch = channel(11, 1, 4, Duration::from_millis(200));
    let fake = Fake::new(NPES, HEAP);
    let posted = Arc::new(AtomicUsize::new(0));
    let (c, n, keep) = (Shared(ch.as_ptr()), posted.clone(), ch.clone());
    let producer = std::thread::spawn(move || {
        // The producer keeps the channel alive: a failed assertion below must not free it
        // under a thread still posting to it.
        let (c, _keep) = (c, keep);
        h!(h_set_cta: fn(u32) -> ())(0);
        let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
        for k in 0..12u64 {
            assert_eq!(p(c.0, 2, k * 8, 100 + k, 8), 0);
            n.fetch_add(1, Ordering::Release);
        }
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c.0), 0);
    });
    // Wait for the stall report (the 5th post has waited 200 ms), however slowly a loaded
    // machine runs the producer; then the count must still be 4.
    let deadline = Instant::now() + Duration::from_secs(30);
    while reports_of(11).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(posted.load(Ordering::Acquire), 4, "no proxy yet: the 4 slots fill, the 5th post waits");
    assert_eq!(ch.tickets(0).load(Ordering::Acquire), 5);
    let r = reports_of(11);
    assert!(
        r.iter().any(|l| l.contains("nvshmem_p to PE 2 has waited") && l.contains("a free slot (the ring is full) in proxy ring 0")),
        "stall report: {r:?}"
    );
    let _proxy = start(&ch, &fake);
    producer.join().unwrap();
    for k in 0..12 {
        assert_eq!(fake.u64_at(2, k * 8), 100 + k as u64, "command {k} arrived once the proxy ran");
    }
    assert_eq!(ch.consumed(0).load(Ordering::Acquire), 13);
}

#[test]
fn fetching_operations_return_their_own_results() {
    let _w = ibgda_common::watchdog(120, "fetching_operations_return_their_own_results");
    // Two lanes of four slots: results share slots with many later commands.
    let ch = channel(12, 2, 4, Duration::from_secs(30));
    let fake = Fake::new(NPES, HEAP);
    let _proxy = start(&ch, &fake);
    let olds = Arc::new(Mutex::new(Vec::new()));
    let seen = olds.clone();
    on_threads(4, &ch, move |c, i| {
        let fetch = h!(h_fetch_amo: fn(Ch, i32, u64, u32, u32, u64, u64, *mut u64) -> i32);
        let g = h!(h_g: fn(Ch, i32, u64, u32, *mut u64) -> i32);
        let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
        let mut mine = Vec::new();
        for k in 0..150u64 {
            let mut old = u64::MAX;
            assert_eq!(fetch(c, 3, 0, RSHMEM_PROXY_AMO_ADD, RSHMEM_PROXY_TYPE_U64, 1, 0, &mut old), 0);
            mine.push(old);
            // A value of this thread's own, read back through g (4 bytes of it).
            let off = 64 + (i as u64) * 8;
            assert_eq!(p(c, 3, off, (i as u64) << 40 | k, 8), 0);
            let mut v = 0;
            assert_eq!(g(c, 3, off, 4, &mut v), 0);
            assert_eq!(v, k, "g of the 4 low bytes");
        }
        seen.lock().unwrap().extend(mine);
    });
    let mut all = olds.lock().unwrap().clone();
    all.sort();
    assert_eq!(all, (0..600).collect::<Vec<u64>>(), "each fetch-add saw a different old value");
    assert_eq!(fake.u64_at(3, 0), 600);
    // compare-swap on a 32-bit word: fails, then succeeds.
    let c = ch.as_ptr();
    let fetch = h!(h_fetch_amo: fn(Ch, i32, u64, u32, u32, u64, u64, *mut u64) -> i32);
    let mut old = 0;
    assert_eq!(fetch(c, 1, 32, RSHMEM_PROXY_AMO_CSWAP, RSHMEM_PROXY_TYPE_U32, 7, 5, &mut old), 0);
    assert_eq!((old, fake.u64_at(1, 32)), (0, 0), "condition 5 does not hold");
    assert_eq!(fetch(c, 1, 32, RSHMEM_PROXY_AMO_CSWAP, RSHMEM_PROXY_TYPE_U32, 7, 0, &mut old), 0);
    assert_eq!((old, fake.u64_at(1, 32)), (0, 7));
    // The last results were taken just now; the proxy returns their credits on its next pass.
    let t0 = Instant::now();
    for l in 0..2 {
        while ch.consumed(l).load(Ordering::Acquire) != ch.tickets(l).load(Ordering::Acquire) && t0.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            ch.consumed(l).load(Ordering::Acquire),
            ch.tickets(l).load(Ordering::Acquire),
            "lane {l}: credits back once results were taken"
        );
    }
}

const BLOCK: usize = 256;

#[test]
fn a_signal_arrives_after_its_data() {
    let _w = ibgda_common::watchdog(120, "a_signal_arrives_after_its_data");
    let threads = 4usize;
    // Thread i: data block at i * BLOCK, signal word at 64K + i * 8. Generation g is written as
    // bytes of value g; whenever a signal says g, the data must be of generation g or later.
    let check: Check = Box::new(move |mem| {
        for i in 0..threads {
            let sig = u64::from_le_bytes(mem[1][65536 + i * 8..][..8].try_into().unwrap());
            let data = &mem[1][i * BLOCK..(i + 1) * BLOCK];
            if (data[0] as u64) < sig || data.iter().any(|b| *b != data[0]) {
                return Some(format!("thread {i}: signal {sig} visible with data of generation {}", data[0]));
            }
        }
        None
    });
    let fake = Fake::with(NPES, HEAP, Some(check), None, None);
    let ch = channel(13, 2, 8, Duration::from_secs(30));
    let _proxy = start(&ch, &fake);
    on_threads(threads, &ch, move |c, i| {
        let put_signal = h!(h_put_signal: fn(Ch, i32, u64, *const u8, u64, u64, u64, u32, i32) -> i32);
        // Sources stay untouched until the quiet (nbi).
        let sources: Vec<Vec<u8>> = (1..=200u64).map(|g| vec![g as u8; BLOCK]).collect();
        for (k, src) in sources.iter().enumerate() {
            let nbi = (k % 4 != 0) as i32;
            let rc = put_signal(
                c,
                1,
                (i * BLOCK) as u64,
                src.as_ptr(),
                BLOCK as u64,
                (65536 + i * 8) as u64,
                k as u64 + 1,
                RSHMEM_PROXY_AMO_SET,
                nbi,
            );
            assert_eq!(rc, 0);
        }
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0);
    });
    let n = fake.net();
    assert!(n.violations.is_empty(), "{:?}", &n.violations[..n.violations.len().min(3)]);
    assert!(n.log.iter().filter(|e| **e == Event::Fence).count() >= 800, "a fence between each data and its signal");
    for i in 0..threads {
        assert_eq!(n.mem[1][65536 + i * 8], 200);
        assert!(n.mem[1][i * BLOCK..(i + 1) * BLOCK].iter().all(|b| *b == 200));
    }
}

#[test]
fn fence_orders_puts_to_a_pe() {
    let _w = ibgda_common::watchdog(120, "fence_orders_puts_to_a_pe");
    // Thread i writes generation g to X_i, fences, writes g to Y_i: Y_i may never pass X_i.
    let check: Check = Box::new(|mem| {
        (0..4).find_map(|i| {
            let at = |o: usize| u64::from_le_bytes(mem[2][o..o + 8].try_into().unwrap());
            let (x, y) = (at(i * 16), at(i * 16 + 8));
            (y > x).then(|| format!("thread {i}: Y = {y} visible while X is still {x}"))
        })
    });
    let fake = Fake::with(NPES, HEAP, Some(check), None, None);
    let ch = channel(14, 4, 8, Duration::from_secs(30));
    let _proxy = start(&ch, &fake);
    on_threads(4, &ch, |c, i| {
        let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
        let fence = h!(h_fence: fn(Ch) -> i32);
        for g in 1..=300u64 {
            assert_eq!(p(c, 2, (i * 16) as u64, g, 8), 0);
            assert_eq!(fence(c), 0);
            assert_eq!(p(c, 2, (i * 16 + 8) as u64, g, 8), 0);
        }
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0);
    });
    let n = fake.net();
    assert!(n.violations.is_empty(), "{:?}", &n.violations[..n.violations.len().min(3)]);
    assert_eq!(u64::from_le_bytes(n.mem[2][8..16].try_into().unwrap()), 300);
}

#[test]
fn quiet_completes_everything_and_blocking_forms_wait() {
    let _w = ibgda_common::watchdog(60, "quiet_completes_everything_and_blocking_forms_wait");
    let fake = Fake::new(NPES, HEAP);
    let ch = channel(15, 1, 16, Duration::from_secs(30));
    let _proxy = start(&ch, &fake);
    on_threads(1, &ch, {
        let fake = fake.clone();
        move |c, _| {
            let put = h!(h_put: fn(Ch, i32, u64, *const u8, u64, i32) -> i32);
            let get = h!(h_get: fn(Ch, i32, u64, *mut u8, u64, i32) -> i32);
            let amo = h!(h_amo: fn(Ch, i32, u64, u32, u32, u64) -> i32);
            let data: Vec<u8> = (0..5000u32).map(|x| (x * 7 + 3) as u8).collect();
            // Blocking put: the proxy has handed it to the transport when it returns.
            assert_eq!(put(c, 1, 4096, data.as_ptr(), 5000, 0), 0);
            assert!(fake.net().log.contains(&Event::Put { pe: 1, off: 4096, len: 5000 }));
            for k in 0..50u64 {
                assert_eq!(put(c, 3, 20000 + k * 100, data.as_ptr(), 100, 1), 0);
                assert_eq!(amo(c, 3, 0, RSHMEM_PROXY_AMO_ADD, RSHMEM_PROXY_TYPE_I32, 2), 0);
            }
            assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0);
            // Straight from the fake's memory: nothing may be pending after quiet.
            assert!(fake.net().pending.is_empty(), "quiet left writes in flight");
            assert_eq!(fake.read(3, 0, 4), 100i32.to_le_bytes());
            for k in 0..50 {
                assert_eq!(fake.read(3, 20000 + k * 100, 100), &data[..100]);
            }
            let mut back = vec![0u8; 5000];
            assert_eq!(get(c, 1, 4096, back.as_mut_ptr(), 5000, 0), 0);
            assert_eq!(back, data, "blocking get");
        }
    });
}

#[test]
fn an_idle_proxy_sleeps_and_wakes_promptly() {
    let _w = ibgda_common::watchdog(60, "an_idle_proxy_sleeps_and_wakes_promptly");
    let fake = Fake::new(NPES, HEAP);
    let ch = channel(16, 8, 64, Duration::from_secs(30));
    let proxy = start(&ch, &fake);
    std::thread::sleep(Duration::from_millis(100));
    let before = proxy.cpu_time().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let used = proxy.cpu_time().unwrap() - before;
    eprintln!("idle proxy thread: {:.1} ms CPU in 1 s", used.as_secs_f64() * 1e3);
    assert!(used < Duration::from_millis(100), "an idle proxy burnt {used:?} of CPU in one second");
    let c = Shared(ch.as_ptr());
    let t0 = Instant::now();
    std::thread::spawn(move || {
        let c = c;
        assert_eq!(h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32)(c.0, 1, 0, 5, 8), 0);
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c.0), 0);
    })
    .join()
    .unwrap();
    let woke = t0.elapsed();
    eprintln!("p + quiet through an idle proxy: {:.3} ms", woke.as_secs_f64() * 1e3);
    assert!(woke < Duration::from_millis(500), "an idle proxy took {woke:?} to serve a quiet (sleeps are capped at 1 ms)");
    assert_eq!(fake.u64_at(1, 0), 5);
}

#[test]
fn a_failed_operation_stops_the_proxy_with_a_named_error() {
    let _w = ibgda_common::watchdog(60, "a_failed_operation_stops_the_proxy_with_a_named_error");
    let fake = Fake::with(NPES, HEAP, None, Some(3), None);
    let ch = channel(17, 2, 4, Duration::from_secs(30));
    let proxy = start(&ch, &fake);
    on_threads(2, &ch, |c, i| {
        let put = h!(h_put: fn(Ch, i32, u64, *const u8, u64, i32) -> i32);
        let data = [1u8; 64];
        if i == 0 {
            assert_eq!(put(c, 3, 0, data.as_ptr(), 64, 0), RSHMEM_PROXY_ERR_DEAD_RS, "a blocking put to the failing PE");
        } else {
            // Lane 1 keeps posting: once the proxy is dead its ring fills and the post fails.
            std::thread::sleep(Duration::from_millis(300));
            let rcs: Vec<i32> = (0..8).map(|_| put(c, 1, 0, data.as_ptr(), 64, 1)).collect();
            assert!(rcs.contains(&RSHMEM_PROXY_ERR_DEAD_RS), "posts to a dead proxy fail: {rcs:?}");
        }
    });
    let why = proxy.failure().expect("the proxy says why it stopped");
    assert!(
        why.contains("PE 17: proxy thread stopped at lane 0 command 0 (to PE 3)") && why.contains("fabric: fake: PE 3 is unreachable"),
        "{why}"
    );
    assert_eq!(ch.status(), RSHMEM_PROXY_DEAD);
    let r = reports_of(17);
    assert!(
        r.iter().any(|l| l.contains("nvshmem_putmem to PE 3 cannot complete: the proxy thread stopped at ring 0 command 0 (to PE 3)")),
        "{r:?}"
    );
}

/// RSHMEM_PROXY_ERR_DEAD of device/rshmem_proxy.cuh.
const RSHMEM_PROXY_ERR_DEAD_RS: i32 = -1;

#[test]
fn a_panicking_transport_or_a_malformed_command_is_named() {
    let _w = ibgda_common::watchdog(60, "a_panicking_transport_or_a_malformed_command_is_named");
    let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
    let cases: [(i32, u32, Option<usize>, &str); 3] = [
        (2, 8, Some(2), "the proxy thread panicked: fake transport told to panic on PE 2"),
        (1, 9, None, "malformed command: p of 9 bytes (1 to 8)"),
        (7, 8, None, "malformed command: target PE 7 is not in 0..4"),
    ];
    for (k, (pe, bytes, panic_pe, want)) in cases.into_iter().enumerate() {
        let fake = Fake::with(NPES, HEAP, None, None, panic_pe);
        let ch = channel(18 + k, 1, 4, Duration::from_secs(30));
        let proxy = start(&ch, &fake);
        let c = Shared(ch.as_ptr());
        let rc = std::thread::spawn(move || {
            let c = c;
            h!(h_set_cta: fn(u32) -> ())(0);
            assert_eq!(p(c.0, pe, 0, 1, bytes), 0, "posting succeeds; the proxy finds the fault");
            h!(h_quiet: fn(Ch) -> i32)(c.0)
        })
        .join()
        .unwrap();
        assert_eq!(rc, RSHMEM_PROXY_ERR_DEAD_RS, "quiet after a fault reports it");
        let why = proxy.failure().unwrap();
        assert!(why.contains(want), "{why}");
        assert!(why.contains(&format!("PE {}: proxy thread stopped at lane 0 command 0 (to PE {pe})", 18 + k)), "{why}");
    }
}

/// Posts `n` AMO adds of 1 to PE 1's word at `off` from a thread playing CTA `cta`, without a
/// quiet (as a kernel that ends after non-fetching AMOs), and returns when they are posted.
fn post_adds(ch: &Arc<Channel>, cta: u32, off: u64, n: usize) {
    let c = Shared(ch.as_ptr());
    std::thread::spawn(move || {
        let c = c;
        h!(h_set_cta: fn(u32) -> ())(cta);
        let amo = h!(h_amo: fn(Ch, i32, u64, u32, u32, u64) -> i32);
        for _ in 0..n {
            assert_eq!(amo(c.0, 1, off, RSHMEM_PROXY_AMO_ADD, RSHMEM_PROXY_TYPE_U64, 1), 0);
        }
    })
    .join()
    .unwrap();
}

/// The lost updates of the GPU run (amo: 3314 of 4096 adds): a kernel's trailing
/// non-fetching AMOs were still in the rings when it ended, and neither a device quiet in
/// another CTA's ring nor the host quiet waited for them. A device quiet now waits for every
/// ring's earlier commands.
#[test]
fn a_device_quiet_waits_for_every_rings_earlier_commands() {
    let _w = ibgda_common::watchdog(60, "a_device_quiet_waits_for_every_rings_earlier_commands");
    let fake = Fake::slow(NPES, HEAP, Duration::from_millis(2));
    let ch = channel(40, 2, 64, Duration::from_secs(30));
    // Ring 0 full of adds before the proxy runs; then CTA 1 quiets while they are served
    // (32 at a time, ring 1 between: a quiet of ring 1 alone finished after about 32).
    post_adds(&ch, 0, 0, 64);
    let (c, f) = (Shared(ch.as_ptr()), fake.clone());
    let quiet = std::thread::spawn(move || {
        let c = c;
        h!(h_set_cta: fn(u32) -> ())(1);
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c.0), 0);
        f.u64_at(1, 0)
    });
    std::thread::sleep(Duration::from_millis(20));
    let _proxy = start(&ch, &fake);
    assert_eq!(quiet.join().unwrap(), 64, "every add posted before the quiet (by another CTA) is in place when it returns");
}

#[test]
fn the_host_drain_completes_what_finished_threads_posted() {
    let _w = ibgda_common::watchdog(60, "the_host_drain_completes_what_finished_threads_posted");
    let fake = Fake::slow(NPES, HEAP, Duration::from_millis(1));
    let ch = channel(41, 4, 32, Duration::from_secs(30));
    for cta in 0..4 {
        post_adds(&ch, cta, 8 * cta as u64, 32);
    }
    let proxy = start(&ch, &fake);
    let issued: Vec<u64> = (0..4).map(|l| ch.tickets(l).load(Ordering::Acquire)).collect();
    assert_eq!(issued, [32; 4]);
    proxy.drain(&issued).map_err(|e| e.named("nvshmem_quiet")).unwrap();
    for cta in 0..4 {
        assert_eq!(fake.u64_at(1, 8 * cta), 32, "CTA {cta}'s adds, all in place after the host quiet");
    }
    assert!(fake.net().pending.is_empty(), "the drain completed them at the transport");
}

#[test]
fn a_host_drain_that_cannot_finish_says_why_in_bounded_time() {
    let _w = ibgda_common::watchdog(60, "a_host_drain_that_cannot_finish_says_why_in_bounded_time");
    // A ticket taken but never posted (a kernel still posting, or one that died doing so).
    let ch = channel(42, 2, 8, Duration::from_millis(300));
    let proxy = start(&ch, &Fake::new(NPES, HEAP));
    post_adds(&ch, 1, 0, 3);
    ch.tickets(1).fetch_add(1, Ordering::AcqRel);
    let t = Instant::now();
    let e = proxy.drain(&[0, 4]).map_err(|e| e.named("nvshmem_quiet")).unwrap_err().to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "gave up after {:?}", t.elapsed());
    assert!(
        e.contains("nvshmem_quiet")
            && e.contains("PE 42: the proxy has run 3 of the first 4 commands device code posted to proxy ring 1")
            && e.contains("the next one is not posted yet: is a kernel still posting?"),
        "{e}"
    );
    // A proxy that stopped: the drain returns its message.
    let ch = channel(43, 1, 8, Duration::from_secs(30));
    let proxy = start(&ch, &Fake::with(NPES, HEAP, None, Some(1), None));
    post_adds(&ch, 0, 0, 2);
    let e = proxy.drain(&[2]).map_err(|e| e.named("nvshmem_barrier_all")).unwrap_err().to_string();
    assert!(e.contains("PE 43: proxy thread stopped at lane 0 command 0 (to PE 1)") && e.contains("PE 1 is unreachable"), "{e}");
}

/// The segfault of the GPU run (signal): a put whose source is a kernel's shared memory handed
/// the proxy an address its copy cannot read. Such data now travels in the commands.
#[test]
fn local_memory_the_host_cannot_reach_travels_in_the_commands() {
    let _w = ibgda_common::watchdog(60, "local_memory_the_host_cannot_reach_travels_in_the_commands");
    let fake = Fake::new(NPES, HEAP);
    let ch = channel(44, 1, 16, Duration::from_secs(30));
    let _proxy = start(&ch, &fake);
    let c = Shared(ch.as_ptr());
    std::thread::spawn(move || {
        let c = c; // the whole wrapper, not its pointer field
        let c = c.0;
        h!(h_set_cta: fn(u32) -> ())(0);
        // "Shared memory": 37 bytes of source, 37 of destination, in one unreachable range.
        let mut local = [0u8; 74];
        for (i, b) in local[..37].iter_mut().enumerate() {
            *b = (i * 11 + 5) as u8;
        }
        h!(h_set_unreachable: fn(*const u8, u64) -> ())(local.as_ptr(), 74);
        let put = h!(h_put: fn(Ch, i32, u64, *const u8, u64, i32) -> i32);
        let get = h!(h_get: fn(Ch, i32, u64, *mut u8, u64, i32) -> i32);
        let put_signal = h!(h_put_signal: fn(Ch, i32, u64, *const u8, u64, u64, u64, u32, i32) -> i32);
        assert_eq!(put(c, 2, 1000, local.as_ptr(), 37, 0), 0);
        assert_eq!(put_signal(c, 2, 2000, local.as_ptr(), 37, 3000, 9, RSHMEM_PROXY_AMO_SET, 1), 0);
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0);
        let (src, dst) = local.split_at_mut(37);
        assert_eq!(get(c, 2, 1000, dst.as_mut_ptr(), 37, 1), 0);
        assert_eq!(src, dst, "a get into unreachable memory, 8 bytes a g");
        h!(h_set_unreachable: fn(*const u8, u64) -> ())(std::ptr::null(), 0);
    })
    .join()
    .unwrap();
    let want: Vec<u8> = (0..37).map(|i| (i * 11 + 5) as u8).collect();
    assert_eq!(fake.read(2, 1000, 37), want, "the put");
    assert_eq!(fake.read(2, 2000, 37), want, "the put of the put-with-signal");
    assert_eq!(fake.u64_at(2, 3000), 9, "its signal");
    let log = fake.net().log.clone();
    // 8 bytes a command (the proxy may merge neighbours it finds together into one put): every
    // put starts at a multiple of 8 into its range and they cover it once, in order.
    let puts: Vec<(usize, usize)> =
        log.iter().filter_map(|e| if let Event::Put { off, len, .. } = e { Some((*off, *len)) } else { None }).collect();
    for base in [1000, 2000] {
        let mut end = base;
        for (off, len) in puts.iter().filter(|(o, _)| (base..base + 37).contains(o)) {
            assert!(*off == end && (off - base).is_multiple_of(8), "puts {puts:?}");
            end = off + len;
        }
        assert_eq!(end, base + 37, "puts {puts:?}");
    }
    let fence = log.iter().position(|e| *e == Event::Fence).expect("a fence before the signal");
    let signal = log.iter().position(|e| *e == Event::Amo { pe: 2, off: 3000 }).expect("the signal");
    let last_put = log.iter().rposition(|e| matches!(e, Event::Put { .. })).unwrap();
    assert!(last_put < fence && fence < signal, "data, fence, signal: {log:?}");
}

/// Consecutive `p`s of one lane to one PE at contiguous addresses go out as one put; another
/// PE, a gap or a fence ends the run (and the run is out before the fence).
#[test]
fn consecutive_ps_to_contiguous_addresses_are_one_put() {
    let _w = ibgda_common::watchdog(60, "consecutive_ps_to_contiguous_addresses_are_one_put");
    let fake = Fake::new(NPES, HEAP);
    let ch = channel(45, 1, 64, Duration::from_secs(30));
    // Posted before the proxy starts, so that it finds them all in one batch.
    on_threads(1, &ch, |c, _| {
        let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
        for k in 0..5u64 {
            assert_eq!(p(c, 2, 100 + 8 * k, k + 1, 8), 0);
        }
        assert_eq!(p(c, 2, 140, 0xaabb_ccdd, 4), 0); // continues the run: 44 bytes
        assert_eq!(p(c, 3, 144, 7, 8), 0); // another PE
        assert_eq!(p(c, 3, 160, 8, 8), 0); // a gap
        assert_eq!(h!(h_fence: fn(Ch) -> i32)(c), 0);
        assert_eq!(p(c, 3, 168, 9, 8), 0); // after a fence
    });
    let _proxy = start(&ch, &fake);
    on_threads(1, &ch, |c, _| assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0));
    let log = fake.net().log.clone();
    let want = [
        Event::Put { pe: 2, off: 100, len: 44 },
        Event::Put { pe: 3, off: 144, len: 8 },
        Event::Put { pe: 3, off: 160, len: 8 },
        Event::Fence,
        Event::Put { pe: 3, off: 168, len: 8 },
        Event::Quiet,
    ];
    assert_eq!(log, want);
    for k in 0..5 {
        assert_eq!(fake.u64_at(2, 100 + 8 * k), k as u64 + 1);
    }
    assert_eq!(fake.read(2, 140, 4), 0xaabb_ccddu32.to_le_bytes());
    assert_eq!((fake.u64_at(3, 144), fake.u64_at(3, 160), fake.u64_at(3, 168)), (7, 8, 9));
}

// ---- through the real fabric transport -------------------------------------------------------

/// Two ranks in one process (threads), for FabricTransport's collective start.
struct ThreadBoot {
    rank: usize,
    shared: Arc<(std::sync::Barrier, Mutex<Vec<Vec<u8>>>)>,
}

impl rshmem::bootstrap::Bootstrap for ThreadBoot {
    fn name(&self) -> &'static str {
        "test threads"
    }
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        2
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        let (barrier, slots) = &*self.shared;
        slots.lock().unwrap()[self.rank] = mine.to_vec();
        barrier.wait();
        let all = slots.lock().unwrap().clone();
        barrier.wait();
        Ok(all)
    }
    fn allgather_fds(&self, _mine: &[std::os::fd::RawFd]) -> Result<Vec<Vec<std::os::fd::OwnedFd>>> {
        Err(Error::bootstrap("no descriptors between test threads"))
    }
}

/// The one-thread kernel of the remote-AMO doorbell, played by host threads: `Runs` launches a
/// thread that looks once (the kernel on a free SM); `Starved` never runs (a grid holds every SM).
struct FakeAmoKernel {
    ch: Shared,
    starved: bool,
    launches: Arc<AtomicUsize>,
    running: Arc<AtomicUsize>,
}

impl AmoKernel for FakeAmoKernel {
    fn idle(&self) -> Result<bool> {
        Ok(self.running.load(Ordering::Acquire) == 0)
    }
    fn launch(&self) -> Result<()> {
        self.launches.fetch_add(1, Ordering::AcqRel);
        self.running.fetch_add(1, Ordering::AcqRel);
        if !self.starved {
            let (c, running) = (Shared(self.ch.0), self.running.clone());
            std::thread::spawn(move || {
                let c = c;
                h!(h_serve_amo: fn(Ch) -> i32)(c.0);
                running.fetch_sub(1, Ordering::AcqRel);
            });
        }
        Ok(())
    }
}

fn doorbell(ch: &Arc<Channel>, starved: bool, stall: Duration) -> (AmoDoorbell, Arc<AtomicUsize>) {
    let launches = Arc::new(AtomicUsize::new(0));
    let kernel = FakeAmoKernel { ch: Shared(ch.as_ptr()), starved, launches: launches.clone(), running: Arc::new(AtomicUsize::new(0)) };
    (AmoDoorbell::new(ch.clone(), Box::new(kernel), stall), launches)
}

/// A device thread's long wait reaches the host as one line naming the thread, the word, its
/// value and the awaited one (the proxy loop logs it at once: a hung kernel's printf never
/// arrives); a barrier's names the PE it waits for; each report is said once.
#[test]
fn a_device_threads_long_wait_is_reported_on_the_host() {
    let ch = channel(9, 1, 4, Duration::from_secs(30));
    let note = h!(h_note_stall: fn(Ch, u32, u64, i32, u64, u64, i32) -> ());
    let mut last = 0;
    assert_eq!(ch.stall_report(&mut last), None, "nothing reported yet");
    h!(h_set_cta: fn(u32) -> ())(3);
    note(ch.as_ptr(), RSHMEM_PROXY_STALL_WAIT, 4096, 1, 32, 128, 5);
    let line = ch.stall_report(&mut last).expect("the wait is reported");
    for want in ["block 3", "signal_wait_until", "symmetric heap offset 4096 holds 32", "greater than or equal to 128"] {
        assert!(line.contains(want), "{want:?} not in {line:?}");
    }
    assert_eq!(ch.stall_report(&mut last), None, "said once");
    note(ch.as_ptr(), RSHMEM_PROXY_STALL_WAIT, 0x7000, 0, 1, 2, 0);
    let line = ch.stall_report(&mut last).expect("a second wait is reported");
    assert!(
        line.contains("address 0x7000 (outside the symmetric heap") && line.contains("holds 1") && line.contains("equal to 2"),
        "{line}"
    );
    note(ch.as_ptr(), RSHMEM_PROXY_STALL_BARRIER, 0, 0, 0, 0, 2);
    let line = ch.stall_report(&mut last).expect("the barrier's wait is reported");
    assert!(line.contains("device barrier or collective for PE 2, which has not arrived"), "{line}");
}

/// What each AmoOp does to a word of `bits` bits (the model the results are checked against).
fn model_amo(old: u64, op: AmoOp, a: u64, b: u64, bits: u32) -> u64 {
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let new = match op {
        AmoOp::Add => old.wrapping_add(a),
        AmoOp::And => old & a,
        AmoOp::Or => old | a,
        AmoOp::Xor => old ^ a,
        AmoOp::Swap | AmoOp::Set => a,
        AmoOp::CompareSwap if old == a & mask => b,
        AmoOp::CompareSwap | AmoOp::Fetch => old,
    };
    new & mask
}

/// Remote AMOs handed to device threads (src/proxy/gpu.rs AmoDoorbell; device/rshmem_proxy.cuh
/// serve_amo): each runs exactly once and returns its own old value, whether the one-thread
/// kernel takes it or threads waiting in device code race for it while the kernel never runs
/// (a grid holding every SM: the GPU deadlock this replaces); nobody taking it is a named error.
#[test]
fn remote_amos_run_once_whoever_takes_them() {
    let _w = ibgda_common::watchdog(120, "remote_amos_run_once_whoever_takes_them");
    let ops = [AmoOp::Add, AmoOp::CompareSwap, AmoOp::Xor, AmoOp::Swap, AmoOp::Or, AmoOp::Fetch, AmoOp::And, AmoOp::Set];
    for starved in [false, true] {
        let ch = channel(1, 2, 4, Duration::from_secs(30));
        let (bell, launches) = doorbell(&ch, starved, Duration::from_secs(30));
        let words = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]); // an 8-byte word, then a 4-byte one in the low half
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Waiting device threads: three look all the time (only when the kernel is starved:
        // otherwise the kernel alone must do it).
        let waiters: Vec<_> = (0..if starved { 3 } else { 0 })
            .map(|_| {
                let (c, stop) = (Shared(ch.as_ptr()), stop.clone());
                std::thread::spawn(move || {
                    let c = c;
                    let mut took = 0;
                    while !stop.load(Ordering::Acquire) {
                        took += h!(h_serve_amo: fn(Ch) -> i32)(c.0);
                    }
                    took
                })
            })
            .collect();
        let (mut model64, mut model32) = (0u64, 0u64);
        for i in 0..300u64 {
            let op = ops[i as usize % ops.len()];
            let four = i % 2 == 1;
            let (addr, bits) = if four { (words[1].as_ptr() as u64, 32) } else { (words[0].as_ptr() as u64, 64) };
            let model = if four { &mut model32 } else { &mut model64 };
            let (a, b) = match op {
                AmoOp::CompareSwap if i % 3 == 0 => (*model, i * 7), // succeeds
                AmoOp::CompareSwap => (i, i * 7),                    // fails unless equal
                AmoOp::And => (!(1u64 << (i % 64)), 0),
                _ => (i.wrapping_mul(0x9e37_79b9) | 1, 0),
            };
            let a = if four { a & 0xffff_ffff } else { a };
            let old = bell.run(2, addr, op, if four { 4 } else { 8 }, a, b).unwrap();
            assert_eq!(
                old,
                *model,
                "AMO {i} ({op:?}, {} bytes, starved kernel: {starved}) returned the wrong old value",
                if four { 4 } else { 8 }
            );
            *model = model_amo(*model, op, a, b, bits);
        }
        stop.store(true, Ordering::Release);
        let taken: i32 = waiters.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(words[0].load(Ordering::Acquire), model64, "8-byte word (starved: {starved})");
        assert_eq!(words[1].load(Ordering::Acquire) & 0xffff_ffff, model32, "4-byte word (starved: {starved})");
        assert_eq!(words[1].load(Ordering::Acquire) >> 32, 0, "a 4-byte AMO touched only its 4 bytes");
        if starved {
            // 0 when the waiters took every AMO within the stall time before a launch.
            let n = launches.load(Ordering::Acquire);
            assert!(n <= 1, "a kernel that has not run is not launched again: {n} launches");
            assert_eq!(taken, 300, "the waiting threads ran every AMO, once");
        } else {
            assert!((1..=300).contains(&launches.load(Ordering::Acquire)), "launches: {}", launches.load(Ordering::Acquire));
        }
    }
    // Nobody takes it: a named error within the stall time.
    let ch = channel(1, 1, 4, Duration::from_secs(30));
    let (bell, _) = doorbell(&ch, true, Duration::from_millis(200));
    let word = AtomicU64::new(0);
    let t = Instant::now();
    let e = bell.run(3, word.as_ptr() as u64, AmoOp::Add, 8, 1, 0).map_err(|e| e.named("nvshmem_atomic_add")).unwrap_err().to_string();
    assert!(t.elapsed() < Duration::from_secs(10), "gave up after {:?}", t.elapsed());
    assert!(
        e.contains("nvshmem_atomic_add") && e.contains("PE 1: PE 3's atomic on this PE's GPU memory") && e.contains("has not run after"),
        "{e}"
    );
    assert_eq!(word.load(Ordering::Acquire), 0);
}

/// At a failing exit a remote AMO nobody takes gives up at once, not after the stall: the proxy
/// thread must be done within the exit hook's wait, before the driver tears the context down.
#[test]
fn an_abandoned_remote_amo_gives_up_at_once() {
    let _w = ibgda_common::watchdog(60, "an_abandoned_remote_amo_gives_up_at_once");
    let ch = channel(2, 1, 4, Duration::from_secs(30));
    let (bell, _) = doorbell(&ch, true, Duration::from_secs(60));
    let bell = Arc::new(bell);
    let word = Arc::new(AtomicU64::new(0));
    let waiter = {
        let (bell, word) = (bell.clone(), word.clone());
        std::thread::spawn(move || {
            bell.run(3, word.as_ptr() as u64, AmoOp::Add, 8, 1, 0).map_err(|e| e.named("nvshmem_atomic_add")).unwrap_err().to_string()
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    let t = Instant::now();
    bell.abandon();
    let e = waiter.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10), "gave up after {:?}", t.elapsed());
    assert!(e.contains("PE 2: the process is exiting; PE 3's atomic on this PE's GPU memory abandoned"), "{e}");
    assert_eq!(word.load(Ordering::Acquire), 0);
}

#[test]
fn the_proxy_posts_through_libfabric_tcp() {
    use rshmem::transport::fabric::FabricTransport;
    let _w = ibgda_common::watchdog(120, "the_proxy_posts_through_libfabric_tcp");
    if let Err(e) = rshmem::fabric::Library::load("libfabric.so.1") {
        eprintln!("SKIP: {e}");
        return;
    }
    // Both endpoints on loopback in this process (only this test reads these settings).
    std::env::set_var("RSHMEM_FABRIC_PROVIDER", "tcp;ofi_rxm");
    std::env::set_var("RSHMEM_FABRIC_DOMAIN", "lo");
    let shared = Arc::new((std::sync::Barrier::new(2), Mutex::new(vec![Vec::new(); 2])));
    let heaps: Vec<Shared8> = (0..2).map(|_| Shared8(Box::leak(vec![0u64; 8192].into_boxed_slice()).as_mut_ptr())).collect();
    let target = {
        let (shared, heap) = (shared.clone(), heaps[1]);
        std::thread::spawn(move || {
            let heap = heap;
            let boot = ThreadBoot { rank: 1, shared: shared.clone() };
            let t = FabricTransport::start(&boot, (heap.0.cast(), 65536), None).expect("PE 1's fabric transport");
            shared.0.wait(); // until PE 0 is done with us
            drop(t);
        })
    };
    let boot = ThreadBoot { rank: 0, shared: shared.clone() };
    let t = FabricTransport::start(&boot, (heaps[0].0.cast(), 65536), None).expect("PE 0's fabric transport");
    let ch = channel(30, 2, 8, Duration::from_secs(30));
    let proxy = Proxy::start(ch.clone(), Arc::new(t), Arc::new(ProcessMemory), ProxyConfig::new(2));
    let remote = heaps[1];
    on_threads(2, &ch, move |c, i| {
        let remote = remote; // the whole wrapper, not its pointer field
        let put = h!(h_put: fn(Ch, i32, u64, *const u8, u64, i32) -> i32);
        let p = h!(h_p: fn(Ch, i32, u64, u64, u32) -> i32);
        let g = h!(h_g: fn(Ch, i32, u64, u32, *mut u64) -> i32);
        let fetch = h!(h_fetch_amo: fn(Ch, i32, u64, u32, u32, u64, u64, *mut u64) -> i32);
        let put_signal = h!(h_put_signal: fn(Ch, i32, u64, *const u8, u64, u64, u64, u32, i32) -> i32);
        let base = (i * 16384) as u64;
        let data: Vec<u8> = (0..8000u32).map(|x| (x as u8) ^ (i as u8 * 0x55)).collect();
        assert_eq!(put(c, 1, base, data.as_ptr(), 8000, 0), 0);
        for k in 0..100u64 {
            assert_eq!(p(c, 1, base + 8192 + k * 8, k * 3 + i as u64, 8), 0);
        }
        let mut old = 0;
        for _ in 0..50 {
            assert_eq!(fetch(c, 1, 65528, RSHMEM_PROXY_AMO_ADD, RSHMEM_PROXY_TYPE_U64, 1, 0, &mut old), 0);
        }
        assert_eq!(put_signal(c, 1, base + 9000, data.as_ptr(), 64, 65512 - i as u64 * 8, 77, RSHMEM_PROXY_AMO_SET, 1), 0);
        assert_eq!(h!(h_quiet: fn(Ch) -> i32)(c), 0);
        let mut v = 0;
        assert_eq!(g(c, 1, base + 8192 + 99 * 8, 8, &mut v), 0);
        assert_eq!(v, 297 + i as u64, "g after quiet sees the p");
        // SAFETY: the target heap is leaked (lives forever); the proxy's writes completed at quiet.
        let got = unsafe { std::slice::from_raw_parts(remote.0.cast::<u8>().add(base as usize), 8000) }.to_vec();
        assert_eq!(got, data, "thread {i}'s put arrived in PE 1's heap");
    });
    // SAFETY: as above.
    let word = |w: usize| unsafe { std::ptr::read_volatile(remote.0.add(w)) };
    assert_eq!(word(65528 / 8), 100, "100 fetch-adds over the fabric");
    assert_eq!((word(65512 / 8), word(65504 / 8)), (77, 77), "both signals");
    assert!(proxy.failure().is_none());
    drop(proxy);
    shared.0.wait();
    target.join().unwrap();
}

#[derive(Clone, Copy)]
struct Shared8(*mut u64);
// SAFETY: leaked heaps shared by the test's threads; the fabric writes them, the test reads them.
unsafe impl Send for Shared8 {}
// SAFETY: as above.
unsafe impl Sync for Shared8 {}

#[test]
fn the_issuing_side_compiles_under_nvcc_when_available() {
    let Some(nvcc) = ibgda_common::find_nvcc() else {
        eprintln!("nvcc not found (set CUDA_HOME): skipping the CUDA compile check of device/rshmem_proxy.cuh");
        return;
    };
    let repo = ibgda_common::repo();
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("proxy_device_compile.o");
    let status = std::process::Command::new(&nvcc)
        .args(["-std=c++17", "-arch=sm_90", "-c", "-x", "cu"])
        .arg(format!("-I{}", repo.join("include").display()))
        .arg(repo.join("ctest/proxy/device_compile.cu"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", nvcc.display()));
    assert!(status.success(), "device/rshmem_proxy.cuh does not compile as CUDA");
}

#[test]
fn the_device_library_compiles_with_the_proxy_route_when_nvcc_is_available() {
    let Some(nvcc) = ibgda_common::find_nvcc() else {
        eprintln!("nvcc not found (set CUDA_HOME): skipping the CUDA compile check of the proxy route");
        return;
    };
    let repo = ibgda_common::repo();
    // The headers as installed: include/*.h, rshmem/rshmem_abi.h, rshmem/device/*.
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("proxy_route_inc");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("rshmem")).unwrap();
    std::os::unix::fs::symlink(repo.join("device"), tmp.join("rshmem/device")).unwrap();
    std::os::unix::fs::symlink(repo.join("include/rshmem/rshmem_abi.h"), tmp.join("rshmem/rshmem_abi.h")).unwrap();
    let out = tmp.join("route_compile.o");
    let status = std::process::Command::new(&nvcc)
        .args(["-std=c++17", "-arch=sm_90", "-c", "-DRSHMEM_PROXY_ROUTE"])
        .arg(format!("-I{}", repo.join("include").display()))
        .arg(format!("-I{}", tmp.display()))
        .arg(repo.join("ctest/proxy/route_compile.cu"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", nvcc.display()));
    assert!(status.success(), "the device library does not compile with -DRSHMEM_PROXY_ROUTE");
}
