//! Raw CUDA driver API: the handful of types, constants and entry points rshmem uses, resolved
//! at run time from `libcuda.so.1` (see `super` for why we load it ourselves). Values and
//! layouts are those of CUDA 13's `cuda.h`; every struct here has a size assertion below.

#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type CUresult = c_int;
pub type CUdevice = c_int;
pub type CUcontext = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUdeviceptr = u64;
pub type CUmemGenericAllocationHandle = u64;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;

// CUdevice_attribute
pub const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
pub const CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: c_int = 41;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
pub const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
pub const CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: c_int = 102;
pub const CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: c_int = 103;
pub const CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS: c_int = 122;

// CUdevice_P2PAttribute
pub const CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: c_int = 1;
pub const CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: c_int = 2;
pub const CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: c_int = 3;

// Virtual memory management
pub const CU_MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: c_int = 1;
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: c_int = 3;
pub const CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: c_int = 1;

// Page-locked host memory (cuMemHostAlloc, cuMemHostRegister) and dma-buf handles
pub const CU_MEMHOSTALLOC_PORTABLE: c_uint = 0x01;
pub const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 0x02;
pub const CU_MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
pub const CU_MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;
pub const CU_MEMHOSTREGISTER_IOMEMORY: c_uint = 0x04;
pub const CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD: c_int = 0x1;

// Stream memory operations
pub const CU_STREAM_WAIT_VALUE_GEQ: c_uint = 0;
pub const CU_STREAM_WRITE_VALUE_DEFAULT: c_uint = 0;
pub const CU_STREAM_NON_BLOCKING: c_uint = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUmemLocation {
    pub type_: c_int,
    pub id: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAllocationProp {
    pub type_: c_int,
    pub requestedHandleTypes: c_int,
    pub location: CUmemLocation,
    pub win32HandleMetaData: *mut c_void,
    /// compressionType, gpuDirectRDMACapable (u8 each), usage (u16), 4 reserved bytes.
    pub allocFlags: [u8; 8],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAccessDesc {
    pub location: CUmemLocation,
    pub flags: c_int,
}

// CUmemorytype, CUpointer_attribute
pub const CU_MEMORYTYPE_HOST: c_uint = 1;
pub const CU_MEMORYTYPE_UNIFIED: c_uint = 4;
pub const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;

/// A 2D copy: `Height` rows of `WidthInBytes`, rows `srcPitch`/`dstPitch` bytes apart.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY2D {
    pub srcXInBytes: usize,
    pub srcY: usize,
    pub srcMemoryType: c_uint,
    pub srcHost: *const c_void,
    pub srcDevice: CUdeviceptr,
    pub srcArray: *mut c_void,
    pub srcPitch: usize,
    pub dstXInBytes: usize,
    pub dstY: usize,
    pub dstMemoryType: c_uint,
    pub dstHost: *mut c_void,
    pub dstDevice: CUdeviceptr,
    pub dstArray: *mut c_void,
    pub dstPitch: usize,
    pub WidthInBytes: usize,
    pub Height: usize,
}

const _: () = assert!(std::mem::size_of::<CUDA_MEMCPY2D>() == 128);
const _: () = assert!(std::mem::size_of::<CUmemLocation>() == 8);
const _: () = assert!(std::mem::size_of::<CUmemAllocationProp>() == 32);
const _: () = assert!(std::mem::size_of::<CUmemAccessDesc>() == 12);

/// Declares the entry-point table: each field is resolved by its exported symbol name (the
/// versioned `_v2` names where `cuda.h` maps the plain name onto one). Entry points under
/// `optional` are `None` on drivers that lack them; every other one must be there.
macro_rules! entry_points {
    (required { $( $field:ident = $sym:literal ( $($arg:ty),* ) ; )* }
     optional { $( $ofield:ident = $osym:literal ( $($oarg:ty),* ) ; )* }) => {
        pub struct Api {
            $( pub $field: unsafe extern "C" fn($($arg),*) -> CUresult, )*
            $( pub $ofield: Option<unsafe extern "C" fn($($oarg),*) -> CUresult>, )*
        }

        impl Api {
            /// Resolves every entry point in `lib`, or names the first one that is missing.
            ///
            /// # Safety
            /// `lib` must be a live handle from `dlopen` of the CUDA driver library, and stay
            /// open for as long as the returned table is used.
            pub unsafe fn resolve(lib: *mut c_void) -> Result<Api, String> {
                Ok(Api {
                    $( $field: {
                        let p = libc::dlsym(lib, concat!($sym, "\0").as_ptr().cast());
                        if p.is_null() {
                            return Err(format!("the CUDA driver has no entry point {} (driver too old?)", $sym));
                        }
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CUresult>(p)
                    }, )*
                    $( $ofield: {
                        let p = libc::dlsym(lib, concat!($osym, "\0").as_ptr().cast());
                        (!p.is_null()).then(|| std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($oarg),*) -> CUresult>(p))
                    }, )*
                })
            }
        }
    };
}

