//! Memory management routines (OpenSHMEM 1.5 §9.3): collective, deterministic allocation on
//! the symmetric heap. Every call checks that all PEs asked for the same thing; the protocol is
//! `runtime::alloc`'s, shared with the GPU heap.

use std::ffi::{c_long, c_void};

use super::{alloc_or_null, with_state};
use crate::error::Result;
use crate::heap::alloc::MIN_ALIGN;
use crate::runtime::alloc::{self, Host};

/// Runs an allocation routine's body on the host heap (whose barriers carry the routine's
/// name): the block, or NULL when the heap is full.
#[inline(always)]
fn on_host(routine: &'static str, body: impl FnOnce(&Host) -> Result<*mut u8>) -> *mut c_void {
    alloc_or_null(routine, |st| body(&Host { st, routine }).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    on_host("shmem_malloc", |h| alloc::alloc(h, size, MIN_ALIGN))
}

#[no_mangle]
pub extern "C" fn shmem_malloc_with_hints(size: usize, _hints: c_long) -> *mut c_void {
    on_host("shmem_malloc_with_hints", |h| alloc::alloc(h, size, MIN_ALIGN))
}

#[no_mangle]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    on_host("shmem_align", |h| alloc::alloc(h, size, alignment))
}

#[no_mangle]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    on_host("shmem_calloc", |h| alloc::calloc(h, count, size))
}

#[no_mangle]
pub extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    on_host("shmem_realloc", |h| h.realloc(ptr.cast(), size))
}

#[no_mangle]
pub extern "C" fn shmem_free(ptr: *mut c_void) {
    const R: &str = "shmem_free";
    with_state(R, |st| alloc::free(&Host { st, routine: R }, ptr.cast()))
}

// Deprecated names (OpenSHMEM 1.2 and earlier).

#[no_mangle]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    on_host("shmalloc", |h| alloc::alloc(h, size, MIN_ALIGN))
}

#[no_mangle]
pub extern "C" fn shfree(ptr: *mut c_void) {
    const R: &str = "shfree";
    with_state(R, |st| alloc::free(&Host { st, routine: R }, ptr.cast()))
}

#[no_mangle]
pub extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    on_host("shrealloc", |h| h.realloc(ptr.cast(), size))
}

#[no_mangle]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    on_host("shmemalign", |h| alloc::alloc(h, size, alignment))
}
