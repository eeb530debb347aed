//! The one host path for RMA and AMOs on GPU memory (`State::gpu_op`): every host and
//! on-stream put, get, p, g, iput/iget, AMO and signal names its target by symmetric address
//! and PE; the address is checked against the GPU heap here, and the PE's GPU route
//! (`RouteTable::gpu_route`) picks the transport that carries it (`transport::gpu_path`:
//! P2P copies and kernels, or the proxy's mailboxes). This file also has the waits on a
//! stream (wait_until{,_all,_all_vector}_on_stream) and buffer registration.
//!
//! Values are taken at the call: p_on_stream passes its value as a kernel argument; the status
//! and compare arrays of the waits are copied, in stream order, into stream-ordered scratch
//! that the wait kernel reads (so they may be host or device arrays).

use std::ffi::c_int;

use super::{cu, GpuState};
use crate::cuda::kernels::{AmoOp, Kernels, WaitArgs};
use crate::cuda::{self, sys::CUstream};
use crate::error::{Error, Result};
use crate::runtime::rma::span;
use crate::runtime::State;
use crate::transport::{gpu_path, GpuAddr, LocalGpu, Strided};
pub use crate::transport::{Direction, When};

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

/// A host-side operation on a PE's GPU memory. `sym` (and `dest`/`src` on the PE's side) are
/// symmetric addresses; the local buffers are the caller's, host or device memory.
#[derive(Clone, Copy)]
pub enum HostOp {
    /// `bytes` from local `src` to symmetric `dest`.
    Put { dest: *mut u8, src: *const u8, bytes: usize },
    /// `bytes` from symmetric `src` into local `dest`.
    Get { dest: *mut u8, src: *const u8, bytes: usize },
    /// The low `size` bytes of `value` to symmetric `dest` (p_on_stream).
    P { dest: *mut u8, value: u64, size: usize },
    /// The `size`-byte value at symmetric `src`, returned (g_on_stream).
    G { src: *const u8, size: usize },
    /// iput (Put: `sym` the destination, `local` the source) or iget (Get: `sym` the source,
    /// `local` the destination); strides `dst` and `sst` in elements of `size` bytes.
    Strided { dir: Direction, sym: *const u8, local: *const u8, dst: isize, sst: isize, nelems: usize, size: usize },
    /// An atomic on the `size`-byte word at `dest`, returning the old value's bits.
    Amo { dest: *const u8, op: AmoOp, a: u64, b: u64, size: usize },
    /// signal_op: SET or ADD of `value` on the 8-byte signal word at `sig`.
    Signal { sig: *const u8, op: AmoOp, value: u64 },
}

/// NVSHMEM_SIGNAL_SET / NVSHMEM_SIGNAL_ADD as the atomic they are.
pub fn signal_op(op: c_int) -> Result<AmoOp> {
    match op {
        super::SIGNAL_SET => Ok(AmoOp::Set),
        super::SIGNAL_ADD => Ok(AmoOp::Add),
        other => Err(super::bad_signal_op(other)),
    }
}

fn misaligned(addr: *const u8, size: usize) -> Error {
    Error::invalid_value(format!("address {addr:p} is not aligned to its {size}-byte type"))
}

impl State {
    /// Where `len` bytes at symmetric `addr` lie on PE `pe` (checked against the GPU heap).
    fn gpu_addr(&self, addr: *const u8, len: usize, pe: c_int) -> Result<GpuAddr> {
        let mapped = self.gpu_translate(addr, len, pe)?;
        let pe = pe as usize; // range-checked by gpu_translate
        Ok(GpuAddr { pe, off: (mapped - self.gpu()?.base_of(pe)) as usize, mapped })
    }

