//! The shm transport: PEs of this host, reached through the shared mappings of their memory
//! (every local PE maps every other's heap and static data). A put or get is a copy into or out
//! of the mapping; an AMO is one hardware atomic on the word as mapped here, atomic with
//! respect to AMOs from every PE and every thread, with no lock anywhere. Everything here is
//! inline and generic: the hot path makes no indirect call.

use std::sync::atomic::Ordering::{self, SeqCst};
use std::sync::atomic::{AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU16, AtomicU32, AtomicU64, AtomicUsize};

use super::{AmoType, Route, RouteTable};

/// A word that atomics may be applied to: inside a live shared mapping (translated and
/// range-checked by `State::word`/`State::local_words`) and naturally aligned. Made only
/// through `Word::at`, whose caller vouches for both.
pub struct Word<T> {
    p: *mut T,
}

impl<T> Word<T> {
    /// The word at `p`.
    ///
    /// # Safety
    /// `p` is naturally aligned and lies inside memory that stays mapped while the runtime state
    /// lives (a shared mapping of a PE's heap or static data, or this PE's own), which the
    /// runtime only ever accesses atomically.
    #[inline(always)]
    pub(crate) unsafe fn at(p: *mut T) -> Word<T> {
        Word { p }
    }
}

impl<T> Clone for Word<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Word<T> {}

/// Types the AMOs and waits can load, store and swap atomically.
pub trait Atomic: Copy + PartialOrd + std::fmt::Debug + 'static {
    /// The element type of this type's AMOs through a network transport (None: no network AMOs).
    const NET: Option<AmoType>;
    /// The value as the bit pattern network AMOs carry, and back.
    fn to_net(self) -> u64;
    fn from_net(bits: u64) -> Self;
    fn load(w: Word<Self>, order: Ordering) -> Self;
    fn store(w: Word<Self>, v: Self, order: Ordering);
    fn swap(w: Word<Self>, v: Self) -> Self;
}

/// Integer types: the arithmetic and bitwise AMOs as well.
pub trait AtomicInt: Atomic {
    const ONE: Self;
    /// Stores `v` if the word equals `cond`; returns the old value either way.
    fn compare_swap(w: Word<Self>, cond: Self, v: Self) -> Self;
    fn fetch_add(w: Word<Self>, v: Self, order: Ordering) -> Self;
    fn fetch_and(w: Word<Self>, v: Self) -> Self;
    fn fetch_or(w: Word<Self>, v: Self) -> Self;
    fn fetch_xor(w: Word<Self>, v: Self) -> Self;
}

macro_rules! int_atomics {
    ($($t:ty => $a:ty, $net:expr);* $(;)?) => {$(
        impl Word<$t> {
            #[inline]
            fn cell(self) -> &'static $a {
                // SAFETY: a Word points at a naturally aligned word inside a shared mapping that
                // stays mapped while the runtime state lives (every caller holds it); the word
                // is only ever accessed atomically by the runtime, and any bit pattern is valid.
                unsafe { <$a>::from_ptr(self.p) }
            }
        }
        impl Atomic for $t {
            const NET: Option<AmoType> = $net;
            #[inline]
            fn to_net(self) -> u64 {
                self as u64
            }
            #[inline]
            fn from_net(bits: u64) -> $t {
                bits as $t
            }
            #[inline]
            fn load(w: Word<$t>, order: Ordering) -> $t {
                w.cell().load(order)
            }
            #[inline]
            fn store(w: Word<$t>, v: $t, order: Ordering) {
                w.cell().store(v, order)
            }
            #[inline]
            fn swap(w: Word<$t>, v: $t) -> $t {
                w.cell().swap(v, SeqCst)
            }
        }
        impl AtomicInt for $t {
            const ONE: $t = 1;
            #[inline]
            fn compare_swap(w: Word<$t>, cond: $t, v: $t) -> $t {
                match w.cell().compare_exchange(cond, v, SeqCst, SeqCst) {
                    Ok(old) | Err(old) => old,
                }
            }
            #[inline]
            fn fetch_add(w: Word<$t>, v: $t, order: Ordering) -> $t {
                w.cell().fetch_add(v, order)
            }
            #[inline]
            fn fetch_and(w: Word<$t>, v: $t) -> $t {
                w.cell().fetch_and(v, SeqCst)
            }
            #[inline]
            fn fetch_or(w: Word<$t>, v: $t) -> $t {
                w.cell().fetch_or(v, SeqCst)
            }
            #[inline]
            fn fetch_xor(w: Word<$t>, v: $t) -> $t {
                w.cell().fetch_xor(v, SeqCst)
            }
        }
    )*};
}

