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

/// `$init` registers a module or library loaded at run time (its device state is written at
/// once and at every nvshmem_init); `$finalize` forgets it and returns 0.
macro_rules! handle_routines {
    ($init:ident, $finalize:ident ($handle:ident: $ty:ty), $register:path, $unregister:path) => {
        #[no_mangle]
        pub extern "C" fn $init($handle: $ty) -> c_int {
            ffi_boundary!($init => Status, || $register($handle))
        }

        #[no_mangle]
        pub extern "C" fn $finalize($handle: $ty) -> c_int {
            $unregister($handle);
            0
        }
    };
}

handle_routines!(nvshmemx_cumodule_init, nvshmemx_cumodule_finalize(module: CUmodule), gpu::register_module, gpu::unregister_module);
handle_routines!(nvshmemx_culibrary_init, nvshmemx_culibrary_finalize(library: CUlibrary), gpu::register_library, gpu::unregister_library);
