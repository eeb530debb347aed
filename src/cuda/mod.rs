//! Safe wrappers over the CUDA driver API, loaded lazily at run time. `sys::Api` is the one
//! table of driver entry points in the library (IBGDA's buffers and doorbell mapping use it too).
//!
//! Why our own `dlopen` of `libcuda.so.1` instead of cudarc's dynamic-loading `sys` layer:
//! cudarc *panics* when the library or one of its symbols is missing (inside an `extern "C"`
//! entry point that aborts the process), it compiles several hundred thousand lines of
//! bindings on every build, and rshmem needs fewer than forty entry points. A hand-written
//! table (`sys`) resolved once, on the first GPU call, gives an ordinary `Err` naming the
//! missing library or symbol, keeps the build small, and guarantees that a CPU-only OpenSHMEM
//! program never opens libcuda: nothing here runs until a GPU routine is called.
//!
//! Every call goes through `check`, which turns a `CUresult` into a `CuError` naming the
//! driver call; callers add the C routine with `CuError::into_error`. Resources are owned by
//! types whose `Drop` releases them (`PrimaryContext`, `VaRange`, `PhysMem`, `Mapping`, `Stream`).

pub mod sys;

/// The driver's opaque handles that C programs pass through the NVSHMEM API (nvshmemx_*_on_stream,
/// nvshmemx_cumodule_init, ...): the C entry points name them from here, not from `sys`.
pub use sys::{CUlibrary, CUmodule, CUstream};

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind};
use sys::*;

/// A failed driver call: which call, and the driver's code and name for the failure.
#[derive(Clone, Debug)]
pub struct CuError {
    pub call: &'static str,
    pub code: CUresult,
    pub text: String,
}

impl CuError {
    /// The same failure, reported under the C routine the user called.
    pub fn into_error(self, routine: &'static str) -> Error {
        Error::from(self).in_routine(routine)
    }
}

/// The failure as an error the C boundary names.
impl From<CuError> for Error {
    fn from(e: CuError) -> Error {
        let kind = match e.code {
            CUDA_ERROR_NO_DEVICE | -1 => ErrorKind::NoGpu,
            _ => ErrorKind::System,
        };
        Error::of(kind, format!("{}: {}", e.call, e.text))
    }
}

impl std::fmt::Display for CuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.call, self.text)
    }
}

pub type CuResult<T> = std::result::Result<T, CuError>;

/// The loaded driver: the library handle (never closed) and its entry points.
pub struct Driver {
    pub api: Api,
    pub version: i32,
}

// SAFETY: the table holds plain function pointers into a library that stays loaded for the
// life of the process; the driver API itself is thread-safe.
unsafe impl Send for Driver {}
// SAFETY: as for Send: the table is never written after it is loaded.
unsafe impl Sync for Driver {}

static DRIVER: OnceLock<std::result::Result<Driver, String>> = OnceLock::new();

