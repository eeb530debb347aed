//! Atomic memory operations, put-with-signal, point-to-point waits and the distributed lock, on
//! the shared mappings.
//!
//! Every local PE maps every other PE's heap (and static data), so an AMO is one hardware atomic
//! instruction on the target word as mapped in this process: atomic with respect to AMOs from
//! every PE and every thread, with no lock anywhere. Floating-point words move through their bit
//! patterns (fetch, set, swap only), so NaN payloads and signed zeros arrive exactly.
//!
//! Waits poll the words with acquire loads through `State::wait_for` (which yields and honours
//! shmem_global_exit), so data written before a flag or signal is visible once the wait returns.

use std::cell::Cell;
use std::ffi::c_int;
use std::mem::size_of;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release, SeqCst};

use super::remote::NetWord;
use super::{raise, State};
use crate::error::{Error, Result};
use crate::fabric::AtomicOp;
pub use crate::transport::shm::{Atomic, AtomicInt, Word};
use crate::transport::AmoType;

/// The word an AMO applies to: mapped here (one CPU atomic), or reached through the network
/// transport (every AMO of a multi-host job: see `Shm::amo_bases`). A network AMO that fails
/// ends the job with the transport's message (OpenSHMEM AMOs have no error return).
pub enum Target<'a, T> {
    Mapped(Word<T>),
    Network(NetWord<'a>),
}

impl<T> Clone for Target<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Target<'_, T> {}

/// A fetching AMO through the network.
#[cold]
#[inline(never)]
fn net_fetch<T: Atomic>(n: NetWord<'_>, op: AtomicOp, v: T) -> T {
    let ty = net_type::<T>();
    match n.net.fetch_amo(n.pe, n.seg, n.off, op, ty, v.to_net()) {
        Ok(bits) => T::from_net(bits),
        Err(e) => raise(e),
    }
}

/// A non-fetching AMO through the network (complete at quiet).
#[cold]
#[inline(never)]
fn net_post<T: Atomic>(n: NetWord<'_>, op: AtomicOp, v: T) {
    if n.to_self {
        // Posted and left to quiet, it could still be in flight when this PE reads the word
        // with a plain load; the fetching form returns only once it is applied.
        net_fetch(n, op, v);
        return;
    }
    let ty = net_type::<T>();
    if let Err(e) = n.net.amo(n.pe, n.seg, n.off, op, ty, v.to_net()) {
        raise(e)
    }
}

#[cold]
#[inline(never)]
fn net_compare_swap<T: Atomic>(n: NetWord<'_>, cond: T, v: T) -> T {
    let ty = net_type::<T>();
    match n.net.compare_swap(n.pe, n.seg, n.off, ty, cond.to_net(), v.to_net()) {
        Ok(bits) => T::from_net(bits),
        Err(e) => raise(e),
    }
}

fn net_type<T: Atomic>() -> AmoType {
    T::NET.unwrap_or_else(|| {
        raise(Error::invalid_value(format!("{}-byte elements have no AMOs across hosts; use a 32- or 64-bit type", size_of::<T>())))
    })
}

impl<T: Atomic> Target<'_, T> {
    /// shmem_atomic_fetch.
    #[inline(always)]
    pub fn fetch(self) -> T {
        match self {
            Target::Mapped(w) => w.fetch(),
            Target::Network(n) => net_fetch(n, AtomicOp::Read, T::from_net(0)),
        }
    }
    /// shmem_atomic_set.
    #[inline(always)]
    pub fn set(self, v: T) {
        match self {
            Target::Mapped(w) => w.set(v),
            Target::Network(n) => net_post(n, AtomicOp::Set, v),
        }
    }
    /// shmem_atomic_swap.
    #[inline(always)]
    pub fn swap(self, v: T) -> T {
        match self {
            Target::Mapped(w) => w.swap(v),
            Target::Network(n) => net_fetch(n, AtomicOp::Set, v),
        }
    }
}

