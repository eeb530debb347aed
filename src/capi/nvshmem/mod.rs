//! NVSHMEM's host API (GPU mode): C entry points with NVSHMEM's names and signatures, as thin
//! as the OpenSHMEM ones. The logic is in runtime/gpu.rs; the device API is header-only
//! (device/), reached through include/nvshmem.h under nvcc.

// C entry points take pointers from C callers; each dereference checks for NULL and carries a
// SAFETY comment (marking the functions `unsafe` would change nothing for C).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod amo;
pub mod memory;
pub mod module;
pub mod rma;
pub mod setup;
pub mod stream;

/// NVSHMEM release whose API this library follows (reported by nvshmemx_vendor_get_version_info).
pub const NVSHMEM_API_MAJOR: i32 = 3;
pub const NVSHMEM_API_MINOR: i32 = 4;
pub const NVSHMEM_API_PATCH: i32 = 5;

/// Predefined team handles (NVSHMEM's values).
pub const TEAM_WORLD: i32 = 0;
pub const TEAM_SHARED: i32 = 1;
pub const TEAM_NODE: i32 = 2;
pub const TEAM_SAME_MYPE_NODE: i32 = 3;