fn load() -> std::result::Result<Driver, String> {
    const NAME: &CStr = c"libcuda.so.1";
    // SAFETY: dlopen with a valid C string; the handle is kept for the life of the process.
    let lib = unsafe { libc::dlopen(NAME.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if lib.is_null() {
        // SAFETY: dlerror returns a thread-local C string or NULL.
        let why = unsafe { libc::dlerror() };
        let why = if why.is_null() {
            "not found".to_string()
        } else {
            // SAFETY: non-null dlerror result is a valid C string.
            unsafe { CStr::from_ptr(why) }.to_string_lossy().into_owned()
        };
        return Err(format!(
            "no usable GPU: the CUDA driver library libcuda.so.1 could not be loaded ({why}); GPU (nvshmem) routines need an NVIDIA driver"
        ));
    }
    // SAFETY: lib is a live handle of the CUDA driver library, never closed.
    let api = unsafe { Api::resolve(lib) }?;
    // SAFETY: plain driver calls with valid out-pointers.
    let rc = unsafe { (api.cuInit)(0) };
    if rc != CUDA_SUCCESS {
        let name = error_name(&api, rc);
        return Err(format!(
            "no usable GPU: cuInit failed with {name} (is a GPU visible? CUDA_VISIBLE_DEVICES={:?})",
            std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default()
        ));
    }
    let mut version = 0;
    // SAFETY: as above.
    unsafe { (api.cuDriverGetVersion)(&mut version) };
    Ok(Driver { api, version })
}

fn error_name(api: &Api, rc: CUresult) -> String {
    let mut name: *const c_char = std::ptr::null();
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: the driver returns pointers to static strings (or leaves them NULL).
    unsafe {
        (api.cuGetErrorName)(rc, &mut name);
        (api.cuGetErrorString)(rc, &mut text);
    }
    let s = |p: *const c_char| {
        // SAFETY: non-null pointers from cuGetError* point at static C strings.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    match (s(name), s(text)) {
        (Some(n), Some(t)) => format!("{n} ({t})"),
        (Some(n), None) => n,
        _ => format!("CUDA error {rc}"),
    }
}

/// The driver, loaded on first use. The error says why no GPU can be used.
pub fn driver() -> CuResult<&'static Driver> {
    match DRIVER.get_or_init(load) {
        Ok(d) => Ok(d),
        Err(why) => Err(CuError { call: "loading the CUDA driver", code: -1, text: why.clone() }),
    }
}

/// Whether the driver was ever loaded in this process (it never is by CPU-only programs).
pub fn driver_loaded() -> bool {
    matches!(DRIVER.get(), Some(Ok(_)))
}

impl Driver {
    #[inline]
    pub fn check(&self, call: &'static str, rc: CUresult) -> CuResult<()> {
        if rc == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(CuError { call, code: rc, text: error_name(&self.api, rc) })
        }
    }
}

/// Calls a driver entry point and checks its result: `cu!(d, cuCtxSynchronize())`.
macro_rules! cu {
    ($d:expr, $f:ident ( $($a:expr),* )) => {{
        let d: &Driver = $d;
        // SAFETY: every call site passes valid handles and pointers to live out-parameters,
        // as the driver API documents for that entry point.
        let rc = unsafe { (d.api.$f)($($a),*) };
        d.check(stringify!($f), rc)
    }};
}

pub mod coll;
pub mod image;
pub mod info;
pub mod kernels;

// ---------------------------------------------------------------------------------------------
// Devices and contexts

/// A CUDA device ordinal (within this process's CUDA_VISIBLE_DEVICES).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device(pub CUdevice);

pub fn device_count() -> CuResult<usize> {
    let d = driver()?;
    let mut n = 0;
    match cu!(d, cuDeviceGetCount(&mut n)) {
        Ok(()) => Ok(n.max(0) as usize),
        Err(e) if e.code == CUDA_ERROR_NO_DEVICE => Ok(0),
        Err(e) => Err(e),
    }
}

impl Device {
    pub fn get(ordinal: usize) -> CuResult<Device> {
        let d = driver()?;
        let mut dev = 0;
        cu!(d, cuDeviceGet(&mut dev, ordinal as c_int))?;
        Ok(Device(dev))
    }

    pub fn attribute(self, attr: c_int) -> CuResult<i32> {
        let d = driver()?;
        let mut v = 0;
        cu!(d, cuDeviceGetAttribute(&mut v, attr, self.0))?;
        Ok(v)
    }

    pub fn name(self) -> CuResult<String> {
        let d = driver()?;
        let mut buf = [0 as c_char; 256];
        cu!(d, cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, self.0))?;
        // SAFETY: the driver wrote a NUL-terminated string into buf.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    /// The PCI address, e.g. `0000:1B:00.0`: how PEs tell each other which GPU they use.
    pub fn pci_bus_id(self) -> CuResult<String> {
        let d = driver()?;
        let mut buf = [0 as c_char; 64];
        cu!(d, cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as c_int, self.0))?;
        // SAFETY: the driver wrote a NUL-terminated string into buf.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    pub fn total_memory(self) -> CuResult<usize> {
        let d = driver()?;
        let mut v = 0usize;
        cu!(d, cuDeviceTotalMem(&mut v, self.0))?;
        Ok(v)
    }

    /// (load/store access, native atomics) from this device to `peer`.
    pub fn p2p(self, peer: Device) -> CuResult<(bool, bool)> {
        if self == peer {
            return Ok((true, true));
        }
        let d = driver()?;
        let (mut access, mut atomics) = (0, 0);
        cu!(d, cuDeviceGetP2PAttribute(&mut access, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, self.0, peer.0))?;
        cu!(d, cuDeviceGetP2PAttribute(&mut atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, self.0, peer.0))?;
        Ok((access != 0, atomics != 0))
    }
}

