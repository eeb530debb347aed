//! Host collectives: every peer on this host has its heap (and static data) mapped here, so a
//! collective can pull what it needs straight out of the peers' memory, and small payloads
//! travel inside the messages themselves (barrier.rs). Members on other hosts are reached the
//! same way over the network: messages are fabric puts into their headers (barrier.rs), and
//! a pull from such a member is a fabric get (`Coll::pull`, `Coll::fetch`).
//!
//! Every message of a data collective carries the routine (its tag) and the arguments all
//! members must agree on (counts, root, strides); a member that finds a different routine or
//! a different argument in a message stops with an error naming both, so a mismatch is
//! reported, never misread.
//!
//! A broadcast is rooted. A small one (the data fits a message: `Coll::inline_capacity`) is
//! one push: the root sends each member the arguments and the data, and returns at once; each
//! member waits for the root's message, checks it, and copies the data into its dest. A large
//! one is a round trip: the root tells each member its source is ready, each member copies
//! straight from the root's source, then tells the root it is done, and the root returns when
//! all are. (An exchange among all members would let everyone check everyone's arguments, but
//! measured after a barrier, the usual pattern, it costs more than the push; members that
//! disagree about the root still get a named error, in the call where their messages meet:
//! see `State::mismatch` in barrier.rs.)
//!
//! The other data collectives start with one *full exchange*: each member sends every other
//! member one message, then receives one from each. When it is over every member has entered
//! the call and checked everybody's arguments.
//! - Small payloads ride in that exchange: each member's contribution to a reduction or
//!   (f)collect, each member's block for the receiver in an alltoall. Each member then builds
//!   its own dest from the messages, and the call is over: one step. Nothing of the user's is
//!   read by a peer, so the sources may be reused at once, and dest may be the source.
//! - Large payloads are pulled from the peers' sources after the exchange, and a final sync
//!   (a dissemination barrier with this call's tag) keeps every source in place until every
//!   member has finished reading it. Reductions split the work: member k reduces the k-th
//!   slice of the elements from every member's source into its own dest, a sync, then each
//!   member copies the other slices from the peers' dests, and a last sync.
//!
//! Whether a call is small is decided from the agreed arguments, so every member takes the
//! same path; if they disagree, the first message on either path shows it.
//! Every message sent in a call is received in it, so the pair counts stay matched between
//! calls (rule 1 of barrier.rs); the other two rules of barrier.rs make back-to-back
//! collectives of any kinds, sizes, teams and active sets safe with no barrier between them.

use std::borrow::Cow;
use std::mem::{align_of, size_of, MaybeUninit};
use std::sync::MutexGuard;

mod hosts;

use super::barrier::{Caller, Msg, PeSet};
use super::header::{MSG_WORDS, SLOTS};
use super::rma::{bytes, Strided};
use super::State;
use crate::error::{Error, ErrorKind, Result};

/// Elements reduced per pass over the members (keeps the accumulator in L1).
const REDUCE_CHUNK_BYTES: usize = 8192;

/// Most arguments a collective asks its members to agree on (alltoalls and team splits: 3).
const MAX_AGREED: usize = 4;

/// One collective call in progress on this PE (holding the collective lock under THREAD_MULTIPLE).
pub struct Coll<'a> {
    st: &'a State,
    pub set: PeSet,
    /// This PE's index in the set.
    pub me: usize,
    /// Borrowed from the C entry point's constant (owned only for team splits).
    caller: Cow<'a, Caller>,
    /// The arguments every member must pass alike, with their names for the error message,
    /// and their values as the first words of every message this call sends.
    agreed: &'a [(&'static str, i64)],
    head: [u64; MAX_AGREED],
    _serial: Option<MutexGuard<'a, ()>>,
}

/// A message's worth of bytes, aligned for any element type (long double included).
#[repr(C, align(16))]
struct InlineBuf([MaybeUninit<u8>; MSG_WORDS * 8]);

impl InlineBuf {
    fn new() -> InlineBuf {
        InlineBuf([MaybeUninit::uninit(); MSG_WORDS * 8])
    }
    fn ptr(&mut self) -> *mut u8 {
        self.0.as_mut_ptr().cast()
    }
}

