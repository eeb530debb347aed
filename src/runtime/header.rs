//! The runtime's own area at the start of every PE's heap: control words peers write into.
//!
//! ```text
//! 0      magic
//! 8      global-exit word (i64::MIN = none; else the status a PE passed to shmem_global_exit)
//! 64     signal counters: one cache line per source PE; PE j adds 1 to counter[j] on PE i to
//!        tell i "one more step done" (barriers and every collective build on these)
//! ...    scratch: SCRATCH_BYTES per PE for collective metadata (sizes, arguments to compare)
//! ```

use std::sync::atomic::{AtomicI64, AtomicU64};

pub const MAGIC: u64 = 0x7273_686d_656d_3031; // "rshmem01"
pub const NO_EXIT: i64 = i64::MIN;
pub const LINE: usize = 64;
pub const COUNTERS_AT: usize = 64;
pub const SCRATCH_BYTES: usize = 4096;

/// Where things are, for a job of `npes` PEs.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub npes: usize,
}

impl Layout {
    pub fn scratch_at(&self) -> usize {
        COUNTERS_AT + LINE * self.npes
    }
    /// Bytes reserved for the header; user allocations start here.
    pub fn reserved(&self) -> usize {
        (self.scratch_at() + SCRATCH_BYTES).div_ceil(4096) * 4096
    }
}

/// Views into one PE's header, as mapped in this process.
#[derive(Clone, Copy)]
pub struct Header {
    base: usize,
    layout: Layout,
}

impl Header {
    pub fn at(base: usize, layout: Layout) -> Header {
        Header { base, layout }
    }
    fn word<T>(&self, offset: usize) -> &'static T {
        // SAFETY: the header lies inside a heap mapping that outlives every use of it (the
        // runtime state owning the mapping is torn down only at finalize), offsets are 8-byte
        // aligned and below layout.reserved(), and atomics are valid for any bit pattern.
        unsafe { &*((self.base + offset) as *const T) }
    }
    pub fn magic(&self) -> &'static AtomicU64 {
        self.word(0)
    }
    pub fn global_exit(&self) -> &'static AtomicI64 {
        self.word(8)
    }
    /// The counter that PE `from` bumps on this PE.
    pub fn counter(&self, from: usize) -> &'static AtomicU64 {
        debug_assert!(from < self.layout.npes);
        self.word(COUNTERS_AT + LINE * from)
    }
    /// This PE's scratch area (SCRATCH_BYTES), as an address.
    pub fn scratch(&self) -> usize {
        self.base + self.layout.scratch_at()
    }
}