    /// The one host path for RMA and AMOs on GPU memory: checks the operation, then hands it to
    /// the transport of PE `pe`'s GPU route. Returns the value of G and the old value of Amo
    /// (0 otherwise).
    pub fn gpu_op(&self, op: HostOp, pe: c_int, when: When) -> Result<u64> {
        let g = self.gpu()?;
        let path = |at: &GpuAddr| gpu_path(self.routes.gpu_route(at.pe));
        match op {
            HostOp::Put { dest, src, bytes } => {
                let at = self.gpu_addr(dest, bytes, pe)?;
                if bytes > 0 {
                    path(&at).put(g, at, src, bytes, when)?;
                }
            }
            HostOp::Get { dest, src, bytes } => {
                let at = self.gpu_addr(src, bytes, pe)?;
                if bytes > 0 {
                    path(&at).get(g, at, dest, bytes, when)?;
                }
            }
            HostOp::P { dest, value, size } => {
                let at = self.gpu_addr(dest, size, pe)?;
                if at.mapped % size as u64 != 0 {
                    return Err(misaligned(dest, size));
                }
                path(&at).p(g, at, value, size, when)?;
            }
            HostOp::G { src, size } => {
                let at = self.gpu_addr(src, size, pe)?;
                let mut v = 0u64;
                path(&at).get(g, at, (&mut v as *mut u64).cast(), size, when)?;
                if let When::Stream(s) = when {
                    cu(cuda::stream_synchronize(s))?; // the value is returned
                }
                return Ok(v);
            }
            HostOp::Strided { dir, sym, local, dst, sst, nelems, size } => {
                let (sym_stride, local_stride) = if dir == Direction::Put { (dst, sst) } else { (sst, dst) };
                let (lo, len) = if nelems == 0 { (sym, 1) } else { span(sym, sym_stride, nelems, size)? };
                let at = self.gpu_addr(lo, len, pe)?;
                if nelems == 0 {
                    return Ok(0);
                }
                if local.is_null() {
                    let which = if dir == Direction::Put { "source" } else { "destination" };
                    return Err(Error::invalid_value(format!("the {which} buffer is NULL")));
                }
                let first = at.plus(sym as isize - lo as isize);
                let bytes = |stride: isize| stride.saturating_mul(size as isize);
                let x = Strided {
                    dir,
                    remote: first,
                    remote_stride: bytes(sym_stride),
                    local,
                    local_stride: bytes(local_stride),
                    nelems,
                    size,
                };
                path(&at).strided(g, &x, when)?;
            }
            HostOp::Amo { dest, op, a, b, size } => {
                let at = self.gpu_addr(dest, size, pe)?;
                if at.mapped % size as u64 != 0 {
                    return Err(misaligned(dest, size));
                }
                return path(&at).amo(g, at, op, size, a, b);
            }
            HostOp::Signal { sig, op, value } => {
                let at = self.gpu_addr(sig, 8, pe)?;
                if at.mapped % 8 != 0 {
                    return Err(misaligned(sig, 8));
                }
                path(&at).signal(g, at, op, value, when)?;
            }
        }
        Ok(0)
    }