impl Device {
    /// cuDeviceCanAccessPeer: whether this device can map `peer`'s memory.
    pub fn can_access_peer(self, peer: Device) -> CuResult<bool> {
        if self == peer {
            return Ok(true);
        }
        let d = driver()?;
        let mut v = 0;
        cu!(d, cuDeviceCanAccessPeer(&mut v, self.0, peer.0))?;
        Ok(v != 0)
    }

    /// The driver's relative performance rank of the link to `peer` (0 is the best).
    pub fn p2p_rank(self, peer: Device) -> CuResult<i32> {
        let d = driver()?;
        let mut v = 0;
        cu!(d, cuDeviceGetP2PAttribute(&mut v, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, self.0, peer.0))?;
        Ok(v)
    }
}

/// The context current on this thread, if any, and its device.
pub fn current_context() -> CuResult<Option<(CUcontext, Device)>> {
    let d = driver()?;
    let mut ctx: CUcontext = std::ptr::null_mut();
    cu!(d, cuCtxGetCurrent(&mut ctx))?;
    if ctx.is_null() {
        return Ok(None);
    }
    let mut dev = 0;
    cu!(d, cuCtxGetDevice(&mut dev))?;
    Ok(Some((ctx, Device(dev))))
}

/// A retained primary context (the one the CUDA runtime uses too); released on drop.
pub struct PrimaryContext {
    pub device: Device,
    pub ctx: CUcontext,
}

// SAFETY: a CUcontext handle may be used from any thread (made current there first).
unsafe impl Send for PrimaryContext {}
// SAFETY: as for Send: the driver API is thread-safe and the handle is only read.
unsafe impl Sync for PrimaryContext {}

impl PrimaryContext {
    pub fn retain(device: Device) -> CuResult<PrimaryContext> {
        let d = driver()?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        cu!(d, cuDevicePrimaryCtxRetain(&mut ctx, device.0))?;
        Ok(PrimaryContext { device, ctx })
    }

    /// Makes this context current on the calling thread (cheap when it already is).
    pub fn make_current(&self) -> CuResult<()> {
        let d = driver()?;
        let mut cur: CUcontext = std::ptr::null_mut();
        cu!(d, cuCtxGetCurrent(&mut cur))?;
        if cur != self.ctx {
            cu!(d, cuCtxSetCurrent(self.ctx))?;
        }
        Ok(())
    }

    pub fn synchronize(&self) -> CuResult<()> {
        self.make_current()?;
        cu!(driver()?, cuCtxSynchronize())
    }

    /// (free, total) bytes of device memory, as the driver sees them now.
    pub fn memory_info(&self) -> CuResult<(usize, usize)> {
        self.make_current()?;
        let (mut free, mut total) = (0usize, 0usize);
        cu!(driver()?, cuMemGetInfo(&mut free, &mut total))?;
        Ok((free, total))
    }
}

impl Drop for PrimaryContext {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuDevicePrimaryCtxRelease(self.device.0));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Virtual memory management

fn device_prop(device: Device) -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: device.0 },
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: [0; 8],
    }
}

/// The recommended size granularity of physical allocations on `device`.
pub fn granularity(device: Device) -> CuResult<usize> {
    let d = driver()?;
    let prop = device_prop(device);
    let mut g = 0usize;
    cu!(d, cuMemGetAllocationGranularity(&mut g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))?;
    Ok(g.max(1))
}

/// A reserved range of device virtual addresses; freed on drop (unmap what is in it first).
pub struct VaRange {
    pub base: CUdeviceptr,
    pub size: usize,
}

