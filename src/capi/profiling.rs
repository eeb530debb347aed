//! The OpenSHMEM profiling interface (OpenSHMEM 1.5 §10). Every shmem_/shmemx_ routine also has
//! its pshmem_/pshmemx_ name: src/capi/pshmem.ld (generated with include/pshmem.h by
//! scripts/gen_headers.py) defines each as an alias at link time, and src/capi/librshmem.map
//! exports them. A profiling library loaded before librshmem (LD_PRELOAD or linked first)
//! defines shmem_NAME, which the dynamic linker then binds the program's calls to, and reaches
//! rshmem's code through pshmem_NAME. rshmem's own shmem_NAME symbols are strong (Rust has no weak
//! definitions); that only matters to static linking, and rshmem ships a shared library only.

use std::ffi::c_int;

/// `void shmem_pcontrol(const int level, ...)`: a hint for a profiling library; rshmem itself
/// has nothing to switch. Defined without the variadic part (stable Rust cannot define one):
/// on the x86-64 and AArch64 Linux ABIs a variadic call reaches such a function unchanged
/// (the first argument is in the first integer register either way, the rest is ignored).
#[no_mangle]
pub extern "C" fn shmem_pcontrol(level: c_int) {
    let _ = level;
}
