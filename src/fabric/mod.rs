//! The fabric layer: one-sided RMA and atomics to other hosts over libfabric, which is loaded
//! at run time (a program that never leaves its host never needs the library).
//!
//! One `Fabric` is one RDM endpoint with everything it needs: the provider chosen for it
//! (`provider.rs`), its fabric, domain, address vector, a completion queue that only ever holds
//! errors (selective completion), and two counters, one for writes and non-fetching atomics,
//! one for reads and fetching atomics. Every operation posted adds one to the matching
//! "posted" count; `quiet` waits until the counters (successes plus errors) catch up. Errors
//! are read from the CQ's error queue and reported with the provider's name and a fix.
//! Providers without automatic data progress get a progress thread that sleeps on the CQ's
//! wait descriptor when there is nothing to do (`progress.rs`).
//!
//! Memory registration (`mr.rs`) follows the memory-registration modes the provider demands;
//! RMA and atomics are in `ops.rs`. The raw interface is `sys`.

mod mr;
mod ops;
mod pack;
mod progress;
mod provider;
mod signals;
mod stage;
pub mod sys;

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use mr::{Region, RemoteRegion};
pub use ops::{AtomicKind, AtomicOp, AtomicSupport, AtomicValue};
pub use provider::ProviderInfo;

use crate::error::{Error, ErrorKind, Result};

/// The libfabric API version we ask for: FI_MR_ENDPOINT and FI_HMEM are there since 1.7/1.10.
pub const API_VERSION: u32 = sys::version(1, 11);

/// Where to find libfabric and which provider to use (RSHMEM_FABRIC_* settings).
#[derive(Clone, Debug)]
pub struct Settings {
    pub library: String,
    /// None: the best provider present (hardware first, else tcp;ofi_rxm). FI_PROVIDER, when
    /// set, is applied by libfabric itself before we see the list.
    pub provider: Option<String>,
    /// None: the first non-loopback interface / NIC the provider lists.
    pub domain: Option<String>,
    /// How long an operation may wait for completions before it is reported as stuck.
    pub timeout: Duration,
    /// Only the job's hosts can reach the network: providers that make their own (guessable)
    /// memory keys may be used (provider.rs).
    pub trusted_network: bool,
}

impl Settings {
    pub fn from_env() -> Result<Settings> {
        let text = |name: crate::env::Setting| {
            let v = crate::env::current(name).1;
            let v = v.trim();
            (!v.is_empty() && v != "auto").then(|| v.to_string())
        };
        let (var, t) = crate::env::current(crate::env::FABRIC_TIMEOUT);
        let secs: f64 = t.trim().parse().ok().filter(|s: &f64| *s > 0.0).ok_or_else(|| {
            Error::invalid_value(format!("environment variable {var}={t:?} is not valid: expected a positive number of seconds"))
        })?;
        let (var, t) = crate::env::current(crate::env::FABRIC_TRUSTED_NETWORK);
        let trusted_network = crate::env::parse_bool(&t)
            .ok_or_else(|| Error::invalid_value(format!("environment variable {var}={t:?} is not valid: expected 1 (trusted) or 0")))?;
        Ok(Settings {
            trusted_network,
            library: text(crate::env::FABRIC_LIBRARY).unwrap_or_else(|| "libfabric.so.1".into()),
            provider: text(crate::env::FABRIC_PROVIDER),
            domain: text(crate::env::FABRIC_DOMAIN),
            timeout: Duration::from_secs_f64(secs),
        })
    }
}

/// A fabric-layer error; the C boundary names the routine.
pub(crate) fn error(message: impl Into<String>) -> Error {
    Error::of(ErrorKind::System, format!("fabric: {}", message.into()))
}

/// The loaded library.
pub struct Library {
    api: sys::Api,
    name: String,
}

impl Library {
    /// Loads libfabric; a named error (with the fix) when it is not installed.
    pub fn load(name: &str) -> Result<Library> {
        let missing = |why: String| {
            Error::of(
                ErrorKind::Unsupported,
                format!(
                    "fabric: libfabric could not be loaded from {name:?} ({why}); install it (Debian/Ubuntu: \
                     apt-get install libfabric1) or name its path in RSHMEM_FABRIC_LIBRARY"
                ),
            )
        };
        let c = CString::new(name).map_err(|_| missing("the name contains a NUL byte".into()))?;
        let api = signals::guarded(&format!("loading libfabric ({name})"), || sys::Api::load(&c)).map_err(missing)?;
        // SAFETY: fi_version takes no arguments and returns the library's API version.
        let have = unsafe { (api.version)() };
        if have < API_VERSION {
            return Err(missing(format!("it is version {}.{}, rshmem needs 1.11 or newer", have >> 16, have & 0xffff)));
        }
        Ok(Library { api, name: name.to_string() })
    }

