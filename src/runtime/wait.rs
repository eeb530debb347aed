//! How a PE waits for another: poll for a while, then give the core away between polls, and
//! leave at once if any PE called shmem_global_exit; a wait that lasts longer than
//! HANG_TIMEOUT says what it waits for.
//!
//! Polling is bounded by time, not by a count (a `pause` costs from a few to tens of ns
//! depending on the CPU). When the job has more PEs on this host than CPUs, the peer we wait
//! for may need our core, so we yield almost at once. Otherwise we poll for up to 1 ms, which
//! covers every normal hand-off without a system call and rides out a peer that was briefly
//! descheduled; but every PROBE_EVERY of polling we yield once and time it: a yield that took
//! long means another thread wanted this core (more threads than CPUs, or a build sharing the
//! machine). Then polling, or even yielding, only keeps the peer we wait for off the CPU (a
//! thread that yields stays runnable and the scheduler ranks it below the peer's competitors),
//! so the rest of the wait sleeps between looks: a short sleep (about 50 µs with the kernel's
//! default timer slack) leaves the core to the others, and a thread waking from sleep is
//! scheduled promptly. WAIT_SPIN_US=<n> polls exactly n µs, then yields, and never probes.
//!
//! While a wait yields, this PE's header names the routine it waits in, so a peer whose own
//! wait times out can say what this PE is doing (see `WaitingIn`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::header::Header;
use super::State;
use crate::error::Error;
use crate::transport::Transport;

/// Polls between two looks at the clock.
const POLLS_PER_CLOCK_READ: u32 = 64;
/// Auto polling: how much polling between two probes of whether the core is contended.
const PROBE_EVERY: Duration = Duration::from_micros(20);
/// A yield that took longer than this ran another thread: the core is contended. An idle
/// core's yield returns in about a microsecond.
const CONTENDED_YIELD: Duration = Duration::from_micros(10);
/// Auto, once the core proved contended: the sleep between looks (the kernel rounds it up by
/// the thread's timer slack, 50 µs by default).
const CONTENDED_SLEEP: Duration = Duration::from_micros(1);

/// A wait for data from another host first drives the transport this long without sleeping
/// (yielding between looks): a message from another host comes within a network round trip or
/// two, sooner than a sleep and its wake-up would see it.
const NETWORK_SPIN: Duration = Duration::from_micros(200);
/// Then it sleeps in the transport between looks, a quarter of the time waited so far (a late
/// message costs at most about a quarter more than the wait itself), at most this long.
const NETWORK_NAP: Duration = Duration::from_millis(1);

/// How long a wait for data from another host that has lasted `waited` sleeps before its next
/// look (zero: yield, then look again). On tcp;ofi_rxm the sleep ends early when bytes arrive
/// on the provider's sockets (its wait descriptor nests their epoll set; traced in
/// results/net-2026-11-29g-target/), so the nap bounds how late a look comes only where
/// nothing wakes it.
pub(crate) fn network_nap(waited: Duration) -> Duration {
    if waited < NETWORK_SPIN {
        return Duration::ZERO;
    }
    (waited / 4).min(NETWORK_NAP)
}

/// How long a waiting PE polls before yielding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spin {
    /// WAIT_SPIN_US=<n>: exactly this long.
    Fixed(Duration),
    /// WAIT_SPIN_US=auto: up to `max`, and not once the core proves contended.
    Auto { max: Duration },
}

/// The polling policy for a job of `local_pes` PEs on a host with `cpus` CPUs.
pub fn spin_policy(setting_us: Option<u32>, local_pes: usize, cpus: usize) -> Spin {
    match setting_us {
        Some(us) => Spin::Fixed(Duration::from_micros(us as u64)),
        None => Spin::Auto { max: if local_pes <= cpus { Duration::from_micros(1000) } else { Duration::ZERO } },
    }
}

