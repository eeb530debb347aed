//! GPU memory pieces of the hardware path that crate::cuda does not offer: mapping the NIC's
//! doorbell page into the GPU (`cuMemHostRegister` with IOMEMORY), dma-buf handles of device
//! memory (`cuMemGetHandleForAddressRange`), and 64 KiB-aligned device buffers, through
//! crate::cuda's table of driver entry points.
//!
//! NEVER MET HARDWARE: [`map_uar`] (needs a UAR page); [`dmabuf_of`] and [`Aligned`] need a GPU.

use std::ffi::{c_int, c_void};
use std::os::fd::{FromRawFd, OwnedFd};

use crate::cuda::sys::{
    Api, CUresult, CU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_IOMEMORY, CU_MEMHOSTREGISTER_PORTABLE,
    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
};
use crate::error::{Error, ErrorKind, Result};
use crate::ib::Uar;
use crate::ibgda::cuda::DevBuf;

use super::ROUTINE;

fn api() -> std::result::Result<&'static Api, String> {
    crate::cuda::driver().map(|d| &d.api).map_err(|e| e.to_string())
}

fn cu_check(call: &'static str, rc: CUresult) -> std::result::Result<(), String> {
    crate::cuda::driver().and_then(|d| d.check(call, rc)).map_err(|e| e.to_string())
}

/// The NIC's doorbell page registered with the GPU; unregistered on drop.
pub struct GpuUar {
    base: u64,
}

impl Drop for GpuUar {
    fn drop(&mut self) {
        if let Ok(api) = api() {
            // SAFETY: base was registered by map_uar and is unregistered once.
            unsafe { (api.cuMemHostUnregister)(self.base as *mut c_void) };
        }
    }
}

/// Maps the UAR page into the GPU: the GPU address of its doorbell register, or the driver's
/// refusal in words. NEVER MET HARDWARE.
pub fn map_uar(uar: &Uar) -> std::result::Result<(GpuUar, u64), String> {
    let api = api()?;
    let page = 4096usize;
    let base = uar.base_addr() & !(page as u64 - 1);
    let flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY;
    // SAFETY: base..base+page is the UAR page mmapped by libmlx5, alive while `uar` is.
    cu_check("cuMemHostRegister(UAR page, IOMEMORY)", unsafe { (api.cuMemHostRegister)(base as *mut c_void, page, flags) })?;
    let mapping = GpuUar { base };
    let mut dev = 0u64;
    // SAFETY: base was just registered with DEVICEMAP.
    cu_check("cuMemHostGetDevicePointer(UAR page)", unsafe { (api.cuMemHostGetDevicePointer)(&mut dev, base as *mut c_void, 0) })?;
    Ok((mapping, dev + (uar.reg_addr() - base)))
}

/// A dma-buf of device memory `[addr, addr+len)` (both host-page aligned), when the driver
/// exports one.
pub fn dmabuf_of(addr: u64, len: usize) -> Option<OwnedFd> {
    let f = api().ok()?.cuMemGetHandleForAddressRange?;
    let mut fd: c_int = -1;
    // SAFETY: fd is a valid out-pointer for the DMA_BUF_FD handle type.
    let rc = unsafe { f((&mut fd as *mut c_int).cast(), addr, len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) };
    // SAFETY: on success the driver returned a new descriptor that we now own.
    (rc == 0 && fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Device memory aligned to 64 KiB (GPU pages; 4 KiB umem pages and dma-buf ranges need it).
pub struct Aligned {
    _buf: DevBuf,
    pub addr: u64,
    pub len: usize,
}

impl Aligned {
    pub fn new(len: usize, what: &str) -> Result<Aligned> {
        const A: u64 = 1 << 16;
        let len = (len as u64).div_ceil(A) * A;
        let buf = DevBuf::new(len as usize + A as usize)
            .map_err(|e| Error::new(ErrorKind::System, ROUTINE, format!("allocating {what}: {e}")))?;
        let addr = buf.addr.div_ceil(A) * A;
        Ok(Aligned { _buf: buf, addr, len: len as usize })
    }
}
