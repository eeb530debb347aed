//! Messages between PEs, and the barriers built on them.
//!
//! # Messages
//! PE j sends PE i its m-th message (m = 1, 2, ...) by writing into slot m % SLOTS of mailbox
//! j in PE i's header (header.rs): the name line and words first, then tag and ack, then
//! `seq = m` with Release. PE i, expecting its m-th message from j, polls that slot until
//! `seq >= m` (Acquire) and reads it. Each side counts on its own (`Peer`), so sending is a few
//! plain stores into one line (no read-modify-write, no lock) and nothing is ever reset.
//!
//! Every team has a channel of its own (its handle; the world team and the active sets of the
//! deprecated collectives share channel 0): mailboxes, acks and counts per pair of PEs. Within
//! a team, SHMEM programs issue collectives in the same order on every member, which is all one
//! stream needs; teams are independent, and under SHMEM_THREAD_MULTIPLE two threads may run
//! collectives on two teams with common members at the same time, so their messages must not
//! share a stream. A handle always names the same team on both PEs of a pair (splits agree on
//! it), and a destroyed team's last call left its counts matched, so a later team with the same
//! handle simply goes on counting.
//!
//! The tag says which routine sent the message (0: a barrier or sync; else a hash of the
//! routine's name, whose text rides in the name line), so a PE that receives a message from a
//! different collective reports both routines by name instead of misreading the words.
//!
//! # Three rules keep the slots safe
//! 1. *Matching*: every message sent during a collective call is received during that call:
//!    within one call, each pair of PEs sends exactly as many messages each way as the other
//!    side waits for, so the counts stay matched from call to call and both sides agree,
//!    message by message, on which call a message belongs to.
//! 2. *Read before moving on*: a PE finishes reading a message before it sends any message
//!    or receives from the same sender again.
//! 3. *Credit*: a PE writes its message m to j only once it knows j has finished message
//!    m - SLOTS, which used the same slot. It knows from acknowledgments: every message
//!    carries the sender's count of messages received from the addressee (all finished, by
//!    rule 2), and every PE, when it starts waiting for message w from j, publishes w-1 in its
//!    ack line for j. Exchanges and barriers keep the credit fresh through the messages alone;
//!    only a sender that has not heard from j for a while (a root broadcasting again and
//!    again) reads j's ack line, and waits there in the rare case that j really is SLOTS
//!    messages behind.
//!
//! No rule depends on what the collectives look like, so any mix of collectives, sizes, teams
//! and active sets may follow one another with no barrier between them.
//!
//! # PEs on other hosts
//! Their headers are not mapped here, but the protocol does not change: a message to such a
//! PE is the same slot, built here and written with fabric puts into its header (tag, ack,
//! words and, when it changed, the name line), then, after a fence, `seq` alone. The fence
//! keeps the receiver, which reads the slot only after it sees `seq`, from seeing the new
//! `seq` over old contents; a barrier's message, once its slot holds its tag, is mostly `seq`
//! alone (`send_over_network`). Receiving is unchanged (our own header). The rare credit check
//! reads the peer's ack line with a fabric get. Barriers and syncs in such a job are
//! hierarchical (`sync_across_hosts`), so only one PE per host talks over the network.

use std::sync::atomic::{AtomicU64, Ordering};

use super::header::{Slot, MSG_WORDS, NAME_BYTES, SLOTS, SLOT_BYTES};
use super::State;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::{Route, Segment};

/// A set of PEs `start, start+stride, ...` (`size` of them): a team or an active set, and the
/// message channel its collectives use (the team's handle; 0 for the world and active sets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeSet {
    pub start: usize,
    pub stride: usize,
    pub size: usize,
    pub chan: usize,
}

