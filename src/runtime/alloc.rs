//! The allocation protocol of both symmetric heaps (OpenSHMEM 1.5 §9.3 for the host heap, its
//! nvshmem_malloc counterparts for the GPU heap): every PE makes the same calls in the same
//! order, each call is checked against PE 0's, and the deterministic allocator then hands out
//! the same offset on every PE, which is what makes a block symmetric. The protocol is written
//! once, over `Heap` (what differs between the heaps: how PEs compare a call, how a block is
//! backed, zeroed and waited for); `Host` and `runtime::gpu::Gpu` implement it, and the C entry
//! points (capi/memory.rs, capi/nvshmem/memory.rs) are one call each.

use std::sync::MutexGuard;

use super::State;
use crate::error::{Error, ErrorKind, Result};
use crate::heap::alloc::{Allocator, MIN_ALIGN};
use crate::heap::{check_alignment, BASE_ALIGN};

/// The collective calls PEs compare: the first of the three words each publishes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u64)]
pub(crate) enum Op {
    Alloc = 1,
    Free = 2,
    Realloc = 3,
    RegisterSymmetric = 4,
    UnregisterSymmetric = 5,
}

/// What the allocation protocol needs from one symmetric heap.
pub(crate) trait Heap {
    /// Added to every `Op`, so that a call on one heap never matches a call on the other.
    const OPS: u64;
    /// The routines whose blocks this heap hands out, as messages name them.
    const ROUTINES: &'static str;
    fn state(&self) -> &State;
    /// The largest alignment that every PE's heap base has (the most `alloc` may ask for).
    fn base_align(&self) -> usize;
    /// The smallest alignment of a block.
    fn min_align(&self) -> usize;
    /// Publishes this PE's three words and returns the three PE 0 published for the same call.
    fn exchange(&self, mine: [u64; 3]) -> Result<[u64; 3]>;
    /// The barrier that ends every call.
    fn sync(&self);
    fn allocator(&self) -> MutexGuard<'_, Allocator>;
    /// Where this PE's heap starts in this process.
    fn base(&self) -> usize;
    /// The offset of `addr` in this PE's heap, if it lies inside.
    fn offset_of(&self, addr: usize) -> Option<usize>;
    /// Collective: makes the first `end` bytes of every PE's heap usable.
    fn back(&self, end: usize) -> Result<()>;
    /// The error for `size` bytes that no free block of `a` holds.
    fn full(&self, size: usize, a: &Allocator) -> Error;
    /// Waits for work of this PE that may still reach a block about to be freed.
    fn settle(&self) -> Result<()>;
    /// Fills `bytes` at `p` (a block of this PE's heap) with zeros.
    fn zero(&self, p: *mut u8, bytes: usize) -> Result<()>;
}

/// Checks that PE 0 made the same call (`op` with `a` and `b`) as this PE.
pub(crate) fn agree<H: Heap>(h: &H, op: Op, a: u64, b: u64) -> Result<()> {
    let mine = [H::OPS + op as u64, a, b];
    let first = h.exchange(mine)?;
    if first != mine {
        return Err(Error::invalid_value(format!(
            "symmetric allocation mismatch: PE {} called with ({a}, {b}) but PE 0 with ({}, {}) — every PE must make the same allocation calls in the same order",
            h.state().me,
            first[1],
            first[2]
        )));
    }
    Ok(())
}

/// Collective allocation of `size` bytes aligned to `align`; NULL for size 0.
pub(crate) fn alloc<H: Heap>(h: &H, size: usize, align: usize) -> Result<*mut u8> {
    check_alignment(align, h.base_align())?;
    let _serial = h.state().serialize_collectives();
    agree(h, Op::Alloc, size as u64, align as u64)?;
    let result = if size == 0 { Ok(std::ptr::null_mut()) } else { place(h, size, align).map(|off| (h.base() + off) as *mut u8) };
    h.sync();
    result
}

/// A block of `size` bytes (every PE takes the same), backed on every PE; its offset.
fn place<H: Heap>(h: &H, size: usize, align: usize) -> Result<usize> {
    let off = {
        let mut a = h.allocator();
        a.alloc(size, align.max(h.min_align())).ok_or_else(|| h.full(size, &a))?
    };
    if let Err(e) = h.back(off + size) {
        // No PE could back it (they agree): the block goes back on every PE.
        let _ = h.allocator().free(off);
        return Err(e);
    }
    Ok(off)
}

/// The offset of a live block at `ptr`.
fn block_at<H: Heap>(h: &H, ptr: *mut u8) -> Result<usize> {
    let off = h.offset_of(ptr as usize).filter(|o| h.allocator().size_of(*o).is_some());
    off.ok_or_else(|| {
        Error::of(ErrorKind::NotSymmetric, format!("pointer {ptr:p} was not returned by {} (or was already freed)", H::ROUTINES))
    })
}