impl VaRange {
    pub fn reserve(size: usize, align: usize) -> CuResult<VaRange> {
        let d = driver()?;
        let mut base: CUdeviceptr = 0;
        cu!(d, cuMemAddressReserve(&mut base, size, align, 0, 0))?;
        Ok(VaRange { base, size })
    }
}

impl Drop for VaRange {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuMemAddressFree(self.base, self.size));
        }
    }
}

/// A physical allocation (created here or imported from a peer); released on drop. The
/// memory itself lives until its last mapping is gone too.
pub struct PhysMem {
    pub handle: CUmemGenericAllocationHandle,
    pub size: usize,
}

impl PhysMem {
    /// Device memory on `device` that can be exported as a POSIX file descriptor.
    pub fn create(device: Device, size: usize) -> CuResult<PhysMem> {
        let d = driver()?;
        let prop = device_prop(device);
        let mut handle = 0;
        cu!(d, cuMemCreate(&mut handle, size, &prop, 0))?;
        Ok(PhysMem { handle, size })
    }

    /// A file descriptor another process can import (it keeps the memory alive while open).
    pub fn export_fd(&self) -> CuResult<OwnedFd> {
        let d = driver()?;
        let mut fd: c_int = -1;
        cu!(d, cuMemExportToShareableHandle((&mut fd as *mut c_int).cast(), self.handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0))?;
        // SAFETY: the driver just created this descriptor for us; we are its only owner.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The allocation (cuMemCreate) mapped at `va` by the program itself, `size` bytes of it:
    /// another reference to its handle, released on drop (the program keeps its own).
    pub fn retain(va: CUdeviceptr, size: usize) -> CuResult<PhysMem> {
        let d = driver()?;
        let mut handle = 0;
        cu!(d, cuMemRetainAllocationHandle(&mut handle, va as usize as *mut c_void))?;
        Ok(PhysMem { handle, size })
    }

    /// Imports memory a peer exported; the descriptor may be closed afterwards.
    pub fn import_fd(fd: RawFd, size: usize) -> CuResult<PhysMem> {
        let d = driver()?;
        let mut handle = 0;
        // The POSIX-fd handle type passes the descriptor itself in the pointer argument.
        cu!(d, cuMemImportFromShareableHandle(&mut handle, fd as usize as *mut c_void, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))?;
        Ok(PhysMem { handle, size })
    }
}

impl Drop for PhysMem {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuMemRelease(self.handle));
        }
    }
}

/// `mem` mapped at `va` with read/write access for `device`; unmapped on drop.
pub struct Mapping {
    pub va: CUdeviceptr,
    pub size: usize,
}

impl Mapping {
    pub fn map(va: CUdeviceptr, mem: &PhysMem, device: Device) -> CuResult<Mapping> {
        let d = driver()?;
        cu!(d, cuMemMap(va, mem.size, 0, mem.handle, 0))?;
        let mapping = Mapping { va, size: mem.size };
        let access = CUmemAccessDesc {
            location: CUmemLocation { type_: CU_MEM_LOCATION_TYPE_DEVICE, id: device.0 },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        cu!(d, cuMemSetAccess(va, mem.size, &access, 1))?;
        Ok(mapping)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuMemUnmap(self.va, self.size));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Streams, copies and stream memory operations

/// A stream owned by the library (not the user's); destroyed on drop.
pub struct Stream(pub CUstream);

// SAFETY: stream handles may be used from any thread with the owning context current.
unsafe impl Send for Stream {}
// SAFETY: as for Send: the driver orders work queued on one stream from several threads.
unsafe impl Sync for Stream {}

impl Stream {
    pub fn create() -> CuResult<Stream> {
        let d = driver()?;
        let mut s: CUstream = std::ptr::null_mut();
        cu!(d, cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING))?;
        Ok(Stream(s))
    }

    /// A non-blocking stream of the current context's greatest priority (the proxy's: its
    /// copies must not queue behind the user's work, e.g. a stream waiting on a value).
    pub fn create_urgent() -> CuResult<Stream> {
        let d = driver()?;
        let (mut least, mut greatest) = (0, 0);
        cu!(d, cuCtxGetStreamPriorityRange(&mut least, &mut greatest))?;
        let mut s: CUstream = std::ptr::null_mut();
        cu!(d, cuStreamCreateWithPriority(&mut s, CU_STREAM_NON_BLOCKING, greatest))?;
        Ok(Stream(s))
    }
}

impl Stream {
    /// This stream as a handle to queue work on (live while `self` is).
    pub fn handle(&self) -> StreamHandle {
        StreamHandle(self.0)
    }
}

/// A stream to queue work on that the library does not own (the user's, given to an
/// `_on_stream` routine, or the library's own `Stream`): whoever makes one vouches that it is
/// usable, so the routines taking it need no raw-pointer argument.
#[derive(Clone, Copy, Debug)]
pub struct StreamHandle(CUstream);

impl StreamHandle {
    /// # Safety
    /// `s` is NULL (the context's default stream), CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, or
    /// a stream created in the library's CUDA context and not destroyed before the work queued
    /// on it has run (the contract of NVSHMEM's `_on_stream` routines).
    pub unsafe fn new(s: CUstream) -> StreamHandle {
        StreamHandle(s)
    }