impl PeSet {
    pub fn world(npes: usize) -> PeSet {
        PeSet { start: 0, stride: 1, size: npes, chan: 0 }
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
    /// "0..3" or "1, 3, 5 (start 1, stride 2, 3 PEs)", for traces.
    pub fn describe(&self) -> String {
        if self.stride == 1 || self.size == 1 {
            format!("{}..={}", self.start, self.start + self.size.saturating_sub(1))
        } else {
            format!("start {}, stride {}, {} PEs", self.start, self.stride, self.size)
        }
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
const SYNC_NAME: &str =
    "a barrier or sync (shmem_barrier_all, shmem_sync_all, shmem_team_sync, shmem_barrier, shmem_sync, or the one inside shmem_finalize)";

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

/// The routine that sent the message in `slot`, for an error message.
fn slot_routine(slot: Slot) -> String {
    match slot.tag().load(Ordering::Relaxed) {
        0 => SYNC_NAME.to_string(),
        _ => words_name(&std::array::from_fn(|i| slot.name_word(i).load(Ordering::Relaxed))),
    }
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

/// A received message: readable until its receiver next sends a message or receives from the
/// same sender (rule 2).
#[derive(Clone, Copy)]
pub struct Msg {
    pub slot: Slot,
    /// Sender's world PE number.
    pub from: usize,
    /// The channel it came through.
    pub chan: usize,
}

impl Msg {
    #[inline]
    pub fn word(&self, i: usize) -> u64 {
        self.slot.word(i).load(Ordering::Relaxed)
    }
}

/// This PE's counts for one peer in one channel. Only this PE touches them (under the
/// channel's collective lock when threads share it), so relaxed loads and stores suffice.
#[derive(Default)]
pub struct Peer {
    /// Messages sent to the peer.
    sent: AtomicU64,
    /// Messages received from the peer.
    received: AtomicU64,
    /// How many of our messages the peer is known to have finished with.
    acked: AtomicU64,
    /// The tag whose name each slot's name line holds.
    named: [AtomicU64; SLOTS],
    /// A peer on another host: the tag each slot of ours in its mailbox holds, plus one (0:
    /// not known), and the last ack written to it (`send_over_network`).
    net_tag: [AtomicU64; SLOTS],
    net_ack: AtomicU64,
}

impl Peer {
    /// Messages received from this peer so far (the last one is `Peer::received`th).
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
    fn note_ack(&self, ack: u64) {
        if ack > self.acked.load(Ordering::Relaxed) {
            self.acked.store(ack, Ordering::Relaxed);
        }
    }
}

impl State {
    /// Sends PE `to` a message in channel `chan`: the words of `head` and `own`, then `bytes`
    /// (raw, right after the words; at most MSG_WORDS words in all), tagged with the caller.
    #[inline(always)]
    pub fn send(&self, chan: usize, to: usize, caller: &Caller, head: &[u64], own: &[u64], bytes: &[u8]) {
        let (nwords, nbytes) = (head.len() + own.len(), bytes.len());
        assert!(nwords * 8 + nbytes <= MSG_WORDS * 8, "{nbytes} bytes after {nwords} words do not fit a message");
        let peer = &self.peers(chan)[to];
        let m = peer.sent.load(Ordering::Relaxed) + 1;
        peer.sent.store(m, Ordering::Relaxed);
        if m > peer.acked.load(Ordering::Relaxed) + SLOTS as u64 {
            self.await_credit(chan, to, m - SLOTS as u64, caller);
        }
        let s = (m % SLOTS as u64) as usize;
        if self.on_other_host(to) {
            return self.send_over_network(chan, to, caller, m, [head, own], bytes);
        }
        let slot = self.headers[to].slot(chan, self.me, s);
        // The name line changes only with the routine (it is read only to report a mismatch).
        if caller.tag != 0 && peer.named[s].load(Ordering::Relaxed) != caller.tag {
            for (i, &w) in caller.name.iter().enumerate() {
                slot.name_word(i).store(w, Ordering::Relaxed);
            }
            peer.named[s].store(caller.tag, Ordering::Relaxed);
        }
        let words = slot.word(0).as_ptr();
        // SAFETY: the slot's words area holds MSG_WORDS words, enough for the words and bytes
        // (asserted above); the receiver is done with the slot's previous message (credit,
        // checked above) and reads this one only after seq is published below.
        unsafe {
            for (i, &w) in head.iter().chain(own).enumerate() {
                AtomicU64::from_ptr(words.add(i)).store(w, Ordering::Relaxed);
            }
            if nbytes > 0 {
                super::rma::copy_bytes(bytes.as_ptr(), words.add(nwords).cast::<u8>(), nbytes);
            }
        }
        slot.ack().store(peer.received(), Ordering::Relaxed);
        slot.tag().store(caller.tag, Ordering::Relaxed);
        slot.seq().store(m, Ordering::Release);
    }

    /// Waits until PE `to` says it has finished with our message `done` (rule 3).
    #[cold]
    fn await_credit(&self, chan: usize, to: usize, done: u64, caller: &Caller) {
        let off = self.layout.ack_at(chan, self.me);
        let mut ack = [0u64];
        self.wait_for(
            caller.routine,
            || {
                self.header_words(to, off, &mut ack, caller.routine);
                ack[0] >= done
            },
            || format!("for PE {to} to read this PE's earlier messages ({})", self.doing(to)),
        );
        self.peers(chan)[to].note_ack(ack[0]);
    }

    /// Whether `pe` is on another host: its header and heap are not mapped here.
    #[inline(always)]
    pub fn on_other_host(&self, pe: usize) -> bool {
        self.multi_host && self.routes.route(pe) == Route::Network
    }

    /// Reads words of PE `pe`'s header at byte offset `off` (Acquire): from the mapping on this
    /// host, with a fabric get from another (a failing get is fatal, as a failing send is).
    pub fn header_words(&self, pe: usize, off: usize, out: &mut [u64], routine: &'static str) {
        if !self.on_other_host(pe) {
            let base = self.headers[pe].word_at(off);
            for (i, w) in out.iter_mut().enumerate() {
                // SAFETY: `off` and the words after it lie inside PE `pe`'s header, mapped here.
                *w = unsafe { AtomicU64::from_ptr(base.add(i)) }.load(Ordering::Acquire);
            }
            return;
        }
        let mut buf = vec![0u8; out.len() * 8];
        if let Err(e) = self.network_for(pe, routine).and_then(|n| n.get(pe, Segment::Heap, off, &mut buf)) {
            super::fatal(&e.named(routine));
        }
        for (w, b) in out.iter_mut().zip(buf.chunks_exact(8)) {
            *w = u64::from_ne_bytes(b.try_into().expect("8 bytes"));
        }
    }

    fn network_for(&self, pe: usize, routine: &'static str) -> Result<&dyn crate::transport::Transport> {
        self.net.as_deref().ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                routine,
                format!("internal error (please report): PE {pe} is on another host but no network transport is up"),
            )
        })
    }

    /// `send` to a PE on another host (see the module comment): the slot `m` goes to is built
    /// here from `words` (the head and own words) and `bytes`, and written with fabric puts.
    ///
    /// A message without words or bytes whose slot already holds its tag (a barrier's, once the
    /// slots have been used) is `seq` alone, one write instead of two: its ack would be the
    /// only news, and that is written only once it has grown by `ACK_EVERY` since it was last
    /// written to this peer. Acks are credit for the peer's own messages to us (rule 3): one
    /// two messages old still covers a peer that, like a barrier partner, sends one message
    /// per message of ours (it needs an ack SLOTS = 4 behind its next message), and a peer
    /// short of credit reads our ack line instead, slower but as correct.
    #[inline(never)]
    fn send_over_network(&self, chan: usize, to: usize, caller: &Caller, m: u64, words: [&[u64]; 2], bytes: &[u8]) {
        /// Messages received from the peer before our ack to it is written again.
        const ACK_EVERY: u64 = SLOTS as u64 - 1;
        let peer = &self.peers(chan)[to];
        let s = (m % SLOTS as u64) as usize;
        let off = self.layout.slot_at(chan, self.me, s);
        let routine = caller.routine;
        let empty = words.iter().all(|w| w.is_empty()) && bytes.is_empty();
        let tag_known = peer.net_tag[s].load(Ordering::Relaxed) == caller.tag.wrapping_add(1);
        let ack_fresh = peer.received() < peer.net_ack.load(Ordering::Relaxed) + ACK_EVERY;
        if empty && tag_known && ack_fresh {
            let sent = self.network_for(to, routine).and_then(|net| net.put_message(to, Segment::Heap, off, &m.to_ne_bytes()));
            if let Err(e) = sent {
                super::fatal(&e.named(routine));
            }
            return;
        }
        let mut img = [0u8; SLOT_BYTES];
        let put_word = |img: &mut [u8; SLOT_BYTES], at: usize, w: u64| img[at..at + 8].copy_from_slice(&w.to_ne_bytes());
        put_word(&mut img, 8, caller.tag);
        put_word(&mut img, 16, peer.received());
        let mut at = 24;
        for &w in words.iter().flat_map(|w| w.iter()) {
            put_word(&mut img, at, w);
            at += 8;
        }
        img[at..at + bytes.len()].copy_from_slice(bytes);
        let mut len = at + bytes.len();
        if caller.tag != 0 && peer.named[s].load(Ordering::Relaxed) != caller.tag {
            for (i, &w) in caller.name.iter().enumerate() {
                put_word(&mut img, SLOT_BYTES - NAME_BYTES + 8 * i, w);
            }
            len = SLOT_BYTES;
            peer.named[s].store(caller.tag, Ordering::Relaxed);
        }
        peer.net_tag[s].store(caller.tag.wrapping_add(1), Ordering::Relaxed);
        peer.net_ack.store(peer.received(), Ordering::Relaxed);
        let sent = self.network_for(to, routine).and_then(|net| {
            net.put_message(to, Segment::Heap, off + 8, &img[8..len])?;
            net.fence()?;
            net.put_message(to, Segment::Heap, off, &m.to_ne_bytes())
        });
        if let Err(e) = sent {
            super::fatal(&e.named(routine));
        }
    }

    /// Waits for the next message from PE `from` and checks that it comes from the same
    /// routine as `caller` (the error names both).
    #[inline(always)]
    pub fn receive(&self, chan: usize, from: usize, caller: &Caller) -> Result<Msg> {
        let peer = &self.peers(chan)[from];
        let want = peer.received.load(Ordering::Relaxed) + 1;
        peer.received.store(want, Ordering::Relaxed);
        // The previous message from `from` is finished (rule 2): say so, for a sender that
        // has nothing else to go by.
        self.my_header().ack(chan, from).store(want - 1, Ordering::Release);
        let slot = self.my_header().slot(chan, from, (want % SLOTS as u64) as usize);
        let seq = slot.seq();
        if self.on_other_host(from) {
            self.wait_for_network(caller.routine, || seq.load(Ordering::Acquire) >= want, || self.awaiting(from));
        } else {
            self.wait_for(caller.routine, || seq.load(Ordering::Acquire) >= want, || self.awaiting(from));
        }
        let msg = Msg { slot, from, chan };
        if seq.load(Ordering::Relaxed) != want || slot.tag().load(Ordering::Relaxed) != caller.tag {
            return Err(self.mismatch(msg, want, caller));
        }
        peer.note_ack(slot.ack().load(Ordering::Relaxed));
        Ok(msg)
    }

    /// What a receive waits for, when it has waited too long.
    #[cold]
    fn awaiting(&self, from: usize) -> String {
        format!("for PE {from} ({}): every PE of the team or active set must call the same collectives in the same order", self.doing(from))
    }

    /// The error for a message from another routine. The message's ack says how many of our
    /// messages its sender had received when it sent it, so our next message after those
    /// (still unread in its mailbox, so intact) was sent in the call that this message pairs
    /// with: that call is named, which may be one we have left already (a broadcast root
    /// does not wait for its members).
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
        let theirs = slot_routine(msg.slot);
        let seen = msg.slot.ack().load(Ordering::Relaxed);
        // Our message seen+1, if we sent it and it is not the current call's.
        // (Not read from a PE on another host: the mismatch is named by this call then.)
        let ours_then = (seen < self.peers(msg.chan)[msg.from].sent.load(Ordering::Relaxed) && !self.on_other_host(msg.from))
            .then(|| self.headers[msg.from].slot(msg.chan, self.me, ((seen + 1) % SLOTS as u64) as usize))
            .filter(|s| s.seq().load(Ordering::Relaxed) == seen + 1 && s.tag().load(Ordering::Relaxed) != caller.tag)
            .map(slot_routine);
        let (ours, since) = match ours_then {
            Some(o) => (o, format!(" (this PE has since called {})", caller.routine)),
            None => (caller.routine.to_string(), String::new()),
        };
        let same = theirs == ours;
        let what = if same {
            format!("PE {} and this PE ({}) both called {theirs}, but with arguments that do not match{since}", msg.from, self.me)
        } else {
            format!("PE {} is in {theirs} while this PE ({}) is in {ours}{since}", msg.from, self.me)
        };
        // A broadcast's members hear only from the root they name, so members that disagree
        // about the root meet in a later call, or one of them in a barrier.
        let bcast_or_sync = |r: &str| r.contains("broadcast") || r == SYNC_NAME || (r == caller.routine && caller.tag == 0);
        let hint = if (theirs.contains("broadcast") || ours.contains("broadcast")) && bcast_or_sync(&theirs) && bcast_or_sync(&ours) {
            "; all members of a broadcast must pass the same PE_root"
        } else {
            ""
        };
        Error::invalid(
            caller.routine,
            format!("{what}{hint}: every member of the team or active set must call the same collective, with the same arguments, in the same order"),
        )
    }

