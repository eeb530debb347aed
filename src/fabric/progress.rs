//! The progress thread, for providers whose data progress is manual (tcp;ofi_rxm): a peer's
//! put into our memory moves only while someone calls into the provider, and a PE busy with
//! its own work does not. The thread reads the CQ, then sleeps (on the CQ's wait descriptor
//! where there is one, which local completions end early) for a nap that grows with the time
//! nothing drove the provider, from 10 µs to 1 ms: a peer's write into our memory makes no
//! completion here, so nothing would wake a longer sleep for it.
//!
//! While an application thread drives the provider itself (waiting for its own operations or
//! for a message from another host: `Driver`), the thread parks: two threads taking turns on
//! the provider's lock for the same completions cost more than either alone, and on a host
//! with fewer cores than busy threads the second one also steals the first one's core. The
//! last driver to leave wakes it.
//!
//! It also sends a pack of small puts that stayed open (pack.rs) once it is `PACK_AGE` old: a
//! put that opens a pack wakes the thread if it sleeps on the wait descriptor.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::ops::nap_after;
use super::pack::Outbox;
use super::{sys, Inner};

/// How long the thread stays parked after an application thread last drove the provider.
const GRACE: Duration = Duration::from_millis(1);

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
    let mut idle_since = Instant::now();
    let mut seen = u64::MAX;
    while !stop.load(Ordering::Acquire) {
        let driven = inner.driven.load(Ordering::Relaxed);
        if inner.drivers.load(Ordering::Acquire) > 0 || driven != seen {
            seen = driven;
            std::thread::park_timeout(GRACE);
            idle_since = Instant::now();
            continue;
        }
        inner.poll();
        if let Some(young) = out.send_if_old(inner) {
            // A pack is open: look again when it is old enough to go.
            inner.block_until_work(young);
            continue;
        }
        // The wait descriptor does not wake us for peers' writes into this PE's memory, which
        // move only while we poll: the nap grows with the idle time (ops.rs `nap_after`).
        let nap = nap_after(idle_since.elapsed());
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
