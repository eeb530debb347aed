//! Host collectives over shared memory: every peer's heap (and static data) is mapped here, so a
//! collective pulls what it needs straight out of the peers' memory.
//!
//! Shape of every data collective on a set of PEs (a team or an active set):
//! 1. publish this call's routine name and arguments in this PE's SCRATCH (header.rs);
//! 2. sync the set: every member has entered, so every source is ready and every publication
//!    is readable;
//! 3. check that the members agree on the arguments they must agree on (a named error, not a
//!    hang or garbage, when they don't), then read the peers' sources and write our own dest;
//! 4. sync again: nobody reads our source or scratch any more, so both may be reused.
//!
//! Only the owner writes its scratch, and others read it only between the two syncs of one call.
//! Within one call, each pair of PEs exchanges exactly as many signals as waits, so the
//! monotonic pair counters (barrier.rs) stay matched across any mix of teams and active sets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::MutexGuard;

use super::barrier::PeSet;
use super::header::SCRATCH_BYTES;
use super::rma::bytes;
use super::State;
use crate::error::{Error, ErrorKind, Result};

/// Scratch words holding the routine name (NUL-padded), then the arguments.
const NAME_WORDS: usize = 8;
const MAX_WORDS: usize = SCRATCH_BYTES / 8;
/// Bytes reduced per pass over the peers (keeps the accumulator in L1).
const REDUCE_CHUNK_BYTES: usize = 8192;

/// One collective call in progress on this PE (holding the collective lock under THREAD_MULTIPLE).
pub struct Coll<'a> {
    st: &'a State,
    pub set: PeSet,
    /// This PE's index in the set.
    pub me: usize,
    routine: &'static str,
    _serial: Option<MutexGuard<'a, ()>>,
}

impl State {
    /// Enters a collective over `set`; this PE must be a member.
    pub fn collective(&self, set: PeSet, routine: &'static str) -> Result<Coll<'_>> {
        let me = set.index_of(self.me).ok_or_else(|| {
            Error::new(
                ErrorKind::NotMember,
                routine,
                format!(
                    "this PE ({}) is not a member of the PE set (start {}, stride {}, size {}) it called the collective on; only members may call it",
                    self.me, set.start, set.stride, set.size
                ),
            )
        })?;
        let serial = self.serialize_collectives();
        Ok(Coll { st: self, set, me, routine, _serial: serial })
    }
}

/// A little-endian packing of a routine name into scratch words.
fn name_words(name: &str) -> [u64; NAME_WORDS] {
    let mut w = [0u64; NAME_WORDS];
    for (i, b) in name.bytes().take(NAME_WORDS * 8 - 1).enumerate() {
        w[i / 8] |= (b as u64) << (8 * (i % 8));
    }
    w
}

fn words_name(w: &[u64]) -> String {
    let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).take_while(|&b| b != 0).collect();
    if bytes.is_empty() {
        "no collective".into()
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
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

    fn scratch(&self, k: usize) -> &'static [AtomicU64] {
        let base = self.st.headers[self.pe(k)].scratch();
        // SAFETY: every PE's scratch area is SCRATCH_BYTES of 8-aligned memory inside its heap
        // mapping, which lives until finalize; atomics accept any bit pattern.
        unsafe { std::slice::from_raw_parts(base as *const AtomicU64, MAX_WORDS) }
    }

    /// Argument word `i` of member `k`'s publication for this call.
    pub fn arg(&self, k: usize, i: usize) -> u64 {
        self.scratch(k)[NAME_WORDS + i].load(Ordering::Relaxed)
    }

    /// Synchronises the set (no memory completion).
    #[inline]
    pub fn sync(&self) {
        self.st.sync_set(&self.set);
    }

    /// Steps 1–3: publishes the routine name, `agreed` (which every member must pass alike) and
    /// `own` (this PE's own values, read back with `arg(k, agreed.len() + i)`), syncs, and
    /// checks the agreement.
    pub fn begin(&self, agreed: &[(&str, i64)], own: &[u64]) -> Result<()> {
        self.write_scratch(agreed, own);
        if self.set.size == 1 {
            return Ok(());
        }
        self.sync();
        self.check(agreed)
    }

