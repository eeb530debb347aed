//! The progress thread, for providers whose data progress is manual (tcp;ofi_rxm): a peer's
//! put into our memory moves only while someone calls into the provider, and a PE busy with
//! its own work does not. The thread reads the CQ, then sleeps (on the CQ's wait descriptor
//! where there is one, which local completions end early) for a nap that grows with the time
//! nothing drove the provider, from 10 µs to 1 ms: a peer's write into our memory makes no
//! completion here, so nothing would wake a longer sleep for it.
//!
//! While an application thread drives the provider itself (waiting for its own operations or
//! for a message from another host: `Driver`), or posts operations, the thread parks: two threads taking turns on
//! the provider's lock for the same completions cost more than either alone, and on a host
//! with fewer cores than busy threads the second one also steals the first one's core. The
//! last driver to leave wakes it.
//!
//! It also sends a pack of small puts that stayed open (pack.rs) once it is `PACK_AGE` old: a
//! put that opens a pack wakes the thread if it sleeps on the wait descriptor.
//!
//! Hot and idle: the endpoint notes when it last posted an operation or found something
//! arrived on its wait descriptor (a peer's request, reply or write: on tcp;ofi_rxm the
//! descriptor nests the sockets' epoll set, so it is readable while a peer's bytes are
//! unread). For `HOT` after that, an application thread waiting on the network (a wait for
//! remote-written memory, a barrier across hosts, a quiet) polls and yields between looks
//! instead of sleeping: a sleeping thread takes tens of µs to wake on a busy VM (the TCP
//! ping-pong floor was 84-88 µs round trip here), and on tcp;ofi_rxm a PE's reads and
//! atomics wait for the *target's* provider to be driven. A job that stops communicating
//! is idle again after `HOT` and sleeps as before. The progress thread's naps start short
//! again after each activity too, but it never spins: it runs beside the application's
//! threads, often on fewer cores than busy threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::ops::nap_after;
use super::pack::Outbox;
use super::{sys, Inner};

/// How long the thread stays parked after an application thread last drove the provider.
const GRACE: Duration = Duration::from_millis(1);

/// How long after the endpoint last posted or received something its waits stay awake.
pub(super) const HOT: Duration = Duration::from_millis(2);

/// A yield that took longer than this handed the core to another process for a time slice.
const STARVED_YIELD: Duration = Duration::from_micros(500);
/// After such a yield, how long waits sleep on the wait descriptor instead of yielding.
const STARVED_FOR: Duration = Duration::from_millis(50);

pub(super) struct Progress {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Progress {
    pub(super) fn start(inner: Arc<Inner>, out: Arc<Outbox>) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("rshmem-fabric".into())
            .spawn(move || run(&inner, &out, &flag))
            .expect("spawning the fabric progress thread");
        Progress { stop, thread }
    }

    /// Stops the thread (waking it from its wait or its parking) and joins it.
    pub(super) fn stop(self, inner: &Inner) {
        self.stop.store(true, Ordering::Release);
        // SAFETY: the CQ is open (Inner outlives this call); fi_cq_signal wakes a waiter.
        unsafe { sys::cq_signal(inner.cq) };
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
}

/// An application thread driving the provider: while one lives, the progress thread parks.
pub(super) struct Driver<'a>(&'a Inner);

impl Inner {
    pub(super) fn driver(&self) -> Driver<'_> {
        self.drivers.fetch_add(1, Ordering::AcqRel);
        self.driven.fetch_add(1, Ordering::Relaxed);
        Driver(self)
    }
}

impl Drop for Driver<'_> {
    fn drop(&mut self) {
        self.0.drivers.fetch_sub(1, Ordering::AcqRel);
    }
}

fn run(inner: &Inner, out: &Outbox, stop: &AtomicBool) {
    let _ = inner.progress_thread.set(std::thread::current());
    let mut seen = u64::MAX;
    while !stop.load(Ordering::Acquire) {
        let driven = inner.driven.load(Ordering::Relaxed);
        if inner.drivers.load(Ordering::Acquire) > 0 || driven != seen {
            seen = driven;
            std::thread::park_timeout(GRACE);
            continue;
        }
        inner.arrived();
        inner.poll();
        if let Some(young) = out.send_if_old(inner) {
            // A pack is open: look again when it is old enough to go.
            inner.block_until_work(young);
            continue;
        }
        // The wait descriptor wakes us when a peer's bytes arrive, but a sleeper wakes slowly
        // and an endpoint without one has only the clock: the nap grows with the time since
        // anything moved (ops.rs `nap_after`), from 10 µs just after traffic to 1 ms.
        let nap = nap_after(inner.quiet_for());
        if inner.wait_fd.is_some() {
            // Asleep first, then the last look: a put opening a pack after that look sees the
            // flag and wakes us (Inner::wake_for_pack).
            inner.progress_asleep.store(true, Ordering::SeqCst);
            if !out.is_open() {
                inner.block_until_work(nap);
            }
            inner.progress_asleep.store(false, Ordering::SeqCst);
            continue;
        }
        std::thread::sleep(nap);
    }
}