    /// The driver's handle.
    pub fn raw(self) -> CUstream {
        self.0
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuStreamDestroy(self.0));
        }
    }
}

/// Page-locked host memory the GPU reaches at the same address (unified addressing), zeroed;
/// freed on drop.
pub struct PinnedHost {
    pub ptr: *mut u8,
}

// SAFETY: a plain allocation; who touches it when is its users' business (atomics).
unsafe impl Send for PinnedHost {}
// SAFETY: as for Send: shared access is through atomics or the users' own ordering.
unsafe impl Sync for PinnedHost {}

impl PinnedHost {
    pub fn alloc(bytes: usize) -> CuResult<PinnedHost> {
        let mut p: *mut c_void = std::ptr::null_mut();
        cu!(driver()?, cuMemHostAlloc(&mut p, bytes.max(64), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP))?;
        // SAFETY: the driver just allocated at least `bytes` writable bytes at p.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes.max(64)) };
        Ok(PinnedHost { ptr: p.cast() })
    }
}

impl Drop for PinnedHost {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuMemFreeHost(self.ptr.cast()));
        }
    }
}

/// Existing host memory page-locked for the driver (cuMemHostRegister), so copies between it
/// and the GPU are DMA on the stream rather than staged by the driver; unregistered on drop.
pub struct HostRegistration {
    ptr: *mut u8,
}

// SAFETY: only the address is kept (for the unregistration); the memory is its owner's.
unsafe impl Send for HostRegistration {}
// SAFETY: as for Send.
unsafe impl Sync for HostRegistration {}

impl HostRegistration {
    /// Registers `bytes` at `ptr` (page-aligned by the caller or not: the driver pins the pages
    /// the range touches).
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must stay mapped until the registration is dropped.
    pub unsafe fn new(ptr: *mut u8, bytes: usize) -> CuResult<HostRegistration> {
        cu!(driver()?, cuMemHostRegister(ptr.cast(), bytes, CU_MEMHOSTREGISTER_PORTABLE))?;
        Ok(HostRegistration { ptr })
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuMemHostUnregister(self.ptr.cast()));
        }
    }
}

/// Device memory of the current context, zeroed; freed on drop.
pub struct DeviceMem {
    pub ptr: CUdeviceptr,
}

impl DeviceMem {
    pub(crate) fn alloc(bytes: usize, stream: CUstream) -> CuResult<DeviceMem> {
        let d = driver()?;
        let mut p: CUdeviceptr = 0;
        cu!(d, cuMemAlloc(&mut p, bytes.max(64)))?;
        let m = DeviceMem { ptr: p };
        // SAFETY: p..p+bytes is the allocation just made.
        unsafe { memset_async(p, 0, bytes.max(64), stream)? };
        stream_synchronize(stream)?;
        Ok(m)
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        if let Ok(d) = driver() {
            let _ = cu!(d, cuMemFree(self.ptr));
        }
    }
}

