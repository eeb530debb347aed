//! Barriers over any set of PEs, built on the per-pair signal counters in every PE's header.
//!
//! PE j tells PE i "one more step" by adding 1 to counter[j] on PE i; PE i remembers how many
//! it has consumed from j. Counters only grow, so no reset is ever needed, and one pair of PEs
//! can serve every team and active set (SHMEM collectives on a PE are issued in program order).
//! The barrier is a dissemination barrier: ceil(log2 n) rounds of one signal and one wait.

use std::sync::atomic::Ordering;

use super::State;

/// A set of PEs `start, start+stride, ...` (`size` of them): a team or an active set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeSet {
    pub start: usize,
    pub stride: usize,
    pub size: usize,
}

impl PeSet {
    pub fn world(npes: usize) -> PeSet {
        PeSet { start: 0, stride: 1, size: npes }
    }
    /// World PE number of member `i`.
    #[inline]
    pub fn pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }
    /// Member index of world PE `pe`, if it is a member.
    pub fn index_of(&self, pe: usize) -> Option<usize> {
        let d = pe.checked_sub(self.start)?;
        let stride = self.stride.max(1);
        (d % stride == 0 && d / stride < self.size).then_some(d / stride)
    }
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.size).map(|i| self.pe(i))
    }
}

impl State {
    /// Tells PE `to` that this PE finished one more step.
    #[inline]
    pub fn signal_pe(&self, to: usize) {
        self.headers[to].counter(self.me).fetch_add(1, Ordering::Release);
    }

    /// Waits for the next step signal from PE `from`.
    #[inline]
    pub fn await_pe(&self, from: usize) {
        let want = self.consumed[from].fetch_add(1, Ordering::Relaxed) + 1;
        let counter = self.my_header().counter(from);
        self.wait_for(|| counter.load(Ordering::Acquire) >= want);
    }

    /// Synchronises the members of `set` (no memory completion; see `barrier_set`).
    pub fn sync_set(&self, set: &PeSet) {
        let Some(i) = set.index_of(self.me) else { return };
        let n = set.size;
        let mut dist = 1;
        while dist < n {
            self.signal_pe(set.pe((i + dist) % n));
            self.await_pe(set.pe((i + n - dist) % n));
            dist *= 2;
        }
    }

    /// quiet + sync: on return every member's earlier puts are visible everywhere.
    pub fn barrier_set(&self, set: &PeSet) {
        self.quiet();
        self.sync_set(set);
    }

    pub fn barrier_all(&self) {
        self.barrier_set(&PeSet::world(self.npes));
    }
}

#[cfg(test)]
mod tests {
    use super::PeSet;

    #[test]
    fn strided_membership() {
        let s = PeSet { start: 1, stride: 2, size: 3 };
        assert_eq!(s.members().collect::<Vec<_>>(), vec![1, 3, 5]);
        assert_eq!(s.index_of(5), Some(2));
        assert_eq!(s.index_of(4), None);
        assert_eq!(s.index_of(7), None);
        assert_eq!(s.index_of(0), None);
        let one = PeSet { start: 4, stride: 0, size: 1 };
        assert_eq!(one.index_of(4), Some(0));
    }
}
