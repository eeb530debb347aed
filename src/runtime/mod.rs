//! Process-wide runtime state: what `shmem_init` builds and `shmem_finalize` tears down.

pub mod alloc;
pub mod amo;
pub mod barrier;
pub mod coll;
pub mod ctx;
pub mod gpu;
pub mod header;
// The log lives on the floor (src/log.rs): say crate::log. This alias remains only for
// the two modules that still name runtime::log (barrier.rs, gpu/proxy.rs); remove it with them.
pub use crate::log;
pub mod reduce_ops;
pub mod remote;
pub mod rma;
pub mod team;
pub mod wait;

use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::bootstrap::{self, Bootstrap};
use crate::env::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::heap::alloc::Allocator;
use crate::heap::statics::StaticData;
use crate::heap::HostHeap;
use crate::transport::fabric::FabricTransport;
use crate::transport::shm::Shm;
use crate::transport::{RouteTable, Transport};
use header::{Header, Layout};

/// OpenSHMEM thread levels (values as Open MPI's OSHMEM defines them).
pub const THREAD_SINGLE: i32 = 0;
pub const THREAD_FUNNELED: i32 = 1;
pub const THREAD_SERIALIZED: i32 = 2;
pub const THREAD_MULTIPLE: i32 = 3;

pub struct State {
    pub me: usize,
    pub npes: usize,
    pub cfg: Config,
    pub boot: Box<dyn Bootstrap>,
    /// The transport to PEs on other hosts (only in jobs that span hosts). Declared before the
    /// heap and static data: it is dropped, and their registrations closed, before they are
    /// unmapped.
    pub net: Option<Box<dyn Transport>>,
    /// How each PE is reached (built once at init; see transport/mod.rs).
    pub routes: RouteTable,
    /// Some PE is on another host (`routes.spans_hosts()`).
    pub multi_host: bool,
    /// The shm transport's table: each PE's mapped base, 0 where another transport serves it
    /// (the one lookup of the shm hot path, rma.rs `base_in`, that also tells the route).
    pub shm: Shm,
    pub heap: HostHeap,
    pub statics: Option<StaticData>,
    pub layout: Layout,
    /// Every PE's header, as mapped here.
    pub headers: Vec<Header>,
    pub alloc: Mutex<Allocator>,
    /// This PE's message counts for each peer, per channel (see barrier.rs), made when a
    /// channel is first used.
    channels: Box<[OnceLock<Box<[barrier::Peer]>>]>,
    pub thread_level: i32,
    pub teams: team::TeamTable,
    /// Communication contexts (see ctx.rs).
    pub ctxs: ctx::CtxTable,
    /// Serialise collective calls made by several threads of this PE on one channel
    /// (THREAD_MULTIPLE only; see `serialize_channel`).
    collective_locks: Box<[Mutex<()>]>,
    /// How long a waiting PE polls before yielding (see wait.rs).
    pub spin: wait::Spin,
    /// What a wait that takes too long does (see wait.rs).
    pub hang: wait::HangPolicy,
    /// GPU mode (nvshmem_init): the GPU, its symmetric heap and the device state.
    pub gpu: Option<gpu::GpuState>,
}

/// How `init_with` starts the runtime (shmem_init uses the defaults).
#[derive(Default)]
pub struct InitOptions {
    /// GPU mode: the symmetric heap is GPU memory (nvshmem_init).
    pub gpu: bool,
    /// A bootstrap already joined (unique-id init); otherwise the launcher's is used.
    pub boot: Option<Box<dyn Bootstrap>>,
}

static STATE: AtomicPtr<State> = AtomicPtr::new(std::ptr::null_mut());
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// The live state, or a "called before init" error (the C boundary names the routine).
#[inline]
pub fn state() -> Result<&'static State> {
    let p = STATE.load(Ordering::Acquire);
    if p.is_null() {
        return Err(not_initialized());
    }
    // SAFETY: a non-null STATE always points at a leaked Box<State> that stays alive until
    // finalize swaps it out; the SHMEM rules forbid calls racing with finalize.
    Ok(unsafe { &*p })
}