    /// wait_until{,_all,_all_vector}_on_stream: later work on `stream` waits until every
    /// variable of `w` (not skipped by its status) compares true.
    pub(crate) fn gpu_wait_on_stream(&self, w: &StreamWait, stream: CUstream) -> Result<()> {
        if !(0..=5).contains(&w.cmp) {
            return Err(Error::invalid_value(format!("comparison {} is not one of NVSHMEM_CMP_EQ..NVSHMEM_CMP_GE (0..5)", w.cmp)));
        }
        let bytes = crate::runtime::rma::bytes(w.nelems, w.size)?;
        let mine = self.gpu_translate(w.ivars, bytes.max(1), self.me as i32)?;
        if mine % w.size as u64 != 0 {
            return Err(Error::invalid_value(format!("address {:p} is not aligned to its {}-byte type", w.ivars, w.size)));
        }
        if w.nelems == 0 {
            return Ok(());
        }
        let g = self.gpu()?;
        let k = g.kernels()?;
        cu(g.ctx.make_current())?;
        let status = g.stage_on_stream(w.status.cast(), w.nelems * 4, stream)?;
        let values = match g.stage_on_stream(w.values, bytes, stream) {
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
        let launched = cu(unsafe { k.wait(stream, &args) });
        for p in [status, values] {
            if p != 0 {
                // SAFETY: from stage_on_stream on this stream; nothing later uses it.
                cu(unsafe { cuda::free_async(p, stream) })?;
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
    pub fn gpu_buffer_register(&self, addr: *const u8, len: usize) -> Result<()> {
        let g = self.gpu()?;
        if addr.is_null() || len == 0 {
            return Err(Error::invalid_value(format!("buffer {addr:p} of {len} bytes: need a non-NULL address and a length > 0")));
        }
        let (lo, hi) = (addr as u64, addr as u64 + len as u64);
        let mut reg = g.registered.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(a, l)) = reg.iter().find(|&&(a, l)| lo < a + l as u64 && a < hi) {
            return Err(Error::invalid_value(format!(
                "{addr:p} ({len} bytes) overlaps the registered buffer {a:#x} ({l} bytes); unregister it first"
            )));
        }
        // Over IBGDA the NIC needs it registered; P2P copies need nothing.
        if let Some(ib) = &g.ibgda {
            cu(g.ctx.make_current())?;
            ib.register_buffer(lo, len)?;
        }
        reg.push((lo, len));
        Ok(())
    }

    /// nvshmemx_buffer_unregister (`addr` as registered) or, with None, every registration.
    pub fn gpu_buffer_unregister(&self, addr: Option<*const u8>) -> Result<()> {
        let g = self.gpu()?;
        let mut reg = g.registered.lock().unwrap_or_else(|p| p.into_inner());
        match addr {
            None => reg.clear(),
            Some(a) => match reg.iter().position(|&(r, _)| r == a as u64) {
                Some(i) => {
                    reg.swap_remove(i);
                }
                None => return Err(Error::invalid_value(format!("{a:p} is not a registered buffer (nvshmemx_buffer_register)"))),
            },
        }
        if let Some(ib) = &g.ibgda {
            cu(g.ctx.make_current())?;
            ib.unregister_buffer(addr.map(|a| a as u64))?;
        }
        Ok(())
    }
}

impl GpuState {
    /// A stream-ordered device copy of `bytes` at `src` (host or device memory), or 0 for NULL.
    fn stage_on_stream(&self, src: *const u8, bytes: usize, stream: CUstream) -> Result<u64> {
        if src.is_null() {
            return Ok(0);
        }
        // SAFETY: `stream` is the caller's live stream; the copy reads the caller's `bytes`
        // at `src` (a host source is copied before the call returns).
        unsafe {
            let p = cu(cuda::alloc_async(bytes, stream))?;
            cu(cuda::memcpy_async(p, src as u64, bytes, stream))?;
            Ok(p)
        }
    }
}

/// What the GPU-memory transports use of this PE's GPU.
impl LocalGpu for GpuState {
    fn make_current(&self) -> Result<()> {
        cu(self.ctx.make_current())
    }
    fn stream(&self) -> CUstream {
        self.stream.0
    }
    fn sync(&self) -> Result<()> {
        GpuState::sync(self)
    }
    fn copy_now(&self, dst: u64, src: u64, len: usize) -> Result<()> {
        GpuState::copy_now(self, dst, src, len)
    }
    fn kernels(&self) -> Result<&Kernels> {
        GpuState::kernels(self)
    }
    fn amo_at(&self, mapped: u64, a: u64, b: u64, op: AmoOp, size: usize) -> Result<u64> {
        GpuState::amo_at(self, mapped, a, b, op, size)
    }
    fn mailboxes(&self) -> Option<&crate::proxy::gpu::Mailboxes> {
        self.mailboxes.get().map(|b| &**b)
    }
    fn ibgda_host(&self) -> Option<&crate::ibgda::host_rma::HostQueues> {
        self.ibgda.as_ref().and_then(|i| i.host())
    }
    fn heap_mapped(&self, pe: usize) -> bool {
        self.heap.lock().unwrap_or_else(|p| p.into_inner()).local.get(pe).copied().unwrap_or(false)
    }
}
