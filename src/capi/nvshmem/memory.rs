//! Symmetric heap on the GPU: collective, deterministic allocation.

use std::ffi::{c_int, c_void};

use super::super::with_state;
use crate::heap::alloc::MIN_ALIGN;

#[no_mangle]
pub extern "C" fn nvshmem_malloc(size: usize) -> *mut c_void {
    with_state("nvshmem_malloc", |st| st.gpu_alloc(size, MIN_ALIGN, "nvshmem_malloc").map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn nvshmem_align(alignment: usize, size: usize) -> *mut c_void {
    with_state("nvshmem_align", |st| st.gpu_alloc(size, alignment, "nvshmem_align").map(|p| p.cast()))
}

#[no_mangle]
pub extern "C" fn nvshmem_calloc(count: usize, size: usize) -> *mut c_void {
    with_state("nvshmem_calloc", |st| {
        let total = crate::runtime::rma::bytes(count, size, "nvshmem_calloc")?;
        let p = st.gpu_alloc(total, MIN_ALIGN, "nvshmem_calloc")?;
        if !p.is_null() {
            st.gpu_zero(p, total, "nvshmem_calloc")?;
        }
        st.barrier_all();
        Ok(p.cast())
    })
}

#[no_mangle]
pub extern "C" fn nvshmem_free(ptr: *mut c_void) {
    with_state("nvshmem_free", |st| st.gpu_free(ptr.cast(), "nvshmem_free"))
}

/// The address of `ptr`'s copy on PE `pe` as a device pointer (usable in kernels), or NULL.
#[no_mangle]
pub extern "C" fn nvshmem_ptr(ptr: *const c_void, pe: c_int) -> *mut c_void {
    with_state("nvshmem_ptr", |st| st.gpu_ptr(ptr.cast(), pe, "nvshmem_ptr").map(|p| p.cast()))
}