/// Enqueues a copy of `bytes` from `src` to `dst` (any unified addresses: host or device).
///
/// # Safety
/// Both ranges must be valid for the copy until it completes on `stream`, a live stream of
/// the current context.
pub unsafe fn memcpy_async(dst: u64, src: u64, bytes: usize, stream: CUstream) -> CuResult<()> {
    cu!(driver()?, cuMemcpyAsync(dst, src, bytes, stream))
}

/// Whether the driver knows `ptr` (device, managed or registered host memory: a unified
/// address); false for ordinary (pageable) host memory.
pub fn is_cuda_pointer(ptr: u64) -> CuResult<bool> {
    let d = driver()?;
    let mut kind: c_uint = 0;
    // SAFETY: the driver writes one CUmemorytype (an unsigned int) into `kind`.
    let rc = unsafe { (d.api.cuPointerGetAttribute)((&mut kind as *mut c_uint).cast(), CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr) };
    Ok(rc == CUDA_SUCCESS)
}

/// Enqueues a strided copy of `rows` elements of `width` bytes: element i from `src + i *
/// src_pitch` to `dst + i * dst_pitch` (pitches in bytes, at least `width`). A pointer the
/// driver does not know is ordinary host memory (the copy of it then completes before return).
///
/// # Safety
/// Every element range must be valid for the copy until it completes on `stream`.
pub unsafe fn memcpy_strided_async(
    dst: u64,
    dst_pitch: usize,
    src: u64,
    src_pitch: usize,
    width: usize,
    rows: usize,
    stream: CUstream,
) -> CuResult<()> {
    let d = driver()?;
    let kind = |p: u64| -> CuResult<c_uint> { Ok(if is_cuda_pointer(p)? { CU_MEMORYTYPE_UNIFIED } else { CU_MEMORYTYPE_HOST }) };
    // SAFETY: CUDA_MEMCPY2D holds only integers and raw pointers, for which all-zero bits are
    // valid (offsets 0, no CUDA arrays); the fields that matter are set below.
    let mut p: CUDA_MEMCPY2D = unsafe { std::mem::zeroed() };
    (p.srcMemoryType, p.srcHost, p.srcDevice, p.srcPitch) = (kind(src)?, src as *const c_void, src, src_pitch);
    (p.dstMemoryType, p.dstHost, p.dstDevice, p.dstPitch) = (kind(dst)?, dst as *mut c_void, dst, dst_pitch);
    (p.WidthInBytes, p.Height) = (width, rows);
    cu!(d, cuMemcpy2DAsync(&p, stream))
}

/// Device memory allocated in stream order (freed with `free_async` on the same stream).
///
/// # Safety
/// `stream` must be a live stream of the current context.
pub unsafe fn alloc_async(bytes: usize, stream: CUstream) -> CuResult<u64> {
    let mut p: CUdeviceptr = 0;
    cu!(driver()?, cuMemAllocAsync(&mut p, bytes, stream))?;
    Ok(p)
}

/// # Safety
/// `p` must come from `alloc_async` and be used by no work enqueued after this on `stream`.
pub unsafe fn free_async(p: u64, stream: CUstream) -> CuResult<()> {
    cu!(driver()?, cuMemFreeAsync(p, stream))
}

/// Enqueues a fill of `bytes` at `dst` with `value`.
///
/// # Safety
/// `dst..dst+bytes` must be device memory valid until the fill completes on `stream`.
pub unsafe fn memset_async(dst: u64, value: u8, bytes: usize, stream: CUstream) -> CuResult<()> {
    cu!(driver()?, cuMemsetD8Async(dst, value, bytes, stream))
}

pub(crate) fn stream_synchronize(stream: CUstream) -> CuResult<()> {
    cu!(driver()?, cuStreamSynchronize(stream))
}

/// Whether the driver loads kernels lazily, at their first launch (CUDA_MODULE_LOADING=LAZY,
/// the default since CUDA 12.2); None when the driver cannot say.
pub fn lazy_loading() -> Option<bool> {
    const CU_MODULE_LAZY_LOADING: c_int = 2;
    let f = driver().ok()?.api.cuModuleGetLoadingMode?;
    let mut mode: c_int = 0;
    // SAFETY: `mode` is a live out-parameter.
    (unsafe { f(&mut mode) } == CUDA_SUCCESS).then_some(mode == CU_MODULE_LAZY_LOADING)
}

