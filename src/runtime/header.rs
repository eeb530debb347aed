//! The runtime's own area at the start of every PE's heap: control words peers write into.
//!
//! ```text
//! 0      magic
//! 8      global-exit word (i64::MIN = none; else the status a PE passed to shmem_global_exit)
//! 64     waiting-in line: the routine this PE is waiting in, NUL-padded; zero while it is not
//!        (written by wait.rs; read by a peer whose wait outlasts HANG_TIMEOUT)
//! 128    channels: CHANNELS of them, one per team handle (channel 0: the world team and
//!        active sets), so that collectives on different teams never share a message stream
//!        and may run at the same time on different threads. Each channel holds:
//!        mailboxes: one per source PE, MAILBOX_BYTES each. PE j writes only into mailbox j
//!          of PE i, to send i a message (barriers and every collective build on these; see
//!          barrier.rs for the protocol). A mailbox is SLOTS slots; a slot is SLOT_LINES lines:
//!            line 0     seq (the message's number; the receiver polls it), tag, ack, words 0..5
//!            lines 1-2  words 5..21 (arguments and small payloads)
//!            line 3     the sending routine's name, NUL-padded (read only to name a mismatch)
//!        acks: one line per source PE. PE i writes into line j how many of j's messages it
//!          has finished with; j reads it only when it has no fresher word (barrier.rs)
//! ...    scratch: SCRATCH_BYTES per PE (allocation-agreement words of memory.rs)
//! ```
//! The heap's memory file is backed on first touch, so a channel costs memory only once a team
//! with its handle has communicated.
//! Line 0 carries everything a barrier needs and the arguments of most collectives, so a
//! message usually costs the receiver one cache line.

use std::sync::atomic::{AtomicI64, AtomicU64};

pub const MAGIC: u64 = 0x7273_686d_656d_3031; // "rshmem01"
pub const NO_EXIT: i64 = i64::MIN;
pub const LINE: usize = 64;
pub const WAITING_IN_AT: usize = 64;
pub const MAILBOXES_AT: usize = 128;
/// Message slots per mailbox: message m goes to slot m % SLOTS.
pub const SLOTS: usize = 4;
pub const SLOT_LINES: usize = 4;
pub const SLOT_BYTES: usize = SLOT_LINES * LINE;
pub const MAILBOX_BYTES: usize = SLOTS * SLOT_BYTES;
/// Message words per slot (after seq, tag and ack, before the name line).
pub const MSG_WORDS: usize = (SLOT_BYTES - LINE) / 8 - 3;
/// Bytes of the name line.
pub const NAME_BYTES: usize = LINE;
pub const SCRATCH_BYTES: usize = 4096;
/// Message channels: one per team handle a split can give (team.rs).
pub const CHANNELS: usize = super::team::MAX_TEAMS;

/// Where things are, for a job of `npes` PEs.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub npes: usize,
}