#[cold]
#[inline(never)]
fn not_initialized() -> Error {
    Error::of(ErrorKind::NotInitialized, "called before shmem_init (or after shmem_finalize); call shmem_init() (or nvshmem_init()) first")
}

pub fn is_initialized() -> bool {
    !STATE.load(Ordering::Acquire).is_null()
}

/// Collective start-up. Idempotent: a second call while initialised does nothing.
pub fn init(requested_thread_level: i32) -> Result<&'static State> {
    init_with(requested_thread_level, InitOptions::default())
}

pub fn init_with(requested_thread_level: i32, opts: InitOptions) -> Result<&'static State> {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    if let Ok(st) = state() {
        if opts.gpu && st.gpu.is_none() {
            return Err(Error::invalid("nvshmem_init", "shmem_init already started this job for CPU memory; call shmem_finalize first"));
        }
        return Ok(st);
    }
    let cfg = Config::from_env()?;
    log::set(cfg.log_level, usize::MAX);
    let boot = match opts.boot {
        Some(b) => b,
        None => bootstrap::connect(&cfg)?,
    };
    let (me, npes) = (boot.rank(), boot.size());
    log::set(cfg.log_level, me);
    log::trace(|| format!("bootstrap {}: joined as PE {me} of {npes}", boot.name()));
    if me == 0 {
        announce();
    }
    let layout = Layout { npes };
    // SYMMETRIC_SIZE is what the program may allocate; the runtime's header comes on top. GPU
    // mode keeps user data on the GPU: a small host heap, and no shared statics (CUDA's own
    // globals must not be remapped under it).
    let user_size = if opts.gpu { gpu::HOST_HEAP_BYTES } else { cfg.symmetric_size };
    let host_size = crate::heap::heap_bytes(layout.reserved(), user_size).ok_or_else(|| {
        Error::invalid(
            "shmem_init",
            format!("SYMMETRIC_SIZE={} is too large for the address space; set RSHMEM_SYMMETRIC_SIZE lower", cfg.symmetric_size),
        )
    })?;
    let heap = HostHeap::create(boot.as_ref(), host_size, layout.reserved())?;
    log::trace(|| format!("symmetric heap: {host_size} bytes per PE, every PE's mapped"));
    let statics = if cfg.symmetric_statics && !opts.gpu { StaticData::share(boot.as_ref())? } else { None };
    log::trace(|| format!("static data {}", if statics.is_some() { "shared" } else { "not shared" }));
    let mut routes = RouteTable::build(boot.as_ref())?;
    let net = network(&routes, boot.as_ref(), &heap, statics.as_ref())?;
    let headers: Vec<Header> = heap.bases.iter().map(|&b| Header::at(b, layout)).collect();
    let mine = headers[me];
    mine.magic().store(header::MAGIC, Ordering::Relaxed);
    mine.global_exit().store(header::NO_EXIT, Ordering::Relaxed);
    let alloc = Allocator::new(layout.reserved(), host_size);
    let gpu = if opts.gpu { Some(gpu::GpuState::create(boot.as_ref(), &cfg, &mut routes)?) } else { None };
    if let Some(g) = &gpu {
        g.warm_collectives(); // overlaps the barrier below (runtime/gpu/coll_first.rs)
    }
    let thread_level = requested_thread_level.clamp(THREAD_SINGLE, THREAD_MULTIPLE);
    let teams = team::TeamTable::new(me, npes);
    let cfg_spin_us = cfg.wait_spin_us;
    let hang = wait::HangPolicy {
        timeout: (cfg.hang_timeout_s > 0.0).then(|| std::time::Duration::from_secs_f64(cfg.hang_timeout_s)),
        abort: cfg.hang_abort,
    };
    let st = Box::new(State {
        me,
        npes,
        cfg,
        boot,
        multi_host: routes.spans_hosts(),
        shm: Shm::new(&heap.bases, &routes),
        net,
        routes,
        heap,
        statics,
        layout,
        headers,
        alloc: Mutex::new(alloc),
        channels: (0..header::CHANNELS).map(|_| OnceLock::new()).collect(),
        thread_level,
        teams,
        ctxs: ctx::CtxTable::new(npes),
        collective_locks: (0..header::CHANNELS).map(|_| Mutex::new(())).collect(),
        spin: wait::spin_policy(cfg_spin_us, npes, wait::host_cpus()),
        hang,
        gpu,
    });
    // Everyone's header is written before anyone uses it.
    st.boot.barrier()?;
    log::info(&format!("initialised: {npes} PEs, bootstrap {}, heap {} bytes", st.boot.name(), st.cfg.symmetric_size));
    if st.boot.hosts() > 1 && me == 0 {
        log::info(&format!(
            "the job spans {} hosts (PEs {:?} here); every routine reaches the other hosts' PEs over the fabric, collectives through one leader per host where they are hierarchical",
            st.boot.hosts(),
            st.boot.local_pes()
        ));
    }
    let network_name = st.net.as_ref().map(|n| n.describe()).unwrap_or_default();
    for line in st.routes.describe(&network_name).into_iter().chain(st.routes.pair_lines(&network_name)) {
        log::info(&line);
    }
    STATE.store(Box::into_raw(st), Ordering::Release);
    register_exit_hook();
    let st = state()?;
    if let Some(g) = &st.gpu {
        gpu::publish(g)?;
        gpu::proxy::start(st)?;
    }
    Ok(st)
}

