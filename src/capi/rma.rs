//! Remote memory access routines (OpenSHMEM 1.5 §9.5).

use std::ffi::{c_int, c_void};

use super::with_state;

#[no_mangle]
pub extern "C" fn shmem_putmem(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
    with_state("shmem_putmem", |st| st.put_bytes(dest.cast(), source.cast(), nelems, pe, "shmem_putmem"))
}

#[no_mangle]
pub extern "C" fn shmem_getmem(dest: *mut c_void, source: *const c_void, nelems: usize, pe: c_int) {
    with_state("shmem_getmem", |st| st.get_bytes(dest.cast(), source.cast(), nelems, pe, "shmem_getmem"))
}