/// The integer AMOs; the `fetch_` forms return the old value, the others complete at quiet.
macro_rules! target_int_ops {
    ($($fetching:ident, $plain:ident => $op:ident;)*) => {
        impl<T: AtomicInt> Target<'_, T> {$(
            #[inline(always)]
            pub fn $fetching(self, v: T) -> T {
                match self {
                    Target::Mapped(w) => w.$fetching(v),
                    Target::Network(n) => net_fetch(n, AtomicOp::$op, v),
                }
            }
            #[inline(always)]
            pub fn $plain(self, v: T) {
                match self {
                    Target::Mapped(w) => {
                        w.$fetching(v);
                    }
                    Target::Network(n) => net_post(n, AtomicOp::$op, v),
                }
            }
        )*}
    };
}
target_int_ops! {
    fetch_add, add => Add;
    fetch_and, and => And;
    fetch_or, or => Or;
    fetch_xor, xor => Xor;
}

impl<T: AtomicInt> Target<'_, T> {
    #[inline(always)]
    pub fn compare_swap(self, cond: T, v: T) -> T {
        match self {
            Target::Mapped(w) => w.compare_swap(cond, v),
            Target::Network(n) => net_compare_swap(n, cond, v),
        }
    }
    #[inline(always)]
    pub fn fetch_inc(self) -> T {
        self.fetch_add(T::ONE)
    }
    #[inline(always)]
    pub fn inc(self) {
        self.add(T::ONE)
    }
}

/// `n` consecutive words on this PE (the ivars of a wait or test).
#[derive(Clone, Copy)]
pub struct Words<T> {
    first: *mut T,
    n: usize,
}

impl<T: Atomic> Words<T> {
    #[inline]
    fn get(&self, i: usize) -> Word<T> {
        debug_assert!(i < self.n);
        // SAFETY: local_words translated and range-checked all n words and checked the first's
        // alignment; element i < n of the same type is aligned and inside too.
        unsafe { Word::at(self.first.wrapping_add(i)) }
    }
    #[inline]
    fn load(&self, i: usize) -> T {
        T::load(self.get(i), Acquire)
    }
}

fn check_aligned<T>(addr: *const T) -> Result<()> {
    let align = size_of::<T>();
    if !(addr as usize).is_multiple_of(align) {
        return Err(Error::invalid_value(format!(
                "address {addr:p} is misaligned: atomic and synchronization routines need an object aligned to its size ({align} bytes); use a properly typed variable or an offset that is a multiple of {align}"
            ),
        ));
    }
    Ok(())
}

/// Writes one result to the caller's local `fetch` (the non-blocking fetching AMOs).
pub(crate) fn write_fetch<T: Copy>(fetch: *mut T, v: T) -> Result<()> {
    if fetch.is_null() {
        return Err(Error::invalid_value("the fetch pointer is NULL; pass the local address that receives the old value"));
    }
    // SAFETY: the caller passes a writable TYPE object (checked non-NULL above); an unaligned
    // write is accepted so a packed struct member still works.
    unsafe { fetch.write_unaligned(v) };
    Ok(())
}

impl State {
    /// The word at symmetric `addr` on world PE `pe`, checked for PE range, symmetry and alignment.
    /// In a multi-host job this is a network word for every PE, this one included.
    #[inline(always)]
    pub fn word<T: Atomic>(&self, addr: *const T, pe: i32) -> Result<Target<'_, T>> {
        check_aligned(addr)?;
        let base = self.base_in(&self.shm.amo_bases, pe)?;
        if base == 0 {
            return self.net_word(addr.cast(), size_of::<T>(), pe as usize).map(Target::Network);
        }
        let p = self.mapped(base, addr.cast(), size_of::<T>(), pe)?;
        // SAFETY: `mapped` range-checked the word inside a live mapping; `addr` (same offset
        // from a page-aligned base) was checked aligned above.
        Ok(Target::Mapped(unsafe { Word::at(p.cast()) }))
    }

    /// `n` words at symmetric `addr` on this PE.
    pub fn local_words<T: Atomic>(&self, addr: *const T, n: usize) -> Result<Words<T>> {
        if n == 0 {
            return Ok(Words { first: addr as *mut T, n });
        }
        check_aligned(addr)?;
        let len = super::rma::bytes(n, size_of::<T>())?;
        let p = self.translate(addr.cast(), len, self.me)?;
        Ok(Words { first: p.cast(), n })
    }
}

