//! Host RMA forms beyond whole-buffer copies: strided transfers (iput/iget, blocking and on a
//! stream), single values on a stream (p/g_on_stream) and waits on a stream
//! (wait_until{,_all,_all_vector}_on_stream).
//!
//! Strided transfers are one 2D copy (element i at i * stride) when both strides are positive
//! and their pitches within the driver's limit, else one copy per element. Values are taken at
//! the call: p_on_stream passes its value as a kernel argument; the status and compare arrays of
//! the waits are copied, in stream order, into stream-ordered scratch that the wait kernel reads
//! (so they may be host or device arrays).

use std::ffi::c_int;

use super::{cu, GpuState};
use crate::cuda::kernels::WaitArgs;
use crate::cuda::{self, sys::CUstream};
use crate::error::{Error, Result};
use crate::runtime::rma::span;
use crate::runtime::State;

/// Which way a strided transfer goes, relative to this PE.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Put,
    Get,
}

/// A wait of the wait_until*_on_stream family: `nelems` variables of `size` bytes.
pub struct StreamWait {
    pub ivars: *const u8,
    pub nelems: usize,
    pub size: usize,
    pub signed: bool,
    pub cmp: c_int,
    pub value: u64,
    /// `nelems` ints (host or device memory), nonzero: skip; or NULL.
    pub status: *const c_int,
    /// `nelems` compare values of `size` bytes (host or device memory), or NULL.
    pub values: *const u8,
}

/// The 2D copy's pitches must not exceed this (the driver's limit on every current GPU).
const MAX_PITCH: usize = i32::MAX as usize;

