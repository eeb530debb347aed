//! The proxy transport, host side: host-initiated operations on the GPU memory of PEs on other
//! hosts (GPU route `Proxy`, no IBGDA). The calling thread uses the mailboxes of this PE's proxy
//! (`src/proxy/gpu.rs`): every operation is a request the target PE's proxy applies to its GPU
//! heap (copies on its stream, AMOs through its doorbell: `proxy::gpu::AmoDoorbell`), blocking:
//! a put returns once the target has it in GPU memory.
//! Local buffers go through a host buffer; an on-stream form first waits for its stream, so it
//! stays in stream order; strided forms go element by element (the trait's default).

use super::{wait_for_stream, GpuAddr, GpuTransport, LocalGpu, Segment, Transport, When};
use crate::cuda::kernels::AmoOp;
use crate::error::{Error, ErrorKind, Result};
use crate::proxy::gpu::Mailboxes;

/// Host-side operations through the proxy's mailboxes.
pub struct ProxyHost;

fn boxes(gpu: &dyn LocalGpu, pe: usize) -> Result<&Mailboxes> {
    gpu.mailboxes().ok_or_else(|| Error::of(ErrorKind::Internal, format!("PE {pe} is on another host but this PE's proxy is not running")))
}

impl GpuTransport for ProxyHost {
    fn put(&self, gpu: &dyn LocalGpu, to: GpuAddr, src: *const u8, bytes: usize, when: When) -> Result<()> {
        wait_for_stream(when)?;
        let boxes = boxes(gpu, to.pe)?;
        let mut bounce = vec![0u8; bytes];
        gpu.copy_now(bounce.as_mut_ptr() as u64, src as u64, bytes)?;
        boxes.put(to.pe, Segment::Heap, to.off, &bounce)?;
        boxes.complete(to.pe)
    }

    fn get(&self, gpu: &dyn LocalGpu, from: GpuAddr, dst: *mut u8, bytes: usize, when: When) -> Result<()> {
        wait_for_stream(when)?;
        let boxes = boxes(gpu, from.pe)?;
        let mut bounce = vec![0u8; bytes];
        boxes.get(from.pe, Segment::Heap, from.off, &mut bounce)?;
        gpu.copy_now(dst as u64, bounce.as_ptr() as u64, bytes)
    }

    fn p(&self, gpu: &dyn LocalGpu, to: GpuAddr, value: u64, size: usize, when: When) -> Result<()> {
        self.put(gpu, to, (&value as *const u64).cast(), size, when)
    }

    /// The target's proxy has it run on its GPU (`proxy::gpu::AmoDoorbell`).
    fn amo(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        boxes(gpu, at.pe)?.atomic(at.pe, at.off, op, size, a, b)
    }

    fn signal(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, value: u64, when: When) -> Result<()> {
        match (when, op) {
            (When::Now, AmoOp::Set) => self.put(gpu, at, (&value as *const u64).cast(), 8, when),
            _ => {
                wait_for_stream(when)?;
                self.amo(gpu, at, op, 8, value, 0).map(|_| ())
            }
        }
    }
}