// ---------------------------------------------------------------------------------------------
// Point-to-point synchronization

/// Declares `Cmp` from one table: each operator's SHMEM_CMP_* value and the Rust comparison
/// it is (whose spelling, C's too, the messages show).
macro_rules! comparisons {
    ($($v:ident = $n:literal ($op:tt)),* $(,)?) => {
        /// The comparison operators (SHMEM_CMP_*; NVSHMEM_CMP_* has the same values).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Cmp { $($v = $n),* }

        impl Cmp {
            const ALL: [Cmp; [$($n),*].len()] = [$(Cmp::$v),*];

            /// The operator as C and Rust spell it ("==").
            fn symbol(self) -> &'static str {
                match self { $(Cmp::$v => stringify!($op)),* }
            }

            /// Whether `value cmp against` holds.
            #[inline]
            pub fn holds<T: PartialOrd>(self, value: T, against: T) -> bool {
                match self { $(Cmp::$v => value $op against),* }
            }
        }
    };
}

comparisons! {
    Eq = 0 (==), Ne = 1 (!=), Gt = 2 (>),
    Le = 3 (<=), Lt = 4 (<), Ge = 5 (>=),
}

impl Cmp {
    pub fn from_c(cmp: c_int) -> Result<Cmp> {
        Cmp::ALL.into_iter().find(|&c| c as c_int == cmp).ok_or_else(|| {
            Error::invalid_value(format!("cmp = {cmp} is not a comparison operator; use SHMEM_CMP_EQ (0), SHMEM_CMP_NE (1), SHMEM_CMP_GT (2), SHMEM_CMP_LE (3), SHMEM_CMP_LT (4) or SHMEM_CMP_GE (5)"))
        })
    }

    /// "the value at 0x7f.. to be == 5", for a wait that takes too long.
    pub fn describe<T: std::fmt::Debug>(self, addr: usize, against: T) -> String {
        format!("the value at {addr:#x} to be {} {against:?}", self.symbol())
    }
}

/// What the ivars are compared with: one value, or one per element (the _vector forms).
#[derive(Clone, Copy)]
pub enum Against<T> {
    Value(T),
    Values(*const T),
}

/// The ivars of one wait or test call, the elements its status array leaves in, and the test.
pub struct WaitSet<T> {
    words: Words<T>,
    status: *const c_int,
    cmp: Cmp,
    against: Against<T>,
    /// The routine shown on this PE's waiting-in line while it waits (wait.rs).
    waiting_in: &'static str,
}

thread_local! {
    /// Where the next _any scan starts, so a series of calls eventually returns every satisfied
    /// element even when a lower-numbered one stays satisfied.
    static ANY_START: Cell<usize> = const { Cell::new(0) };
}

impl State {
    /// Checks the arguments of a wait/test family call and builds its wait set; `waiting_in`
    /// names the routine while it waits.
    pub fn wait_set<T: Atomic>(
        &self,
        ivars: *const T,
        nelems: usize,
        status: *const c_int,
        cmp: c_int,
        against: Against<T>,
        waiting_in: &'static str,
    ) -> Result<WaitSet<T>> {
        let cmp = Cmp::from_c(cmp)?;
        if let Against::Values(p) = against {
            if p.is_null() && nelems > 0 {
                return Err(Error::invalid_value(format!(
                    "cmp_values is NULL but nelems is {nelems}; pass an array of nelems comparison values"
                )));
            }
        }
        let words = self.local_words(ivars, nelems)?;
        Ok(WaitSet { words, status, cmp, against, waiting_in })
    }