/// Collective free of a block (NULL does nothing but take part).
pub(crate) fn free<H: Heap>(h: &H, ptr: *mut u8) -> Result<()> {
    let off = if ptr.is_null() { None } else { Some(block_at(h, ptr)?) };
    h.settle()?;
    let _serial = h.state().serialize_collectives();
    agree(h, Op::Free, off.map(|o| o as u64 + 1).unwrap_or(0), 0)?;
    if let Some(off) = off {
        let _ = h.allocator().free(off);
    }
    h.sync();
    Ok(())
}

/// Collective allocation of `count` elements of `size` bytes, zeroed on every PE before any
/// PE returns.
pub(crate) fn calloc<H: Heap>(h: &H, count: usize, size: usize) -> Result<*mut u8> {
    let total = super::rma::bytes(count, size)?;
    let p = alloc(h, total, MIN_ALIGN)?;
    if !p.is_null() {
        h.zero(p, total)?;
    }
    // No PE may write into the block before its owner has zeroed it.
    let _serial = h.state().serialize_collectives();
    h.sync();
    Ok(p)
}

/// The host heap, in a call of `routine` (its barriers carry the name, so a PE meeting another
/// PE's different collective reports both).
pub(crate) struct Host<'a> {
    pub st: &'a State,
    pub routine: &'static str,
}

impl Heap for Host<'_> {
    const OPS: u64 = 0;
    const ROUTINES: &'static str = "shmem_malloc/shmem_align/shmem_calloc";

    fn state(&self) -> &State {
        self.st
    }
    fn base_align(&self) -> usize {
        BASE_ALIGN
    }
    fn min_align(&self) -> usize {
        MIN_ALIGN
    }
    fn exchange(&self, mine: [u64; 3]) -> Result<[u64; 3]> {
        let st = self.st;
        let slot = st.my_header().scratch() as *mut [u64; 3];
        // SAFETY: scratch is this PE's own runtime area; only it writes there, between syncs.
        unsafe { slot.write_volatile(mine) };
        st.barrier_for(self.routine);
        // PE 0's scratch (a fabric get when PE 0 is on another host), written before the sync
        // above and not rewritten before the next sync, which we have not reached.
        let mut first = [0u64; 3];
        st.header_words(0, st.layout.scratch_at(), &mut first, self.routine);
        Ok(first)
    }
    fn sync(&self) {
        self.st.barrier_for(self.routine);
    }
    fn allocator(&self) -> MutexGuard<'_, Allocator> {
        self.st.alloc.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn base(&self) -> usize {
        self.st.heap.my_base()
    }
    fn offset_of(&self, addr: usize) -> Option<usize> {
        self.st.heap.offset_of(addr, 1)
    }
    fn back(&self, _end: usize) -> Result<()> {
        Ok(()) // the whole host heap is mapped at init
    }
    fn full(&self, size: usize, a: &Allocator) -> Error {
        let heap = &self.st.heap;
        Error::of(
            ErrorKind::HeapFull,
            format!(
                "cannot allocate {size} bytes: the symmetric heap ({} bytes per PE for the program) has at most {} bytes free in one block; set RSHMEM_SYMMETRIC_SIZE (or SHMEM_SYMMETRIC_SIZE / NVSHMEM_SYMMETRIC_SIZE) higher",
                heap.size - heap.reserved,
                a.largest_free()
            ),
        )
    }
    fn settle(&self) -> Result<()> {
        Ok(()) // host RMA is complete when its call returns
    }
    fn zero(&self, p: *mut u8, bytes: usize) -> Result<()> {
        // SAFETY: p is a block of `bytes` bytes in this PE's heap, mapped here.
        unsafe { std::ptr::write_bytes(p, 0, bytes) };
        Ok(())
    }
}

impl Host<'_> {
    /// Collective: a block of `size` bytes holding the start of `ptr`'s, which is freed (NULL
    /// allocates, size 0 frees).
    pub(crate) fn realloc(&self, ptr: *mut u8, size: usize) -> Result<*mut u8> {
        if ptr.is_null() {
            return alloc(self, size, MIN_ALIGN);
        }
        if size == 0 {
            free(self, ptr)?;
            return Ok(std::ptr::null_mut());
        }
        let off = block_at(self, ptr)?;
        let _serial = self.st.serialize_collectives();
        agree(self, Op::Realloc, off as u64, size as u64)?;
        let old = self.allocator().size_of(off).unwrap_or(0);
        let result = place(self, size, MIN_ALIGN).map(|new| {
            let base = self.base();
            // SAFETY: both blocks lie in this PE's heap mapping and do not overlap (the old one
            // is still allocated while the new one is placed).
            unsafe { std::ptr::copy_nonoverlapping((base + off) as *const u8, (base + new) as *mut u8, old.min(size)) };
            let _ = self.allocator().free(off);
            (base + new) as *mut u8
        });
        self.sync();
        result
    }
}