impl State {
    /// This PE's index in `set`, or the error for a non-member calling a collective on it.
    fn member_index(&self, set: &PeSet, routine: &'static str) -> Result<usize> {
        set.index_of(self.me).ok_or_else(|| {
            Error::new(
                ErrorKind::NotMember,
                routine,
                format!(
                    "this PE ({}) is not a member of the PE set (start {}, stride {}, size {}) it called the collective on; only members may call it",
                    self.me, set.start, set.stride, set.size
                ),
            )
        })
    }

    /// Enters a collective over `set` with nothing to agree on yet (see `Coll::begin`).
    pub fn collective(&self, set: PeSet, routine: &'static str) -> Result<Coll<'_>> {
        self.collective_agreeing(set, Cow::Owned(Caller::collective(routine)), &[])
    }

    /// Enters a collective over `set` whose members must all pass `agreed`.
    #[inline(always)]
    fn collective_agreeing<'a>(&'a self, set: PeSet, caller: Cow<'a, Caller>, agreed: &'a [(&'static str, i64)]) -> Result<Coll<'a>> {
        let me = self.member_index(&set, caller.routine)?;
        crate::log::trace(|| {
            format!("{}: PEs {}{}", caller.routine, set.describe(), agreed.iter().map(|(k, v)| format!(", {k} {v}")).collect::<String>())
        });
        debug_assert!(agreed.len() <= MAX_AGREED);
        let mut head = [0u64; MAX_AGREED];
        for (w, (_, v)) in head.iter_mut().zip(agreed) {
            *w = *v as u64;
        }
        let serial = self.serialize_channel(set.chan);
        Ok(Coll { st: self, set, me, caller, agreed, head, _serial: serial })
    }
}

impl Coll<'_> {
    /// World PE number of member `k`.
    #[inline]
    pub fn pe(&self, k: usize) -> usize {
        self.set.pe(k)
    }

    pub fn size(&self) -> usize {
        self.set.size
    }

    fn routine(&self) -> &'static str {
        self.caller.routine
    }

    /// Bytes of payload a message can carry after the agreed arguments and `own` words.
    fn inline_capacity(&self, own: usize) -> usize {
        (MSG_WORDS - self.agreed.len() - own) * 8
    }

    /// Sends member `k` this call's message: the agreed arguments, `own` words, then `bytes`.
    #[inline(always)]
    fn send(&self, k: usize, own: &[u64], bytes: Option<(*const u8, usize)>) {
        let bytes = match bytes {
            // SAFETY: callers pass a buffer they translated (a source) or own (a local
            // buffer) of n readable bytes.
            Some((p, n)) if n > 0 => unsafe { std::slice::from_raw_parts(p, n) },
            _ => &[],
        };
        self.st.send(self.set.chan, self.pe(k), &self.caller, &self.head[..self.agreed.len()], own, bytes);
    }

    /// Receives member `k`'s message of this step and checks routine and agreed arguments.
    #[inline(always)]
    fn receive(&self, agreed: &[(&'static str, i64)], k: usize) -> Result<Msg> {
        let msg = self.st.receive(self.set.chan, self.pe(k), &self.caller)?;
        for (i, (what, v)) in agreed.iter().enumerate() {
            let t = msg.word(i) as i64;
            if t != *v {
                return Err(self.disagree(k, what, t, *v));
            }
        }
        Ok(msg)
    }

    #[cold]
    fn disagree(&self, k: usize, what: &str, theirs: i64, mine: i64) -> Error {
        Error::invalid(
            self.routine(),
            format!(
                "PE {} passed {what} = {theirs} but this PE ({}) passed {what} = {mine}: every member must pass the same {what}",
                self.pe(k),
                self.st.me
            ),
        )
    }

    /// One full exchange: `send(k)` must send member k exactly one message, for every other
    /// member k; then each member's message is received and checked, and handed to
    /// `take(k, msg)`. A received message stays readable until this PE next sends to or
    /// receives from that member (rule 2 of barrier.rs), so `take` may also leave it for
    /// later (`last_from`).
    #[inline(always)]
    fn exchange(&self, send: impl FnMut(usize), take: impl FnMut(usize, Msg) -> Result<()>) -> Result<()> {
        self.exchange_agreeing(self.agreed, send, take)
    }

    #[inline(always)]
    fn exchange_agreeing(
        &self,
        agreed: &[(&'static str, i64)],
        mut send: impl FnMut(usize),
        mut take: impl FnMut(usize, Msg) -> Result<()>,
    ) -> Result<()> {
        // Members after us first, wrapping around (no division on the way).
        let n = self.size();
        let next = |k: usize| if k + 1 == n { 0 } else { k + 1 };
        let mut k = next(self.me);
        while k != self.me {
            send(k);
            k = next(k);
        }
        let mut k = next(self.me);
        while k != self.me {
            take(k, self.receive(agreed, k)?)?;
            k = next(k);
        }
        Ok(())
    }

    /// The exchange that carries nothing but the agreed arguments.
    fn agree(&self) -> Result<()> {
        self.exchange(|k| self.send(k, &[], None), |_, _| Ok(()))
    }

    /// The last message received from member `k` (k != me) in this call.
    fn last_from(&self, k: usize) -> Msg {
        let pe = self.pe(k);
        let chan = self.set.chan;
        let m = self.st.peers(chan)[pe].received();
        Msg { slot: self.st.my_header().slot(chan, pe, (m % SLOTS as u64) as usize), from: pe, chan }
    }

    /// Where a message's payload starts, after the agreed arguments and `own` words.
    fn payload(&self, msg: &Msg, own: usize) -> *const u8 {
        msg.slot.word(self.agreed.len() + own).as_ptr().cast_const().cast()
    }

    /// The closing step of the large paths: a dissemination barrier with this call's tag.
    fn sync(&self) -> Result<()> {
        self.st.sync_set(&self.set, &self.caller)
    }

    /// For team splits (team.rs): one exchange in which the members check that they all pass
    /// `agreed` and send `own` words; returns the bitwise AND of every member's `own` (this
    /// PE's included), the same on every member.
    pub fn begin(&self, agreed: &[(&'static str, i64)], own: &[u64]) -> Result<Vec<u64>> {
        let head: Vec<u64> = agreed.iter().map(|a| a.1 as u64).collect();
        let mut all = own.to_vec();
        self.exchange_agreeing(
            agreed,
            |k| self.st.send(self.set.chan, self.pe(k), &self.caller, &head, own, &[]),
            |_, msg| {
                for (j, w) in all.iter_mut().enumerate() {
                    *w &= msg.word(agreed.len() + j);
                }
                Ok(())
            },
        )?;
        Ok(all)
    }

    /// Ends a call started with `begin`: the exchange left nothing to release.
    pub fn finish(self) {}

    /// Member `k`'s copy of symmetric `addr..addr+len`, as mapped here (len 0: unchecked).
    #[inline(always)]
    pub fn peer(&self, addr: *const u8, len: usize, k: usize) -> Result<*const u8> {
        if len == 0 {
            return Ok(addr);
        }
        Ok(self.st.translate(addr, len, self.pe(k))?.cast_const())
    }

    /// Copies `n` bytes at symmetric `addr` on member `k` to `to` (n bytes of ours): from the
    /// mapping on this host, with a fabric get from another.
    #[inline(always)]
    fn pull(&self, addr: *const u8, n: usize, k: usize, to: *mut u8) -> Result<()> {
        let pe = self.pe(k);
        if self.st.on_other_host(pe) {
            return if n == 0 { Ok(()) } else { self.st.net_get(to, addr, n, pe) };
        }
        copy(self.peer(addr, n, k)?, to, n);
        Ok(())
    }

    /// Member `k`'s copy of symmetric `addr..addr+len`, readable here: the mapping on this
    /// host; from another host, a copy fetched into `buf` (aligned for any element type).
    fn fetch(&self, addr: *const u8, len: usize, k: usize, buf: &mut Vec<u128>) -> Result<*const u8> {
        if !self.st.on_other_host(self.pe(k)) {
            return self.peer(addr, len, k);
        }
        buf.clear();
        buf.resize(len.div_ceil(16), 0);
        let to = buf.as_mut_ptr().cast::<u8>();
        self.pull(addr, len, k, to)?;
        Ok(to)
    }

    /// Checks that `dest..dest+len` is symmetric on this PE (the spec requires it).
    #[inline(always)]
    pub fn own_dest(&self, dest: *mut u8, len: usize) -> Result<*mut u8> {
        if len == 0 {
            return Ok(dest);
        }
        self.st.translate(dest, len, self.st.me)
    }

    pub fn no_overlap(&self, dest: *const u8, dlen: usize, source: *const u8, slen: usize) -> Result<()> {
        if overlap(dest, dlen, source, slen) {
            return Err(Error::invalid(
                self.routine(),
                format!("dest {dest:p} ({dlen} bytes) overlaps source {source:p} ({slen} bytes); peers read the source while dest is written: use separate arrays"),
            ));
        }
        Ok(())
    }
}

fn overlap(a: *const u8, alen: usize, b: *const u8, blen: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    alen > 0 && blen > 0 && a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// Copies `n` bytes; the ranges may be the same (self-copies) or overlap.
#[inline]
fn copy(src: *const u8, dest: *mut u8, n: usize) {
    if n > 0 && src != dest.cast_const() {
        // SAFETY: callers pass ranges they translated (peer memory), checked (own dest) or own
        // (message payloads, local buffers), each n bytes long; copy_bytes allows overlap.
        unsafe { super::rma::copy_bytes(src, dest, n) };
    }
}

fn check_count(n: i64, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid_value(format!("{what} = {n} is negative; pass a count >= 0")))
}

/// Elements `[lo, hi)` of `n` that member `k` of `parts` reduces (the first `n % parts`
/// members take one more).
fn slice_of(n: usize, parts: usize, k: usize) -> (usize, usize) {
    let (q, r) = (n / parts, n % parts);
    let lo = k * q + k.min(r);
    (lo, lo + q + usize::from(k < r))
}

impl State {
    /// Barrier over a set: quiet, then sync (`caller` is a `Caller::sync`).
    pub fn coll_barrier(&self, set: PeSet, caller: &Caller) -> Result<()> {
        self.member_index(&set, caller.routine)?;
        let _serial = self.serialize_channel(set.chan);
        self.barrier_set(&set, caller)
    }

    /// Sync over a set (no memory completion).
    pub fn coll_sync(&self, set: PeSet, caller: &Caller) -> Result<()> {
        self.member_index(&set, caller.routine)?;
        let _serial = self.serialize_channel(set.chan);
        self.sync_set(&set, caller)
    }

    /// Copies `nbytes` at `source` on member `root` to `dest` on every member (the root too
    /// when `update_root`, as team broadcasts do; active-set broadcasts leave the root's dest).
    #[allow(clippy::too_many_arguments)]
    pub fn broadcast(
        &self,
        set: PeSet,
        dest: *mut u8,
        source: *const u8,
        nbytes: usize,
        root: i32,
        update_root: bool,
        caller: &Caller,
    ) -> Result<()> {
        let routine = caller.routine;
        if root < 0 || root as usize >= set.size {
            return Err(Error::new(
                ErrorKind::InvalidPe,
                routine,
                format!("PE_root = {root} is not a member index of the {}-PE team/active set (valid 0..={})", set.size, set.size - 1),
            ));
        }
        let root = root as usize;
        let agreed = [("nelems (in bytes)", nbytes as i64), ("PE_root", root as i64)];
        let c = self.collective_agreeing(set, Cow::Borrowed(caller), &agreed)?;
        let writes = c.me != root || update_root;
        let small = nbytes <= c.inline_capacity(0);
        if let Some(g) = self.multi_host.then(|| hosts::HostGroups::spanning(&c)).flatten() {
            return c.broadcast_across_hosts(&g, dest, source, nbytes, root, writes, small);
        }
        if c.me == root {
            // Small: the data goes out in the messages, and we are done. Large: the messages
            // say our source is ready, and it stays put until every member answers.
            let s = c.peer(source, nbytes, root)?;
            for k in (0..c.size()).filter(|&k| k != root) {
                c.send(k, &[], small.then_some((s, nbytes)));
            }
            if writes {
                copy(s, c.own_dest(dest, nbytes)?, nbytes);
            }
            if !small {
                for k in (0..c.size()).filter(|&k| k != root) {
                    c.receive(c.agreed, k)?;
                }
            }
            return Ok(());
        }
        let d = c.own_dest(dest, nbytes)?;
        let msg = c.receive(c.agreed, root)?;
        if small {
            copy(c.payload(&msg, 0), d, nbytes);
        } else {
            c.pull(source, nbytes, root, d)?;
            c.send(root, &[], None);
        }
        Ok(())
    }

    /// Concatenates every member's `nbytes` (which may differ per member) into `dest` on every
    /// member, in member order. Each member's count travels in its message, with its data when
    /// that fits; larger contributions are pulled from the member's source.
    pub fn collect(&self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, caller: &Caller) -> Result<()> {
        let routine = caller.routine;
        let c = self.collective_agreeing(set, Cow::Borrowed(caller), &[])?;
        let own = c.peer(source, nbytes, c.me)?;
        let inline = nbytes <= c.inline_capacity(1);
        let mut counts = vec![0usize; c.size()];
        counts[c.me] = nbytes;
        c.exchange(
            |k| c.send(k, &[nbytes as u64], inline.then_some((own, nbytes))),
            |k, msg| {
                counts[k] = msg.word(0) as usize;
                Ok(())
            },
        )?;
        let total = counts
            .iter()
            .try_fold(0usize, |a, &n| a.checked_add(n))
            .ok_or_else(|| Error::invalid(routine, "the members' element counts add up to more than size_t holds"))?;
        let d = c.own_dest(dest, total)?;
        c.no_overlap(dest, total, source, nbytes)?;
        let cap = c.inline_capacity(1);
        if counts.iter().any(|&n| n > cap) {
            if let Some(g) = self.multi_host.then(|| hosts::HostGroups::spanning(&c)).flatten() {
                let mut blocks = Vec::with_capacity(counts.len());
                let mut at = 0;
                for &n in &counts {
                    blocks.push((at, n));
                    at += n;
                }
                return c.allgather_across_hosts(&g, (dest, d), source, &blocks, true);
            }
        }
        let mut at = 0usize;
        for (k, &n) in counts.iter().enumerate() {
            // SAFETY: each `add`: at + n <= total, the length own_dest checked.
            let to = unsafe { d.add(at) };
            if k == c.me {
                copy(own, to, n);
            } else if n <= cap {
                copy(c.payload(&c.last_from(k), 1), to, n);
            } else {
                c.pull(source, n, k, to)?;
            }
            at += n;
        }
        // Every member saw every count, so all agree whether anyone's source was read.
        if counts.iter().any(|&n| n > cap) {
            c.sync()?;
        }
        Ok(())
    }

    /// Start a collective whose dest holds one `nbytes` block per member, all members agreeing
    /// on `agreed`: the collective, dest's total length, and dest translated and checked.
    fn one_block_each<'a>(
        &'a self,
        set: PeSet,
        caller: &'a Caller,
        agreed: &'a [(&'static str, i64)],
        dest: *mut u8,
        nbytes: usize,
    ) -> Result<(Coll<'a>, usize, *mut u8)> {
        let c = self.collective_agreeing(set, Cow::Borrowed(caller), agreed)?;
        let total = bytes(nbytes, c.size())?;
        let d = c.own_dest(dest, total)?;
        Ok((c, total, d))
    }

    /// Every member contributes `nbytes`; dest gets them in member order.
    pub fn fcollect(&self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, caller: &Caller) -> Result<()> {
        let agreed = [("nelems (in bytes)", nbytes as i64)];
        let (c, total, d) = self.one_block_each(set, caller, &agreed, dest, nbytes)?;
        c.no_overlap(dest, total, source, nbytes)?;
        let own = c.peer(source, nbytes, c.me)?;
        // SAFETY: each `add` below: k * nbytes + nbytes <= total, the length own_dest checked.
        let block = |k: usize| unsafe { d.add(k * nbytes) };
        if nbytes <= c.inline_capacity(0) {
            c.exchange(
                |k| c.send(k, &[], Some((own, nbytes))),
                |k, msg| {
                    copy(c.payload(&msg, 0), block(k), nbytes);
                    Ok(())
                },
            )?;
            copy(own, block(c.me), nbytes);
            return Ok(());
        }
        if let Some(g) = self.multi_host.then(|| hosts::HostGroups::spanning(&c)).flatten() {
            let blocks: Vec<(usize, usize)> = (0..c.size()).map(|k| (k * nbytes, nbytes)).collect();
            return c.allgather_across_hosts(&g, (dest, d), source, &blocks, false);
        }
        c.agree()?;
        for step in 0..c.size() {
            let k = (c.me + step) % c.size();
            c.pull(source, nbytes, k, block(k))?;
        }
        c.sync()
    }

    /// Block k of dest on member i = block i of source on member k (blocks of `nbytes`).
    pub fn alltoall(&self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, caller: &Caller) -> Result<()> {
        let agreed = [("nelems (in bytes)", nbytes as i64)];
        let (c, total, d) = self.one_block_each(set, caller, &agreed, dest, nbytes)?;
        c.no_overlap(dest, total, source, total)?;
        let own = c.peer(source, total, c.me)?;
        // SAFETY: each `add` below: blocks lie inside the `total` bytes translated/checked above.
        let (dblock, sblock) = (|k: usize| unsafe { d.add(k * nbytes) }, |k: usize| unsafe { own.add(k * nbytes) });
        if nbytes <= c.inline_capacity(0) {
            c.exchange(
                |k| c.send(k, &[], Some((sblock(k), nbytes))),
                |k, msg| {
                    copy(c.payload(&msg, 0), dblock(k), nbytes);
                    Ok(())
                },
            )?;
            copy(sblock(c.me), dblock(c.me), nbytes);
            return Ok(());
        }
        if let Some(g) = self.multi_host.then(|| hosts::HostGroups::spanning(&c)).flatten() {
            return c.alltoall_across_hosts(&g, (dest, d), source, nbytes);
        }
        c.agree()?;
        for step in 0..c.size() {
            let k = (c.me + step) % c.size();
            // Block c.me of member k's source lies inside the `total` bytes checked above.
            c.pull(source.wrapping_add(c.me * nbytes), nbytes, k, dblock(k))?;
        }
        c.sync()
    }

    /// Strided alltoall: element m of block k of dest (at index dst*(k*nelems+m)) on member i
    /// = element m of block i of source (at index sst*(i*nelems+m)) on member k.
    pub fn alltoalls(&self, set: PeSet, dest: *mut u8, source: *const u8, s: Strided, caller: &Caller) -> Result<()> {
        let Strided { dst, sst, nelems, size } = s;
        for (name, v) in [("dst", dst), ("sst", sst)] {
            if v < 1 {
                return Err(Error::invalid_value(format!("{name} = {v}: strides must be >= 1 (1 means contiguous)")));
            }
        }
        let agreed = [("dst", dst as i64), ("sst", sst as i64), ("nelems", nelems as i64)];
        let c = self.collective_agreeing(set, Cow::Borrowed(caller), &agreed)?;
        let n = c.size();
        // Bytes spanned by n*nelems elements at `stride`: ((n*nelems-1)*stride+1)*size.
        let span = |stride: isize| -> Result<usize> {
            let count = bytes(n, nelems)?;
            if count == 0 {
                return Ok(0);
            }
            let last = bytes(count - 1, stride as usize)?;
            bytes(last.saturating_add(1), size)
        };
        let (dlen, slen) = (span(dst)?, span(sst)?);
        let d = c.own_dest(dest, dlen)?;
        c.no_overlap(dest, dlen, source, slen)?;
        let own = c.peer(source, slen, c.me)?;
        let (dst, sst) = (dst as usize, sst as usize);
        // SAFETY: both closures: the element offsets stay below dlen / slen by the span
        // computation, for k < n and m < nelems.
        let delem = |k: usize, m: usize| unsafe { d.add(dst * (k * nelems + m) * size) };
        // SAFETY: as for delem, below slen.
        let selem = |s: *const u8, i: usize, m: usize| unsafe { s.add(sst * (i * nelems + m) * size) };
        let len = nelems * size; // <= slen, so no overflow
        if len <= c.inline_capacity(0) {
            // Gather my block for member k into one message.
            let pack = |k: usize| {
                let mut buf = InlineBuf::new();
                for m in 0..nelems {
                    // SAFETY: m * size + size <= len <= the buffer's size.
                    copy(selem(own, k, m), unsafe { buf.ptr().add(m * size) }, size);
                }
                buf
            };
            c.exchange(
                |k| {
                    let mut buf = pack(k);
                    c.send(k, &[], Some((buf.ptr(), len)));
                },
                |k, msg| {
                    let p = c.payload(&msg, 0);
                    for m in 0..nelems {
                        // SAFETY: the payload holds len = nelems * size bytes.
                        copy(unsafe { p.add(m * size) }, delem(k, m), size);
                    }
                    Ok(())
                },
            )?;
            for m in 0..nelems {
                copy(selem(own, c.me, m), delem(c.me, m), size);
            }
            return Ok(());
        }
        c.agree()?;
        // Our block in member k's source: `first`, then `span` bytes (inside slen, by `span`).
        let first = sst * c.me * nelems * size;
        let span = if nelems == 0 { 0 } else { ((nelems - 1) * sst + 1) * size };
        let mut buf = Vec::new();
        for step in 0..n {
            let k = (c.me + step) % n;
            let s = c.fetch(source.wrapping_add(first), span, k, &mut buf)?;
            for m in 0..nelems {
                // SAFETY: sst * m * size + size <= span, the bytes at `s`.
                copy(unsafe { s.add(sst * m * size) }, delem(k, m), size);
            }
        }
        c.sync()
    }

    /// Element-wise reduction of every member's `source[0..nreduce]` with `op`, in member order
    /// (so every member gets bit-identical results), into `dest` on every member. `dest` may
    /// be `source` (in place) or must not overlap it.
    pub fn reduce<T: Copy, F: Fn(T, T) -> T>(
        &self,
        set: PeSet,
        dest: *mut T,
        source: *const T,
        nreduce: i64,
        op: F,
        caller: &Caller,
    ) -> Result<()> {
        let routine = caller.routine;
        let nreduce = check_count(nreduce, "nreduce")?;
        let size = size_of::<T>();
        let len = bytes(nreduce, size)?;
        if nreduce > 0 && !(dest as usize | source as usize).is_multiple_of(align_of::<T>()) {
            return Err(misaligned(dest as usize, source as usize, align_of::<T>()));
        }
        let in_place = dest.cast_const() == source;
        if !in_place && overlap(dest.cast(), len, source.cast(), len) {
            return Err(Error::invalid(
                routine,
                format!("dest {dest:p} and source {source:p} overlap ({len} bytes each) without being the same array; pass the same array (in place) or separate ones"),
            ));
        }
        let agreed = [("nreduce", nreduce as i64)];
        let c = self.collective_agreeing(set, Cow::Borrowed(caller), &agreed)?;
        let own = c.peer(source.cast(), len, c.me)?;
        if let Some(g) = self.multi_host.then(|| hosts::HostGroups::spanning(&c)).flatten() {
            return c.reduce_across_hosts(&g, dest, source, own, nreduce, &op);
        }
        if len <= c.inline_capacity(0) {
            // Our contribution goes out in the messages; in place it is copied aside first,
            // since dest (= source) is written before our part is folded in.
            let mut buf = InlineBuf::new();
            let mine = if in_place {
                copy(own, buf.ptr(), len);
                buf.ptr().cast_const()
            } else {
                own
            };
            c.exchange(|k| c.send(k, &[], Some((mine, len))), |_, _| Ok(()))?;
            let d = c.own_dest(dest.cast(), len)?.cast::<T>();
            let from = |k: usize| if k == c.me { mine } else { c.payload(&c.last_from(k), 0) };
            copy(from(0), d.cast(), len);
            for k in 1..c.size() {
                // SAFETY: d holds nreduce elements (own_dest); every payload holds len bytes.
                unsafe { fold(d, from(k), nreduce, &op) };
            }
            return Ok(());
        }
        let d = c.own_dest(dest.cast(), len)?.cast::<T>();
        c.agree()?;
        // Every member's source as mapped here; None for members on other hosts.
        let srcs: Vec<Option<*const T>> = (0..c.size())
            .map(|k| if c.st.on_other_host(c.pe(k)) { Ok(None) } else { c.peer(source.cast(), len, k).map(|p| Some(p.cast::<T>())) })
            .collect::<Result<_>>()?;
        // Reduce-scatter: our slice of the elements, from every member's source, into our dest.
        let (lo, hi) = slice_of(nreduce, c.size(), c.me);
        let chunk = (REDUCE_CHUNK_BYTES / size.max(1)).max(1);
        let mut private: Vec<T> = Vec::with_capacity(if in_place { chunk } else { 0 });
        let mut fetched: Vec<T> = Vec::with_capacity(if srcs.contains(&None) { chunk } else { 0 });
        // Member k's elements [at, at+n) (n <= chunk): in its mapped source, or fetched from its
        // host into `fetched` (which holds one member's chunk at a time).
        let mut elems = |k: usize, at: usize, n: usize| -> Result<*const T> {
            match srcs[k] {
                // SAFETY: at + n <= nreduce, for which the source was translated.
                Some(p) => Ok(unsafe { p.add(at) }),
                None => {
                    c.pull(source.cast::<u8>().wrapping_add(at * size), n * size, k, fetched.as_mut_ptr().cast())?;
                    Ok(fetched.as_ptr())
                }
            }
        };
        let mut at = lo;
        while at < hi {
            let n = chunk.min(hi - at);
            let first = elems(0, at, n)?;
            // SAFETY: [at, at+n) lies inside [0, nreduce), for which every source was translated
            // (or fetched) and dest checked, all aligned. Out of place the accumulator is dest
            // itself, which overlaps no source; in place it is `private` (our dest is our
            // source, and our slice of it is read only by us, here, before the result is
            // written back). `fetched` is neither.
            unsafe {
                let acc = if in_place {
                    private.clear();
                    private.extend_from_slice(std::slice::from_raw_parts(first, n));
                    private.as_mut_ptr()
                } else {
                    copy(first.cast(), d.add(at).cast(), n * size);
                    d.add(at)
                };
                for k in 1..c.size() {
                    fold_aligned(acc, elems(k, at, n)?, n, &op);
                }
                if in_place {
                    std::ptr::copy_nonoverlapping(acc, d.add(at), n);
                }
            }
            at += n;
        }
        c.sync()?;
        // Allgather: the other slices, from the members that reduced them.
        for step in 1..c.size() {
            let k = (c.me + step) % c.size();
            let (lo, hi) = slice_of(nreduce, c.size(), k);
            // SAFETY: [lo, hi) lies inside our dest (checked for nreduce elements).
            c.pull(dest.cast::<u8>().wrapping_add(lo * size), (hi - lo) * size, k, unsafe { d.add(lo) }.cast())?;
        }
        // Nobody reads our dest after this.
        c.sync()
    }
}

#[cold]
fn misaligned(dest: usize, source: usize, align: usize) -> Error {
    let (what, p) = if !dest.is_multiple_of(align) { ("dest", dest) } else { ("source", source) };
    Error::invalid_value(format!("{what} {p:#x} is not aligned to {align} bytes as its element type requires"))
}

/// `acc[i] = op(acc[i], src[i])` for `i < n`; `src` need not be aligned (message payloads).
///
/// # Safety
/// `acc` must hold `n` aligned elements; `src` must hold `n` elements' bytes.
unsafe fn fold<T: Copy>(acc: *mut T, src: *const u8, n: usize, op: &impl Fn(T, T) -> T) {
    for i in 0..n {
        // SAFETY: i < n, within both buffers as the caller guarantees.
        unsafe {
            let b = src.add(i * size_of::<T>()).cast::<T>().read_unaligned();
            *acc.add(i) = op(*acc.add(i), b);
        }
    }
}

/// `acc[i] = op(acc[i], src[i])` for `i < n`, over aligned, non-overlapping slices (vectorizes).
///
/// # Safety
/// Both pointers must hold `n` aligned elements and not overlap.
unsafe fn fold_aligned<T: Copy>(acc: *mut T, src: *const T, n: usize, op: &impl Fn(T, T) -> T) {
    // SAFETY: as the caller guarantees.
    let (acc, src) = unsafe { (std::slice::from_raw_parts_mut(acc, n), std::slice::from_raw_parts(src, n)) };
    for (a, &b) in acc.iter_mut().zip(src) {
        *a = op(*a, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_cases() {
        let p = 0x1000 as *const u8;
        assert!(overlap(p, 8, p, 8));
        assert!(overlap(p, 8, (0x1004) as *const u8, 8));
        assert!(!overlap(p, 8, (0x1008) as *const u8, 8));
        assert!(!overlap(p, 0, p, 8));
    }

    #[test]
    fn slices_cover_everything_once() {
        for n in [0, 1, 5, 7, 64, 1000] {
            for parts in 1..9 {
                let mut next = 0;
                for k in 0..parts {
                    let (lo, hi) = slice_of(n, parts, k);
                    assert_eq!(lo, next);
                    assert!(hi >= lo && hi - lo <= n / parts + 1);
                    next = hi;
                }
                assert_eq!(next, n);
            }
        }
    }
}
