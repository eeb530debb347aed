//! Communication contexts (OpenSHMEM 1.5 §9.4) and RMA routed through them.
//!
//! On shared memory a context needs no resources: every put is a store that is complete when
//! it returns, so quiet and fence order everything at once. What a context does carry is its
//! team: a context made by `shmem_team_create_ctx` reads PE arguments as team members.
//!
//! A C handle (`shmem_ctx_t`) is an integer, never dereferenced by anyone:
//! `TAG | generation << 16 | slot`. Slot 0 is the default context (`DEFAULT`, the value of the
//! exported `oshmem_ctx_default`); NULL is `SHMEM_CTX_INVALID`. The table is a fixed array of
//! slots read without locks, so RMA through a context costs two atomic loads; a destroyed
//! context's slot is reused with the next generation, so a stale handle is detected rather than
//! silently aliasing a newer context.

use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::barrier::PeSet;
use super::rma::Strided;
use super::team::WORLD;
use super::State;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::shm;

/// Marks a value as a context handle (bits 36..48; user-space addresses look nothing like it).
const TAG: usize = 0x5c7_0000_0000;
const TAG_MASK: usize = !0xffff_ffff;
/// The default context: slot 0, generation 0.
pub const DEFAULT: usize = TAG;
/// SHMEM_CTX_INVALID.
pub const INVALID: usize = 0;
/// Most contexts alive at once (creating one more fails with a nonzero return, as the spec
/// allows when resources run out).
pub const MAX_CONTEXTS: usize = 4096;

/// Context options (values as Open MPI's OSHMEM defines them). All are hints on shared memory.
pub const CTX_PRIVATE: i64 = 1 << 0;
pub const CTX_SERIALIZED: i64 = 1 << 1;
pub const CTX_NOSTORE: i64 = 1 << 2;
const KNOWN_OPTIONS: i64 = CTX_PRIVATE | CTX_SERIALIZED | CTX_NOSTORE;

const LIVE: u64 = 1 << 63;

/// What a live context resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// Index of the team in the team table.
    pub team: usize,
    /// The team's PEs (team PE i is world PE set.pe(i)).
    pub set: PeSet,
    pub options: i64,
}

impl Route {
    /// The world PE that team-relative `pe` names (world contexts pass it through unchanged).
    #[inline]
    pub fn world_pe(&self, pe: i32) -> Result<i32> {
        if self.team == WORLD {
            return Ok(pe);
        }
        if pe < 0 || pe as usize >= self.set.size {
            return Err(Error::of(
                ErrorKind::InvalidPe, format!(
                    "PE {pe} is out of range for the context's team ({} PEs, valid 0..={}); PEs passed with a team context are team-relative",
                    self.set.size,
                    self.set.size as i64 - 1
                ),
            ));
        }
        Ok(self.set.pe(pe as usize) as i32)
    }
}

#[derive(Default)]
struct Slot {
    /// LIVE | options << 48 | generation << 32 | team index. Written under the table lock,
    /// read without it (seqlock style: read state, fields, state again).
    state: AtomicU64,
    start: AtomicUsize,
    stride: AtomicUsize,
    size: AtomicUsize,
}

fn generation(state: u64) -> usize {
    ((state >> 32) & 0xffff) as usize
}

struct Free {
    /// Slots never used yet start here.
    next: usize,
    /// Slots of destroyed contexts, reused first.
    reuse: Vec<usize>,
}

pub struct CtxTable {
    slots: Box<[Slot]>,
    free: Mutex<Free>,
}

impl CtxTable {
    pub fn new(npes: usize) -> CtxTable {
        let slots: Box<[Slot]> = (0..MAX_CONTEXTS).map(|_| Slot::default()).collect();
        let world = PeSet::world(npes);
        let t = CtxTable { slots, free: Mutex::new(Free { next: 1, reuse: Vec::new() }) };
        t.publish(0, 0, WORLD, world, 0);
        t
    }

    fn publish(&self, slot: usize, gen: usize, team: usize, set: PeSet, options: i64) {
        let s = &self.slots[slot];
        // Any reader that sees these field values also sees the dead state stored before.
        fence(Ordering::Release);
        s.start.store(set.start, Ordering::Relaxed);
        s.stride.store(set.stride, Ordering::Relaxed);
        s.size.store(set.size, Ordering::Relaxed);
        let state = LIVE | ((options as u64 & 0xff) << 48) | ((gen as u64) << 32) | team as u64;
        s.state.store(state, Ordering::Release);
    }

