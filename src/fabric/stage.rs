//! Staging buffers for blocking puts. OpenSHMEM's put returns once the source may be reused,
//! not once the data has arrived, so where puts are not sent in place (ops.rs
//! `sends_in_place`: providers without a progress thread) a put larger than the provider's
//! inject size is copied into chunks of a registered ring and posted from there; the put returns at once, and a
//! chunk is reused when its write has completed (the write carries the chunk's slot as its
//! context, and its completion comes through the CQ: `Inner::poll` frees the slot). The
//! writes count on the write counter like any other, so quiet (and fence, and put-with-signal,
//! which fence before the signal) wait for them as before. Puts then stream back to back
//! instead of costing a round trip each. The ring is set up at the first staged put.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use super::mr::{register, Region};
use super::{sys, Inner};
use crate::error::Result;

/// Bytes per chunk: one write each. Over tcp;ofi_rxm a write costs a system call on each side
/// and the receiver handles one per pass of its progress, so big writes stream best: the
/// floor itself (plain TCP) does 2.2 GB/s in 16 KiB writes and 3.75 GB/s in 256 KiB ones.
pub(super) const CHUNK: usize = 256 << 10;
/// Chunks in the ring (4 MiB registered per endpoint).
pub(super) const CHUNKS: usize = 16;
/// Puts up to this size are staged; larger ones are written from the caller's buffer and
/// waited for, where the copy would cost more than the one round trip.
pub(super) const STAGED_MAX: usize = 256 << 10;

/// One chunk's bookkeeping. The context area comes first, so the pointer a completion
/// returns is the slot's.
#[repr(C, align(64))]
pub(super) struct Slot {
    /// The provider's scratch space while the write is in flight (FI_CONTEXT2).
    context: [usize; 8],
    busy: AtomicBool,
}

impl Slot {
    /// Claims the slot if it is free.
    pub(super) fn take(&self) -> bool {
        self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    pub(super) fn free(&self) {
        self.busy.store(false, Ordering::Release);
    }
}

pub(super) struct Stage {
    slots: Box<[Slot]>,
    // Fields drop in order: the registration before the memory it names.
    region: Region,
    buf: Box<[u8]>,
    next: AtomicUsize,
}

// SAFETY: the buffer is written only by the thread holding a chunk's slot (claimed with an
// atomic swap), and read by the provider while the slot is busy.
unsafe impl Sync for Stage {}
// SAFETY: as above.
unsafe impl Send for Stage {}

impl Stage {
    pub(super) fn new(inner: &Arc<Inner>) -> Result<Stage> {
        // Written, so the pages are backed when registered (FI_MR_ALLOCATED).
        let mut buf = vec![1u8; CHUNK * CHUNKS].into_boxed_slice();
        let region = register(inner, buf.as_mut_ptr(), buf.len())?;
        let slots = (0..CHUNKS).map(|_| Slot { context: [0; 8], busy: AtomicBool::new(false) }).collect();
        Ok(Stage { slots, region, buf, next: AtomicUsize::new(0) })
    }

    /// The next slot in ring order (the oldest write, so usually the first to be free).
    pub(super) fn next_slot(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % CHUNKS
    }

    pub(super) fn slot(&self, i: usize) -> &Slot {
        &self.slots[i]
    }

    /// Chunk `i`'s memory: the caller holds slot `i`.
    pub(super) fn chunk(&self, i: usize) -> *mut u8 {
        // SAFETY: i < CHUNKS, so the chunk lies inside the buffer.
        unsafe { self.buf.as_ptr().add(i * CHUNK).cast_mut() }
    }

    /// What the write from chunk `i` passes as its context.
    pub(super) fn context(&self, i: usize) -> sys::Ptr {
        (&self.slots[i] as *const Slot).cast_mut().cast()
    }

    pub(super) fn desc(&self) -> sys::Ptr {
        self.region.desc()
    }
}

/// Frees the slot whose write just completed (the context of a CQ entry; every entry that
/// carries one is a staged write's).
///
/// # Safety
/// `context` is what `Stage::context` gave for a write that has completed, and the Stage is
/// alive (it lives as long as the endpoint is polled).
pub(super) unsafe fn completed(context: sys::Ptr) {
    // SAFETY: the caller's promise: a Slot of a live Stage.
    unsafe { (*context.cast::<Slot>()).free() }
}
