//! Messages between PEs, and the barriers built on them.
//!
//! # Messages
//! PE j sends PE i its m-th message (m = 1, 2, ...) by writing into slot m % 2 of mailbox j in
//! PE i's header (header.rs): the name line and words first, then the tag, then `seq = m` with
//! Release. PE i, expecting its m-th message from j, polls that slot until `seq >= m` (Acquire)
//! and reads it. Each side counts on its own (`State::sent`, `State::consumed`), so sending is
//! two plain stores into one line (no read-modify-write, no lock) and nothing is ever reset;
//! one pair of PEs serves every team and active set, because SHMEM programs issue their
//! collectives in the same order on every PE that takes part.
//!
//! The tag says which routine sent the message (0: a barrier or sync; else a hash of the
//! routine's name, whose text rides in the name line), so a PE that receives a message from a
//! different collective reports both routines by name instead of misreading the words.
//!
//! # When a slot may be reused (the step rule)
//! Message m+2 overwrites message m. That is safe because every collective is a sequence of
//! *steps* that obey three rules:
//! 1. in one step a PE sends at most one message to a given peer;
//! 2. a PE reads every message it receives in a step during that step;
//! 3. a PE leaves a step only when every peer it sent to in the step has entered the step
//!    (it has heard from each of them in the step, directly or, in a dissemination barrier,
//!    through others).
//!
//! Then if i sends m to j in step s, message m+1 goes out in a later step s' (rule 1), and i
//! sends m+2 only after leaving s'. By then j has entered s' (rule 3), so it has left s and has
//! read m (rule 2). Steps are:
//! - a dissemination round sequence (`sync_set`): in the round at distance d a member sends to
//!   the member d after it and hears from the one d before it; the distances are distinct and
//!   below n, so no peer gets two messages, and finishing means every member has entered;
//! - a full exchange (coll.rs): every member sends to every other one, then receives from each;
//! - a rooted round trip (coll.rs, large broadcasts): the root sends to each member and waits
//!   for each member's reply; a member receives, works, replies.
//!
//! Within each step every message sent is received by its addressee in the same step, so the
//! counts on both sides of every pair stay equal between collectives.

use std::sync::atomic::Ordering;

use super::header::{Slot, MSG_WORDS, NAME_BYTES};
use super::State;
use crate::error::{Error, ErrorKind, Result};

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
    #[inline]
    pub fn index_of(&self, pe: usize) -> Option<usize> {
        let d = pe.checked_sub(self.start)?;
        if self.stride == 1 {
            return (d < self.size).then_some(d);
        }
        let stride = self.stride.max(1);
        (d % stride == 0 && d / stride < self.size).then_some(d / stride)
    }
    pub fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.size).map(|i| self.pe(i))
    }
}

const NAME_WORDS: usize = NAME_BYTES / 8;

/// Who is sending: the routine, its tag and its name as it travels in the name line. The C
/// entry points build theirs at compile time (`const`), so a call pays nothing for it.
#[derive(Clone, Copy)]
pub struct Caller {
    pub routine: &'static str,
    /// 0 for barriers and syncs; else a hash of the name.
    pub tag: u64,
    name: [u64; NAME_WORDS],
}

/// What a message from a barrier or sync is reported as (they send no name).
const SYNC_NAME: &str = "a barrier or sync (shmem_barrier_all, shmem_sync_all, shmem_team_sync, shmem_barrier, shmem_sync, or the one inside shmem_malloc, shmem_free or shmem_finalize)";

impl Caller {
    /// A barrier or sync: tag 0, no name line.
    pub const fn sync(routine: &'static str) -> Caller {
        Caller { routine, tag: 0, name: [0; NAME_WORDS] }
    }
    /// A data collective (or a team split): its messages carry a tag and the name.
    pub const fn collective(routine: &'static str) -> Caller {
        let name = name_words(routine);
        Caller { routine, tag: tag_of(&name), name }
    }
}

/// The routine name, NUL-padded into little-endian words (at most NAME_BYTES - 1 bytes).
const fn name_words(name: &str) -> [u64; NAME_WORDS] {
    let b = name.as_bytes();
    let mut w = [0u64; NAME_WORDS];
    let mut i = 0;
    while i < b.len() && i < NAME_BYTES - 1 {
        w[i / 8] |= (b[i] as u64) << (8 * (i % 8));
        i += 1;
    }
    w
}

fn words_name(w: &[u64; NAME_WORDS]) -> String {
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A nonzero 64-bit hash of the name words (equal names, equal tags).
const fn tag_of(name: &[u64; NAME_WORDS]) -> u64 {
    let mut h = 0x243f_6a88_85a3_08d3u64;
    let mut i = 0;
    while i < NAME_WORDS && name[i] != 0 {
        h = (h ^ name[i]).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
        i += 1;
    }
    h | 1
}

/// A received message, readable until this PE sends its next message to the sender.
#[derive(Clone, Copy)]
pub struct Msg {
    pub slot: Slot,
    /// Sender's world PE number.
    pub from: usize,
}

impl Msg {
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.slot.word(i).load(Ordering::Relaxed)
    }
}