    /// A new context on `team` (whose PEs are `set`); returns its handle.
    pub fn create(&self, team: usize, set: PeSet, options: i64) -> Result<usize> {
        if options & !KNOWN_OPTIONS != 0 {
            return Err(Error::invalid_value(format!("unknown context option bits {:#x} in options {options:#x}; valid options are SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED and SHMEM_CTX_NOSTORE", options & !KNOWN_OPTIONS),
            ));
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        let slot = match free.reuse.pop() {
            Some(s) => s,
            None if free.next < MAX_CONTEXTS => {
                free.next += 1;
                free.next - 1
            }
            None => {
                return Err(Error::of(
                    ErrorKind::OutOfMemory,
                    format!("{MAX_CONTEXTS} contexts are already alive on this PE; destroy some with shmem_ctx_destroy"),
                ))
            }
        };
        let gen = generation(self.slots[slot].state.load(Ordering::Relaxed));
        self.publish(slot, gen, team, set, options);
        Ok(TAG | gen << 16 | slot)
    }

    /// Destroys a created context; its handle becomes invalid.
    pub fn destroy(&self, handle: usize) -> Result<()> {
        if handle == DEFAULT {
            return Err(Error::invalid_value("the default context (SHMEM_CTX_DEFAULT) cannot be destroyed; destroy only contexts made by shmem_ctx_create or shmem_team_create_ctx"));
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        // Checked under the lock, so two threads destroying one context cannot both succeed.
        self.resolve(handle)?;
        let slot = handle & 0xffff;
        let s = &self.slots[slot];
        let next_gen = (generation(s.state.load(Ordering::Relaxed)) + 1) & 0xffff;
        s.state.store((next_gen as u64) << 32, Ordering::Release);
        free.reuse.push(slot);
        Ok(())
    }

    /// Destroys every live context made on `team` (shmem_team_destroy does this for the
    /// team's shareable contexts); returns how many.
    pub fn destroy_team(&self, team: usize) -> usize {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        let mut n = 0;
        for (slot, s) in self.slots.iter().enumerate().skip(1) {
            let state = s.state.load(Ordering::Relaxed);
            if state & LIVE != 0 && (state & 0xffff_ffff) as usize == team {
                let next_gen = (generation(state) + 1) & 0xffff;
                s.state.store((next_gen as u64) << 32, Ordering::Release);
                free.reuse.push(slot);
                n += 1;
            }
        }
        n
    }

    /// The team and options behind a live handle, or an "invalid context" error naming the routine.
    #[inline]
    pub fn resolve(&self, handle: usize) -> Result<Route> {
        let slot = handle & 0xffff;
        if handle & TAG_MASK != TAG || slot >= MAX_CONTEXTS {
            return Err(invalid_handle(handle));
        }
        let s = &self.slots[slot];
        let state = s.state.load(Ordering::Acquire);
        let set = PeSet {
            start: s.start.load(Ordering::Relaxed),
            stride: s.stride.load(Ordering::Relaxed),
            size: s.size.load(Ordering::Relaxed),
            chan: 0,
        };
        fence(Ordering::Acquire);
        let again = s.state.load(Ordering::Relaxed);
        if state & LIVE == 0 || state != again || generation(state) != (handle >> 16) & 0xffff {
            return Err(Error::invalid_value(format!(
                "invalid context {handle:#x}: it was destroyed by shmem_ctx_destroy; create a new one or use SHMEM_CTX_DEFAULT"
            )));
        }
        Ok(Route { team: (state & 0xffff_ffff) as usize, set, options: ((state >> 48) & 0xff) as i64 })
    }

    /// How many created contexts are alive (for tests and diagnostics).
    pub fn live_count(&self) -> usize {
        self.slots[1..].iter().filter(|s| s.state.load(Ordering::Relaxed) & LIVE != 0).count()
    }
}

fn invalid_handle(handle: usize) -> Error {
    if handle == INVALID {
        Error::invalid_value("invalid context: SHMEM_CTX_INVALID (NULL) cannot be used for communication; use SHMEM_CTX_DEFAULT or a context from shmem_ctx_create (check its return value)",
        )
    } else {
        Error::invalid_value(format!(
            "invalid context {handle:#x}: not a handle from shmem_ctx_create or shmem_team_create_ctx, nor SHMEM_CTX_DEFAULT"
        ))
    }
}

impl State {
    /// The world PE that `pe` names through context `ctx` (a C handle value): team contexts
    /// number PEs within their team. Range checks against the world happen later, in `remote`.
    /// The default context is decided inline (it is what every non-ctx routine passes).
    #[inline(always)]
    pub fn ctx_pe(&self, ctx: usize, pe: i32) -> Result<i32> {
        if ctx == DEFAULT {
            return Ok(pe);
        }
        self.ctx_pe_resolved(ctx, pe)
    }

    #[inline(never)]
    fn ctx_pe_resolved(&self, ctx: usize, pe: i32) -> Result<i32> {
        self.ctxs.resolve(ctx)?.world_pe(pe)
    }

    /// A new context on team `team` (table index). Errors are not fatal to the caller: the C
    /// routine returns nonzero.
    pub fn ctx_create(&self, team: usize, options: i64) -> Result<usize> {
        let t = self.teams.get(team)?;
        self.ctxs.create(team, t.set, options)
    }

    /// Completes the context's operations, then destroys it.
    pub fn ctx_destroy(&self, ctx: usize) -> Result<()> {
        self.ctxs.resolve(ctx)?;
        self.quiet();
        self.ctxs.destroy(ctx)
    }

    /// Team table index of the context's team.
    pub fn ctx_team(&self, ctx: usize) -> Result<usize> {
        if ctx == DEFAULT {
            return Ok(WORLD);
        }
        Ok(self.ctxs.resolve(ctx)?.team)
    }

    /// shmem_ctx_quiet / shmem_ctx_fence: checks the handle, then completes and orders every
    /// store (one memory fence covers all contexts on shared memory).
    pub fn ctx_quiet(&self, ctx: usize) -> Result<()> {
        if ctx != DEFAULT {
            self.ctxs.resolve(ctx)?;
        }
        self.quiet();
        Ok(())
    }

    /// Contiguous put (`PUT`) or get of `n` bytes through a context, in C order (dest, src);
    /// `NBI`: complete at the next quiet (see `rma_bytes`).
    #[inline(always)]
    pub fn ctx_rma<const PUT: bool, const NBI: bool>(&self, ctx: usize, dest: *mut u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        let pe = self.ctx_pe(ctx, pe)?;
        self.rma_bytes::<PUT, NBI>(dest, src, n, pe)
    }

    /// One element stored into `dest` on `pe`: a single store of the whole element when `T` is
    /// a machine word or smaller, so a peer polling it never sees a torn value.
    #[inline(always)]
    pub fn ctx_p<T: Copy>(&self, ctx: usize, dest: *mut T, value: T, pe: i32) -> Result<()> {
        let pe = self.ctx_pe(ctx, pe)?;
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            return self.net_p(dest, value, pe as usize);
        }
        let r = self.mapped(base, dest.cast(), size_of::<T>(), pe)?;
        check_aligned::<T>(r)?;
        // SAFETY: r points at size_of::<T>() bytes inside a live symmetric mapping (translate
        // checked the range) and is aligned for T (checked above).
        unsafe { shm::p(r.cast::<T>(), value) };
        Ok(())
    }

    /// One element loaded from `src` on `pe` (a single load for word-sized types).
    #[inline(always)]
    pub fn ctx_g<T: Copy>(&self, ctx: usize, src: *const T, pe: i32) -> Result<T> {
        let pe = self.ctx_pe(ctx, pe)?;
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            return self.net_g(src, pe as usize);
        }
        let r = self.mapped(base, src.cast(), size_of::<T>(), pe)?;
        check_aligned::<T>(r)?;
        // SAFETY: as in ctx_p; every bit pattern is a valid value of the plain C types used here.
        Ok(unsafe { shm::g(r.cast::<T>()) })
    }

