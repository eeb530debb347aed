//! The proxy transport (issue 19): device operations for PEs on other hosts are handed to one
//! host thread per PE, which posts them through a network `Transport` (libfabric).
//!
//! Device threads write fixed-size commands into lock-free rings (`channel.rs`; the layout is
//! `crate::abi::RshmemProxy*`, the issuing side is device/rshmem_proxy.cuh). The proxy thread
//! (`serve.rs`) takes each lane's commands in ticket order, runs them, returns credits and
//! writes completions back. Where the local memory of a command lives (GPU or host) is the
//! `LocalMemory`'s business. docs/ARCHITECTURE.md ("Proxy transport") has the design.

mod channel;
pub mod gpu;
mod profile;
mod serve;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use channel::{Block, Channel, ChannelMemory};

use crate::error::{Error, ErrorKind, Result};
use crate::transport::Transport;

/// The memory a command's `local` address points into, as the proxy thread reaches it.
pub trait LocalMemory: Send + Sync {
    /// Calls `f` with the `len` bytes at `addr` (the source of a put), in order, as one or more
    /// pieces: `f(offset, piece)`. A piece may be reused once `f` returns (a transport's put
    /// returns when its source may be reused), so memory that needs a copy is read piece by
    /// piece, the next piece copied while `f` sends this one.
    fn with_source(&self, addr: u64, len: usize, f: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<()>;
    /// Calls `f` with a buffer that becomes the `len` bytes at `addr` (the destination of a get).
    fn with_dest(&self, addr: u64, len: usize, f: &mut dyn FnMut(&mut [u8]) -> Result<()>) -> Result<()>;
}

/// Requests from other PEs' proxies that this proxy serves between its own commands (the
/// target side of `gpu::Mailboxes`).
pub trait Inbound: Send + Sync {
    /// Serves what is waiting; true when there was something.
    fn serve(&self) -> Result<bool>;
    /// The proxy finished a round over its lanes: send what its commands left queued.
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    /// The proxy thread is idle for about `nap`: keep what brings requests moving meanwhile.
    fn idle(&self, nap: Duration) {
        std::thread::sleep(nap);
    }
    /// Whether requests this PE sent are not acknowledged yet (an answer is on its way: the
    /// proxy keeps polling instead of napping, `ProxyConfig::awaiting`).
    fn awaiting(&self) -> bool {
        false
    }
}

/// Local addresses are this process's own memory (the host build, and tests).
pub struct ProcessMemory;

impl LocalMemory for ProcessMemory {
    fn with_source(&self, addr: u64, len: usize, f: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<()> {
        // SAFETY: the issuer passed the address of `len` readable bytes it keeps alive until the
        // command completes (blocking forms wait for it; nbi forms until quiet).
        f(0, unsafe { std::slice::from_raw_parts(addr as *const u8, len) })
    }

    fn with_dest(&self, addr: u64, len: usize, f: &mut dyn FnMut(&mut [u8]) -> Result<()>) -> Result<()> {
        // SAFETY: as above, for `len` writable bytes nobody else touches until completion.
        f(unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) })
    }
}

/// How the proxy thread polls.
#[derive(Clone, Copy, Debug)]
pub struct ProxyConfig {
    /// The number of PEs (commands naming another PE stop the proxy with an error).
    pub npes: usize,
    /// How long the thread keeps polling without sleeping after its last command.
    pub spin: Duration,
    /// With PEs on other hosts (an `Inbound`): how long it keeps polling after its last
    /// command or served request. A request to another host is usually answered within a few
    /// network round trips (a ping-pong's reply, the next step of a pipeline); a proxy that
    /// napped meanwhile added its nap to every such exchange (161 µs ping-pong against 119 µs
    /// before requests were pipelined, results/gpu-crosshost-2026-11-27d/).
    pub linger: Duration,
    /// How long it keeps polling while requests it sent are unacknowledged (the answer is on
    /// its way): bounded, so a target that died costs no core for long.
    pub awaiting: Duration,
    /// The longest it sleeps between polls once idle (sleeps double from 1 µs up to this):
    /// the worst-case delay a command posted to an idle proxy sees.
    pub max_sleep: Duration,
}