    /// Synchronises the members of `set` (no memory completion; see `barrier_set`): a
    /// dissemination barrier, ceil(log2 n) rounds of one message out and one in; in a job
    /// that spans hosts, one per host (`sync_across_hosts`).
    pub fn sync_set(&self, set: &PeSet, caller: &Caller) -> Result<()> {
        let Some(i) = set.index_of(self.me) else { return Ok(()) };
        if self.multi_host {
            return self.sync_across_hosts(set, caller);
        }
        self.disseminate(set.chan, set.size, i, |k| set.pe(k), caller)
    }

    /// The dissemination barrier among `n` PEs `pe(0..n)`, this PE being `pe(i)`.
    #[inline(always)]
    fn disseminate(&self, chan: usize, n: usize, i: usize, pe: impl Fn(usize) -> usize, caller: &Caller) -> Result<()> {
        let mut dist = 1;
        while dist < n {
            // (i + dist) mod n and (i - dist) mod n, without a division: both are below 2n.
            let to = if i + dist >= n { i + dist - n } else { i + dist };
            let from = if i >= dist { i - dist } else { i + n - dist };
            self.send(chan, pe(to), caller, &[], &[], &[]);
            self.receive(chan, pe(from), caller)?;
            dist *= 2;
        }
        Ok(())
    }