    /// "1.17" (the library's own API version).
    pub fn version(&self) -> String {
        // SAFETY: as in `load`.
        let v = unsafe { (self.api.version)() };
        format!("{}.{}", v >> 16, v & 0xffff)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Loads libfabric and has it initialise its providers on a thread of its own, for the
/// endpoint that start-up opens later: loading takes ~200 ms (Debian's build pulls in
/// libinfinipath, whose constructor calibrates a clock with usleep loops) and the first
/// fi_getinfo probes every provider, which on this thread overlaps the rest of start-up
/// instead of following it. The library stays loaded (it is never closed); a second load or
/// fi_getinfo meanwhile waits for this one. Failures are left for `Fabric::open` to report.
pub fn preload() {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    let Ok(settings) = Settings::from_env() else { return };
    let spawned = std::thread::Builder::new().name("rshmem-fabric-load".into()).spawn(move || {
        let Ok(lib) = Library::load(&settings.library) else { return };
        let mut list = std::ptr::null_mut();
        signals::guarded("probing libfabric's providers", || {
            // SAFETY: no hints (every provider); the list libfabric returns is freed at once.
            unsafe {
                if (lib.api.getinfo)(API_VERSION, std::ptr::null(), std::ptr::null(), 0, std::ptr::null(), &mut list) == 0 {
                    (lib.api.freeinfo)(list);
                }
            }
        });
    });
    if let Err(e) = spawned {
        crate::log::trace(|| format!("fabric: no thread to load libfabric early ({e}); it loads when needed"));
    }
}

/// The open objects of one endpoint, shared by the handle, its regions and the progress thread.
struct Inner {
    lib: Library,
    info: ProviderInfo,
    fabric: *mut sys::fid_fabric,
    domain: *mut sys::fid_domain,
    av: *mut sys::fid_av,
    cq: *mut sys::fid_cq,
    writes: *mut sys::fid_cntr,
    reads: *mut sys::fid_cntr,
    ep: *mut sys::fid_ep,
    /// The CQ's wait descriptor, where the provider offers one.
    wait_fd: Option<i32>,
    writes_posted: AtomicU64,
    reads_posted: AtomicU64,
    /// The posted counts a wait last saw all complete (a wait finding nothing posted since
    /// returns without calling into the provider).
    writes_settled: AtomicU64,
    reads_settled: AtomicU64,
    /// The first error completion read from the CQ (all later operations fail with it).
    failure: Mutex<Option<String>>,
    timeout: Duration,
    /// Application threads driving the provider themselves (progress.rs: the thread parks).
    drivers: AtomicUsize,
    driven: AtomicU64,
    progress_thread: OnceLock<std::thread::Thread>,
    /// The progress thread is (about to be) asleep on the wait descriptor for long.
    progress_asleep: AtomicBool,
    /// When this endpoint last posted an operation or saw something arrive, in ns since
    /// `epoch` (progress.rs: waits stay awake for `HOT` after it).
    epoch: std::time::Instant,
    last_activity: AtomicU64,
    /// When a yield of a wait last ran another process for long, in ns since `epoch`
    /// (progress.rs `Inner::yield_or_block`).
    yield_starved: AtomicU64,
    /// Peers sent an in-place write since the last quiet (`Fabric::put_in_place`):
    /// a place each was written to, which quiet reads one byte back from.
    unflushed: Mutex<Vec<(Peer, u64, u64)>>,
}

// SAFETY: the domain is opened with FI_THREAD_SAFE (checked when the provider is chosen), so
// every object may be used from any thread; our own state is atomics and a mutex.
unsafe impl Send for Inner {}
// SAFETY: as above.
unsafe impl Sync for Inner {}

impl Inner {
    fn check(&self, what: &str, rc: isize) -> Result<()> {
        if rc >= 0 {
            return Ok(());
        }
        Err(error(format!("{what} failed with provider {}: {}", self.info.provider, self.lib.api.describe(rc))))
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Children before parents: endpoint, then what it was bound to, then domain and fabric.
        let fids: [*mut sys::fid; 7] =
            [self.ep.cast(), self.av.cast(), self.cq.cast(), self.writes.cast(), self.reads.cast(), self.domain.cast(), self.fabric.cast()];
        for f in fids.into_iter().filter(|f| !f.is_null()) {
            // SAFETY: each object was opened by this Inner, is closed once, and nothing uses it
            // any more (the progress thread and every Region hold this Inner alive until now).
            let rc = unsafe { sys::close(f) };
            if rc < 0 {
                crate::log::warn(&format!("fabric: closing a libfabric object failed: {}", self.lib.api.describe(rc)));
            }
        }
    }
}

/// One endpoint on a fabric: the handle the transport uses.
pub struct Fabric {
    inner: Arc<Inner>,
    progress: Option<progress::Progress>,
    /// Staging buffers for puts (stage.rs), set up at the first one that needs them, and
    /// the open pack of small puts (pack.rs); shared with the progress thread.
    out: Arc<pack::Outbox>,
}

impl Fabric {
    /// Loads libfabric, chooses the provider and opens an endpoint with its counters.
    pub fn open(settings: &Settings) -> Result<Fabric> {
        let lib = Library::load(&settings.library)?;
        let info = provider::choose(&lib, settings)?;
        let mut inner = Inner {
            lib,
            info,
            fabric: std::ptr::null_mut(),
            domain: std::ptr::null_mut(),
            av: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            writes: std::ptr::null_mut(),
            reads: std::ptr::null_mut(),
            ep: std::ptr::null_mut(),
            wait_fd: None,
            writes_posted: AtomicU64::new(0),
            reads_posted: AtomicU64::new(0),
            writes_settled: AtomicU64::new(0),
            reads_settled: AtomicU64::new(0),
            failure: Mutex::new(None),
            timeout: settings.timeout,
            drivers: AtomicUsize::new(0),
            driven: AtomicU64::new(0),
            progress_thread: OnceLock::new(),
            unflushed: Mutex::new(Vec::new()),
            progress_asleep: AtomicBool::new(false),
            epoch: std::time::Instant::now(),
            last_activity: AtomicU64::new(0),
            yield_starved: AtomicU64::new(0),
        };
        let opened = signals::guarded(&format!("opening a {} endpoint", inner.info.provider), || open_objects(&mut inner));
        signals::log_restored();
        opened?;
        let inner = Arc::new(inner);
        let out = Arc::new(pack::Outbox::new());
        let progress = (!inner.info.auto_progress).then(|| progress::Progress::start(inner.clone(), out.clone()));
        Ok(Fabric { inner, progress, out })
    }

    /// What was chosen, for logs and rshmem-info.
    pub fn info(&self) -> &ProviderInfo {
        &self.inner.info
    }

    /// Whether a progress thread drives this endpoint (the provider has no automatic progress).
    pub fn has_progress_thread(&self) -> bool {
        self.progress.is_some()
    }

    /// This endpoint's address, to be sent to the peers (fi_getname).
    pub fn address(&self) -> Result<Vec<u8>> {
        let inner = &self.inner;
        let mut len = 0usize;
        // SAFETY: asking for the length only: a zero-length buffer and a valid length pointer.
        let rc = unsafe { sys::getname(inner.ep, std::ptr::null_mut(), &mut len) };
        if rc < 0 && rc != -sys::FI_ETOOSMALL {
            inner.check("fi_getname", rc)?;
        }
        let mut name = vec![0u8; len.max(1)];
        len = name.len();
        // SAFETY: the buffer is `len` bytes long and writable.
        let rc = unsafe { sys::getname(inner.ep, name.as_mut_ptr().cast(), &mut len) };
        inner.check("fi_getname", rc)?;
        name.truncate(len);
        Ok(name)
    }

    /// Adds peers' addresses (from `address` on their side) to the address vector, in order.
    pub fn insert_peers(&self, addresses: &[Vec<u8>]) -> Result<Vec<Peer>> {
        let inner = &self.inner;
        let mut peers = Vec::with_capacity(addresses.len());
        for (i, a) in addresses.iter().enumerate() {
            if a.is_empty() || a.len() > 4096 {
                return Err(error(format!("peer address {i} is {} bytes long: not an endpoint address", a.len())));
            }
            let mut out: sys::fi_addr_t = u64::MAX;
            // SAFETY: one address of the provider's format (its length is implied by the format,
            // and `a` holds a whole one from fi_getname); `out` receives one fi_addr_t.
            let rc = unsafe { sys::av_insert(inner.av, a.as_ptr().cast(), 1, &mut out) };
            if rc != 1 {
                inner.check(&format!("fi_av_insert of peer address {i}"), rc.min(-1))?;
            }
            peers.push(Peer(out));
        }
        Ok(peers)
    }
}

impl Drop for Fabric {
    fn drop(&mut self) {
        if let Err(e) = self.out.send(&self.inner) {
            crate::log::warn(&format!("fabric: the last packed puts could not be sent: {e}"));
        }
        if let Some(p) = self.progress.take() {
            p.stop(&self.inner);
        }
    }
}

/// A peer endpoint in this endpoint's address vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer(pub sys::fi_addr_t);

/// Opens fabric, domain, AV, CQ, counters and endpoint, binds them and enables the endpoint.
fn open_objects(inner: &mut Inner) -> Result<()> {
    let info = inner.info.raw();
    // SAFETY: `info` is a whole fi_info from fi_getinfo (duplicated and owned by ProviderInfo);
    // every out pointer is a field of `inner`, closed in Inner's Drop if this fails half-way.
    unsafe {
        let rc = (inner.lib.api.fabric)((*info).fabric_attr, &mut inner.fabric, std::ptr::null_mut()) as isize;
        inner.check("fi_fabric", rc)?;
        let rc = sys::domain(inner.fabric, info, &mut inner.domain);
        inner.check("fi_domain", rc)?;
        let mut av_attr: sys::fi_av_attr = std::mem::zeroed();
        av_attr.type_ = sys::FI_AV_TABLE;
        let rc = sys::av_open(inner.domain, &mut av_attr, &mut inner.av);
        inner.check("fi_av_open", rc)?;
        let mut cq_attr: sys::fi_cq_attr = std::mem::zeroed();
        cq_attr.format = sys::FI_CQ_FORMAT_CONTEXT;
        cq_attr.wait_obj = if inner.info.auto_progress { sys::FI_WAIT_NONE } else { sys::FI_WAIT_FD };
        if sys::cq_open(inner.domain, &mut cq_attr, &mut inner.cq) < 0 {
            // No wait descriptor on this provider: the progress thread backs off by sleeping.
            cq_attr.wait_obj = sys::FI_WAIT_NONE;
            let rc = sys::cq_open(inner.domain, &mut cq_attr, &mut inner.cq);
            inner.check("fi_cq_open", rc)?;
        }
        if cq_attr.wait_obj == sys::FI_WAIT_FD {
            let mut fd: libc::c_int = -1;
            if sys::control(inner.cq.cast(), sys::FI_GETWAIT, (&mut fd as *mut libc::c_int).cast()) >= 0 && fd >= 0 {
                inner.wait_fd = Some(fd);
            }
        }
        inner.writes = open_counter(inner)?;
        inner.reads = open_counter(inner)?;
        let rc = sys::endpoint(inner.domain, info, &mut inner.ep);
        inner.check("fi_endpoint", rc)?;
        let ep: *mut sys::fid = inner.ep.cast();
        inner.check("fi_ep_bind (address vector)", sys::bind(ep, inner.av.cast(), 0))?;
        let cq_flags = sys::FI_TRANSMIT | sys::FI_RECV | sys::FI_SELECTIVE_COMPLETION;
        inner.check("fi_ep_bind (completion queue)", sys::bind(ep, inner.cq.cast(), cq_flags))?;
        inner.check("fi_ep_bind (write counter)", sys::bind(ep, inner.writes.cast(), sys::FI_WRITE))?;
        inner.check("fi_ep_bind (read counter)", sys::bind(ep, inner.reads.cast(), sys::FI_READ))?;
        inner.check("fi_enable", sys::control(ep, sys::FI_ENABLE, std::ptr::null_mut()))?;
    }
    Ok(())
}

fn open_counter(inner: &Inner) -> Result<*mut sys::fid_cntr> {
    let mut out = std::ptr::null_mut();
    // SAFETY: a zeroed fi_cntr_attr is valid (completion events, no wait object); the domain is
    // open, and the caller stores the counter in `inner` at once, which closes it on Drop.
    let rc = unsafe {
        let mut attr: sys::fi_cntr_attr = std::mem::zeroed();
        attr.events = sys::FI_CNTR_EVENTS_COMP;
        attr.wait_obj = sys::FI_WAIT_NONE;
        sys::cntr_open(inner.domain, &mut attr, &mut out)
    };
    inner.check("fi_cntr_open", rc)?;
    Ok(out)
}

#[cfg(test)]
mod tests;
