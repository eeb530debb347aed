//! CUDA pieces of IBGDA on the GPU: device and pinned-host buffers for the queues, and
//! [`CudaMemory`], the model NIC's view of GPU memory.
//!
//! Driver calls go through `crate::cuda`'s one table of entry points (`cuda::driver()`).
//!
//! What the model does on GPU memory, and its limits:
//! - RDMA WRITE / READ: `cuMemcpyAsync` between this PE's heap window and a peer's heap as
//!   mapped in this process (the heaps are mapped in every process even when P2P is disabled for
//!   the device: a real NIC would go over the wire instead). Inline payloads: a host-to-device
//!   copy. All copies of a doorbell batch go on the NIC's stream in WQE order; the stream is
//!   synchronized once before the batch's CQEs are written.
//! - Atomics: the library's one-thread `rshmem_amo` kernel (system-scope atomic instructions) on
//!   the NIC's stream, the old value landing in a scratch word and copied to the WQE's local
//!   address. Masked forms that are not add / xor / and / or / swap / compare-swap run as a
//!   compare-swap loop. Atomic with respect to every other GPU atomic on the word. Limit: the
//!   kernel needs a free thread slot on this PE's GPU; a kernel that fills every SM and waits
//!   for a fetched value would wait forever.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::cuda::kernels::{AmoOp, Kernels};
use crate::cuda::sys::{CUcontext, CUdeviceptr, CUresult};
use crate::cuda::{self, CuError, CuResult, Stream};

use super::model::{AtomicKind, MemResult, MemoryAccess};

fn check(call: &'static str, rc: CUresult) -> CuResult<()> {
    cuda::driver()?.check(call, rc)
}

/// Device memory (cuMemAlloc) of the current context, zeroed; freed on drop
/// ([`cuda::DeviceMem`] with its length).
pub struct DevBuf {
    pub addr: u64,
    pub len: usize,
    _mem: cuda::DeviceMem,
}

impl DevBuf {
    pub fn new(len: usize) -> CuResult<DevBuf> {
        let s = Stream::create()?;
        let mem = cuda::DeviceMem::alloc(len, s.0)?;
        Ok(DevBuf { addr: mem.ptr, len: len.max(64), _mem: mem })
    }
    /// Copies `data` to offset `off` (blocking).
    pub fn upload(&self, off: usize, data: &[u8]) -> CuResult<()> {
        assert!(off + data.len() <= self.len, "upload past the end of a device buffer");
        let s = Stream::create()?;
        // SAFETY: destination inside this buffer (checked), source a live slice until the sync.
        unsafe { cuda::memcpy_async(self.addr + off as u64, data.as_ptr() as u64, data.len(), s.0)? };
        cuda::stream_synchronize(s.0)
    }
    /// Copies `out.len()` bytes from offset `off` (blocking).
    pub fn download(&self, off: usize, out: &mut [u8]) -> CuResult<()> {
        assert!(off + out.len() <= self.len, "download past the end of a device buffer");
        let s = Stream::create()?;
        // SAFETY: source inside this buffer (checked), destination a live slice until the sync.
        unsafe { cuda::memcpy_async(out.as_mut_ptr() as u64, self.addr + off as u64, out.len(), s.0)? };
        cuda::stream_synchronize(s.0)
    }
}

/// Pinned host memory mapped into every context's address space (cuMemHostAlloc with
/// PORTABLE | DEVICEMAP), zeroed. With unified addressing the device address is the host
/// address; `new` checks that. Freed on drop.
pub struct PinnedBuf {
    pub addr: u64,
    pub len: usize,
    _mem: cuda::PinnedHost,
}

impl PinnedBuf {
    pub fn new(len: usize) -> CuResult<PinnedBuf> {
        let mem = cuda::PinnedHost::alloc(len)?;
        let mut dev: CUdeviceptr = 0;
        // SAFETY: valid out-pointer; mem was just allocated with DEVICEMAP.
        check("cuMemHostGetDevicePointer", unsafe { (cuda::driver()?.api.cuMemHostGetDevicePointer)(&mut dev, mem.ptr.cast(), 0) })?;
        let addr = mem.ptr as u64;
        if dev != addr {
            return Err(CuError {
                call: "cuMemHostGetDevicePointer",
                code: -1,
                text: format!("pinned memory at {addr:#x} is mapped at {dev:#x} on the GPU; IBGDA needs unified addressing"),
            });
        }
        Ok(PinnedBuf { addr, len: len.max(64), _mem: mem })
    }
    pub fn fill(&self, byte: u8) {
        // SAFETY: own allocation of `len` bytes; called before anyone else uses it.
        unsafe { std::ptr::write_bytes(self.addr as *mut u8, byte, self.len) }
    }
}

/// Scratch words for the old values of atomics between two flushes.
const SCRATCH_SLOTS: usize = 4096;

/// One model NIC's access to GPU memory: its own stream, in the PE's context.
pub struct CudaMemory {
    ctx: usize,
    stream: Stream,
    kernels: Arc<Kernels>,
    scratch: DevBuf,
    next: AtomicUsize,
}

impl CudaMemory {
    /// Call with `ctx` current on this thread.
    pub fn new(ctx: CUcontext, kernels: Arc<Kernels>) -> CuResult<CudaMemory> {
        Ok(CudaMemory {
            ctx: ctx as usize,
            stream: Stream::create()?,
            kernels,
            scratch: DevBuf::new(SCRATCH_SLOTS * 8)?,
            next: AtomicUsize::new(0),
        })
    }