// Streams are opaque driver handles, passed to the driver and never dereferenced here.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl State {
    /// iput (Put: `sym` is the destination on `pe`, `local` the source) or iget (Get: `sym`
    /// the source on `pe`, `local` the destination); strides in elements of `size` bytes.
    /// Blocking when `stream` is None (the library's stream), else ordered on `stream`.
    #[allow(clippy::too_many_arguments)]
    pub fn gpu_strided(
        &self,
        dir: Direction,
        sym: *const u8,
        local: *const u8,
        dst: isize,
        sst: isize,
        nelems: usize,
        size: usize,
        pe: i32,
        stream: Option<CUstream>,
        routine: &'static str,
    ) -> Result<()> {
        let sym_stride = if dir == Direction::Put { dst } else { sst };
        let (lo, len) = if nelems == 0 { (sym, 1) } else { span(sym, sym_stride, nelems, size, routine)? };
        let remote_lo = self.gpu_translate(lo, len, pe, routine)?;
        if nelems == 0 {
            return Ok(());
        }
        if local.is_null() {
            let which = if dir == Direction::Put { "source" } else { "destination" };
            return Err(Error::invalid(routine, format!("the {which} buffer is NULL")));
        }
        let remote = (remote_lo as isize + (sym as isize - lo as isize)) as u64;
        if self.gpu_proxied(lo, len, pe, routine)?.is_some() {
            // Another host: element by element through the proxy, in stream order.
            if let Some(s) = stream {
                cu(cuda::stream_synchronize(s), routine)?;
            }
            for i in 0..nelems as isize {
                let at = |base: *const u8, stride: isize| base.wrapping_offset(i * stride * size as isize);
                match dir {
                    Direction::Put => self.gpu_put(at(sym, dst) as *mut u8, at(local, sst), size, pe, routine)?,
                    Direction::Get => self.gpu_get(at(local, dst) as *mut u8, at(sym, sst), size, pe, routine)?,
                }
            }
            return Ok(());
        }
        let g = self.gpu(routine)?;
        cu(g.ctx.make_current(), routine)?;
        let s = stream.unwrap_or(g.stream.0);
        let (to, from, to_stride, from_stride) = match dir {
            Direction::Put => (remote, local as u64, dst, sst),
            Direction::Get => (local as u64, remote, dst, sst),
        };
        let pitch = |stride: isize| stride.unsigned_abs().saturating_mul(size);
        if to_stride > 0 && from_stride > 0 && pitch(to_stride) <= MAX_PITCH && pitch(from_stride) <= MAX_PITCH {
            // SAFETY: the heap side lies inside PE `pe`'s mapped heap (translated over its whole
            // span above); the local side is the caller's buffer, which NVSHMEM's contract keeps
            // valid until the copy is done (here, or when the stream passes it).
            cu(unsafe { cuda::memcpy_strided_async(to, pitch(to_stride), from, pitch(from_stride), size, nelems, s) }, routine)?;
        } else {
            for i in 0..nelems as isize {
                let at = |base: u64, stride: isize| (base as isize + i * stride * size as isize) as u64;
                // SAFETY: as above, one element at a time.
                cu(unsafe { cuda::memcpy_async(at(to, to_stride), at(from, from_stride), size, s) }, routine)?;
            }
        }
        if stream.is_none() {
            g.sync(routine)?;
        }
        Ok(())
    }

    /// p_on_stream: the low `size` bytes of `value` stored at `dest` on `pe` in stream order.
    pub fn gpu_p_on_stream(&self, dest: *mut u8, value: u64, size: usize, pe: i32, stream: CUstream, routine: &'static str) -> Result<()> {
        let remote = self.gpu_translate(dest, size, pe, routine)?;
        if remote % size as u64 != 0 {
            return Err(Error::invalid(routine, format!("address {dest:p} is not aligned to its {size}-byte type")));
        }
        if self.gpu_proxied(dest, size, pe, routine)?.is_some() {
            cu(cuda::stream_synchronize(stream), routine)?;
            return self.gpu_put(dest, (&value as *const u64).cast(), size, pe, routine);
        }
        let g = self.gpu(routine)?;
        let k = g.kernels(routine)?;
        cu(g.ctx.make_current(), routine)?;
        // SAFETY: `remote` is a `size`-aligned element inside PE `pe`'s mapped heap.
        cu(unsafe { k.store(stream, remote, value, size as u32) }, routine)
    }

    /// g_on_stream: the `size`-byte value at `src` on `pe` once `stream` has reached this call
    /// (the stream is synchronized: the value is returned).
    pub fn gpu_g_on_stream(&self, src: *const u8, size: usize, pe: i32, stream: CUstream, routine: &'static str) -> Result<u64> {
        let remote = self.gpu_translate(src, size, pe, routine)?;
        let g = self.gpu(routine)?;
        cu(g.ctx.make_current(), routine)?;
        let mut v = 0u64;
        if self.gpu_proxied(src, size, pe, routine)?.is_some() {
            cu(cuda::stream_synchronize(stream), routine)?;
            self.gpu_get((&mut v as *mut u64).cast(), src, size, pe, routine)?;
            return Ok(v);
        }
        // SAFETY: `remote` is `size` (at most 8) bytes inside PE `pe`'s mapped heap; `v` lives
        // until the stream is synchronized just below.
        cu(unsafe { cuda::memcpy_async((&mut v as *mut u64) as u64, remote, size, stream) }, routine)?;
        cu(cuda::stream_synchronize(stream), routine)?;
        Ok(v)
    }

    /// wait_until{,_all,_all_vector}_on_stream: later work on `stream` waits until every
    /// variable of `w` (not skipped by its status) compares true.
    pub fn gpu_wait_on_stream(&self, w: &StreamWait, stream: CUstream, routine: &'static str) -> Result<()> {
        if !(0..=5).contains(&w.cmp) {
            return Err(Error::invalid(routine, format!("comparison {} is not one of NVSHMEM_CMP_EQ..NVSHMEM_CMP_GE (0..5)", w.cmp)));
        }
        let bytes = crate::runtime::rma::bytes(w.nelems, w.size, routine)?;
        let mine = self.gpu_translate(w.ivars, bytes.max(1), self.me as i32, routine)?;
        if mine % w.size as u64 != 0 {
            return Err(Error::invalid(routine, format!("address {:p} is not aligned to its {}-byte type", w.ivars, w.size)));
        }
        if w.nelems == 0 {
            return Ok(());
        }
        let g = self.gpu(routine)?;
        let k = g.kernels(routine)?;
        cu(g.ctx.make_current(), routine)?;
        let status = g.stage_on_stream(w.status.cast(), w.nelems * 4, stream, routine)?;
        let values = match g.stage_on_stream(w.values, bytes, stream, routine) {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: `status` came from stage_on_stream on this stream (or is 0).
                let _ = (status != 0).then(|| unsafe { cuda::free_async(status, stream) });
                return Err(e);
            }
        };
        let args = WaitArgs {
            ivars: mine,
            nelems: w.nelems as u64,
            status,
            values,
            value: w.value,
            cmp: w.cmp as u32,
            size: w.size as u32,
            is_signed: w.signed as u32,
            pad: 0,
        };
        // SAFETY: `mine` is this PE's heap range of nelems aligned variables; the staged arrays
        // are freed only after the kernel, in stream order.
        let launched = cu(unsafe { k.wait(stream, &args) }, routine);
        for p in [status, values] {
            if p != 0 {
                // SAFETY: from stage_on_stream on this stream; nothing later uses it.
                cu(unsafe { cuda::free_async(p, stream) }, routine)?;
            }
        }
        launched
    }
}