int_atomics! {
    i16 => AtomicI16, None; u16 => AtomicU16, None; i32 => AtomicI32, Some(AmoType::I32); u32 => AtomicU32, Some(AmoType::U32);
    i64 => AtomicI64, Some(AmoType::I64); u64 => AtomicU64, Some(AmoType::U64);
    isize => AtomicIsize, Some(AmoType::I64); usize => AtomicUsize, Some(AmoType::U64);
}

macro_rules! float_atomics {
    ($($t:ty => $bits:ty, $net:expr),* $(,)?) => {$(
        impl Atomic for $t {
            const NET: Option<AmoType> = Some($net);
            #[inline]
            fn to_net(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline]
            fn from_net(bits: u64) -> $t {
                <$t>::from_bits(bits as $bits)
            }
            #[inline]
            fn load(w: Word<$t>, order: Ordering) -> $t {
                <$t>::from_bits(<$bits>::load(Word { p: w.p.cast() }, order))
            }
            #[inline]
            fn store(w: Word<$t>, v: $t, order: Ordering) {
                <$bits>::store(Word { p: w.p.cast() }, v.to_bits(), order)
            }
            #[inline]
            fn swap(w: Word<$t>, v: $t) -> $t {
                <$t>::from_bits(<$bits>::swap(Word { p: w.p.cast() }, v.to_bits()))
            }
        }
    )*};
}

float_atomics! { f32 => u32, AmoType::F32, f64 => u64, AmoType::F64 }

impl<T: Atomic> Word<T> {
    /// shmem_atomic_fetch.
    #[inline]
    pub fn fetch(self) -> T {
        T::load(self, SeqCst)
    }
    /// shmem_atomic_set.
    #[inline]
    pub fn set(self, v: T) {
        T::store(self, v, SeqCst)
    }
    /// shmem_atomic_swap.
    #[inline]
    pub fn swap(self, v: T) -> T {
        T::swap(self, v)
    }
}

impl<T: AtomicInt> Word<T> {
    #[inline]
    pub fn compare_swap(self, cond: T, v: T) -> T {
        T::compare_swap(self, cond, v)
    }
    #[inline]
    pub fn fetch_add(self, v: T) -> T {
        T::fetch_add(self, v, SeqCst)
    }
    #[inline]
    pub fn fetch_inc(self) -> T {
        T::fetch_add(self, T::ONE, SeqCst)
    }
    #[inline]
    pub fn fetch_and(self, v: T) -> T {
        T::fetch_and(self, v)
    }
    #[inline]
    pub fn fetch_or(self, v: T) -> T {
        T::fetch_or(self, v)
    }
    #[inline]
    pub fn fetch_xor(self, v: T) -> T {
        T::fetch_xor(self, v)
    }
}

/// Copies `n` bytes like `ptr::copy` (the ranges may overlap). Sizes up to 16 bytes, the usual
/// put/get of one word or a small struct, are done with at most two loads and two stores, all
/// loads first (which makes overlap harmless), instead of a call to memmove.
///
/// # Safety
/// `src` must be readable and `dest` writable for `n` bytes.
#[inline(always)]
pub unsafe fn copy_bytes(src: *const u8, dest: *mut u8, n: usize) {
    use std::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY: every arm: the caller guarantees n readable bytes at src and n writable bytes
    // at dest; each arm touches only [0, n) of both, with unaligned accesses.
    unsafe {
        match n {
            8 => wr(dest.cast::<u64>(), rd(src.cast::<u64>())),
            4 => wr(dest.cast::<u32>(), rd(src.cast::<u32>())),
            1 => *dest = *src,
            2 => wr(dest.cast::<u16>(), rd(src.cast::<u16>())),
            9..=16 => {
                let (a, b) = (rd(src.cast::<u64>()), rd(src.add(n - 8).cast::<u64>()));
                wr(dest.cast::<u64>(), a);
                wr(dest.add(n - 8).cast::<u64>(), b);
            }
            5..=7 => {
                let (a, b) = (rd(src.cast::<u32>()), rd(src.add(n - 4).cast::<u32>()));
                wr(dest.cast::<u32>(), a);
                wr(dest.add(n - 4).cast::<u32>(), b);
            }
            3 => {
                let (a, b) = (rd(src.cast::<u16>()), *src.add(2));
                wr(dest.cast::<u16>(), a);
                *dest.add(2) = b;
            }
            _ => std::ptr::copy(src, dest, n),
        }
    }
}