/// What PE 0 says at start-up: misspelled settings (WARN), and the version and settings when
/// VERSION / INFO ask for them (stdout, as NVSHMEM and other OpenSHMEMs print them).
fn announce() {
    let names = std::env::vars_os().filter_map(|(k, _)| k.into_string().ok());
    for line in crate::env::unknown_variables(names) {
        log::warn(&line);
    }
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if crate::env::flag_on(crate::env::VERSION) {
        let _ = writeln!(out, "rshmem {}: OpenSHMEM 1.5, NVSHMEM 3.4.5 API", env!("CARGO_PKG_VERSION"));
    }
    if crate::env::flag_on(crate::env::INFO) {
        let _ = writeln!(
            out,
            "rshmem {} settings (RSHMEM_<NAME> overrides SHMEM_<NAME>, which overrides NVSHMEM_<NAME>):",
            env!("CARGO_PKG_VERSION")
        );
        for line in crate::env::settings_report() {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = out.flush();
}

/// The network transport, in jobs whose PEs span hosts (collective: the route table is the same
/// on every PE, so all of them start it or none).
fn network(routes: &RouteTable, boot: &dyn Bootstrap, heap: &HostHeap, statics: Option<&StaticData>) -> Result<Option<Box<dyn Transport>>> {
    if !routes.spans_hosts() {
        return Ok(None);
    }
    let own_heap = (heap.my_base() as *mut u8, heap.size);
    let own_statics = statics.map(|s| (s.range.start as *mut u8, s.range.end - s.range.start));
    let hosts = routes.ids.iter().map(|id| id.hostname.clone()).collect();
    Ok(Some(Box::new(FabricTransport::start(boot, own_heap, own_statics)?.with_hosts(hosts))))
}

/// A program that returns from main (or calls exit(0)) without shmem_finalize is finalized
/// for it, as the specification asks. After a failing exit status nothing collective is tried
/// (the peers may be gone); the launcher sessions are closed either way.
extern "C" fn exit_hook(status: std::ffi::c_int, _arg: *mut std::ffi::c_void) {
    if status == 0 && is_initialized() {
        if let Err(e) = finalize() {
            eprintln!("{}implicit shmem_finalize at exit: {e}", log::prefix());
        }
    }
    // Still initialised (a failing exit, or a finalize that failed): the proxy thread must not
    // outlive the CUDA context, which the driver's exit handler (run after this one) destroys.
    if let Some(g) = state().ok().and_then(|st| st.gpu.as_ref()) {
        gpu::proxy::stop_at_exit(g);
    }
    bootstrap::at_exit();
}

fn register_exit_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    extern "C" {
        /// glibc's atexit variant that also passes the exit status.
        fn on_exit(f: extern "C" fn(std::ffi::c_int, *mut std::ffi::c_void), arg: *mut std::ffi::c_void) -> std::ffi::c_int;
    }
    ONCE.call_once(|| {
        pin_this_library();
        // SAFETY: registers a plain extern "C" function with no argument; pin_this_library
        // keeps it mapped for the life of the process.
        unsafe { on_exit(exit_hook, std::ptr::null_mut()) };
    });
}

/// Marks the shared object holding this code as never to be unloaded, so the exit hook
/// cannot dangle if a program dlclose()s the library.
fn pin_this_library() {
    // SAFETY: dladdr fills `info` for an address inside a loaded object; dlopen with
    // RTLD_NOLOAD only takes another reference to an object that is already loaded.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(exit_hook as *const std::ffi::c_void, &mut info) != 0 && !info.dli_fname.is_null() {
            libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE);
        }
    }
}

