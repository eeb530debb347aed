//! On-stream operations: enqueued on the caller's CUDA stream, they return at once and take
//! effect in stream order (no kernel needed: copy-engine copies and stream memory operations).

use std::ffi::{c_int, c_void};

use super::super::with_state;
use crate::cuda::sys::CUstream;

#[no_mangle]
pub extern "C" fn nvshmemx_putmem_on_stream(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int, stream: CUstream) {
    const R: &str = "nvshmemx_putmem_on_stream";
    with_state(R, |st| st.gpu_put_on_stream(dest.cast(), src.cast(), bytes, pe, stream, R))
}

#[no_mangle]
pub extern "C" fn nvshmemx_putmem_nbi_on_stream(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int, stream: CUstream) {
    const R: &str = "nvshmemx_putmem_nbi_on_stream";
    with_state(R, |st| st.gpu_put_on_stream(dest.cast(), src.cast(), bytes, pe, stream, R))
}

#[no_mangle]
pub extern "C" fn nvshmemx_getmem_on_stream(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int, stream: CUstream) {
    const R: &str = "nvshmemx_getmem_on_stream";
    with_state(R, |st| st.gpu_get_on_stream(dest.cast(), src.cast(), bytes, pe, stream, R))
}

#[no_mangle]
pub extern "C" fn nvshmemx_getmem_nbi_on_stream(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int, stream: CUstream) {
    const R: &str = "nvshmemx_getmem_nbi_on_stream";
    with_state(R, |st| st.gpu_get_on_stream(dest.cast(), src.cast(), bytes, pe, stream, R))
}

/// Completes this PE's on-stream puts in stream order. Copies enqueued on the stream are
/// complete and visible when the next operation on it starts, so there is nothing to add.
#[no_mangle]
pub extern "C" fn nvshmemx_quiet_on_stream(_stream: CUstream) {
    with_state("nvshmemx_quiet_on_stream", |st| st.gpu("nvshmemx_quiet_on_stream").map(|_| ()))
}

#[no_mangle]
pub extern "C" fn nvshmemx_barrier_all_on_stream(stream: CUstream) {
    const R: &str = "nvshmemx_barrier_all_on_stream";
    with_state(R, |st| st.gpu_barrier_all_on_stream(stream, R))
}

#[no_mangle]
pub extern "C" fn nvshmemx_sync_all_on_stream(stream: CUstream) {
    const R: &str = "nvshmemx_sync_all_on_stream";
    with_state(R, |st| st.gpu_barrier_all_on_stream(stream, R))
}
