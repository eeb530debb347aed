//! Library setup, exit and query routines (OpenSHMEM 1.5 §9.1), and the accessibility and
//! remote-pointer routines (§9.2–9.3).

use std::ffi::{c_char, c_int, c_void};

use super::{ffi_boundary, write_name, write_out};
use crate::runtime::{self, THREAD_SINGLE};

pub const SPEC_MAJOR: c_int = 1;
pub const SPEC_MINOR: c_int = 5;
/// shmem_info_get_name's buffer size (SHMEM_MAX_NAME_LEN).
pub const MAX_NAME_LEN: usize = 256;

/// What shmem_info_get_name returns: the header's SHMEM_VENDOR_STRING, as the specification
/// wants (scripts/gen_headers.py writes the same string; ctest/host/vendor_info.c compares).
pub const VENDOR: &str = "rshmem";

/// Like shmem_init_thread(SHMEM_THREAD_SINGLE): programs that call into the library from
/// several threads at once ask for SHMEM_THREAD_MULTIPLE with shmem_init_thread.
#[no_mangle]
pub extern "C" fn shmem_init() {
    ffi_boundary!(shmem_init, || runtime::init(THREAD_SINGLE).map(|_| ()))
}

#[no_mangle]
pub extern "C" fn shmem_init_thread(requested: c_int, provided: *mut c_int) -> c_int {
    ffi_boundary!(shmem_init_thread, || {
        let st = runtime::init(requested)?;
        write_out(provided, st.thread_level);
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn shmem_query_thread(provided: *mut c_int) {
    ffi_boundary!(shmem_query_thread, |st| {
        write_out(provided, st.thread_level);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn shmem_finalize() {
    ffi_boundary!(shmem_finalize, || runtime::finalize())
}

#[no_mangle]
pub extern "C" fn shmem_global_exit(status: c_int) {
    match runtime::state() {
        Ok(st) => st.global_exit(status),
        Err(_) => crate::sys::process::exit_now(status),
    }
}

super::pe_queries!(shmem_my_pe, shmem_n_pes);

#[no_mangle]
pub extern "C" fn shmem_pe_accessible(pe: c_int) -> c_int {
    ffi_boundary!(shmem_pe_accessible, |st| Ok((pe >= 0 && (pe as usize) < st.npes) as c_int))
}

#[no_mangle]
pub extern "C" fn shmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int {
    ffi_boundary!(shmem_addr_accessible, |st| {
        let ok = pe >= 0 && (pe as usize) < st.npes && st.translate(addr.cast(), 1, pe as usize).is_ok();
        Ok(ok as c_int)
    })
}

/// Every PE on this host is load/store accessible, so this returns the mapped address.
#[no_mangle]
pub extern "C" fn shmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    ffi_boundary!(shmem_ptr, |st| {
        let pe = st.check_pe(pe)?;
        if st.network_pe(pe as i32).is_some() {
            return Ok(std::ptr::null_mut()); // memory on another host: no load/store access
        }
        Ok(st.translate(dest.cast(), 1, pe).map(|p| p.cast()).unwrap_or(std::ptr::null_mut()))
    })
}

#[no_mangle]
pub extern "C" fn shmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    ffi_boundary!(shmem_info_get_version, || {
        write_out(major, SPEC_MAJOR);
        write_out(minor, SPEC_MINOR);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn shmem_info_get_name(name: *mut c_char) {
    ffi_boundary!(shmem_info_get_name, || {
        write_name(name, VENDOR);
        Ok(())
    })
}

// Deprecated forms that old programs still call.

#[no_mangle]
pub extern "C" fn start_pes(_npes: c_int) {
    shmem_init()
}

#[no_mangle]
pub extern "C" fn _my_pe() -> c_int {
    shmem_my_pe()
}

#[no_mangle]
pub extern "C" fn _num_pes() -> c_int {
    shmem_n_pes()
}

// The pre-OpenSHMEM (SGI/Cray) names that Open MPI's shmem-compat.h still declares.

#[no_mangle]
pub extern "C" fn my_pe() -> c_int {
    shmem_my_pe()
}

#[no_mangle]
pub extern "C" fn num_pes() -> c_int {
    shmem_n_pes()
}

#[no_mangle]
pub extern "C" fn globalexit(status: c_int) {
    shmem_global_exit(status)
}

/// rshmem extension (shmemx.h): seconds on a monotonic clock, for timing intervals.
#[no_mangle]
pub extern "C" fn shmemx_wtime() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}