/// The CPUs this host's PEs share: what rshmemrun says (it binds each PE to its own share,
/// so a PE's own affinity would undercount), else this process's affinity.
pub fn host_cpus() -> usize {
    let own = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    std::env::var(crate::bootstrap::ENV_CPUS).ok().and_then(|v| v.parse::<usize>().ok()).filter(|n| *n > 0).unwrap_or(own)
}

/// What a wait that outlasts HANG_TIMEOUT does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HangPolicy {
    /// None: never report.
    pub timeout: Option<Duration>,
    /// End the job (as a fatal error) instead of reporting and waiting on.
    pub abort: bool,
}

/// How a wait goes on once polling is over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Then {
    /// Yield between looks (WAIT_SPIN_US=<n>; auto until a yield shows contention).
    Yield,
    /// Auto: yield, and sleep instead once a yield shows the core is contended.
    YieldOrSleep,
    /// Auto on a contended core: sleep between looks.
    Sleep,
}

/// Times the scheduler took this thread off its core for another one (involuntary context
/// switches); one system call, no /proc.
fn preemptions() -> i64 {
    // SAFETY: getrusage fills the rusage struct we pass; RUSAGE_THREAD is Linux's.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut u);
        u.ru_nivcsw as i64
    }
}

/// Whether the core is contended: this thread was preempted since `preempted_before` (the
/// count at the start of the wait), or a yield ran another thread.
fn core_contended(preempted_before: i64) -> bool {
    if preemptions() != preempted_before {
        return true;
    }
    let t = Instant::now();
    std::thread::yield_now();
    yield_ran_another(t.elapsed())
}

/// Whether a yield that took `took` gave the core to another thread.
fn yield_ran_another(took: Duration) -> bool {
    took > CONTENDED_YIELD
}

impl State {
    /// Returns when `done()` is true. `routine` is the SHMEM routine waiting and `what()` says
    /// what it waits for ("for PE 3 ..."); both are used only when the wait takes longer than
    /// HANG_TIMEOUT.
    #[inline]
    pub fn wait_for(&self, routine: &'static str, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
        if done() {
            return;
        }
        if let Some(net) = self.net.as_deref() {
            return self.wait_driving(net, routine, done, what);
        }
        let start = Instant::now();
        if let Some(then) = self.poll(start, &mut done) {
            self.wait_on(routine, start, then, done, what);
        }
    }

