//! The progress thread, for providers whose data progress is manual (tcp;ofi_rxm): a peer's
//! put into our memory moves only while someone calls into the provider, and a PE busy with
//! its own work does not. The thread reads the CQ; when fi_trywait says nothing is pending it
//! sleeps on the CQ's wait descriptor until the provider has work (a socket became readable),
//! so an idle job burns no core. Without a wait descriptor it backs off, sleeping up to 1 ms.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{sys, Inner};

pub(super) struct Progress {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Progress {
    pub(super) fn start(inner: Arc<Inner>) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("rshmem-fabric".into())
            .spawn(move || run(&inner, &flag))
            .expect("spawning the fabric progress thread");
        Progress { stop, thread }
    }

    /// Stops the thread (waking it from its wait) and joins it.
    pub(super) fn stop(self, inner: &Inner) {
        self.stop.store(true, Ordering::Release);
        // SAFETY: the CQ is open (Inner outlives this call); fi_cq_signal wakes a waiter.
        unsafe { sys::cq_signal(inner.cq) };
        let _ = self.thread.join();
    }
}

fn run(inner: &Inner, stop: &AtomicBool) {
    let mut idle = Duration::ZERO;
    while !stop.load(Ordering::Acquire) {
        inner.poll();
        if let Some(fd) = inner.wait_fd {
            let mut fids = [inner.cq.cast::<sys::fid>()];
            // SAFETY: fabric and CQ are open; fi_trywait returns 0 when it is safe to block.
            if unsafe { sys::trywait(inner.fabric, fids.as_mut_ptr(), 1) } == 0 {
                let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                // SAFETY: one valid pollfd; the timeout bounds how late a stop is seen.
                unsafe { libc::poll(&mut p, 1, 100) };
            }
            continue;
        }
        idle = (idle * 2).clamp(Duration::from_micros(10), Duration::from_millis(1));
        std::thread::sleep(idle);
    }
}
