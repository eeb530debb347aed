//! Memory management routines (OpenSHMEM 1.5 §9.3): collective, deterministic allocation on
//! the symmetric heap. Every call checks that all PEs asked for the same thing; the protocol is
//! `runtime::alloc`'s, shared with the GPU heap.

use std::ffi::{c_long, c_void};

use super::{alloc_or_null, with_state};
use crate::heap::alloc::MIN_ALIGN;
use crate::runtime::alloc::{self, Host};

#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    const R: &str = "shmem_malloc";
    alloc_or_null(R, |st| alloc::alloc(&Host { st, routine: R }, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_malloc_with_hints(size: usize, _hints: c_long) -> *mut c_void {
    const R: &str = "shmem_malloc_with_hints";
    alloc_or_null(R, |st| alloc::alloc(&Host { st, routine: R }, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    const R: &str = "shmem_align";
    alloc_or_null(R, |st| alloc::alloc(&Host { st, routine: R }, size, alignment).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    const R: &str = "shmem_calloc";
    alloc_or_null(R, |st| alloc::calloc(&Host { st, routine: R }, count, size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    const R: &str = "shmem_realloc";
    alloc_or_null(R, |st| Host { st, routine: R }.realloc(ptr.cast(), size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_free(ptr: *mut c_void) {
    const R: &str = "shmem_free";
    with_state(R, |st| alloc::free(&Host { st, routine: R }, ptr.cast()))
}

// Deprecated names (OpenSHMEM 1.2 and earlier).

#[no_mangle]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    const R: &str = "shmalloc";
    alloc_or_null(R, |st| alloc::alloc(&Host { st, routine: R }, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shfree(ptr: *mut c_void) {
    const R: &str = "shfree";
    with_state(R, |st| alloc::free(&Host { st, routine: R }, ptr.cast()))
}

#[no_mangle]
pub extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    const R: &str = "shrealloc";
    alloc_or_null(R, |st| Host { st, routine: R }.realloc(ptr.cast(), size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    const R: &str = "shmemalign";
    alloc_or_null(R, |st| alloc::alloc(&Host { st, routine: R }, size, alignment).map(|p| p.cast()))
}