    fn sync(&self) -> MemResult<()> {
        self.next.store(0, Ordering::Relaxed);
        cuda::stream_synchronize(self.stream.0).map_err(|e| e.to_string())
    }

    /// A scratch word for one atomic's old value (flushing when all are in use).
    fn scratch_slot(&self) -> MemResult<u64> {
        let mut i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= SCRATCH_SLOTS {
            self.sync()?;
            i = self.next.fetch_add(1, Ordering::Relaxed);
        }
        Ok(self.scratch.addr + 8 * i as u64)
    }

    /// One kernel atomic whose old value lands (8 bytes) in a scratch word; returns the word.
    fn kernel_amo(&self, addr: u64, a: u64, b: u64, op: AmoOp, size: u32) -> MemResult<u64> {
        let out = self.scratch_slot()?;
        // SAFETY: `addr` is a registered, `size`-aligned word (checked by the model's decode);
        // `out` a scratch word of this NIC, untouched until the next flush.
        unsafe { self.kernels.amo(self.stream.0, addr, a, b, out, op, size) }.map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The one-instruction form of an atomic, when there is one.
    fn simple(kind: AtomicKind, size: u32) -> Option<(AmoOp, u64, u64)> {
        let ones = if size == 8 { u64::MAX } else { 0xffff_ffff };
        match kind {
            AtomicKind::Fa(a) => Some((AmoOp::Add, a, 0)),
            AtomicKind::Cs { swap, compare } => Some((AmoOp::CompareSwap, compare, swap)),
            AtomicKind::MaskedFa { add, boundary: 0 } => Some((AmoOp::Add, add, 0)),
            AtomicKind::MaskedFa { add, boundary } if boundary == ones => Some((AmoOp::Xor, add, 0)),
            AtomicKind::MaskedCs { swap, compare, swap_mask, compare_mask } => {
                if swap_mask == ones && compare_mask == ones {
                    Some((AmoOp::CompareSwap, compare, swap))
                } else if swap_mask == ones && compare_mask == 0 {
                    Some((AmoOp::Swap, swap, 0))
                } else if compare_mask == 0 && swap == 0 {
                    Some((AmoOp::And, !swap_mask & ones, 0))
                } else if compare_mask == 0 && swap == swap_mask {
                    Some((AmoOp::Or, swap_mask, 0))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn read_word(&self, scratch: u64) -> MemResult<u64> {
        let mut v = [0u8; 8];
        self.read(scratch, &mut v)?;
        Ok(u64::from_le_bytes(v))
    }
}

impl MemoryAccess for CudaMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> MemResult<()> {
        if out.is_empty() {
            return Ok(());
        }
        // SAFETY: `addr..+len` was checked against a registration (or is a send queue of an
        // attached QP); `out` is live until the synchronize below.
        unsafe { cuda::memcpy_async(out.as_mut_ptr() as u64, addr, out.len(), self.stream.0) }.map_err(|e| e.to_string())?;
        cuda::stream_synchronize(self.stream.0).map_err(|e| e.to_string())
    }
    fn write(&self, addr: u64, data: &[u8]) -> MemResult<()> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: destination checked against a registration; a pageable source is staged by
        // the driver before cuMemcpyAsync returns, so `data` may go away afterwards.
        unsafe { cuda::memcpy_async(addr, data.as_ptr() as u64, data.len(), self.stream.0) }.map_err(|e| e.to_string())
    }
    fn copy(&self, dst: u64, src: u64, len: u64) -> MemResult<()> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: both ranges checked against registrations; they stay mapped while registered.
        unsafe { cuda::memcpy_async(dst, src, len as usize, self.stream.0) }.map_err(|e| e.to_string())
    }
    fn atomic(&self, addr: u64, size: u32, kind: AtomicKind, result: u64) -> MemResult<()> {
        match Self::simple(kind, size) {
            Some((op, a, b)) => {
                let out = self.kernel_amo(addr, a, b, op, size)?;
                self.copy(result, out, size as u64)
            }
            None => {
                let old = self.atomic_rmw(addr, size, &|old| kind.apply(old, size))?;
                self.write(result, &old.to_le_bytes()[..size as usize])
            }
        }
    }
    /// A compare-swap loop: fetch, compute, compare-swap until no other writer came between.
    fn atomic_rmw(&self, addr: u64, size: u32, f: &dyn Fn(u64) -> Option<u64>) -> MemResult<u64> {
        self.sync()?;
        let mut old = {
            let w = self.kernel_amo(addr, 0, 0, AmoOp::Fetch, size)?;
            self.sync()?;
            self.read_word(w)?
        };
        loop {
            let Some(new) = f(old) else { return Ok(old) };
            let w = self.kernel_amo(addr, old, new, AmoOp::CompareSwap, size)?;
            self.sync()?;
            let seen = self.read_word(w)?;
            if seen == old {
                return Ok(old);
            }
            old = seen;
        }
    }
    fn flush(&self) -> MemResult<()> {
        self.sync()
    }
    fn on_thread_start(&self) {
        if let Ok(d) = cuda::driver() {
            // SAFETY: the PE's retained primary context, alive while the NIC runs.
            unsafe { (d.api.cuCtxSetCurrent)(self.ctx as CUcontext) };
        }
    }
}
