//! Memory management routines (OpenSHMEM 1.5 §9.3): collective, deterministic allocation on
//! the symmetric heap. Every call checks that all PEs asked for the same thing; the protocol is
//! `runtime::alloc`'s, shared with the GPU heap.

use std::ffi::{c_long, c_void};

use super::{ffi_boundary, AllocOrNull};
use crate::heap::alloc::MIN_ALIGN;
use crate::runtime::alloc::{self, Host};

#[no_mangle]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    ffi_boundary!(shmem_malloc => AllocOrNull<_>, |st| alloc::alloc(&Host { st, routine: ROUTINE }, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_malloc_with_hints(size: usize, _hints: c_long) -> *mut c_void {
    ffi_boundary!(shmem_malloc_with_hints => AllocOrNull<_>, |st| alloc::alloc(&Host { st, routine: ROUTINE }, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    ffi_boundary!(shmem_align => AllocOrNull<_>, |st| alloc::alloc(&Host { st, routine: ROUTINE }, size, alignment).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    ffi_boundary!(shmem_calloc => AllocOrNull<_>, |st| alloc::calloc(&Host { st, routine: ROUTINE }, count, size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    ffi_boundary!(shmem_realloc => AllocOrNull<_>, |st| Host { st, routine: ROUTINE }.realloc(ptr.cast(), size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmem_free(ptr: *mut c_void) {
    ffi_boundary!(shmem_free, |st| alloc::free(&Host { st, routine: ROUTINE }, ptr.cast()))
}

// Deprecated names (OpenSHMEM 1.2 and earlier).

#[no_mangle]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    ffi_boundary!(shmalloc => AllocOrNull<_>, |st| alloc::alloc(&Host { st, routine: ROUTINE }, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shfree(ptr: *mut c_void) {
    ffi_boundary!(shfree, |st| alloc::free(&Host { st, routine: ROUTINE }, ptr.cast()))
}

#[no_mangle]
pub extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    ffi_boundary!(shrealloc => AllocOrNull<_>, |st| Host { st, routine: ROUTINE }.realloc(ptr.cast(), size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    ffi_boundary!(shmemalign => AllocOrNull<_>, |st| alloc::alloc(&Host { st, routine: ROUTINE }, size, alignment).map(|p| p.cast()))
}