    /// Strided put (`PUT`, iput) or get (iget) through a context; strides count elements.
    pub fn ctx_strided<const PUT: bool>(&self, ctx: usize, dest: *mut u8, src: *const u8, s: Strided, pe: i32) -> Result<()> {
        let pe = self.ctx_pe(ctx, pe)?;
        self.rma_strided::<PUT>(dest, src, s, pe)
    }
}

pub(super) fn check_aligned<T>(p: *mut u8) -> Result<()> {
    let align = std::mem::align_of::<T>();
    if !(p as usize).is_multiple_of(align) {
        return Err(Error::invalid_value(format!("address {p:p} is not aligned to {align} bytes, as its element type requires")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strided() -> PeSet {
        PeSet { start: 1, stride: 2, size: 3, chan: 0 }
    }

    #[test]
    fn default_context_is_live_on_the_world() {
        let t = CtxTable::new(4);
        let r = t.resolve(DEFAULT).unwrap();
        assert_eq!((r.team, r.set, r.options), (WORLD, PeSet::world(4), 0));
        assert_eq!(t.live_count(), 0);
        assert!(t.destroy(DEFAULT).unwrap_err().message.contains("default context"));
    }

    #[test]
    fn create_resolve_destroy() {
        let t = CtxTable::new(8);
        let a = t.create(5, strided(), CTX_PRIVATE | CTX_NOSTORE).unwrap();
        let b = t.create(WORLD, PeSet::world(8), 0).unwrap();
        assert_ne!(a, b);
        assert_ne!(a, INVALID);
        let r = t.resolve(a).unwrap();
        assert_eq!((r.team, r.set, r.options), (5, strided(), CTX_PRIVATE | CTX_NOSTORE));
        assert_eq!(t.live_count(), 2);
        t.destroy(a).unwrap();
        assert!(t.resolve(a).unwrap_err().message.contains("destroyed"));
        assert!(t.destroy(a).is_err());
        // The slot is reused under a new generation: the old handle stays invalid.
        let c = t.create(WORLD, PeSet::world(8), 0).unwrap();
        assert_eq!(c & 0xffff, a & 0xffff);
        assert_ne!(c, a);
        assert!(t.resolve(a).is_err());
        assert!(t.resolve(c).is_ok());
        assert_eq!(t.live_count(), 2);
    }

    #[test]
    fn destroying_a_team_destroys_its_contexts_only() {
        let t = CtxTable::new(8);
        let a = t.create(5, strided(), 0).unwrap();
        let b = t.create(5, strided(), 0).unwrap();
        let w = t.create(WORLD, PeSet::world(8), 0).unwrap();
        assert_eq!(t.destroy_team(5), 2);
        assert!(t.resolve(a).is_err());
        assert!(t.resolve(b).is_err());
        assert!(t.resolve(w).is_ok());
        assert!(t.resolve(DEFAULT).is_ok());
        assert_eq!(t.destroy_team(5), 0);
    }

    #[test]
    fn team_contexts_number_pes_within_the_team() {
        let t = CtxTable::new(8);
        let h = t.create(4, strided(), 0).unwrap();
        let r = t.resolve(h).unwrap();
        assert_eq!([0, 1, 2].map(|pe| r.world_pe(pe).unwrap()), [1, 3, 5]);
        for bad in [-1, 3, 100] {
            let e = r.world_pe(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidPe);
            assert!(e.to_string().contains("out of range for the context's team (3 PEs, valid 0..=2)"), "{e}");
        }
        // World contexts leave the PE alone (the world range check comes later, in `remote`).
        let w = t.resolve(DEFAULT).unwrap();
        assert_eq!(w.world_pe(6).unwrap(), 6);
    }

    #[test]
    fn bad_handles_and_options() {
        let t = CtxTable::new(2);
        let e = t.resolve(INVALID).unwrap_err();
        assert!(e.message.starts_with("invalid context"), "{e}");
        assert!(t.resolve(0x1234).unwrap_err().message.contains("not a handle"));
        assert!(t.resolve(TAG | (MAX_CONTEXTS + 1)).is_err());
        assert!(t.resolve(TAG | 7).is_err(), "never-created slot");
        let e = t.create(WORLD, PeSet::world(2), 1 << 5).unwrap_err();
        assert!(e.message.contains("unknown context option"), "{e}");
    }

    #[test]
    fn table_fills_up_then_recovers() {
        let t = CtxTable::new(1);
        let hs: Vec<usize> = (1..MAX_CONTEXTS).map(|_| t.create(WORLD, PeSet::world(1), 0).unwrap()).collect();
        let e = t.create(WORLD, PeSet::world(1), 0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        t.destroy(hs[10]).unwrap();
        assert!(t.create(WORLD, PeSet::world(1), 0).is_ok());
    }

    #[test]
    fn concurrent_create_destroy_never_hands_out_a_live_slot_twice() {
        let t = CtxTable::new(4);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2000 {
                        let h = t.create(3, strided(), 0).unwrap();
                        assert_eq!(t.resolve(h).unwrap().set, strided());
                        t.destroy(h).unwrap();
                        assert!(t.resolve(h).is_err());
                    }
                });
            }
        });
        assert_eq!(t.live_count(), 0);
    }
}
