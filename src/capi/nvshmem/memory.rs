//! Symmetric heap on the GPU: collective, deterministic allocation (`runtime::alloc`'s
//! protocol, shared with the host heap).

use std::ffi::{c_int, c_void};

use crate::capi::{ffi_boundary, AllocOrNull, NullOnError, Status};
use crate::heap::alloc::MIN_ALIGN;
use crate::runtime::alloc;

#[no_mangle]
pub extern "C" fn nvshmem_malloc(size: usize) -> *mut c_void {
    ffi_boundary!(nvshmem_malloc => AllocOrNull<_>, |st| alloc::alloc(&st.gpu_heap()?, size, MIN_ALIGN).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn nvshmem_align(alignment: usize, size: usize) -> *mut c_void {
    ffi_boundary!(nvshmem_align => AllocOrNull<_>, |st| alloc::alloc(&st.gpu_heap()?, size, alignment).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn nvshmem_calloc(count: usize, size: usize) -> *mut c_void {
    ffi_boundary!(nvshmem_calloc => AllocOrNull<_>, |st| alloc::calloc(&st.gpu_heap()?, count, size).map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn nvshmem_free(ptr: *mut c_void) {
    ffi_boundary!(nvshmem_free, |st| alloc::free(&st.gpu_heap()?, ptr.cast()))
}

/// The address of `ptr`'s copy on PE `pe` as a device pointer (usable in kernels), or NULL.
#[no_mangle]
pub extern "C" fn nvshmem_ptr(ptr: *const c_void, pe: c_int) -> *mut c_void {
    ffi_boundary!(nvshmem_ptr, |st| st.gpu_ptr(ptr.cast(), pe).map(|p| p.cast()))
}

/// rshmem maps no multicast (NVLS) objects: there is never a multicast address (as NVSHMEM
/// answers where multicast is unavailable).
#[no_mangle]
pub extern "C" fn nvshmemx_mc_ptr(_team: c_int, _ptr: *const c_void) -> *mut c_void {
    std::ptr::null_mut()
}

/// Names a local (non-symmetric) buffer that RMA will use as its local side.
#[no_mangle]
pub extern "C" fn nvshmemx_buffer_register(addr: *mut c_void, length: usize) -> c_int {
    ffi_boundary!(nvshmemx_buffer_register => Status, |st| st.gpu_buffer_register(addr.cast(), length))
}

#[no_mangle]
pub extern "C" fn nvshmemx_buffer_unregister(addr: *mut c_void) -> c_int {
    ffi_boundary!(nvshmemx_buffer_unregister => Status, |st| st.gpu_buffer_unregister(Some(addr.cast())))
}

#[no_mangle]
pub extern "C" fn nvshmemx_buffer_unregister_all() {
    ffi_boundary!(nvshmemx_buffer_unregister_all, |st| st.gpu_buffer_unregister(None))
}

/// Collective: maps every PE's allocation at `buf_ptr` (cuMemCreate, exportable as a POSIX file
/// descriptor, `size` bytes, a multiple of the granularity) into the symmetric window; returns
/// the symmetric address, or NULL with a message.
#[no_mangle]
pub extern "C" fn nvshmemx_buffer_register_symmetric(buf_ptr: *mut c_void, size: usize, _flags: c_int) -> *mut c_void {
    ffi_boundary!(nvshmemx_buffer_register_symmetric => NullOnError<_>, |st| Ok(st.gpu_register_symmetric(buf_ptr.cast(), size)?.cast()))
}

/// Collective: undoes nvshmemx_buffer_register_symmetric (the address it returned, the size).
#[no_mangle]
pub extern "C" fn nvshmemx_buffer_unregister_symmetric(mmap_ptr: *mut c_void, size: usize) -> c_int {
    ffi_boundary!(nvshmemx_buffer_unregister_symmetric => Status, |st| st.gpu_unregister_symmetric(mmap_ptr.cast(), size))
}
