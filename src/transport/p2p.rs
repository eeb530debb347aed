//! The P2P transport: GPU memory of PEs on this host, reached through the peer mappings of
//! their GPU heaps (every PE maps every local PE's heap into one window, at `base_of(pe)`;
//! heap/gpu.rs). Device code loads and stores through those mappings; a host-side operation
//! queues a copy-engine copy, a stream memory operation or one of the library's one-thread
//! kernels on a CUDA stream (the library's, or the caller's for on-stream forms), complete
//! when the stream passes it.

use super::{Direction, GpuAddr, GpuTransport, LocalGpu, Strided, When};
use crate::cuda::kernels::AmoOp;
use crate::cuda::{self, sys::CUstream};
use crate::error::{Error, Result};

/// Host-side operations through the peer mappings.
pub struct P2p;

/// The 2D copy's pitches must not exceed this (the driver's limit on every current GPU).
const MAX_PITCH: usize = i32::MAX as usize;

fn cu<T>(r: cuda::CuResult<T>) -> Result<T> {
    r.map_err(Error::from)
}

/// The stream an operation is queued on, with the context current.
fn stream_for(gpu: &dyn LocalGpu, when: When) -> Result<CUstream> {
    gpu.make_current()?;
    Ok(match when {
        When::Stream(s) => s,
        When::Now | When::Queued => gpu.stream(),
    })
}

/// Waits for the library's stream when the operation must be complete on return.
fn finish(gpu: &dyn LocalGpu, when: When) -> Result<()> {
    match when {
        When::Now => gpu.sync(),
        When::Queued | When::Stream(_) => Ok(()),
    }
}

/// Queues a copy of `bytes` from `src` to `dst` on `stream`: one side a peer's heap as mapped
/// here, the other the caller's buffer (host or device memory).
///
/// # Safety
/// `dst..dst+bytes` and `src..src+bytes` stay valid until the stream passes the copy (the
/// peer's side translated and range-checked by the caller).
pub unsafe fn copy(dst: u64, src: u64, bytes: usize, stream: CUstream) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { cuda::memcpy_async(dst, src, bytes, stream) }.map_err(Error::from)
}

impl GpuTransport for P2p {
    fn put(&self, gpu: &dyn LocalGpu, to: GpuAddr, src: *const u8, bytes: usize, when: When) -> Result<()> {
        let s = stream_for(gpu, when)?;
        // SAFETY: `to` lies inside PE `to.pe`'s mapped heap (translated and bounds-checked by
        // the caller); the source is the caller's buffer of `bytes`, kept until the copy is done
        // (here for `Now`, until quiet for `Queued`, until the stream passes it on a stream, as
        // NVSHMEM documents).
        unsafe { copy(to.mapped, src as u64, bytes, s) }?;
        finish(gpu, when)
    }

    fn get(&self, gpu: &dyn LocalGpu, from: GpuAddr, dst: *mut u8, bytes: usize, when: When) -> Result<()> {
        let s = stream_for(gpu, when)?;
        // SAFETY: as for `put`, with the caller's destination buffer kept until completion.
        unsafe { copy(dst as u64, from.mapped, bytes, s) }?;
        finish(gpu, when)
    }

    fn p(&self, gpu: &dyn LocalGpu, to: GpuAddr, value: u64, size: usize, when: When) -> Result<()> {
        let k = gpu.kernels()?;
        let s = stream_for(gpu, when)?;
        // SAFETY: `to` is a `size`-aligned element inside PE `to.pe`'s mapped heap.
        cu(unsafe { k.store(s, to.mapped, value, size as u32) })?;
        finish(gpu, when)
    }

    fn strided(&self, gpu: &dyn LocalGpu, x: &Strided, when: When) -> Result<()> {
        let Strided { dir, remote, remote_stride, local, local_stride, nelems, size } = *x;
        let s = stream_for(gpu, when)?;
        let (to, from, to_stride, from_stride) = match dir {
            Direction::Put => (remote.mapped, local as u64, remote_stride, local_stride),
            Direction::Get => (local as u64, remote.mapped, local_stride, remote_stride),
        };
        let pitch = |stride: isize| stride.unsigned_abs();
        if to_stride > 0 && from_stride > 0 && pitch(to_stride) <= MAX_PITCH && pitch(from_stride) <= MAX_PITCH {
            // SAFETY: the heap side lies inside PE `remote.pe`'s mapped heap (translated over
            // its whole span by the caller); the local side is the caller's buffer, which
            // NVSHMEM's contract keeps valid until the copy is done.
            cu(unsafe { cuda::memcpy_strided_async(to, pitch(to_stride), from, pitch(from_stride), size, nelems, s) })?;
        } else {
            for i in 0..nelems as isize {
                let at = |base: u64, stride: isize| base.wrapping_add_signed((i * stride) as i64);
                // SAFETY: as above, one element at a time.
                cu(unsafe { cuda::memcpy_async(at(to, to_stride), at(from, from_stride), size, s) })?;
            }
        }
        finish(gpu, when)
    }

    fn amo(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        gpu.amo_at(at.mapped, a, b, op, size)
    }

    fn signal(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, value: u64, when: When) -> Result<()> {
        match (when, op) {
            (When::Stream(s), AmoOp::Set) => {
                gpu.make_current()?;
                // SAFETY: `at` is an aligned 8-byte word inside PE `at.pe`'s mapped heap.
                cu(unsafe { cuda::stream_write_u64(s, at.mapped, value) })
            }
            (When::Stream(s), _) => {
                let k = gpu.kernels()?;
                gpu.make_current()?;
                // SAFETY: as above.
                cu(unsafe { k.amo(s, at.mapped, value, 0, 0, op, 8) })
            }
            (_, AmoOp::Set) => self.put(gpu, at, (&value as *const u64).cast(), 8, When::Now),
            (_, _) => self.amo(gpu, at, op, 8, value, 0).map(|_| ()),
        }
    }
}