    /// shmem_wait_until (one variable).
    pub fn wait_until<T: Atomic>(&self, ivar: *const T, cmp: c_int, value: T, waiting_in: &'static str) -> Result<T> {
        let cmp = Cmp::from_c(cmp)?;
        let words = self.local_words(ivar, 1)?;
        let mut seen = value;
        let what = || format!("for {} (it is {:?})", cmp.describe(ivar as usize, value), words.load(0));
        self.wait_for(
            waiting_in,
            || {
                seen = words.load(0);
                cmp.holds(seen, value)
            },
            what,
        );
        Ok(seen)
    }

    /// shmem_test (one variable).
    pub fn test<T: Atomic>(&self, ivar: *const T, cmp: c_int, value: T) -> Result<bool> {
        let cmp = Cmp::from_c(cmp)?;
        let words = self.local_words(ivar, 1)?;
        Ok(cmp.holds(words.load(0), value))
    }
}

impl<T: Atomic> WaitSet<T> {
    #[inline]
    fn included(&self, i: usize) -> bool {
        // SAFETY: a non-NULL status has nelems ints (the routine's contract), and i < nelems.
        self.status.is_null() || unsafe { self.status.add(i).read() } == 0
    }

    #[inline]
    fn against(&self, i: usize) -> T {
        match self.against {
            Against::Value(v) => v,
            // SAFETY: Values is non-NULL (checked in wait_set) with nelems elements; i < nelems.
            Against::Values(p) => unsafe { p.add(i).read() },
        }
    }

    #[inline]
    fn holds(&self, i: usize) -> bool {
        self.cmp.holds(self.words.load(i), self.against(i))
    }

    /// What a wait on this set waits for: element `i`, or any of them.
    #[cold]
    fn awaited(&self, element: Option<usize>) -> String {
        let describe = |i: usize| {
            let addr = self.words.first.wrapping_add(i) as usize;
            format!("{} (it is {:?})", self.cmp.describe(addr, self.against(i)), self.words.load(i))
        };
        match element {
            Some(i) => format!("for element {i}: {}", describe(i)),
            None => {
                let members: Vec<String> = self.members().take(4).map(describe).collect();
                let more = if self.members().nth(4).is_some() { ", ..." } else { "" };
                format!("for any of {} elements: {}{more}", self.members().count(), members.join(", "))
            }
        }
    }

    fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.words.n).filter(|&i| self.included(i))
    }

    fn is_empty(&self) -> bool {
        self.members().next().is_none()
    }

    /// test_all: every element of the set satisfies the test (true for an empty set).
    pub fn test_all(&self) -> bool {
        self.members().all(|i| self.holds(i))
    }

    /// test_any: one satisfied element, scanning from after the last one returned.
    pub fn test_any(&self) -> Option<usize> {
        let n = self.words.n;
        if n == 0 {
            return None;
        }
        let start = ANY_START.with(|s| s.get()) % n;
        let found = (start..n).chain(0..start).find(|&i| self.included(i) && self.holds(i));
        if let Some(i) = found {
            ANY_START.with(|s| s.set(i + 1));
        }
        found
    }

    /// test_some: writes the satisfied elements' indices; returns how many.
    pub(crate) fn test_some(&self, indices: *mut usize) -> Result<usize> {
        if indices.is_null() && self.words.n > 0 {
            return Err(Error::invalid_value("indices is NULL; pass an array of at least nelems size_t"));
        }
        let mut count = 0;
        for i in self.members() {
            if self.holds(i) {
                // SAFETY: indices has at least nelems slots (the routine's contract) and count <= i < nelems.
                unsafe { indices.add(count).write(i) };
                count += 1;
            }
        }
        Ok(count)
    }

    /// wait_until_all: returns once every element of the set has satisfied the condition.
    pub fn wait_all(&self, st: &State) {
        for i in 0..self.words.n {
            if self.included(i) {
                st.wait_for(self.waiting_in, || self.holds(i), || self.awaited(Some(i)));
            }
        }
    }

    /// wait_until_any: an element that satisfies the condition, or None for an empty set.
    pub fn wait_any(&self, st: &State) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        let mut found = None;
        st.wait_for(
            self.waiting_in,
            || {
                found = self.test_any();
                found.is_some()
            },
            || self.awaited(None),
        );
        found
    }

    /// wait_until_some: waits for at least one element, then reports every satisfied one.
    pub(crate) fn wait_some(&self, st: &State, indices: *mut usize) -> Result<usize> {
        if self.is_empty() {
            return Ok(0);
        }
        let mut result = Ok(0);
        st.wait_for(
            self.waiting_in,
            || {
                result = self.test_some(indices);
                !matches!(result, Ok(0))
            },
            || self.awaited(None),
        );
        result
    }
}

