//! Memory management routines (OpenSHMEM 1.5 §9.3): collective, deterministic allocation on
//! the symmetric heap. Every call checks that all PEs asked for the same thing.

use std::ffi::{c_long, c_void};

use super::{alloc_or_null, with_state};
use crate::error::{Error, ErrorKind, Result};
use crate::heap::alloc::MIN_ALIGN;
use crate::heap::{check_alignment, BASE_ALIGN};
use crate::runtime::State;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u64)]
enum Op {
    Alloc = 1,
    Free = 2,
    Realloc = 3,
}

/// Publishes (op, a, b) in this PE's scratch, syncs, and checks PE 0 published the same.
fn agree(st: &State, routine: &'static str, op: Op, a: u64, b: u64) -> Result<()> {
    let mine = st.my_header().scratch() as *mut [u64; 3];
    // SAFETY: scratch is this PE's own runtime area; only it writes there, between syncs.
    unsafe { mine.write_volatile([op as u64, a, b]) };
    st.barrier_for(routine);
    // PE 0's scratch (a fabric get when PE 0 is on another host), written before the sync
    // above and not rewritten before the next sync, which we have not reached.
    let mut first = [0u64; 3];
    st.header_words(0, st.layout.scratch_at(), &mut first, routine);
    if first != [op as u64, a, b] {
        return Err(Error::invalid_value(format!(
                "symmetric allocation mismatch: PE {} called with ({a}, {b}) but PE 0 with ({}, {}) — every PE must make the same allocation calls in the same order",
                st.me, first[1], first[2]
            ),
        ));
    }
    Ok(())
}

fn exhausted(st: &State, size: usize, largest: usize) -> Error {
    Error::of(
        ErrorKind::HeapFull,
        format!(
            "cannot allocate {size} bytes: the symmetric heap ({} bytes per PE for the program) has at most {largest} bytes free in one block; set RSHMEM_SYMMETRIC_SIZE (or SHMEM_SYMMETRIC_SIZE / NVSHMEM_SYMMETRIC_SIZE) higher",
            st.heap.size - st.heap.reserved
        ),
    )
}

/// Collective allocation of `size` bytes aligned to `align`; NULL for size 0.
pub fn alloc(st: &State, size: usize, align: usize, routine: &'static str) -> Result<*mut c_void> {
    check_alignment(align, BASE_ALIGN, routine)?;
    let _serial = st.serialize_collectives();
    agree(st, routine, Op::Alloc, size as u64, align as u64)?;
    let result = if size == 0 {
        Ok(std::ptr::null_mut())
    } else {
        let mut a = st.alloc.lock().unwrap_or_else(|p| p.into_inner());
        match a.alloc(size, align) {
            Some(off) => Ok((st.heap.my_base() + off) as *mut c_void),
            None => Err(exhausted(st, size, a.largest_free())),
        }
    };
    st.barrier_for(routine);
    result
}

fn offset_of(st: &State, ptr: *mut c_void) -> Result<usize> {
    let off = st.heap.offset_of(ptr as usize, 1);
    let live = off.filter(|o| st.alloc.lock().unwrap_or_else(|p| p.into_inner()).size_of(*o).is_some());
    live.ok_or_else(|| {
        Error::of(
            ErrorKind::NotSymmetric,
            format!("pointer {ptr:p} was not returned by shmem_malloc/shmem_align/shmem_calloc (or was already freed)"),
        )
    })
}

pub fn free(st: &State, ptr: *mut c_void, routine: &'static str) -> Result<()> {
    let off = if ptr.is_null() { None } else { Some(offset_of(st, ptr)?) };
    let _serial = st.serialize_collectives();
    agree(st, routine, Op::Free, off.map(|o| o as u64 + 1).unwrap_or(0), 0)?;
    if let Some(off) = off {
        let _ = st.alloc.lock().unwrap_or_else(|p| p.into_inner()).free(off);
    }
    st.barrier_for(routine);
    Ok(())
}

pub fn realloc(st: &State, ptr: *mut c_void, size: usize, routine: &'static str) -> Result<*mut c_void> {
    if ptr.is_null() {
        return alloc(st, size, MIN_ALIGN, routine);
    }
    if size == 0 {
        free(st, ptr, routine)?;
        return Ok(std::ptr::null_mut());
    }
    let off = offset_of(st, ptr)?;
    let _serial = st.serialize_collectives();
    agree(st, routine, Op::Realloc, off as u64, size as u64)?;
    let result = {
        let mut a = st.alloc.lock().unwrap_or_else(|p| p.into_inner());
        let old = a.size_of(off).unwrap_or(0);
        match a.alloc(size, MIN_ALIGN) {
            Some(new) => {
                let base = st.heap.my_base();
                // SAFETY: both blocks lie in this PE's heap mapping and do not overlap.
                unsafe { std::ptr::copy_nonoverlapping((base + off) as *const u8, (base + new) as *mut u8, old.min(size)) };
                let _ = a.free(off);
                Ok((base + new) as *mut c_void)
            }
            None => Err(exhausted(st, size, a.largest_free())),
        }
    };
    st.barrier_for(routine);
    result
}

#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    alloc_or_null("shmem_malloc", |st| alloc(st, size, MIN_ALIGN, "shmem_malloc"))
}

#[no_mangle]
pub extern "C" fn shmem_malloc_with_hints(size: usize, _hints: c_long) -> *mut c_void {
    alloc_or_null("shmem_malloc_with_hints", |st| alloc(st, size, MIN_ALIGN, "shmem_malloc_with_hints"))
}

#[no_mangle]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    alloc_or_null("shmem_align", |st| alloc(st, size, alignment, "shmem_align"))
}

#[no_mangle]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    alloc_or_null("shmem_calloc", |st| {
        let total = crate::runtime::rma::bytes(count, size)?;
        let p = alloc(st, total, MIN_ALIGN, "shmem_calloc")?;
        if !p.is_null() {
            // SAFETY: p is a fresh block of `total` bytes in this PE's heap.
            unsafe { std::ptr::write_bytes(p as *mut u8, 0, total) };
        }
        // No PE may write into the block before its owner has zeroed it.
        let _serial = st.serialize_collectives();
        st.barrier_for("shmem_calloc");
        Ok(p)
    })
}

#[no_mangle]
pub extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    alloc_or_null("shmem_realloc", |st| realloc(st, ptr, size, "shmem_realloc"))
}

#[no_mangle]
pub extern "C" fn shmem_free(ptr: *mut c_void) {
    with_state("shmem_free", |st| free(st, ptr, "shmem_free"))
}

// Deprecated names (OpenSHMEM 1.2 and earlier).

#[no_mangle]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    alloc_or_null("shmalloc", |st| alloc(st, size, MIN_ALIGN, "shmalloc"))
}

#[no_mangle]
pub extern "C" fn shfree(ptr: *mut c_void) {
    with_state("shfree", |st| free(st, ptr, "shfree"))
}

#[no_mangle]
pub extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    alloc_or_null("shrealloc", |st| realloc(st, ptr, size, "shrealloc"))
}

#[no_mangle]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    alloc_or_null("shmemalign", |st| alloc(st, size, alignment, "shmemalign"))
}