impl State {
    /// nvshmemx_buffer_register: remembers a local buffer used as the local side of RMA. GPU
    /// threads and the copy engine reach any local memory over P2P, so nothing else is needed
    /// there; with IBGDA the NIC registers it too, and device puts from it and gets into it
    /// become one RDMA WRITE or READ instead of inline copies (src/ibgda/regs.rs).
    pub fn gpu_buffer_register(&self, addr: *const u8, len: usize, routine: &'static str) -> Result<()> {
        let g = self.gpu(routine)?;
        if addr.is_null() || len == 0 {
            return Err(Error::invalid(routine, format!("buffer {addr:p} of {len} bytes: need a non-NULL address and a length > 0")));
        }
        let (lo, hi) = (addr as u64, addr as u64 + len as u64);
        let mut reg = g.registered.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(a, l)) = reg.iter().find(|&&(a, l)| lo < a + l as u64 && a < hi) {
            return Err(Error::invalid(
                routine,
                format!("{addr:p} ({len} bytes) overlaps the registered buffer {a:#x} ({l} bytes); unregister it first"),
            ));
        }
        // Over IBGDA the NIC needs it registered; P2P copies need nothing.
        if let Some(ib) = &g.ibgda {
            cu(g.ctx.make_current(), routine)?;
            ib.register_buffer(lo, len, routine)?;
        }
        reg.push((lo, len));
        Ok(())
    }

    /// nvshmemx_buffer_unregister (`addr` as registered) or, with None, every registration.
    pub fn gpu_buffer_unregister(&self, addr: Option<*const u8>, routine: &'static str) -> Result<()> {
        let g = self.gpu(routine)?;
        let mut reg = g.registered.lock().unwrap_or_else(|p| p.into_inner());
        match addr {
            None => reg.clear(),
            Some(a) => match reg.iter().position(|&(r, _)| r == a as u64) {
                Some(i) => {
                    reg.swap_remove(i);
                }
                None => return Err(Error::invalid(routine, format!("{a:p} is not a registered buffer (nvshmemx_buffer_register)"))),
            },
        }
        if let Some(ib) = &g.ibgda {
            cu(g.ctx.make_current(), routine)?;
            ib.unregister_buffer(addr.map(|a| a as u64), routine)?;
        }
        Ok(())
    }
}

impl GpuState {
    /// A stream-ordered device copy of `bytes` at `src` (host or device memory), or 0 for NULL.
    fn stage_on_stream(&self, src: *const u8, bytes: usize, stream: CUstream, routine: &'static str) -> Result<u64> {
        if src.is_null() {
            return Ok(0);
        }
        // SAFETY: `stream` is the caller's live stream; the copy reads the caller's `bytes`
        // at `src` (a host source is copied before the call returns).
        unsafe {
            let p = cu(cuda::alloc_async(bytes, stream), routine)?;
            cu(cuda::memcpy_async(p, src as u64, bytes, stream), routine)?;
            Ok(p)
        }
    }
}