impl ProxyConfig {
    pub fn new(npes: usize) -> ProxyConfig {
        ProxyConfig {
            npes,
            spin: Duration::from_micros(50),
            linger: Duration::from_millis(2),
            awaiting: Duration::from_millis(100),
            max_sleep: Duration::from_millis(1),
        }
    }
}

/// One PE's proxy thread. Dropping it stops the thread.
pub struct Proxy {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    failure: Arc<Mutex<Option<String>>>,
    channel: Arc<Channel>,
    transport: Arc<dyn Transport>,
}

impl Proxy {
    /// Starts serving `channel`.
    pub fn start(channel: Arc<Channel>, transport: Arc<dyn Transport>, memory: Arc<dyn LocalMemory>, cfg: ProxyConfig) -> Proxy {
        Proxy::start_serving(channel, transport, memory, None, cfg)
    }

    /// Starts serving `channel`, and between its commands what `inbound` has waiting.
    pub fn start_serving(
        channel: Arc<Channel>,
        transport: Arc<dyn Transport>,
        memory: Arc<dyn LocalMemory>,
        inbound: Option<Arc<dyn Inbound>>,
        cfg: ProxyConfig,
    ) -> Proxy {
        let stop = Arc::new(AtomicBool::new(false));
        let failure = Arc::new(Mutex::new(None));
        let (flag, failed) = (stop.clone(), failure.clone());
        channel.set_status(crate::abi::RSHMEM_PROXY_RUNNING);
        let (ch, tr) = (channel.clone(), transport.clone());
        let thread = std::thread::Builder::new()
            .name("rshmem-proxy".into())
            .spawn(move || {
                let parts =
                    serve::Parts { ch: &ch, transport: &*tr, memory: &*memory, inbound: inbound.as_deref(), cfg: &cfg, stop: &flag };
                serve::run(&parts, &failed)
            })
            .expect("spawning the proxy thread");
        Proxy { stop, thread: Some(thread), failure, channel, transport }
    }

    /// Host quiet: waits until every command below `issued[lane]` in each ring has run (the
    /// tickets issuers had taken when the caller read them: all commands of finished kernels),
    /// then completes them at the transport. Commands that ask for no completion (`_nbi`
    /// forms, AMOs without a result) are otherwise complete only at a device quiet, which a
    /// kernel need not call before it ends. A proxy that stopped, or one that runs none of the
    /// waited-for commands for the channel's stall time, is an error naming the ring.
    pub fn drain(&self, issued: &[u64]) -> Result<()> {
        let ch = &*self.channel;
        let stall = Duration::from_nanos(ch.stall_ns());
        for (lane, &want) in issued.iter().enumerate().take(ch.lanes()) {
            let (mut seen, mut since, mut polls) = (ch.consumed(lane).load(Ordering::Acquire), Instant::now(), 0u32);
            while seen < want {
                if let Some(why) = self.failure() {
                    return Err(Error::of(ErrorKind::System, why));
                }
                polls += 1;
                if polls < 100 {
                    std::hint::spin_loop();
                } else {
                    std::thread::sleep(Duration::from_micros(20));
                }
                let now = ch.consumed(lane).load(Ordering::Acquire);
                if now != seen {
                    (seen, since) = (now, Instant::now());
                } else if since.elapsed() > stall {
                    return Err(Error::of(ErrorKind::System, format!(
                            "PE {}: the proxy has run {seen} of the first {want} commands device code posted to proxy ring {lane} and none more for {:.1} s; {}",
                            ch.mype(),
                            since.elapsed().as_secs_f64(),
                            match ch.target_of(lane, seen) {
                                Some(pe) => format!("the next one goes to PE {pe}: is its host reachable?"),
                                None => "the next one is not posted yet: is a kernel still posting?".to_string(),
                            }
                        ),
                    ));
                }
            }
        }
        self.transport.quiet()
    }