/// The shm transport's table, built once at init from the route table: each PE's heap base as
/// mapped here, 0 for a PE it does not reach. One load gives the PE check (a bounds check on
/// the table), the route and the base, so the hot path pays one compare-and-branch for the
/// route (runtime/rma.rs `base_in`).
pub struct Shm {
    /// For puts and gets: the mapped base of PEs on this host, 0 for PEs on other hosts.
    pub rma_bases: Vec<usize>,
    /// For AMOs: `heap_bases` in a single-host job, all 0 in a multi-host one, where every AMO
    /// goes through the network transport, to PEs on this host too, so that AMOs from every host
    /// are atomic with each other (docs/ARCHITECTURE.md, "AMO atomicity").
    pub amo_bases: Vec<usize>,
}

impl Shm {
    /// `heap_bases`: every PE's heap as mapped here (HostHeap::bases).
    pub fn new(heap_bases: &[usize], routes: &RouteTable) -> Shm {
        let rma_bases = heap_bases.iter().enumerate().map(|(pe, &b)| if routes.route(pe) == Route::Shm { b } else { 0 }).collect();
        let amo_bases = if routes.spans_hosts() { vec![0; heap_bases.len()] } else { heap_bases.to_vec() };
        Shm { rma_bases, amo_bases }
    }
}

/// put: `n` bytes from the caller's `src` into a peer's memory at `dest`, as mapped here.
///
/// # Safety
/// `dest..dest+n` lies inside a live shared mapping; `src` is readable for `n` bytes (the
/// ranges may overlap: a put to this PE).
#[inline(always)]
pub unsafe fn put(dest: *mut u8, src: *const u8, n: usize) {
    // SAFETY: the caller's contract, which is copy_bytes's.
    unsafe { copy_bytes(src, dest, n) }
}

/// get: `n` bytes of a peer's memory at `src`, as mapped here, into the caller's `dest`.
///
/// # Safety
/// As `put`, with the roles of the buffers swapped.
#[inline(always)]
pub unsafe fn get(dest: *mut u8, src: *const u8, n: usize) {
    // SAFETY: the caller's contract, which is copy_bytes's.
    unsafe { copy_bytes(src, dest, n) }
}

/// p: one element stored with a single store of the whole element when `T` is a machine word
/// or smaller, so a peer polling it never sees a torn value.
///
/// # Safety
/// `dest` is aligned for `T` and lies inside a live shared mapping.
#[inline(always)]
pub unsafe fn p<T: Copy>(dest: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::write_volatile(dest, value) }
}

/// g: one element loaded (a single load for word-sized types).
///
/// # Safety
/// As `p`; every bit pattern must be a valid `T` (the plain C types are).
#[inline(always)]
pub unsafe fn g<T: Copy>(src: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::read_volatile(src) }
}

/// iput / iget: `nelems` elements of `size` bytes from `src` (stride `sst` elements) to `dest`
/// (stride `dst` elements), one copy each.
///
/// # Safety
/// Every element touched lies inside a live mapping or the caller's buffer (the runtime
/// translates the whole span of the remote side first).
#[inline]
pub unsafe fn copy_strided(dest: *mut u8, src: *const u8, dst: isize, sst: isize, nelems: usize, size: usize) {
    for i in 0..nelems as isize {
        // SAFETY: element i of both sides, inside the ranges the caller vouches for.
        unsafe { std::ptr::copy(src.wrapping_offset(i * sst * size as isize), dest.wrapping_offset(i * dst * size as isize), size) };
    }
}
