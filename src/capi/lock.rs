//! Distributed locking (OpenSHMEM 1.5 §9.11) and the deprecated cache-management routines.
//!
//! The lock is a fair ticket lock kept in PE 0's copy of the user's symmetric `long` (which the
//! program initialises to 0); see `runtime::amo`. shmem_clear_lock completes this PE's puts and
//! AMOs (quiet) before it releases.

use std::ffi::{c_int, c_long, c_void};

use super::ffi_boundary;

#[no_mangle]
pub extern "C" fn shmem_set_lock(lock: *mut c_long) {
    ffi_boundary!(shmem_set_lock, |st| st.set_lock(lock.cast_const(), ROUTINE))
}

#[no_mangle]
pub extern "C" fn shmem_clear_lock(lock: *mut c_long) {
    ffi_boundary!(shmem_clear_lock, |st| st.clear_lock(lock.cast_const()))
}

/// Returns 0 when this call took the lock, 1 when it was already held.
#[no_mangle]
pub extern "C" fn shmem_test_lock(lock: *mut c_long) -> c_int {
    ffi_boundary!(shmem_test_lock, |st| Ok(if st.test_lock(lock.cast_const())? { 0 } else { 1 }))
}

// Deprecated cache routines (OpenSHMEM 1.3 §9.11, removed later). The heaps are ordinary
// cache-coherent shared memory, so there is nothing to flush or invalidate: each is a no-op, as
// the specification allows on coherent systems.

/// Each `name(args);` becomes an exported routine that does nothing and succeeds.
macro_rules! no_op_routines {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) {
            ffi_boundary!($name, || Ok(()))
        }
    )*};
}

no_op_routines! {
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(_dest: *mut c_void);
    shmem_set_cache_line_inv(_dest: *mut c_void);
    shmem_udcflush();
    shmem_udcflush_line(_dest: *mut c_void);
}
