//! The P2P transport: GPU memory of PEs on this host, reached through the peer mappings of
//! their GPU heaps (every PE maps every local PE's heap into one window, at `base_of(pe)`;
//! heap/gpu.rs). Device code loads and stores through those mappings; a host-side operation
//! queues a copy-engine copy or a stream memory operation on a CUDA stream, complete when the
//! stream passes it. Host-side AMOs run the library's one-thread atomic kernel on the mapped
//! word (runtime/gpu.rs `gpu_amo_at`).

use crate::cuda::{self, sys::CUstream};
use crate::error::Result;

/// Queues a copy of `bytes` from `src` to `dst` on `stream`: one side a peer's heap as mapped
/// here, the other the caller's buffer (host or device memory).
///
/// # Safety
/// `dst..dst+bytes` and `src..src+bytes` stay valid until the stream passes the copy (the
/// peer's side translated and range-checked by the caller).
pub unsafe fn copy(dst: u64, src: u64, bytes: usize, stream: CUstream, routine: &'static str) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { cuda::memcpy_async(dst, src, bytes, stream) }.map_err(|e| e.into_error(routine))
}

/// Queues a write of `value` to the 8-byte word at `remote` on `stream` (a signal's SET).
///
/// # Safety
/// `remote` is an aligned 8-byte word of a peer's heap as mapped here.
pub unsafe fn write_u64(remote: u64, value: u64, stream: CUstream, routine: &'static str) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { cuda::stream_write_u64(stream, remote, value) }.map_err(|e| e.into_error(routine))
}
