//! Items whose layout or values C code depends on. cbindgen turns this module into
//! include/rshmem/rshmem_abi.h (committed; CI fails when regenerating it changes it).

/// Major version of the library ABI (the SONAME is librshmem.so.<major>).
pub const RSHMEM_VERSION_MAJOR: u32 = 0;
pub const RSHMEM_VERSION_MINOR: u32 = 1;
pub const RSHMEM_VERSION_PATCH: u32 = 0;

/// Status codes returned by routines that return a status (NVSHMEMX_* values where NVSHMEM has
/// one). OpenSHMEM routines that return void report errors by message and global exit instead.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RshmemStatus {
    Success = 0,
    ErrorInvalidValue = 1,
    ErrorNotInitialized = 2,
    ErrorInvalidArgument = 3,
    ErrorOutOfMemory = 4,
    ErrorNotSupported = 5,
    ErrorSymmetry = 6,
    ErrorInternal = 7,
}