    fn write_scratch(&self, agreed: &[(&str, i64)], own: &[u64]) {
        let mine = self.scratch(self.me);
        let name = name_words(self.routine);
        let words = name.iter().copied().chain(agreed.iter().map(|a| a.1 as u64)).chain(own.iter().copied());
        for (slot, w) in mine.iter().zip(words) {
            slot.store(w, Ordering::Relaxed);
        }
    }

    fn check(&self, agreed: &[(&str, i64)]) -> Result<()> {
        let mine = name_words(self.routine);
        for k in 0..self.set.size {
            if k == self.me {
                continue;
            }
            let theirs: Vec<u64> = self.scratch(k)[..NAME_WORDS].iter().map(|w| w.load(Ordering::Relaxed)).collect();
            if theirs[..] != mine[..] {
                return Err(Error::invalid(
                    self.routine,
                    format!(
                        "PE {} is in {} while this PE ({}) is in {}: every member of the team or active set must call the same collective, in the same order",
                        self.pe(k),
                        words_name(&theirs),
                        self.st.me,
                        self.routine
                    ),
                ));
            }
            for (i, (what, v)) in agreed.iter().enumerate() {
                let t = self.arg(k, i) as i64;
                if t != *v {
                    return Err(Error::invalid(
                        self.routine,
                        format!(
                            "PE {} passed {what} = {t} but this PE ({}) passed {what} = {v}: every member must pass the same {what}",
                            self.pe(k),
                            self.st.me
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Step 4: after this, peers no longer read our source or scratch.
    pub fn finish(self) {
        self.sync();
    }

    /// Member `k`'s copy of symmetric `addr..addr+len`, as mapped here (len 0: unchecked).
    #[inline]
    pub fn peer(&self, addr: *const u8, len: usize, k: usize) -> Result<*const u8> {
        if len == 0 {
            return Ok(addr);
        }
        Ok(self.st.translate(addr, len, self.pe(k), self.routine)?.cast_const())
    }

    /// Checks that `dest..dest+len` is symmetric on this PE (the spec requires it).
    pub fn own_dest(&self, dest: *mut u8, len: usize) -> Result<*mut u8> {
        if len == 0 {
            return Ok(dest);
        }
        self.st.translate(dest, len, self.st.me, self.routine)
    }

    pub fn no_overlap(&self, dest: *const u8, dlen: usize, source: *const u8, slen: usize) -> Result<()> {
        if overlap(dest, dlen, source, slen) {
            return Err(Error::invalid(
                self.routine,
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
        // SAFETY: callers pass ranges they translated (peer memory) or checked (own dest),
        // each n bytes long; ptr::copy allows overlap.
        unsafe { std::ptr::copy(src, dest, n) };
    }
}

fn check_count(n: i64, what: &str, routine: &'static str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid(routine, format!("{what} = {n} is negative; pass a count >= 0")))
}

impl State {
    /// Barrier over a set: quiet, then sync.
    pub fn coll_barrier(&self, set: PeSet, routine: &'static str) -> Result<()> {
        let c = self.collective(set, routine)?;
        self.quiet();
        c.sync();
        Ok(())
    }

    /// Sync over a set (no memory completion).
    pub fn coll_sync(&self, set: PeSet, routine: &'static str) -> Result<()> {
        let c = self.collective(set, routine)?;
        c.sync();
        Ok(())
    }

    /// Copies `nbytes` at `source` on member `root` to `dest` on every member (the root too
    /// when `update_root`, as team broadcasts do; active-set broadcasts leave the root's dest).
    #[allow(clippy::too_many_arguments)]
    pub fn broadcast(
        &self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, root: i32, update_root: bool, routine: &'static str,
    ) -> Result<()> {
        if root < 0 || root as usize >= set.size {
            return Err(Error::new(
                ErrorKind::InvalidPe,
                routine,
                format!("PE_root = {root} is not a member index of the {}-PE team/active set (valid 0..={})", set.size, set.size - 1),
            ));
        }
        let root = root as usize;
        let c = self.collective(set, routine)?;
        let writes = c.me != root || update_root;
        let d = if writes { c.own_dest(dest, nbytes)? } else { dest };
        c.begin(&[("nelems (in bytes)", nbytes as i64), ("PE_root", root as i64)], &[])?;
        let s = c.peer(source, nbytes, root)?;
        if writes {
            copy(s, d, nbytes);
        }
        c.finish();
        Ok(())
    }

    /// Concatenates every member's `nbytes` (which may differ per member) into `dest` on every
    /// member, in member order.
    pub fn collect(&self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, routine: &'static str) -> Result<()> {
        let c = self.collective(set, routine)?;
        c.begin(&[], &[nbytes as u64])?;
        let counts: Vec<usize> = (0..c.size()).map(|k| c.arg(k, 0) as usize).collect();
        let total = counts
            .iter()
            .try_fold(0usize, |a, &n| a.checked_add(n))
            .ok_or_else(|| Error::invalid(routine, "the members' element counts add up to more than size_t holds"))?;
        let d = c.own_dest(dest, total)?;
        c.no_overlap(dest, total, source, nbytes)?;
        let mut offsets = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for &n in &counts {
            offsets.push(at);
            at += n;
        }
        for step in 0..c.size() {
            let k = (c.me + step) % c.size();
            let s = c.peer(source, counts[k], k)?;
            // SAFETY: offsets[k] + counts[k] <= total, the length own_dest checked.
            copy(s, unsafe { d.add(offsets[k]) }, counts[k]);
        }
        c.finish();
        Ok(())
    }

    /// Every member contributes `nbytes`; dest gets them in member order.
    pub fn fcollect(&self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, routine: &'static str) -> Result<()> {
        let c = self.collective(set, routine)?;
        let total = bytes(nbytes, c.size(), routine)?;
        let d = c.own_dest(dest, total)?;
        c.no_overlap(dest, total, source, nbytes)?;
        c.begin(&[("nelems (in bytes)", nbytes as i64)], &[])?;
        for step in 0..c.size() {
            let k = (c.me + step) % c.size();
            let s = c.peer(source, nbytes, k)?;
            // SAFETY: k * nbytes + nbytes <= total, the length own_dest checked.
            copy(s, unsafe { d.add(k * nbytes) }, nbytes);
        }
        c.finish();
        Ok(())
    }

    /// Block k of dest on member i = block i of source on member k (blocks of `nbytes`).
    pub fn alltoall(&self, set: PeSet, dest: *mut u8, source: *const u8, nbytes: usize, routine: &'static str) -> Result<()> {
        let c = self.collective(set, routine)?;
        let total = bytes(nbytes, c.size(), routine)?;
        let d = c.own_dest(dest, total)?;
        c.no_overlap(dest, total, source, total)?;
        c.begin(&[("nelems (in bytes)", nbytes as i64)], &[])?;
        for step in 0..c.size() {
            let k = (c.me + step) % c.size();
            let s = c.peer(source, total, k)?;
            // SAFETY: both blocks lie inside the `total` bytes translated/checked above.
            copy(unsafe { s.add(c.me * nbytes) }, unsafe { d.add(k * nbytes) }, nbytes);
        }
        c.finish();
        Ok(())
    }

    /// Strided alltoall: element m of block k of dest (at index dst*(k*nelems+m)) on member i
    /// = element m of block i of source (at index sst*(i*nelems+m)) on member k.
    #[allow(clippy::too_many_arguments)]
    pub fn alltoalls(
        &self, set: PeSet, dest: *mut u8, source: *const u8, dst: isize, sst: isize, nelems: usize, size: usize, routine: &'static str,
    ) -> Result<()> {
        for (name, v) in [("dst", dst), ("sst", sst)] {
            if v < 1 {
                return Err(Error::invalid(routine, format!("{name} = {v}: strides must be >= 1 (1 means contiguous)")));
            }
        }
        let c = self.collective(set, routine)?;
        let n = c.size();
        // Bytes spanned by n*nelems elements at `stride`: ((n*nelems-1)*stride+1)*size.
        let span = |stride: isize| -> Result<usize> {
            let count = bytes(n, nelems, routine)?;
            if count == 0 {
                return Ok(0);
            }
            let last = bytes(count - 1, stride as usize, routine)?;
            bytes(last.saturating_add(1), size, routine)
        };
        let (dlen, slen) = (span(dst)?, span(sst)?);
        let d = c.own_dest(dest, dlen)?;
        c.no_overlap(dest, dlen, source, slen)?;
        c.begin(&[("dst", dst as i64), ("sst", sst as i64), ("nelems", nelems as i64)], &[])?;
        let (dst, sst) = (dst as usize, sst as usize);
        for step in 0..n {
            let k = (c.me + step) % n;
            let s = c.peer(source, slen, k)?;
            for m in 0..nelems {
                let si = sst * (c.me * nelems + m) * size;
                let di = dst * (k * nelems + m) * size;
                // SAFETY: si + size <= slen and di + size <= dlen by the span computation.
                copy(unsafe { s.add(si) }, unsafe { d.add(di) }, size);
            }
        }
        c.finish();
        Ok(())
    }

    /// Element-wise reduction of every member's `source[0..nreduce]` with `op`, in member order
    /// (so every member gets bit-identical results), into `dest` on every member. In place
    /// (`dest == source`) works: the result is built privately and written once the peers are
    /// done reading (one more sync than out of place).
    pub fn reduce<T: Copy>(
        &self, set: PeSet, dest: *mut T, source: *const T, nreduce: i64, op: impl Fn(T, T) -> T, routine: &'static str,
    ) -> Result<()> {
        let nreduce = check_count(nreduce, "nreduce", routine)?;
        let size = std::mem::size_of::<T>();
        let len = bytes(nreduce, size, routine)?;
        let align = std::mem::align_of::<T>();
        for (what, p) in [("dest", dest as usize), ("source", source as usize)] {
            if nreduce > 0 && p % align != 0 {
                return Err(Error::invalid(routine, format!("{what} {p:#x} is not aligned to {align} bytes as its element type requires")));
            }
        }
        let c = self.collective(set, routine)?;
        let d = c.own_dest(dest.cast(), len)?.cast::<T>();
        // In place is the same decision on every member for symmetric arguments; checking it
        // keeps the extra sync below matched even for a program that breaks that rule.
        let in_place = overlap(dest.cast(), len, source.cast(), len);
        c.begin(&[("nreduce", nreduce as i64), ("dest overlapping source (in place)", in_place as i64)], &[])?;
        let srcs: Vec<*const T> =
            (0..c.size()).map(|k| c.peer(source.cast(), len, k).map(|p| p.cast::<T>())).collect::<Result<_>>()?;
        let mut private: Vec<T> = Vec::new();
        let out: *mut T = if in_place {
            // SAFETY: srcs[0] was translated for nreduce elements and alignment was checked.
            private = unsafe { std::slice::from_raw_parts(srcs[0], nreduce) }.to_vec();
            private.as_mut_ptr()
        } else {
            d
        };
        let chunk = (REDUCE_CHUNK_BYTES / size.max(1)).max(1);
        let mut at = 0;
        while at < nreduce {
            let n = chunk.min(nreduce - at);
            // SAFETY: out has room for nreduce elements (own dest checked above, or the private
            // copy of member 0's source); every source was translated for nreduce elements;
            // alignment was checked; out overlaps no source (in place goes through `private`).
            let acc = unsafe { std::slice::from_raw_parts_mut(out.add(at), n) };
            if !in_place {
                // SAFETY: as above.
                acc.copy_from_slice(unsafe { std::slice::from_raw_parts(srcs[0].add(at), n) });
            }
            for s in &srcs[1..] {
                // SAFETY: as above.
                let other = unsafe { std::slice::from_raw_parts(s.add(at), n) };
                for (a, &b) in acc.iter_mut().zip(other) {
                    *a = op(*a, b);
                }
            }
            at += n;
        }
        if in_place {
            // Wait until every member is done reading our source (== dest), write the result,
            // then sync once more so that, as out of place, every member's dest is written
            // when any member returns.
            c.sync();
            // SAFETY: the private buffer holds nreduce initialised elements; d has room for them.
            unsafe { std::ptr::copy_nonoverlapping(private.as_ptr(), d, nreduce) };
        }
        c.finish();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let w = name_words("shmem_longdouble_prod_to_all");
        assert_eq!(words_name(&w), "shmem_longdouble_prod_to_all");
        assert_eq!(words_name(&[0; NAME_WORDS]), "no collective");
        let long = "x".repeat(100);
        assert_eq!(words_name(&name_words(&long)).len(), NAME_WORDS * 8 - 1);
    }

    #[test]
    fn overlap_cases() {
        let p = 0x1000 as *const u8;
        assert!(overlap(p, 8, p, 8));
        assert!(overlap(p, 8, (0x1004) as *const u8, 8));
        assert!(!overlap(p, 8, (0x1008) as *const u8, 8));
        assert!(!overlap(p, 0, p, 8));
    }
}
