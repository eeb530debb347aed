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

fn boxes<'a>(gpu: &'a dyn LocalGpu, pe: usize, routine: &'static str) -> Result<&'a Mailboxes> {
    gpu.mailboxes()
        .ok_or_else(|| Error::new(ErrorKind::Internal, routine, format!("PE {pe} is on another host but this PE's proxy is not running")))
}

impl GpuTransport for ProxyHost {
    fn put(&self, gpu: &dyn LocalGpu, to: GpuAddr, src: *const u8, bytes: usize, when: When, routine: &'static str) -> Result<()> {
        wait_for_stream(when, routine)?;
        let boxes = boxes(gpu, to.pe, routine)?;
        let mut bounce = vec![0u8; bytes];
        gpu.copy_now(bounce.as_mut_ptr() as u64, src as u64, bytes)?;
        boxes.put(to.pe, Segment::Heap, to.off, &bounce, routine)?;
        boxes.complete(to.pe, routine)
    }

    fn get(&self, gpu: &dyn LocalGpu, from: GpuAddr, dst: *mut u8, bytes: usize, when: When, routine: &'static str) -> Result<()> {
        wait_for_stream(when, routine)?;
        let boxes = boxes(gpu, from.pe, routine)?;
        let mut bounce = vec![0u8; bytes];
        boxes.get(from.pe, Segment::Heap, from.off, &mut bounce, routine)?;
        gpu.copy_now(dst as u64, bounce.as_ptr() as u64, bytes)
    }

    fn p(&self, gpu: &dyn LocalGpu, to: GpuAddr, value: u64, size: usize, when: When, routine: &'static str) -> Result<()> {
        self.put(gpu, to, (&value as *const u64).cast(), size, when, routine)
    }

    /// The target's proxy has it run on its GPU (`proxy::gpu::AmoDoorbell`).
    fn amo(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, size: usize, a: u64, b: u64, routine: &'static str) -> Result<u64> {
        boxes(gpu, at.pe, routine)?.atomic(at.pe, at.off, op, size, a, b, routine)
    }

    fn signal(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, value: u64, when: When, routine: &'static str) -> Result<()> {
        match (when, op) {
            (When::Now, AmoOp::Set) => self.put(gpu, at, (&value as *const u64).cast(), 8, when, routine),
            _ => {
                wait_for_stream(when, routine)?;
                self.amo(gpu, at, op, 8, value, 0, routine).map(|_| ())
            }
        }
    }
}
