//! NVSHMEM's host API (GPU mode): C entry points with NVSHMEM's names and signatures, as thin
//! as the OpenSHMEM ones. The logic is in runtime/gpu.rs; the device API is header-only
//! (device/), reached through include/nvshmem.h under nvcc.

// C entry points take a one-value out-parameter as Option<&mut T> (NULL is None, the same ABI
// as a pointer), so they write it without `unsafe`.

// The type lists (`nvshmem_rma_types!`, ...) are src/capi/type_tables.rs, generated.

pub mod amo;
pub mod coll;
pub mod memory;
pub mod module;
pub mod rma;
pub mod setup;
pub mod stream;
pub mod team;

use std::ffi::c_int;

use crate::abi::RshmemStatus;
#[cfg(test)]
use crate::error::{Error, ErrorKind};

/// NVSHMEM release whose API this library follows (reported by nvshmemx_vendor_get_version_info).
pub const NVSHMEM_API_MAJOR: i32 = 3;
pub const NVSHMEM_API_MINOR: i32 = 4;
pub const NVSHMEM_API_PATCH: i32 = 5;

/// NVSHMEMX_SUCCESS; error codes come from the one table, `ErrorKind::status` (src/error.rs).
pub const NVSHMEMX_SUCCESS: c_int = RshmemStatus::Success as c_int;

// Routines returning a status name the reaction: `ffi_boundary!(name => Status, ...)`.

/// Predefined team handles (NVSHMEM's values).
pub const TEAM_WORLD: i32 = 0;
pub const TEAM_SHARED: i32 = 1;
pub const TEAM_NODE: i32 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routines_return_the_kinds_code() {
        fn nv_status(body: impl FnOnce() -> crate::error::Result<()>) -> c_int {
            crate::capi::ffi_boundary!(nvshmem_test => crate::capi::Status, || body())
        }
        assert_eq!(nv_status(|| Ok(())), NVSHMEMX_SUCCESS);
        assert_eq!(nv_status(|| Err(Error::invalid_value("bad"))), 1);
        assert_eq!(nv_status(|| Err(Error::of(ErrorKind::OutOfMemory, "full"))), 2);
        assert_eq!(nv_status(|| panic!("boom")), 7);
        // What the code says is the kind, not the message's wording.
        assert_eq!(nv_status(|| Err(Error::of(ErrorKind::NoGpu, "the driver sees no device"))), 5);
        assert_eq!(nv_status(|| Err(Error::of(ErrorKind::Unsupported, "no usable GPU"))), 3);
    }
}