impl Inner {
    /// A put opened a pack: wakes the progress thread if it sleeps on the wait descriptor, so
    /// the pack is sent within `PACK_AGE` even if this PE posts nothing more. (Without one,
    /// the thread sleeps at most 1 ms.)
    pub(super) fn wake_for_pack(&self) {
        if self.progress_asleep.load(Ordering::SeqCst) {
            // SAFETY: the CQ is open; fi_cq_signal wakes a thread waiting on it.
            unsafe { sys::cq_signal(self.cq) };
        }
    }

    /// Notes that the endpoint posted or received something now (waits stay awake for `HOT`).
    pub(super) fn note_activity(&self) {
        self.last_activity.store(self.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// The time since the endpoint last posted or received something.
    pub(super) fn quiet_for(&self) -> Duration {
        self.since(self.last_activity.load(Ordering::Relaxed))
    }

    /// The time since `at` (ns since `epoch`).
    fn since(&self, at: u64) -> Duration {
        let now = self.epoch.elapsed().as_nanos() as u64;
        Duration::from_nanos(now.saturating_sub(at))
    }

    /// Whether something waits on the wait descriptor (a peer's bytes, a completion), without
    /// sleeping; notes it as activity. Looked at before the provider is driven, which reads it.
    pub(super) fn arrived(&self) -> bool {
        let Some(fd) = self.wait_fd else { return false };
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, no timeout.
        let ready = unsafe { libc::poll(&mut p, 1, 0) } > 0;
        if ready {
            self.note_activity();
        }
        ready
    }

    /// A pause in an application thread's wait on this endpoint: a yield while the endpoint is
    /// hot (it posted or received something in the last `HOT`), else a sleep until the
    /// provider has work or `max` passes.
    pub(super) fn pause(&self, max: Duration) {
        if self.quiet_for() < HOT {
            self.yield_or_block(max);
        } else {
            self.block_until_work(max);
        }
    }

    /// A yield, unless a recent yield ran another process for longer than `STARVED_YIELD`:
    /// then, for `STARVED_FOR`, a sleep on the wait descriptor (`block_until_work`) instead.
    /// Beside processes that never sleep (2 busy loops on 2 cores) a yielding PE got the core
    /// back only when the other's time slice ended, about 2 ms later (fetch_add 1.95 ms,
    /// ~1,000 slices/s, 2% CPU: results/net-2026-11-28c-multi/); a sleeper woken by the
    /// network is run at once (fetch_add 84-267 µs instead of 1.5-2.3 ms there:
    /// results/net-2026-11-28d-load/). Alone on its core a yield takes ~1 µs: no change.
    pub(super) fn yield_or_block(&self, max: Duration) {
        let starved_at = self.yield_starved.load(Ordering::Relaxed);
        if starved_at != 0 && self.since(starved_at) < STARVED_FOR {
            self.block_until_work(max);
            return;
        }
        let t = std::time::Instant::now();
        std::thread::yield_now();
        if t.elapsed() > STARVED_YIELD {
            // (never 0: the yield itself took time since `epoch`)
            self.yield_starved.store(self.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
    }

    /// Sleeps on the CQ's wait descriptor until the provider has work or `max` passes, when
    /// fi_trywait says nothing is pending (else returns at once: poll again). Without a wait
    /// descriptor it yields the core.
    pub(super) fn block_until_work(&self, max: Duration) {
        let Some(fd) = self.wait_fd else {
            std::thread::yield_now();
            return;
        };
        let mut fids = [self.cq.cast::<sys::fid>()];
        // SAFETY: fabric and CQ are open; fi_trywait returns 0 when it is safe to block.
        if unsafe { sys::trywait(self.fabric, fids.as_mut_ptr(), 1) } == 0 {
            let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            let t = libc::timespec { tv_sec: max.as_secs() as libc::time_t, tv_nsec: max.subsec_nanos() as libc::c_long };
            // SAFETY: one valid pollfd and timeout; no signal mask change.
            unsafe { libc::ppoll(&mut p, 1, &t, std::ptr::null()) };
        }
    }
}
