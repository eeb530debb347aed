//! Where a request between hosts spends its time (issue 19: the GPU ping-pong took ~100 µs
//! against a 26 µs TCP round trip). The target side of the mailboxes (`gpu::Mailboxes::serve`)
//! adds up, over the requests it served: how long after the source wrote a put or get into the
//! ring it was seen whole here (the source stamps its wall-clock time into the header's
//! `result` word, which only AMOs use; the namespaced hosts of one machine share that clock),
//! the copy into or out of GPU memory, the stream sync before the acknowledgement and the
//! acknowledgement's write. Always on (a few clock reads per request, against microseconds of
//! network); logged at finalize with RSHMEM_DEBUG=INFO.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Nanoseconds since the epoch on the wall clock (0 if the clock is before it).
pub fn wall_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Sums over the requests a PE served (nanoseconds).
#[derive(Default)]
pub struct Profile {
    requests: AtomicU64,
    stamped: AtomicU64,
    lag: AtomicU64,
    copy: AtomicU64,
    rounds: AtomicU64,
    settle: AtomicU64,
    ack: AtomicU64,
    /// Acknowledgements from targets seen by this PE as a source, and their summed lag.
    acks_seen: AtomicU64,
    ack_lag: AtomicU64,
}

fn add(sum: &AtomicU64, d: Duration) {
    sum.fetch_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// Counts one lag from `stamp` (a `wall_ns` of another process on this machine; 0: none) to now.
fn lagged(count: &AtomicU64, sum: &AtomicU64, stamp: u64) {
    let now = wall_ns();
    if stamp != 0 && now >= stamp {
        count.fetch_add(1, Ordering::Relaxed);
        sum.fetch_add(now - stamp, Ordering::Relaxed);
    }
}

impl Profile {
    /// A request seen whole: `stamp` is the source's `wall_ns` when it wrote it (0: none).
    pub fn arrived(&self, stamp: u64) {
        lagged(&self.stamped, &self.lag, stamp);
    }
    /// An acknowledgement seen by the source: `stamp` is the target's `wall_ns` when it wrote it.
    pub fn ack_seen(&self, stamp: u64) {
        lagged(&self.acks_seen, &self.ack_lag, stamp);
    }
    /// A request served (its copy or AMO took since `began`).
    pub fn served(&self, began: Instant) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        add(&self.copy, began.elapsed());
    }
    /// A round's stream sync and acknowledgement, each from its start.
    pub fn acknowledged(&self, settle: Duration, ack: Duration) {
        self.rounds.fetch_add(1, Ordering::Relaxed);
        add(&self.settle, settle);
        add(&self.ack, ack);
    }

    /// One line for the log, or None when nothing was served.
    pub fn summary(&self) -> Option<String> {
        let n = self.requests.load(Ordering::Relaxed);
        let acks = self.acks_seen.load(Ordering::Relaxed);
        if n == 0 && acks == 0 {
            return None;
        }
        let avg = |sum: &AtomicU64, count: u64| sum.load(Ordering::Relaxed) as f64 / count.max(1) as f64 / 1000.0;
        let (stamped, rounds) = (self.stamped.load(Ordering::Relaxed), self.rounds.load(Ordering::Relaxed));
        Some(format!(
            "proxy profile: served {n} requests from other hosts in {rounds} rounds; per put/get ({stamped} stamped): written by \
             the source -> seen whole here {:.1} us; per request: copy or AMO {:.1} us; per round: stream sync {:.1} us, \
             acknowledgement {:.1} us; as a source: {acks} acknowledgements, written by the target -> seen here {:.1} us",
            avg(&self.lag, stamped),
            avg(&self.copy, n),
            avg(&self.settle, rounds),
            avg(&self.ack, rounds),
            avg(&self.ack_lag, acks)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_averages_what_it_was_told_and_says_nothing_when_empty() {
        let p = Profile::default();
        assert_eq!(p.summary(), None);
        p.arrived(wall_ns() - 40_000);
        p.arrived(0); // unstamped (an AMO): no lag
        p.served(Instant::now());
        p.served(Instant::now());
        p.acknowledged(Duration::from_micros(10), Duration::from_micros(4));
        let s = p.summary().expect("two requests served");
        assert!(s.contains("served 2 requests") && s.contains("in 1 rounds") && s.contains("(1 stamped)"), "{s}");
        assert!(s.contains("stream sync 10.0 us") && s.contains("acknowledgement 4.0 us"), "{s}");
        assert!(s.contains("as a source: 0 acknowledgements"), "{s}");
        let lag: f64 = s.split("seen whole here ").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).expect("a lag");
        assert!((40.0..1_000_000.0).contains(&lag), "lag {lag} us in {s}");
        let acks = Profile::default();
        acks.ack_seen(wall_ns() - 20_000);
        let s = acks.summary().expect("an acknowledgement seen");
        assert!(s.contains("served 0 requests") && s.contains("as a source: 1 acknowledgements"), "{s}");
        let lag: f64 = s.split("seen here ").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).expect("an ack lag");
        assert!((20.0..1_000_000.0).contains(&lag), "ack lag {lag} us in {s}");
    }
}
