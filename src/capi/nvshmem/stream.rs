//! On-stream operations: enqueued on the caller's CUDA stream, they return at once and take
//! effect in stream order (no kernel needed: copy-engine copies and stream memory operations).

use std::ffi::{c_int, c_void};

use super::super::with_state;
use crate::cuda::sys::CUstream;
use crate::runtime::gpu::{bad_signal_op, SIGNAL_ADD, SIGNAL_SET};

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
    with_state(R, |st| st.gpu_barrier_on_stream(crate::runtime::team::WORLD as i32, stream, R))
}

#[no_mangle]
pub extern "C" fn nvshmemx_sync_all_on_stream(stream: CUstream) {
    const R: &str = "nvshmemx_sync_all_on_stream";
    with_state(R, |st| st.gpu_barrier_on_stream(crate::runtime::team::WORLD as i32, stream, R))
}

#[no_mangle]
pub extern "C" fn nvshmemx_signal_op_on_stream(sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: CUstream) {
    const R: &str = "nvshmemx_signal_op_on_stream";
    with_state(R, |st| st.gpu_signal_op_on_stream(sig_addr, signal, sig_op, pe, stream, R))
}

/// The data, then the signal, both in stream order (the signal is written after the copy
/// completes).
#[allow(clippy::too_many_arguments)]
fn put_signal_on_stream(
    routine: &'static str, dest: *mut c_void, src: *const c_void, bytes: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int,
    pe: c_int, stream: CUstream,
) {
    with_state(routine, |st| {
        if sig_op != SIGNAL_SET && sig_op != SIGNAL_ADD {
            return Err(bad_signal_op(sig_op, routine));
        }
        st.gpu_put_on_stream(dest.cast(), src.cast(), bytes, pe, stream, routine)?;
        st.gpu_signal_op_on_stream(sig_addr, signal, sig_op, pe, stream, routine)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn nvshmemx_putmem_signal_on_stream(
    dest: *mut c_void, src: *const c_void, bytes: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: CUstream,
) {
    put_signal_on_stream("nvshmemx_putmem_signal_on_stream", dest, src, bytes, sig_addr, signal, sig_op, pe, stream)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn nvshmemx_putmem_signal_nbi_on_stream(
    dest: *mut c_void, src: *const c_void, bytes: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: CUstream,
) {
    put_signal_on_stream("nvshmemx_putmem_signal_nbi_on_stream", dest, src, bytes, sig_addr, signal, sig_op, pe, stream)
}

#[no_mangle]
pub extern "C" fn nvshmemx_signal_wait_until_on_stream(sig_addr: *mut u64, cmp: c_int, cmp_value: u64, stream: CUstream) {
    const R: &str = "nvshmemx_signal_wait_until_on_stream";
    with_state(R, |st| st.gpu_signal_wait_on_stream(sig_addr, cmp, cmp_value, stream, R))
}