    /// `sync_set` where members may be on several hosts, hierarchical: each host's members
    /// report to its leader (its first member) through shared memory, the leaders run the
    /// dissemination barrier among themselves over the network (ceil(log2 hosts) rounds), and
    /// each leader then releases its host's members. Every PE derives the same hosts and
    /// leaders from the route table, so both ends of every pair agree on the messages.
    #[inline(never)]
    fn sync_across_hosts(&self, set: &PeSet, caller: &Caller) -> Result<()> {
        let host = |pe: usize| self.routes.hosts[pe];
        let here = host(self.me);
        let local: Vec<usize> = set.members().filter(|&p| host(p) == here).collect();
        let leader = local[0];
        if self.me != leader {
            self.send(set.chan, leader, caller, &[], &[], &[]);
            self.receive(set.chan, leader, caller)?;
            return Ok(());
        }
        for &p in &local[1..] {
            self.receive(set.chan, p, caller)?;
        }
        let mut seen = vec![false; self.routes.host_count()];
        let leaders: Vec<usize> = set.members().filter(|&p| !std::mem::replace(&mut seen[host(p)], true)).collect();
        let i = leaders.iter().position(|&p| p == self.me).expect("this PE leads its host");
        self.disseminate(set.chan, leaders.len(), i, |k| leaders[k], caller)?;
        for &p in &local[1..] {
            self.send(set.chan, p, caller, &[], &[], &[]);
        }
        Ok(())
    }