entry_points! {
    required {
        cuInit = "cuInit"(c_uint);
        cuDriverGetVersion = "cuDriverGetVersion"(*mut c_int);
        cuGetErrorName = "cuGetErrorName"(CUresult, *mut *const c_char);
        cuGetErrorString = "cuGetErrorString"(CUresult, *mut *const c_char);
        cuDeviceGetCount = "cuDeviceGetCount"(*mut c_int);
        cuDeviceGet = "cuDeviceGet"(*mut CUdevice, c_int);
        cuDeviceGetName = "cuDeviceGetName"(*mut c_char, c_int, CUdevice);
        cuDeviceGetAttribute = "cuDeviceGetAttribute"(*mut c_int, c_int, CUdevice);
        cuDeviceGetPCIBusId = "cuDeviceGetPCIBusId"(*mut c_char, c_int, CUdevice);
        cuDeviceGetP2PAttribute = "cuDeviceGetP2PAttribute"(*mut c_int, c_int, CUdevice, CUdevice);
        cuDeviceCanAccessPeer = "cuDeviceCanAccessPeer"(*mut c_int, CUdevice, CUdevice);
        cuDeviceTotalMem = "cuDeviceTotalMem_v2"(*mut usize, CUdevice);
        cuDevicePrimaryCtxRetain = "cuDevicePrimaryCtxRetain"(*mut CUcontext, CUdevice);
        cuDevicePrimaryCtxRelease = "cuDevicePrimaryCtxRelease_v2"(CUdevice);
        cuCtxGetCurrent = "cuCtxGetCurrent"(*mut CUcontext);
        cuCtxSetCurrent = "cuCtxSetCurrent"(CUcontext);
        cuCtxGetDevice = "cuCtxGetDevice"(*mut CUdevice);
        cuCtxSynchronize = "cuCtxSynchronize"();
        cuMemGetInfo = "cuMemGetInfo_v2"(*mut usize, *mut usize);
        cuMemGetAllocationGranularity = "cuMemGetAllocationGranularity"(*mut usize, *const CUmemAllocationProp, c_int);
        cuMemAddressReserve = "cuMemAddressReserve"(*mut CUdeviceptr, usize, usize, CUdeviceptr, u64);
        cuMemAddressFree = "cuMemAddressFree"(CUdeviceptr, usize);
        cuMemCreate = "cuMemCreate"(*mut CUmemGenericAllocationHandle, usize, *const CUmemAllocationProp, u64);
        cuMemRelease = "cuMemRelease"(CUmemGenericAllocationHandle);
        cuMemMap = "cuMemMap"(CUdeviceptr, usize, usize, CUmemGenericAllocationHandle, u64);
        cuMemUnmap = "cuMemUnmap"(CUdeviceptr, usize);
        cuMemSetAccess = "cuMemSetAccess"(CUdeviceptr, usize, *const CUmemAccessDesc, usize);
        cuMemExportToShareableHandle = "cuMemExportToShareableHandle"(*mut c_void, CUmemGenericAllocationHandle, c_int, u64);
        cuMemImportFromShareableHandle = "cuMemImportFromShareableHandle"(*mut CUmemGenericAllocationHandle, *mut c_void, c_int);
        cuMemRetainAllocationHandle = "cuMemRetainAllocationHandle"(*mut CUmemGenericAllocationHandle, *mut c_void);
        cuMemcpyAsync = "cuMemcpyAsync"(CUdeviceptr, CUdeviceptr, usize, CUstream);
        cuMemHostAlloc = "cuMemHostAlloc"(*mut *mut c_void, usize, c_uint);
        cuMemFreeHost = "cuMemFreeHost"(*mut c_void);
        cuMemHostGetDevicePointer = "cuMemHostGetDevicePointer_v2"(*mut CUdeviceptr, *mut c_void, c_uint);
        cuMemHostRegister = "cuMemHostRegister_v2"(*mut c_void, usize, c_uint);
        cuMemHostUnregister = "cuMemHostUnregister"(*mut c_void);
        cuMemAlloc = "cuMemAlloc_v2"(*mut CUdeviceptr, usize);
        cuMemFree = "cuMemFree_v2"(CUdeviceptr);
        cuMemsetD8Async = "cuMemsetD8Async"(CUdeviceptr, u8, usize, CUstream);
        cuMemcpy2DAsync = "cuMemcpy2DAsync_v2"(*const CUDA_MEMCPY2D, CUstream);
        cuMemAllocAsync = "cuMemAllocAsync"(*mut CUdeviceptr, usize, CUstream);
        cuMemFreeAsync = "cuMemFreeAsync"(CUdeviceptr, CUstream);
        cuPointerGetAttribute = "cuPointerGetAttribute"(*mut c_void, c_int, CUdeviceptr);
        cuStreamCreate = "cuStreamCreate"(*mut CUstream, c_uint);
        cuStreamCreateWithPriority = "cuStreamCreateWithPriority"(*mut CUstream, c_uint, c_int);
        cuCtxGetStreamPriorityRange = "cuCtxGetStreamPriorityRange"(*mut c_int, *mut c_int);
        cuStreamDestroy = "cuStreamDestroy_v2"(CUstream);
        cuStreamSynchronize = "cuStreamSynchronize"(CUstream);
        cuStreamQuery = "cuStreamQuery"(CUstream);
        cuStreamWriteValue64 = "cuStreamWriteValue64_v2"(CUstream, CUdeviceptr, u64, c_uint);
        cuStreamWaitValue64 = "cuStreamWaitValue64_v2"(CUstream, CUdeviceptr, u64, c_uint);
        cuModuleGetGlobal = "cuModuleGetGlobal_v2"(*mut CUdeviceptr, *mut usize, CUmodule, *const c_char);
        cuLibraryGetGlobal = "cuLibraryGetGlobal"(*mut CUdeviceptr, *mut usize, CUlibrary, *const c_char);
        cuModuleLoadData = "cuModuleLoadData"(*mut CUmodule, *const c_void);
        cuModuleUnload = "cuModuleUnload"(CUmodule);
        cuModuleGetFunction = "cuModuleGetFunction"(*mut CUfunction, CUmodule, *const c_char);
        cuLaunchKernel = "cuLaunchKernel"(CUfunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CUstream, *mut *mut c_void, *mut *mut c_void);
    }
    optional {
        // CUDA 11.7+ (dma-buf handles of device memory for the NIC; IBGDA on hardware).
        cuMemGetHandleForAddressRange = "cuMemGetHandleForAddressRange"(*mut c_void, CUdeviceptr, usize, c_int, u64);
        // CUDA 11.7+ (whether kernels load lazily, at their first launch).
        cuModuleGetLoadingMode = "cuModuleGetLoadingMode"(*mut c_int);
    }
}