// ---------------------------------------------------------------------------------------------
// Signals

/// SHMEM_SIGNAL_SET and SHMEM_SIGNAL_ADD.
pub const SIGNAL_SET: c_int = 0;
pub const SIGNAL_ADD: c_int = 1;

impl State {
    /// put-with-signal: `nbytes` from local `src` to symmetric `dest` on `pe`, then the signal
    /// word updated with release ordering, so a PE that sees the signal sees the data.
    #[allow(clippy::too_many_arguments)]
    pub fn put_signal(
        &self,
        dest: *const u8,
        src: *const u8,
        nbytes: usize,
        sig_addr: *const u64,
        signal: u64,
        sig_op: c_int,
        pe: i32,
    ) -> Result<()> {
        if sig_op != SIGNAL_SET && sig_op != SIGNAL_ADD {
            return Err(Error::invalid_value(format!(
                "sig_op = {sig_op} is not a signal operator; use SHMEM_SIGNAL_SET ({SIGNAL_SET}) or SHMEM_SIGNAL_ADD ({SIGNAL_ADD})"
            )));
        }
        let sig = self.word(sig_addr, pe)?;
        let (d, s) = (dest as usize, sig_addr as usize);
        if nbytes > 0 && s < d.saturating_add(nbytes) && d < s + size_of::<u64>() {
            return Err(Error::invalid_value(format!(
                "the signal word {sig_addr:p} overlaps the destination [{dest:p}, +{nbytes} bytes); use a separate signal variable"
            )));
        }
        self.put_bytes(dest, src, nbytes, pe)?;
        match sig {
            Target::Mapped(w) if sig_op == SIGNAL_SET => u64::store(w, signal, Release),
            Target::Mapped(w) => {
                u64::fetch_add(w, signal, AcqRel);
            }
            Target::Network(n) => {
                // The data (shm store or network write) is ordered before the signal.
                std::sync::atomic::fence(SeqCst);
                n.net.fence()?;
                if sig_op == SIGNAL_SET {
                    sig.set(signal)
                } else {
                    sig.add(signal)
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Distributed lock

/// The ticket lock kept in PE 0's copy of the user's (zero-initialised) `long`: the high 32 bits
/// hand out tickets, the low 32 bits say which ticket is served. Equal halves: the lock is free.
const TICKET: u64 = 1 << 32;

#[inline]
fn next_ticket(w: u64) -> u32 {
    (w >> 32) as u32
}
#[inline]
fn serving(w: u64) -> u32 {
    w as u32
}

impl State {
    fn lock_word(&self, lock: *const i64) -> Result<Target<'_, u64>> {
        self.word(lock.cast::<u64>(), 0)
    }

    /// shmem_set_lock: take a ticket, wait until it is served. FIFO-fair across PEs and threads.
    pub fn set_lock(&self, lock: *const i64, waiting_in: &'static str) -> Result<()> {
        let w = self.lock_word(lock)?;
        let mine = next_ticket(w.fetch_add(TICKET));
        self.wait_for(
            waiting_in,
            || serving(w.fetch()) == mine,
            || format!("for the lock at {lock:p} (ticket {mine}, now serving {})", serving(w.fetch())),
        );
        Ok(())
    }

    /// shmem_test_lock: take the lock only if it is free now; true when it was taken.
    pub fn test_lock(&self, lock: *const i64) -> Result<bool> {
        let w = self.lock_word(lock)?;
        let now = w.fetch();
        if next_ticket(now) != serving(now) {
            return Ok(false);
        }
        // Only a new ticket can change a free word, and then the lock is no longer free.
        Ok(w.compare_swap(now, now.wrapping_add(TICKET)) == now)
    }

    /// shmem_clear_lock: complete this PE's puts and AMOs, then serve the next ticket.
    pub fn clear_lock(&self, lock: *const i64) -> Result<()> {
        let w = self.lock_word(lock)?;
        self.quiet();
        let mut now = w.fetch();
        loop {
            if next_ticket(now) == serving(now) {
                return Err(Error::invalid_value(format!(
                    "the lock at {lock:p} is not held; call shmem_set_lock (or a successful shmem_test_lock) before shmem_clear_lock"
                )));
            }
            // Only the low half changes (wrapping inside it), never the ticket counter.
            let next = (now & !(TICKET - 1)) | u64::from(serving(now).wrapping_add(1));
            let seen = w.compare_swap(now, next);
            if seen == now {
                return Ok(());
            }
            now = seen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word<T>(x: &mut T) -> Word<T> {
        // SAFETY: a live, aligned local that the test touches only through the word.
        unsafe { Word::at(x as *mut T) }
    }

    /// A transport whose one remote word is a u64 in a mutex; it logs which call each AMO made.
    #[derive(Default)]
    struct OneWord {
        word: std::sync::Mutex<u64>,
        calls: std::sync::Mutex<Vec<String>>,
    }

    impl OneWord {
        fn apply(&self, op: AtomicOp, ty: AmoType, v: u64) -> u64 {
            let mut w = self.word.lock().unwrap();
            let old = *w;
            let mask = if matches!(ty, AmoType::I32 | AmoType::U32 | AmoType::F32) { 0xffff_ffff } else { u64::MAX };
            *w = match op {
                AtomicOp::Add => old.wrapping_add(v) & mask,
                AtomicOp::And => old & v,
                AtomicOp::Or => old | v,
                AtomicOp::Xor => old ^ v,
                AtomicOp::Set => v & mask,
                AtomicOp::Read | AtomicOp::CompareSwap => old,
            };
            old
        }
        fn log(&self, s: String) {
            self.calls.lock().unwrap().push(s);
        }
    }

    impl crate::transport::Transport for OneWord {
        fn describe(&self) -> String {
            "one word".into()
        }
        fn put(&self, _: usize, _: Segment, _: usize, _: &[u8]) -> Result<()> {
            unreachable!()
        }
        fn get(&self, _: usize, _: Segment, _: usize, _: &mut [u8]) -> Result<()> {
            unreachable!()
        }
        fn amo(&self, pe: usize, _: Segment, off: usize, op: AtomicOp, ty: AmoType, v: u64) -> Result<()> {
            self.log(format!("amo {op:?} {ty:?} pe {pe} off {off}"));
            self.apply(op, ty, v);
            Ok(())
        }
        fn fetch_amo(&self, _: usize, _: Segment, _: usize, op: AtomicOp, ty: AmoType, v: u64) -> Result<u64> {
            self.log(format!("fetch {op:?} {ty:?}"));
            Ok(self.apply(op, ty, v))
        }
        fn compare_swap(&self, _: usize, _: Segment, _: usize, ty: AmoType, cond: u64, v: u64) -> Result<u64> {
            self.log(format!("cswap {ty:?}"));
            let mut w = self.word.lock().unwrap();
            let old = *w;
            if old == cond {
                *w = v;
            }
            Ok(old)
        }
        fn fence(&self) -> Result<()> {
            Ok(())
        }
        fn quiet(&self) -> Result<()> {
            Ok(())
        }
    }

    use crate::transport::Segment;

    #[test]
    fn network_targets_carry_each_amo_to_the_transport() {
        let t = OneWord::default();
        let target = || Target::<i64>::Network(NetWord { net: &t, pe: 3, seg: Segment::Heap, off: 64, to_self: false });
        target().set(-5);
        assert_eq!(target().fetch(), -5);
        target().add(7);
        assert_eq!(target().fetch_add(10), 2);
        assert_eq!(target().fetch_inc(), 12);
        assert_eq!(target().compare_swap(99, 1), 13, "a failed compare_swap returns the old value");
        assert_eq!(target().compare_swap(13, 1), 13);
        assert_eq!(target().swap(6), 1);
        target().xor(3);
        assert_eq!(target().fetch_or(8), 5);
        assert_eq!(target().fetch_and(12), 13);
        assert_eq!(target().fetch(), 12);
        let calls = t.calls.lock().unwrap().clone();
        assert_eq!(calls[0], "amo Set I64 pe 3 off 64", "set is a plain (non-fetching) AMO");
        assert_eq!(calls[2], "amo Add I64 pe 3 off 64", "add is a plain AMO, complete at quiet");
        assert_eq!(calls[3], "fetch Add I64");
        assert_eq!(calls[5], "cswap I64");
        assert_eq!(calls[7], "fetch Set I64", "swap is a fetching set");
        assert_eq!(calls[8], "amo Xor I64 pe 3 off 64");
        // Floats travel as their bits: a NaN payload and -0.0 arrive exactly.
        let f = Target::<f64>::Network(NetWord { net: &t, pe: 0, seg: Segment::Statics, off: 0, to_self: false });
        f.set(-0.0);
        assert_eq!(f.fetch().to_bits(), (-0.0f64).to_bits());
        let nan = f64::from_bits(0x7ff8_dead_beef_0001);
        assert_eq!(f.swap(nan).to_bits(), (-0.0f64).to_bits());
        assert_eq!(f.fetch().to_bits(), nan.to_bits());
        assert_eq!(t.calls.lock().unwrap().last().unwrap(), "fetch Read F64");
        // 32-bit signed values survive the u64 carriage (sign bits dropped and restored).
        let i = Target::<i32>::Network(NetWord { net: &t, pe: 0, seg: Segment::Heap, off: 0, to_self: false });
        i.set(-2);
        assert_eq!(i.fetch_add(-3), -2);
        assert_eq!(i.fetch(), -5);
        // To this PE's own word, the non-fetching forms complete before returning (fetching call).
        let own = Target::<i64>::Network(NetWord { net: &t, pe: 1, seg: Segment::Heap, off: 8, to_self: true });
        let before = t.calls.lock().unwrap().len();
        own.add(1);
        own.xor(2);
        own.set(4);
        let calls = t.calls.lock().unwrap()[before..].to_vec();
        assert_eq!(calls, ["fetch Add I64", "fetch Xor I64", "fetch Set I64"]);
    }

    #[test]
    fn integer_amos() {
        let mut x: i32 = 5;
        let w = word(&mut x);
        assert_eq!(w.fetch_add(3), 5);
        assert_eq!(w.fetch_inc(), 8);
        assert_eq!(w.compare_swap(0, 1), 9);
        assert_eq!(w.compare_swap(9, 1), 9);
        assert_eq!(w.swap(-7), 1);
        assert_eq!(w.fetch(), -7);
        let mut u: u64 = 0b1100;
        let w = word(&mut u);
        assert_eq!(w.fetch_and(0b0110), 0b1100);
        assert_eq!(w.fetch_or(0b0001), 0b0100);
        assert_eq!(w.fetch_xor(0b0101), 0b0101);
        assert_eq!(w.fetch(), 0);
        let mut m: u32 = u32::MAX;
        assert_eq!(word(&mut m).fetch_inc(), u32::MAX);
        assert_eq!(m, 0);
    }

    #[test]
    fn float_bits_are_exact() {
        let mut f: f64 = 0.0;
        let w = word(&mut f);
        let nan = f64::from_bits(0x7ff4_0000_dead_beef);
        w.set(nan);
        assert_eq!(w.fetch().to_bits(), 0x7ff4_0000_dead_beef);
        assert_eq!(w.swap(-0.0).to_bits(), 0x7ff4_0000_dead_beef);
        assert_eq!(f.to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn comparisons() {
        assert!(Cmp::from_c(6).is_err());
        assert!(Cmp::from_c(-1).is_err());
        let table = [
            (0, [false, true, false]),
            (1, [true, false, true]),
            (2, [false, false, true]),
            (3, [true, true, false]),
            (4, [true, false, false]),
            (5, [false, true, true]),
        ];
        for (c, want) in table {
            let cmp = Cmp::from_c(c).unwrap();
            assert_eq!(cmp as c_int, c, "from_c and the enum's values agree");
            assert_eq!([cmp.holds(1, 2), cmp.holds(2, 2), cmp.holds(3, 2)], want, "cmp {c}");
        }
        let said: Vec<String> = Cmp::ALL.iter().map(|c| c.describe(0x10, 5)).collect();
        let ops = ["==", "!=", ">", "<=", "<", ">="];
        assert_eq!(said, ops.map(|op| format!("the value at 0x10 to be {op} 5")));
    }

    #[test]
    fn wait_set_semantics() {
        let mut v: [i64; 4] = [1, 0, 1, 0];
        let first = v.as_mut_ptr();
        let status = [0, 0, 1, 0];
        let set =
            |status: *const c_int, against| WaitSet { words: Words { first, n: 4 }, status, cmp: Cmp::Eq, against, waiting_in: "test" };
        let s = set(status.as_ptr(), Against::Value(1));
        assert!(!s.test_all());
        let mut idx = [usize::MAX; 4];
        assert_eq!(s.test_some(idx.as_mut_ptr()).unwrap(), 1);
        assert_eq!(idx[0], 0);
        assert_eq!(s.test_any(), Some(0));
        let all_out = [1, 1, 1, 1];
        let e = set(all_out.as_ptr(), Against::Value(1));
        assert!(e.is_empty());
        assert!(e.test_all());
        assert_eq!(e.test_any(), None);
        let want = [1i64, 0, 7, 0];
        let vs = set(status.as_ptr(), Against::Values(want.as_ptr()));
        assert!(vs.test_all());
        let nothing = set(std::ptr::null(), Against::Value(9));
        assert_eq!(nothing.test_any(), None);
        assert_eq!(nothing.test_some(idx.as_mut_ptr()).unwrap(), 0);
    }

    #[test]
    fn any_rotates_over_satisfied_elements() {
        let mut v: [u32; 3] = [5, 5, 5];
        let s = WaitSet {
            words: Words { first: v.as_mut_ptr(), n: 3 },
            status: std::ptr::null(),
            cmp: Cmp::Eq,
            against: Against::Value(5),
            waiting_in: "test",
        };
        let mut seen = [false; 3];
        for _ in 0..3 {
            seen[s.test_any().unwrap()] = true;
        }
        assert_eq!(seen, [true; 3]);
    }

    #[test]
    fn ticket_halves_wrap_independently() {
        let w = u64::MAX - 1; // next ticket 0xffffffff, serving 0xfffffffe
        assert_eq!(next_ticket(w), u32::MAX);
        assert_eq!(serving(w), u32::MAX - 1);
        let taken = w.wrapping_add(TICKET);
        assert_eq!(next_ticket(taken), 0);
        assert_eq!(serving(taken), u32::MAX - 1);
    }
}
