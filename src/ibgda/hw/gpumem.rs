//! GPU memory pieces of the hardware path that crate::cuda does not offer: mapping the NIC's
//! doorbell page into the GPU (`cuMemHostRegister` with IOMEMORY), dma-buf handles of device
//! memory (`cuMemGetHandleForAddressRange`), and 64 KiB-aligned device buffers. The entry points
//! are resolved from the driver library crate::cuda already loaded.
//!
//! NEVER MET HARDWARE: [`map_uar`] (needs a UAR page); [`dmabuf_of`] and [`Aligned`] need a GPU.

use std::ffi::{c_int, c_uint, c_void, CStr};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::OnceLock;

use crate::cuda::sys::CUresult;
use crate::error::{Error, ErrorKind, Result};
use crate::ib::Uar;
use crate::ibgda::cuda::DevBuf;

use super::ROUTINE;

type HostRegister = unsafe extern "C" fn(*mut c_void, usize, c_uint) -> CUresult;
type HostUnregister = unsafe extern "C" fn(*mut c_void) -> CUresult;
type HostDevicePointer = unsafe extern "C" fn(*mut u64, *mut c_void, c_uint) -> CUresult;
type HandleForRange = unsafe extern "C" fn(*mut c_void, u64, usize, c_int, u64) -> CUresult;

const CU_MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
const CU_MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;
const CU_MEMHOSTREGISTER_IOMEMORY: c_uint = 0x04;
const CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD: c_int = 0x1;

struct CudaExtra {
    register: HostRegister,
    unregister: HostUnregister,
    device_pointer: HostDevicePointer,
    /// CUDA 11.7+; None on older drivers (no dma-buf then).
    handle_for_range: Option<HandleForRange>,
}

fn cuda_extra() -> std::result::Result<&'static CudaExtra, String> {
    static X: OnceLock<std::result::Result<CudaExtra, String>> = OnceLock::new();
    crate::cuda::driver().map_err(|e| e.to_string())?;
    X.get_or_init(|| {
        // SAFETY: NOLOAD of the driver library crate::cuda keeps loaded; the handle is not closed.
        let lib = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if lib.is_null() {
            return Err("libcuda.so.1 is not loaded".into());
        }
        // SAFETY: lib is live; the names are C strings.
        let sym = |n: &CStr| unsafe { libc::dlsym(lib, n.as_ptr()) };
        let need = |n: &CStr| {
            let p = sym(n);
            if p.is_null() {
                Err(format!("the CUDA driver has no {}", n.to_string_lossy()))
            } else {
                Ok(p)
            }
        };
        // SAFETY (all): each symbol is the driver entry point of cuda.h with this signature.
        unsafe {
            Ok(CudaExtra {
                register: std::mem::transmute::<*mut c_void, HostRegister>(need(c"cuMemHostRegister_v2")?),
                unregister: std::mem::transmute::<*mut c_void, HostUnregister>(need(c"cuMemHostUnregister")?),
                device_pointer: std::mem::transmute::<*mut c_void, HostDevicePointer>(need(c"cuMemHostGetDevicePointer_v2")?),
                handle_for_range: Some(sym(c"cuMemGetHandleForAddressRange"))
                    .filter(|p| !p.is_null())
                    .map(|p| std::mem::transmute::<*mut c_void, HandleForRange>(p)),
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
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
        if let Ok(x) = cuda_extra() {
            // SAFETY: base was registered by map_uar and is unregistered once.
            unsafe { (x.unregister)(self.base as *mut c_void) };
        }
    }
}

/// Maps the UAR page into the GPU: the GPU address of its doorbell register, or the driver's
/// refusal in words. NEVER MET HARDWARE.
pub fn map_uar(uar: &Uar) -> std::result::Result<(GpuUar, u64), String> {
    let x = cuda_extra()?;
    let page = 4096usize;
    let base = uar.base_addr() & !(page as u64 - 1);
    let flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY;
    // SAFETY: base..base+page is the UAR page mmapped by libmlx5, alive while `uar` is.
    cu_check("cuMemHostRegister(UAR page, IOMEMORY)", unsafe { (x.register)(base as *mut c_void, page, flags) })?;
    let mapping = GpuUar { base };
    let mut dev = 0u64;
    // SAFETY: base was just registered with DEVICEMAP.
    cu_check("cuMemHostGetDevicePointer(UAR page)", unsafe { (x.device_pointer)(&mut dev, base as *mut c_void, 0) })?;
    Ok((mapping, dev + (uar.reg_addr() - base)))
}

/// A dma-buf of device memory `[addr, addr+len)` (both host-page aligned), when the driver
/// exports one.
pub fn dmabuf_of(addr: u64, len: usize) -> Option<OwnedFd> {
    let f = cuda_extra().ok()?.handle_for_range?;
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