/// Collective tear-down: quiet, barrier, unmap everything. The program may init again later.
pub fn finalize() -> Result<()> {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let Ok(st) = state() else { return Ok(()) };
    if let Some(g) = &st.gpu {
        // Every PE's kernels finish before any PE unmaps the heaps they may still touch, and
        // what they posted to the proxy has run before the barrier below lets a peer stop
        // serving (its proxy serves ours until then).
        let _ = g.ctx.synchronize();
        if let Err(e) = gpu::proxy::drain(g).map_err(|e| e.named("shmem_finalize")) {
            log::warn(&e.to_string());
        }
    }
    st.quiet();
    // Across hosts the shared-memory barrier cannot reach the other hosts' PEs (until a network
    // transport does); the bootstrap's barrier below orders the exit there.
    if st.boot.hosts() == 1 {
        st.barrier_all();
    }
    st.boot.barrier()?;
    if let Some(g) = &st.gpu {
        gpu::proxy::stop(g);
    }
    let p = STATE.swap(std::ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: p came from Box::into_raw in init and is dropped exactly once, here.
    drop(unsafe { Box::from_raw(p) });
    log::set(crate::env::LogLevel::Warn, usize::MAX);
    Ok(())
}

impl State {
    /// Holds off other threads' collectives on the world team (and active sets, and the
    /// runtime's own allocation barriers) for the duration of one call; see `serialize_channel`.
    #[inline]
    pub fn serialize_collectives(&self) -> Option<std::sync::MutexGuard<'_, ()>> {
        self.serialize_channel(0)
    }

    /// Holds off other threads' collectives on channel `chan` (one team's) for the duration of
    /// one collective. Only under SHMEM_THREAD_MULTIPLE can two threads of a PE be in
    /// collectives at once: calls on one team share its pair counters, so they must not
    /// interleave, while calls on different teams use different channels and run side by side.
    /// At the other levels the program already calls one at a time and nothing is locked.
    #[inline]
    pub fn serialize_channel(&self, chan: usize) -> Option<std::sync::MutexGuard<'_, ()>> {
        (self.thread_level == THREAD_MULTIPLE).then(|| self.collective_locks[chan].lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// This PE's counts for every peer in channel `chan` (barrier.rs).
    #[inline]
    pub fn peers(&self, chan: usize) -> &[barrier::Peer] {
        self.channels[chan].get_or_init(|| (0..self.npes).map(|_| barrier::Peer::default()).collect())
    }

    pub fn my_header(&self) -> Header {
        self.headers[self.me]
    }

    /// shmem_global_exit: make every PE exit with `status`, now.
    pub fn global_exit(&self, status: i32) -> ! {
        // Only PEs of this host share memory with this one; the launcher ends the others.
        for h in self.boot.local_pes().into_iter().map(|pe| &self.headers[pe]) {
            let _ = h.global_exit().compare_exchange(header::NO_EXIT, status as i64, Ordering::AcqRel, Ordering::Relaxed);
        }
        self.boot.report_global_exit(status);
        exit_flushed(status)
    }

    /// Exits if some PE called shmem_global_exit (checked by every waiting loop).
    #[inline]
    pub fn check_global_exit(&self) {
        let v = self.my_header().global_exit().load(Ordering::Acquire);
        if v != header::NO_EXIT {
            exit_flushed(v as i32);
        }
    }

    /// Completes every outstanding put/AMO from this PE. On shared memory the data is already
    /// in place; a full fence makes it visible in order to every other PE.
    #[inline]
    pub fn quiet(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
        if let Some(net) = &self.net {
            if let Err(e) = net.quiet() {
                fatal(&e.named("shmem_quiet"));
            }
        }
    }

    #[inline]
    pub fn check_pe(&self, pe: i32) -> Result<usize> {
        if pe < 0 || pe as usize >= self.npes {
            return Err(self.bad_pe(pe));
        }
        Ok(pe as usize)
    }

    #[cold]
    pub fn bad_pe(&self, pe: i32) -> Error {
        Error::of(
            ErrorKind::InvalidPe,
            format!("PE {pe} is out of range: this job has {} PEs (valid 0..={}){}", self.npes, self.npes - 1, self.launch_hint()),
        )
    }

    /// For a 1-PE job that no launcher started: how to start several PEs.
    fn launch_hint(&self) -> String {
        if self.npes != 1 || self.boot.name() != "single" {
            return String::new();
        }
        let prog = std::env::args().next().unwrap_or_else(|| "prog".into());
        let srun_tasks = ["SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"].iter().find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok());
        match srun_tasks {
            Some(n) if n > 1 => format!(
                "; srun started {n} tasks without a process-management interface (--mpi=none?), so each is a 1-PE job of its own: \
                 start them with `srun --mpi=pmix -n {n} {prog}`, or with `rshmemrun -n {n} {prog}` on one host"
            ),
            _ => format!(
                "; no launcher started this program, so it is a job of 1 PE: start N PEs with `rshmemrun -n N {prog}` \
                 (or mpiexec.hydra, Open MPI's oshrun/mpirun, srun --mpi=pmix)"
            ),
        }
    }
}

/// Reports a fatal error the OpenSHMEM way: a message naming the routine, then every PE exits
/// non-zero (as shmem_global_exit(1) would). Before init, only this process exits.
pub fn fatal(err: &Error) -> ! {
    log::write_line(&format!("{}{err}", log::prefix()));
    match state() {
        Ok(st) => st.global_exit(1),
        Err(_) => exit_flushed(1),
    }
}

/// Ends the C routine running on this thread with `err`, from code that cannot return an error
/// (an AMO through the network returns the value itself): unwinds to the C boundary
/// (`capi::boundary`), which names the routine and reacts as to any error. No panic hook runs,
/// so nothing is printed on the way.
#[cold]
pub fn raise(err: Error) -> ! {
    std::panic::resume_unwind(Box::new(err))
}

/// Ends this process now with `status` (no atexit handlers: the state they would touch may be
/// broken), after flushing what the program printed: C stdio buffers output to a file or a pipe
/// (every batch job), and `_exit` would drop it.
pub fn exit_flushed(status: i32) -> ! {
    // SAFETY: fflush(NULL) flushes every open C output stream; it reads no memory of ours.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    crate::sys::process::exit_now(status)
}
