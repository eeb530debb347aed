//! NVSHMEM's host API (GPU mode): C entry points with NVSHMEM's names and signatures, as thin
//! as the OpenSHMEM ones. The logic is in runtime/gpu.rs; the device API is header-only
//! (device/), reached through include/nvshmem.h under nvcc.

// C entry points take pointers from C callers; each dereference checks for NULL and carries a
// SAFETY comment (marking the functions `unsafe` would change nothing for C).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

/// NVSHMEM's standard RMA types (its table adds half and bfloat16, moved as 16-bit words).
macro_rules! nvshmem_rma_types {
    ($m:ident) => {
        $m! {
            half => u16, bfloat16 => u16, float => f32, double => f64, char => std::ffi::c_char, short => i16,
            schar => i8, int => i32, long => i64, longlong => i64, uchar => u8, ushort => u16, uint => u32,
            ulong => u64, ulonglong => u64, int8 => i8, int16 => i16, int32 => i32, int64 => i64,
            uint8 => u8, uint16 => u16, uint32 => u32, uint64 => u64, size => usize, ptrdiff => isize
        }
    };
}

/// NVSHMEM's point-to-point wait types (wait_until and friends).
macro_rules! nvshmem_wait_types {
    ($m:ident) => {
        $m! {
            short => i16, int => i32, long => i64, longlong => i64, ushort => u16, uint => u32, ulong => u64,
            ulonglong => u64, int32 => i32, int64 => i64, uint32 => u32, uint64 => u64, size => usize, ptrdiff => isize
        }
    };
}

pub mod amo;
pub mod coll;
pub mod memory;
pub mod module;
pub mod rma;
pub mod setup;
pub mod stream;
pub mod team;

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{Error, ErrorKind, Result};

/// NVSHMEM release whose API this library follows (reported by nvshmemx_vendor_get_version_info).
pub const NVSHMEM_API_MAJOR: i32 = 3;
pub const NVSHMEM_API_MINOR: i32 = 4;
pub const NVSHMEM_API_PATCH: i32 = 5;

/// NVSHMEM's status codes (nvshmemx_status): what NVSHMEM host routines that return a status
/// return. OpenSHMEM routines keep rshmem's own codes (src/abi RshmemStatus).
pub const NVSHMEMX_SUCCESS: c_int = 0;
pub const NVSHMEMX_ERROR_INVALID_VALUE: c_int = 1;
pub const NVSHMEMX_ERROR_OUT_OF_MEMORY: c_int = 2;
pub const NVSHMEMX_ERROR_NOT_SUPPORTED: c_int = 3;
pub const NVSHMEMX_ERROR_SYMMETRY: c_int = 4;
pub const NVSHMEMX_ERROR_GPU_NOT_SELECTED: c_int = 5;
pub const NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED: c_int = 6;
pub const NVSHMEMX_ERROR_INTERNAL: c_int = 7;

/// How errors that mean "no GPU can be used" begin (src/cuda and runtime/gpu.rs write them).
pub const NO_GPU: &str = "no usable GPU";

/// The NVSHMEM status for an error.
pub fn nv_code(e: &Error) -> c_int {
    match e.kind {
        ErrorKind::InvalidPe | ErrorKind::InvalidArgument | ErrorKind::NotMember | ErrorKind::NotInitialized => NVSHMEMX_ERROR_INVALID_VALUE,
        ErrorKind::OutOfMemory => NVSHMEMX_ERROR_OUT_OF_MEMORY,
        ErrorKind::Unsupported if e.message.contains(NO_GPU) => NVSHMEMX_ERROR_GPU_NOT_SELECTED,
        ErrorKind::Unsupported => NVSHMEMX_ERROR_NOT_SUPPORTED,
        ErrorKind::NotSymmetric => NVSHMEMX_ERROR_SYMMETRY,
        ErrorKind::Bootstrap | ErrorKind::System | ErrorKind::Internal => NVSHMEMX_ERROR_INTERNAL,
    }
}

/// For NVSHMEM routines that return a status: NVSHMEMX_SUCCESS, or after a warning naming the
/// routine, the error's NVSHMEMX_ERROR_* code.
#[inline]
pub fn nv_status(routine: &'static str, body: impl FnOnce() -> Result<()>) -> c_int {
    nv_status_of(routine, || body().map(|_| NVSHMEMX_SUCCESS))
}

/// Like `nv_status` for bodies that choose their own non-error return value.
pub fn nv_status_of(routine: &'static str, body: impl FnOnce() -> Result<c_int>) -> c_int {
    let err = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(rc)) => return rc,
        Ok(Err(e)) => e,
        Err(_) => Error::new(ErrorKind::Internal, routine, "internal error (please report): a panic in the library"),
    };
    crate::runtime::log::warn(&err.to_string());
    nv_code(&err)
}

/// Predefined team handles (NVSHMEM's values).
pub const TEAM_WORLD: i32 = 0;
pub const TEAM_SHARED: i32 = 1;
pub const TEAM_NODE: i32 = 2;


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_map_to_nvshmem_status_codes() {
        let e = |kind, msg: &str| nv_code(&Error::new(kind, "nvshmem_test", msg));
        assert_eq!(e(ErrorKind::InvalidArgument, "x"), NVSHMEMX_ERROR_INVALID_VALUE);
        assert_eq!(e(ErrorKind::NotMember, "x"), NVSHMEMX_ERROR_INVALID_VALUE);
        assert_eq!(e(ErrorKind::OutOfMemory, "x"), NVSHMEMX_ERROR_OUT_OF_MEMORY);
        assert_eq!(e(ErrorKind::Unsupported, "x"), NVSHMEMX_ERROR_NOT_SUPPORTED);
        assert_eq!(e(ErrorKind::Unsupported, "loading the CUDA driver: no usable GPU: ..."), NVSHMEMX_ERROR_GPU_NOT_SELECTED);
        assert_eq!(e(ErrorKind::NotSymmetric, "x"), NVSHMEMX_ERROR_SYMMETRY);
        assert_eq!(e(ErrorKind::System, "x"), NVSHMEMX_ERROR_INTERNAL);
        assert_eq!(nv_status("nvshmem_test", || Ok(())), NVSHMEMX_SUCCESS);
        assert_eq!(nv_status("nvshmem_test", || Err(Error::invalid("nvshmem_test", "bad"))), NVSHMEMX_ERROR_INVALID_VALUE);
    }
}