    /// quiet + sync: on return every member's earlier puts are visible everywhere.
    pub fn barrier_set(&self, set: &PeSet, caller: &Caller) -> Result<()> {
        super::log::trace(|| format!("{}: PEs {}", caller.routine, set.describe()));
        self.quiet();
        self.sync_set(set, caller)
    }

    /// A barrier over all PEs for the runtime's own use (finalize, GPU allocation); a PE found
    /// in another collective is a fatal error.
    pub fn barrier_all(&self) {
        const CALLER: Caller = Caller::sync("shmem_barrier_all");
        self.barrier_all_as(&CALLER);
    }

    /// The barrier inside a collective allocation routine (shmem_malloc, ...): its messages
    /// carry the routine's name, so a PE meeting another PE's shmem_barrier_all (or a
    /// different allocation routine) reports both instead of pairing them silently.
    pub fn barrier_for(&self, routine: &'static str) {
        self.barrier_all_as(&Caller::collective(routine));
    }

    fn barrier_all_as(&self, caller: &Caller) {
        if let Err(e) = self.barrier_set(&PeSet::world(self.npes), caller) {
            super::fatal(&e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_membership() {
        let s = PeSet { start: 1, stride: 2, size: 3, chan: 0 };
        assert_eq!(s.members().collect::<Vec<_>>(), vec![1, 3, 5]);
        assert_eq!(s.index_of(5), Some(2));
        assert_eq!(s.index_of(4), None);
        assert_eq!(s.index_of(7), None);
        assert_eq!(s.index_of(0), None);
        let one = PeSet { start: 4, stride: 0, size: 1, chan: 0 };
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
