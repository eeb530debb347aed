//! How a PE waits for another: poll for a while, then give the core away between polls, and
//! leave at once if any PE called shmem_global_exit.
//!
//! Polling is bounded by time, not by a count (a `pause` costs from a few to tens of ns
//! depending on the CPU). When the job has more PEs on this host than CPUs, the peer we wait
//! for may need our core, so we yield almost at once; otherwise we poll for WAIT_SPIN_US
//! (default 1 ms), which covers every normal hand-off without a system call and rides out a
//! peer that was briefly descheduled by unrelated load (yielding then would cost a whole
//! scheduler slice).

use std::time::{Duration, Instant};

use super::State;

/// Polls between two looks at the clock.
const POLLS_PER_CLOCK_READ: u32 = 64;

/// The polling budget for a job of `local_pes` PEs on a host with `cpus` CPUs.
pub fn spin_budget(setting_us: Option<u32>, local_pes: usize, cpus: usize) -> Duration {
    let us = setting_us.unwrap_or(if local_pes <= cpus { 1000 } else { 0 });
    Duration::from_micros(us as u64)
}

impl State {
    /// Returns when `done()` is true.
    #[inline]
    pub fn wait_for(&self, mut done: impl FnMut() -> bool) {
        if done() {
            return;
        }
        let start = Instant::now();
        loop {
            for _ in 0..POLLS_PER_CLOCK_READ {
                if done() {
                    return;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= self.spin_budget {
                break;
            }
        }
        while !done() {
            self.check_global_exit();
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::spin_budget;
    use std::time::Duration;

    #[test]
    fn budget_follows_the_setting_or_the_cpu_count() {
        assert_eq!(spin_budget(Some(7), 64, 2), Duration::from_micros(7));
        assert_eq!(spin_budget(None, 2, 2), Duration::from_micros(1000));
        assert_eq!(spin_budget(None, 7, 2), Duration::ZERO);
    }
}
