//! Handing the device state to device code: per-translation-unit writers registered by the
//! device headers' static initializers, and modules/libraries loaded at run time.

use std::ffi::c_int;

use crate::capi::{ffi_boundary, Status};
use crate::cuda::{CUlibrary, CUmodule};
use crate::runtime::gpu::{self, StateWriter};

/// Called by every translation unit that includes the device headers (static initializer):
/// `writer` copies the state into that unit's `__constant__` copy. Called at once when the GPU
/// runtime is already up, and again at every nvshmem_init.
#[no_mangle]
pub extern "C" fn rshmem_device_state_register(writer: Option<StateWriter>) -> c_int {
    ffi_boundary!(rshmem_device_state_register => Status, || match writer {
        Some(w) => gpu::register_writer(w),
        None => Err(crate::error::Error::invalid_value("the writer is NULL")),
    })
}

/// The translation unit is going away (static destructor, dlclose).
#[no_mangle]
pub extern "C" fn rshmem_device_state_unregister(writer: Option<StateWriter>) {
    if let Some(w) = writer {
        gpu::unregister_writer(w);
    }
}

#[no_mangle]
pub extern "C" fn nvshmemx_cumodule_init(module: CUmodule) -> c_int {
    ffi_boundary!(nvshmemx_cumodule_init => Status, || gpu::register_module(module))
}

#[no_mangle]
pub extern "C" fn nvshmemx_cumodule_finalize(module: CUmodule) -> c_int {
    gpu::unregister_module(module);
    0
}

#[no_mangle]
pub extern "C" fn nvshmemx_culibrary_init(library: CUlibrary) -> c_int {
    ffi_boundary!(nvshmemx_culibrary_init => Status, || gpu::register_library(library))
}

#[no_mangle]
pub extern "C" fn nvshmemx_culibrary_finalize(library: CUlibrary) -> c_int {
    gpu::unregister_library(library);
    0
}