    /// Polls while the spin policy allows; None when `done()` became true, else how to go on.
    #[inline]
    fn poll(&self, start: Instant, done: &mut impl FnMut() -> bool) -> Option<Then> {
        let (budget, probing) = match self.spin {
            Spin::Fixed(d) => (d, false),
            Spin::Auto { max } => (max, true),
        };
        let mut next_probe = PROBE_EVERY;
        let mut preempted = None;
        loop {
            for _ in 0..POLLS_PER_CLOCK_READ {
                if done() {
                    return None;
                }
                std::hint::spin_loop();
            }
            let waited = start.elapsed();
            if waited >= budget {
                // Auto: a wait that outlasted the whole budget is not a quick hand-off either.
                return Some(match (probing, budget.is_zero()) {
                    (false, _) => Then::Yield,
                    (true, true) => Then::YieldOrSleep,
                    (true, false) => Then::Sleep,
                });
            }
            if probing && waited >= next_probe {
                let before = *preempted.get_or_insert_with(preemptions);
                if core_contended(before) {
                    return Some(Then::Sleep);
                }
                next_probe = waited + PROBE_EVERY;
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn wait_on(&self, routine: &'static str, start: Instant, mut then: Then, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
        let _shown = WaitingIn::show(self.my_header(), routine);
        let mut next_report = self.hang.timeout.map(|t| (t, start + t));
        while !done() {
            self.check_global_exit();
            match then {
                Then::Yield => std::thread::yield_now(),
                Then::YieldOrSleep if core_contended(preemptions()) => then = Then::Sleep,
                Then::YieldOrSleep => {}
                Then::Sleep => self.nap(),
            }
            if let Some((timeout, at)) = next_report {
                let now = Instant::now();
                if now >= at {
                    self.report_hang(routine, now - start, &what());
                    // Again after twice as long in all, and so on: a few lines, not a flood.
                    next_report = Some((timeout, start + 2 * (now - start)));
                }
            }
        }
    }

    /// `wait_for` for memory that only the network transport writes (a message from a PE on
    /// another host): this thread drives the transport, first without sleeping, then with
    /// growing naps (`network_nap`), instead of polling memory that changes only when someone
    /// drives it.
    pub fn wait_for_network(&self, routine: &'static str, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
        let Some(net) = self.net.as_deref() else { return self.wait_for(routine, done, what) };
        if done() {
            return;
        }
        let start = Instant::now();
        let _shown = WaitingIn::show(self.my_header(), routine);
        let mut next_report = self.hang.timeout.map(|t| start + t);
        loop {
            let nap = network_nap(start.elapsed());
            net.progress(nap);
            if done() {
                return;
            }
            if nap.is_zero() {
                net.pause(NETWORK_SPIN);
            }
            self.check_global_exit();
            if next_report.is_some_and(|at| Instant::now() >= at) {
                let waited = start.elapsed();
                self.report_hang(routine, waited, &what());
                next_report = Some(start + 2 * waited);
            }
        }
    }

    /// `wait_for` in a job that spans hosts: the network transport is driven between looks
    /// (memory may be written by PEs of this host or of others), and a contended wait naps in
    /// the transport, which wakes it as soon as data comes from the network.
    #[inline(never)]
    fn wait_driving(&self, net: &dyn Transport, routine: &'static str, mut done: impl FnMut() -> bool, what: impl Fn() -> String) {
        let mut looks = 0u32;
        let mut done = move || {
            looks = looks.wrapping_add(1);
            if looks.is_multiple_of(POLLS_PER_CLOCK_READ) {
                net.progress(Duration::ZERO);
            }
            done()
        };
        let start = Instant::now();
        if let Some(then) = self.poll(start, &mut done) {
            self.wait_on(routine, start, then, done, what);
        }
    }

    /// The contended wait's pause between looks; in a job spanning hosts data from the
    /// network ends it at once.
    fn nap(&self) {
        match self.net.as_deref() {
            Some(net) => net.progress(CONTENDED_SLEEP),
            None => std::thread::sleep(CONTENDED_SLEEP),
        }
    }

    #[cold]
    fn report_hang(&self, routine: &'static str, waited: Duration, what: &str) {
        let secs = waited.as_secs_f64();
        if self.hang.abort {
            let e = Error::invalid(routine, format!("has waited {secs:.0} s {what}; ending the job (RSHMEM_HANG_ACTION=abort)"));
            super::fatal(&e);
        }
        crate::log::warn(&format!(
            "{routine}: has waited {secs:.0} s {what}; still waiting (RSHMEM_HANG_TIMEOUT sets when this is said, 0 never; RSHMEM_HANG_ACTION=abort ends the job instead)"
        ));
    }

    /// " (PE 3 is in shmem_barrier_all)", or what is known of PE `pe` otherwise.
    pub fn doing(&self, pe: usize) -> String {
        // A PE on another host: its line is read with a fabric get.
        let line = if self.on_other_host(pe) {
            let mut words = [0u64; 8];
            self.header_words(pe, super::header::WAITING_IN_AT, &mut words, "the report of a long wait");
            WaitingIn::parse(&words)
        } else {
            WaitingIn::read(self.headers[pe])
        };
        match line {
            Some(routine) => format!("PE {pe} is in {routine}"),
            None if pe == self.me => format!("PE {pe} is this PE"),
            None => format!("PE {pe} is not waiting in any SHMEM routine: it is computing, blocked outside SHMEM, or past shmem_finalize"),
        }
    }
}

/// The routine a PE is waiting in, shown in its header's waiting-in line (header.rs) while it
/// yields: the name, NUL-padded, word 0 written last; all-zero word 0 = not waiting.
struct WaitingIn {
    header: Header,
}

impl WaitingIn {
    fn show(header: Header, routine: &str) -> WaitingIn {
        let line = header.waiting_in();
        let bytes = routine.as_bytes();
        let word = |i: usize| {
            let mut w = [0u8; 8];
            for (k, b) in w.iter_mut().enumerate() {
                *b = bytes.get(8 * i + k).copied().unwrap_or(0);
            }
            u64::from_le_bytes(w)
        };
        // The last word keeps its final NUL, so a reader always finds the end.
        for (i, slot) in line.iter().enumerate().skip(1) {
            slot.store(if i + 1 < line.len() { word(i) } else { word(i) & 0x00ff_ffff_ffff_ffff }, Ordering::Relaxed);
        }
        line[0].store(word(0), Ordering::Release);
        WaitingIn { header }
    }

    fn read(header: Header) -> Option<String> {
        let line: &[AtomicU64] = header.waiting_in();
        if line[0].load(Ordering::Acquire) == 0 {
            return None;
        }
        WaitingIn::parse(&std::array::from_fn(|i| line[i].load(Ordering::Relaxed)))
    }

    fn parse(words: &[u64; 8]) -> Option<String> {
        if words[0] == 0 {
            return None;
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).take_while(|&b| b != 0).collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Drop for WaitingIn {
    fn drop(&mut self) {
        self.header.waiting_in()[0].store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_follows_the_setting_or_the_cpu_count() {
        assert_eq!(spin_policy(Some(7), 64, 2), Spin::Fixed(Duration::from_micros(7)));
        assert_eq!(spin_policy(None, 2, 2), Spin::Auto { max: Duration::from_micros(1000) });
        assert_eq!(spin_policy(None, 7, 2), Spin::Auto { max: Duration::ZERO });
    }

    #[test]
    fn a_slow_yield_or_a_preemption_means_contended() {
        // Whether a live yield is fast depends on who else uses the machine (a loaded CI host
        // runs other threads at every yield), so the decision is tested on given timings.
        assert!(!yield_ran_another(Duration::from_micros(1)));
        assert!(!yield_ran_another(CONTENDED_YIELD));
        assert!(yield_ran_another(CONTENDED_YIELD + Duration::from_nanos(1)));
        assert!(yield_ran_another(Duration::from_millis(4)));
        // A preemption since the wait began counts whatever the yield does.
        assert!(core_contended(preemptions() - 1));
    }

    #[test]
    fn network_waits_spin_then_nap_in_proportion() {
        assert_eq!(network_nap(Duration::ZERO), Duration::ZERO);
        assert_eq!(network_nap(NETWORK_SPIN - Duration::from_nanos(1)), Duration::ZERO, "a round trip is polled for");
        assert_eq!(network_nap(NETWORK_SPIN), Duration::from_micros(50));
        assert_eq!(network_nap(Duration::from_micros(400)), Duration::from_micros(100));
        assert_eq!(network_nap(Duration::from_secs(3)), NETWORK_NAP, "never sleeps past the longest nap");
    }

    #[test]
    fn waiting_in_round_trips_and_clears() {
        let mut area = vec![0u64; 4096];
        let header = Header::at(area.as_mut_ptr() as usize, super::super::header::Layout { npes: 1 });
        assert_eq!(WaitingIn::read(header), None);
        {
            let _w = WaitingIn::show(header, "shmem_malloc");
            assert_eq!(WaitingIn::read(header).as_deref(), Some("shmem_malloc"));
        }
        assert_eq!(WaitingIn::read(header), None);
        let long = "x".repeat(100);
        let _w = WaitingIn::show(header, &long);
        assert_eq!(WaitingIn::read(header).unwrap().len(), 63);
    }
}