impl State {
    /// Sends PE `to` a message: the words of `head` and `own` (at most MSG_WORDS together),
    /// then `bytes` (raw, right after the words), tagged with the caller.
    #[inline]
    pub fn send(&self, to: usize, caller: &Caller, head: &[u64], own: &[u64], bytes: Option<(*const u8, usize)>) {
        let m = self.sent[to].load(Ordering::Relaxed) + 1;
        self.sent[to].store(m, Ordering::Relaxed);
        let slot = self.headers[to].slot(self.me, (m % 2) as usize);
        if caller.tag != 0 {
            for (i, &w) in caller.name.iter().enumerate() {
                slot.name_word(i).store(w, Ordering::Relaxed);
            }
        }
        for (i, &w) in head.iter().chain(own).enumerate() {
            slot.word(i).store(w, Ordering::Relaxed);
        }
        if let Some((src, n)) = bytes.filter(|&(_, n)| n > 0) {
            let at = head.len() + own.len();
            assert!(at * 8 + n <= MSG_WORDS * 8, "{n} inline bytes do not fit a message");
            // SAFETY: the words area of the slot has room for the bytes (asserted); nobody
            // reads the slot until seq is published below (the step rule in the module doc);
            // the caller passes n readable bytes at src.
            unsafe { super::rma::copy_bytes(src, slot.word(at).as_ptr().cast::<u8>(), n) };
        }
        slot.tag().store(caller.tag, Ordering::Relaxed);
        slot.seq().store(m, Ordering::Release);
    }

    /// Waits for the next message from PE `from` and checks that it comes from the same
    /// routine as `caller` (the error names both).
    #[inline]
    pub fn receive(&self, from: usize, caller: &Caller) -> Result<Msg> {
        let want = self.consumed[from].load(Ordering::Relaxed) + 1;
        self.consumed[from].store(want, Ordering::Relaxed);
        let slot = self.my_header().slot(from, (want % 2) as usize);
        let seq = slot.seq();
        self.wait_for(|| seq.load(Ordering::Acquire) >= want);
        let msg = Msg { slot, from };
        if seq.load(Ordering::Relaxed) != want || slot.tag().load(Ordering::Relaxed) != caller.tag {
            return Err(self.mismatch(msg, want, caller));
        }
        Ok(msg)
    }

    #[cold]
    fn mismatch(&self, msg: Msg, want: u64, caller: &Caller) -> Error {
        let seq = msg.slot.seq().load(Ordering::Relaxed);
        if seq != want {
            return Error::new(
                ErrorKind::Internal,
                caller.routine,
                format!("internal error (please report): message {seq} from PE {} overtook message {want}", msg.from),
            );
        }
        let theirs = match msg.slot.tag().load(Ordering::Relaxed) {
            0 => SYNC_NAME.to_string(),
            _ => words_name(&std::array::from_fn(|i| msg.slot.name_word(i).load(Ordering::Relaxed))),
        };
        Error::invalid(
            caller.routine,
            format!(
                "PE {} is in {theirs} while this PE ({}) is in {}: every member of the team or active set must call the same collective, in the same order",
                msg.from, self.me, caller.routine
            ),
        )
    }

    /// Synchronises the members of `set` (no memory completion; see `barrier_set`): a
    /// dissemination barrier, ceil(log2 n) rounds of one message out and one in.
    pub fn sync_set(&self, set: &PeSet, caller: &Caller) -> Result<()> {
        let Some(i) = set.index_of(self.me) else { return Ok(()) };
        let n = set.size;
        let mut dist = 1;
        while dist < n {
            // (i + dist) mod n and (i - dist) mod n, without a division: both are below 2n.
            let to = if i + dist >= n { i + dist - n } else { i + dist };
            let from = if i >= dist { i - dist } else { i + n - dist };
            self.send(set.pe(to), caller, &[], &[], None);
            self.receive(set.pe(from), caller)?;
            dist *= 2;
        }
        Ok(())
    }

    /// quiet + sync: on return every member's earlier puts are visible everywhere.
    pub fn barrier_set(&self, set: &PeSet, caller: &Caller) -> Result<()> {
        self.quiet();
        self.sync_set(set, caller)
    }

    /// A barrier over all PEs for the runtime's own use (allocation, finalize); a PE found in
    /// another collective is a fatal error.
    pub fn barrier_all(&self) {
        const CALLER: Caller = Caller::sync("shmem_barrier_all");
        if let Err(e) = self.barrier_set(&PeSet::world(self.npes), &CALLER) {
            super::fatal(&e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn names_and_tags() {
        let w = name_words("shmem_longdouble_prod_to_all");
        assert_eq!(words_name(&w), "shmem_longdouble_prod_to_all");
        let long = "x".repeat(100);
        assert_eq!(words_name(&name_words(&long)).len(), NAME_BYTES - 1);
        let a = Caller::collective("shmem_int_sum_reduce");
        let b = Caller::collective("shmem_int_max_reduce");
        assert_ne!(a.tag, 0);
        assert_ne!(a.tag, b.tag);
        assert_eq!(a.tag, Caller::collective("shmem_int_sum_reduce").tag);
        assert_eq!(Caller::sync("shmem_barrier_all").tag, 0);
    }
}