/// Whether everything enqueued on `stream` has finished (cuStreamQuery).
pub(crate) fn stream_idle(stream: CUstream) -> CuResult<bool> {
    const CUDA_ERROR_NOT_READY: CUresult = 600;
    match cu!(driver()?, cuStreamQuery(stream)) {
        Ok(()) => Ok(true),
        Err(e) if e.code == CUDA_ERROR_NOT_READY => Ok(false),
        Err(e) => Err(e),
    }
}

/// Enqueues an 8-byte store of `value` to `addr` (ordered after earlier work on the stream).
///
/// # Safety
/// `addr` must be an 8-byte aligned device word the store may overwrite.
pub unsafe fn stream_write_u64(stream: CUstream, addr: u64, value: u64) -> CuResult<()> {
    cu!(driver()?, cuStreamWriteValue64(stream, addr, value, CU_STREAM_WRITE_VALUE_DEFAULT))
}

/// Enqueues a wait until the 8-byte word at `addr` is at least `value`.
///
/// # Safety
/// `addr` must be a device word that stays mapped while the stream waits on it.
pub unsafe fn stream_wait_u64_geq(stream: CUstream, addr: u64, value: u64) -> CuResult<()> {
    cu!(driver()?, cuStreamWaitValue64(stream, addr, value, CU_STREAM_WAIT_VALUE_GEQ))
}

/// Address and size of a global (e.g. `__constant__`) variable of a loaded module, if present.
/// `module` is an opaque driver handle: it is passed to the driver, never dereferenced here.
pub(crate) fn module_global(module: CUmodule, name: &CStr) -> CuResult<Option<(u64, usize)>> {
    global(|d, ptr, size| cu!(d, cuModuleGetGlobal(ptr, size, module, name.as_ptr())))
}

/// The same for a library loaded with cuLibraryLoad* (in the current context).
pub(crate) fn library_global(library: CUlibrary, name: &CStr) -> CuResult<Option<(u64, usize)>> {
    global(|d, ptr, size| cu!(d, cuLibraryGetGlobal(ptr, size, library, name.as_ptr())))
}

/// Runs a `cu*GetGlobal` call that fills in an address and a size: `None` when the driver
/// answers CUDA_ERROR_NOT_FOUND (no such variable).
fn global(get: impl FnOnce(&Driver, &mut u64, &mut usize) -> CuResult<()>) -> CuResult<Option<(u64, usize)>> {
    let (mut ptr, mut size) = (0u64, 0usize);
    match get(driver()?, &mut ptr, &mut size) {
        Ok(()) => Ok(Some((ptr, size))),
        Err(e) if e.code == CUDA_ERROR_NOT_FOUND => Ok(None),
        Err(e) => Err(e),
    }
}

/// Tests: assembles the PTX file `path` for Hopper with ptxas where one is installed (CI:
/// scripts/install-nvcc.sh); None without one, else ptxas's complaint if it refused.
#[cfg(test)]
pub(crate) fn ptxas_for_hopper(path: &str) -> Option<std::result::Result<(), String>> {
    use std::process::Command;
    let candidates = ["ptxas", "/usr/local/cuda/bin/ptxas", "/opt/cuda13/lib/python3.11/site-packages/nvidia/cu13/bin/ptxas"];
    let ptxas = candidates.iter().find(|p| Command::new(p).arg("--version").output().is_ok())?;
    let r = Command::new(ptxas).args(["-arch=sm_90", path, "-o", "/dev/null"]).output().unwrap();
    Some(if r.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&r.stderr).into_owned()) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        // On machines without a GPU driver this must be a plain error naming libcuda; with a
        // driver it must load. Either way nothing panics.
        match super::driver() {
            Ok(d) => assert!(d.version > 0),
            Err(e) => assert!(e.text.contains("libcuda.so.1") || e.text.contains("cuInit"), "{e}"),
        }
    }
}