    /// Asks the thread to stop without waiting for it (`Drop` joins it).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// At process exit: waits up to `within` for the stopping thread to end, then leaves
    /// everything as it is (no frees in an exit handler, which may run while another thread
    /// is inside malloc). True when the thread had ended.
    pub fn abandon_at_exit(self, within: Duration) -> bool {
        self.request_stop();
        let start = Instant::now();
        let ended = loop {
            let done = self.thread.as_ref().is_none_or(|t| t.is_finished());
            if done || start.elapsed() > within {
                break done;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        std::mem::forget(self);
        ended
    }

    /// Why the proxy thread stopped serving, if it did (the message it also logged).
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// CPU time the proxy thread has used so far.
    pub fn cpu_time(&self) -> Option<Duration> {
        use std::os::unix::thread::JoinHandleExt;
        let thread = self.thread.as_ref()?.as_pthread_t();
        let mut clock: libc::clockid_t = 0;
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: the thread is joinable (not yet joined), so its pthread_t is valid; both out
        // pointers are to live locals.
        let ok = unsafe { libc::pthread_getcpuclockid(thread, &mut clock) == 0 && libc::clock_gettime(clock, &mut ts) == 0 };
        ok.then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Set at program load by each translation unit compiled with `-DRSHMEM_PROXY_ROUTE` (the device
/// headers call `rshmem_proxy_route_compiled` from a static initialiser in their host pass).
static ROUTE_COMPILED: AtomicBool = AtomicBool::new(false);

/// Notes that some of the program's code was compiled with the proxy route.
pub fn note_route_compiled() {
    ROUTE_COMPILED.store(true, Ordering::Relaxed);
}

/// Whether any translation unit of the program said it was compiled with the proxy route.
pub fn route_compiled() -> bool {
    ROUTE_COMPILED.load(Ordering::Relaxed)
}

/// The warning a GPU PE logs once at init when some of its peers are on other hosts (their
/// route is `Route::Proxy`) and no code of the program was compiled with `-DRSHMEM_PROXY_ROUTE`
/// (`route_compiled`): device code reaches them only through that flag; a kernel built without
/// it stops at its first call toward such a peer. Saying so at init tells the user before a
/// kernel traps. None when no peer is remote or the program was built with the flag. Kernels
/// loaded as modules (nvshmemx_cumodule_init) are not seen by the marker: the text says so.
pub fn route_flag_warning(routes: &[crate::transport::Route], route_compiled: bool) -> Option<String> {
    if route_compiled {
        return None;
    }
    let remote: Vec<usize> = routes.iter().enumerate().filter(|(_, r)| **r == crate::transport::Route::Proxy).map(|(pe, _)| pe).collect();
    let (first, last) = (*remote.first()?, *remote.last()?);
    let which = match remote.len() {
        1 => format!("PE {first} is"),
        n if last - first + 1 == n => format!("PEs {first}-{last} are"),
        n => format!("{n} PEs ({first}, ..., {last}) are"),
    };
    Some(format!(
        "{which} on another host, reached from the GPU through the host proxy, but no code of this program was \
         compiled with nvcc -DRSHMEM_PROXY_ROUTE: kernels that call device routines toward {} must be (kernels \
         loaded as modules too), or they stop at the first such call (docs/ARCHITECTURE.md, \"Proxy transport\")",
        if remote.len() == 1 { "it" } else { "them" }
    ))
}

#[cfg(test)]
mod tests {
    use super::route_flag_warning;
    use crate::transport::Route::{Ibgda, P2p, Proxy};

    #[test]
    fn route_flag_warning_names_the_remote_pes_and_the_flag() {
        assert_eq!(route_flag_warning(&[P2p, P2p, Ibgda], false), None);
        assert_eq!(route_flag_warning(&[], false), None);
        let one = route_flag_warning(&[P2p, Proxy], false).expect("a remote peer warns");
        assert!(one.starts_with("PE 1 is on another host"), "{one}");
        assert!(one.contains("no code of this program was compiled with nvcc -DRSHMEM_PROXY_ROUTE"), "{one}");
        assert!(one.contains("\"Proxy transport\""), "{one}");
        let run = route_flag_warning(&[P2p, P2p, Proxy, Proxy], false).unwrap();
        assert!(run.starts_with("PEs 2-3 are") && run.contains("toward them"), "{run}");
        let gaps = route_flag_warning(&[Proxy, P2p, Proxy, P2p, Proxy], false).unwrap();
        assert!(gaps.starts_with("3 PEs (0, ..., 4) are"), "{gaps}");
    }

    #[test]
    fn a_program_built_with_the_route_flag_is_not_warned() {
        assert_eq!(route_flag_warning(&[P2p, Proxy, Proxy], true), None);
    }
}