impl Layout {
    /// Bytes of one channel: a mailbox and an ack line per source PE.
    fn channel_bytes(&self) -> usize {
        (MAILBOX_BYTES + LINE) * self.npes
    }
    pub fn channel_at(&self, chan: usize) -> usize {
        MAILBOXES_AT + self.channel_bytes() * chan
    }
    pub fn acks_at(&self, chan: usize) -> usize {
        self.channel_at(chan) + MAILBOX_BYTES * self.npes
    }
    /// Offset of slot `s` of the mailbox PE `from` writes in channel `chan` (from the heap's
    /// start: the same on every PE, so a PE on another host is written at this offset).
    #[inline]
    pub fn slot_at(&self, chan: usize, from: usize, s: usize) -> usize {
        assert!(chan < CHANNELS, "message channel {chan} is beyond the header");
        debug_assert!(from < self.npes && s < SLOTS);
        self.channel_at(chan) + MAILBOX_BYTES * from + SLOT_BYTES * s
    }
    /// Offset of the ack line of source PE `from` in channel `chan`.
    #[inline]
    pub fn ack_at(&self, chan: usize, from: usize) -> usize {
        assert!(chan < CHANNELS, "message channel {chan} is beyond the header");
        debug_assert!(from < self.npes);
        self.acks_at(chan) + LINE * from
    }
    pub fn scratch_at(&self) -> usize {
        self.channel_at(CHANNELS)
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
    /// The waiting-in line (8 words; see wait.rs).
    pub fn waiting_in(&self) -> &'static [AtomicU64; 8] {
        self.word(WAITING_IN_AT)
    }
    /// Slot `s` (< SLOTS) of the mailbox that PE `from` writes on this PE in channel `chan`.
    #[inline]
    pub fn slot(&self, chan: usize, from: usize, s: usize) -> Slot {
        Slot { base: self.base + self.layout.slot_at(chan, from, s) }
    }
    /// The word where this PE says how many of PE `from`'s messages in channel `chan` it has
    /// finished with.
    #[inline]
    pub fn ack(&self, chan: usize, from: usize) -> &'static AtomicU64 {
        self.word(self.layout.ack_at(chan, from))
    }
    /// The word at byte offset `off` (8-byte aligned, inside the header), as an address.
    pub fn word_at(&self, off: usize) -> *mut u64 {
        debug_assert!(off.is_multiple_of(8) && off < self.layout.reserved());
        (self.base + off) as *mut u64
    }
    /// This PE's scratch area (SCRATCH_BYTES), as an address.
    pub fn scratch(&self) -> usize {
        self.base + self.layout.scratch_at()
    }
}

/// One message slot (see the layout above), as mapped in this process.
#[derive(Clone, Copy)]
pub struct Slot {
    base: usize,
}

impl Slot {
    fn at(&self, offset: usize) -> &'static AtomicU64 {
        // SAFETY: a slot lies inside a header (see Header::word); offset < SLOT_BYTES and is
        // 8-byte aligned, as every caller below guarantees.
        unsafe { &*((self.base + offset) as *const AtomicU64) }
    }
    #[inline]
    pub fn seq(&self) -> &'static AtomicU64 {
        self.at(0)
    }
    #[inline]
    pub fn tag(&self) -> &'static AtomicU64 {
        self.at(8)
    }
    /// How many of the receiver's messages the sender had finished with when it sent this.
    #[inline]
    pub fn ack(&self) -> &'static AtomicU64 {
        self.at(16)
    }
    /// Message word `i` (< MSG_WORDS).
    #[inline]
    pub fn word(&self, i: usize) -> &'static AtomicU64 {
        assert!(i < MSG_WORDS, "message word {i} is beyond the slot");
        self.at(24 + 8 * i)
    }
    /// Word `i` (< NAME_BYTES / 8) of the name line.
    #[inline]
    pub fn name_word(&self, i: usize) -> &'static AtomicU64 {
        debug_assert!(i < NAME_BYTES / 8);
        self.at(SLOT_BYTES - NAME_BYTES + 8 * i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_fill_whole_lines() {
        assert_eq!(MSG_WORDS, 21);
        assert_eq!(24 + 8 * MSG_WORDS, SLOT_BYTES - NAME_BYTES);
        assert_eq!(MAILBOX_BYTES % (2 * LINE), 0);
        let l = Layout { npes: 3 };
        assert_eq!(l.acks_at(0), 128 + 3 * 1024);
        assert_eq!(l.channel_at(1), 128 + 3 * 1024 + 3 * 64);
        assert_eq!(l.acks_at(2), 128 + 2 * 3 * 1088 + 3 * 1024);
        assert_eq!(l.scratch_at(), 128 + CHANNELS * 3 * 1088);
        assert_eq!(l.reserved() % 4096, 0);
        assert!(l.reserved() >= l.scratch_at() + SCRATCH_BYTES);
    }
}
