//! Point-to-point synchronization (OpenSHMEM 1.5 §9.10): wait_until and test with their
//! all/any/some and _vector families for Table 9, and the deprecated shmem_wait forms.
//!
//! `status` (optional, may be NULL) excludes element i when status[i] is non-zero. An empty set
//! makes _any return SIZE_MAX, _some return 0, and _all return at once (test_all returns 1).
//! Every wait goes through `State::wait_for`: it yields the core and honours shmem_global_exit.

use std::ffi::{c_int, c_long, c_longlong, c_short};

use crate::runtime::amo::Against;

/// Defines the C routine `shmem_<stem>` (no PE argument); the body sees `$st` and the C name `$r`.
macro_rules! sync_entry {
    ([$($stem:tt)*] $f:ident ($($arg:ident : $aty:ty),*) -> $ret:ty => |$st:ident, $r:ident| $body:expr) => {
        #[export_name = concat!("shmem_", $($stem)*)]
        #[allow(clippy::unused_unit)]
        pub extern "C" fn $f($($arg: $aty),*) -> $ret {
            $crate::capi::ffi_boundary!(concat!("shmem_", $($stem)*), |$st| {
                let $r = ROUTINE;
                $body
            })
        }
    };
}

macro_rules! sync_routines {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
            use super::*;
            use std::ffi::c_int;

            sync_entry!([stringify!($tn), "_wait_until"] wait_until (ivar: *mut $t, cmp: c_int, cmp_value: $t) -> ()
                => |st, r| st.wait_until(ivar.cast_const(), cmp, cmp_value, r).map(drop));
            sync_entry!([stringify!($tn), "_wait_until_all"] wait_until_all
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: $t) -> ()
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Value(cmp_value), r)?.wait_all(st)));
            sync_entry!([stringify!($tn), "_wait_until_any"] wait_until_any
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: $t) -> usize
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Value(cmp_value), r)?.wait_any(st).unwrap_or(usize::MAX)));
            sync_entry!([stringify!($tn), "_wait_until_some"] wait_until_some
                (ivars: *mut $t, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, cmp_value: $t) -> usize
                => |st, r| st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Value(cmp_value), r)?.wait_some(st, indices));
            sync_entry!([stringify!($tn), "_wait_until_all_vector"] wait_until_all_vector
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *mut $t) -> ()
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Values(cmp_values.cast_const()), r)?.wait_all(st)));
            sync_entry!([stringify!($tn), "_wait_until_any_vector"] wait_until_any_vector
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *mut $t) -> usize
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Values(cmp_values.cast_const()), r)?.wait_any(st).unwrap_or(usize::MAX)));
            sync_entry!([stringify!($tn), "_wait_until_some_vector"] wait_until_some_vector
                (ivars: *mut $t, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, cmp_values: *mut $t) -> usize
                => |st, r| st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Values(cmp_values.cast_const()), r)?.wait_some(st, indices));

            sync_entry!([stringify!($tn), "_test"] test (ivar: *mut $t, cmp: c_int, cmp_value: $t) -> c_int
                => |st, _r| Ok(st.test(ivar.cast_const(), cmp, cmp_value)? as c_int));
            sync_entry!([stringify!($tn), "_test_all"] test_all
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: $t) -> c_int
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Value(cmp_value), r)?.test_all() as c_int));
            sync_entry!([stringify!($tn), "_test_any"] test_any
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: $t) -> usize
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Value(cmp_value), r)?.test_any().unwrap_or(usize::MAX)));
            sync_entry!([stringify!($tn), "_test_some"] test_some
                (ivars: *mut $t, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, cmp_value: $t) -> usize
                => |st, r| st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Value(cmp_value), r)?.test_some(indices));
            sync_entry!([stringify!($tn), "_test_all_vector"] test_all_vector
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *mut $t) -> c_int
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Values(cmp_values.cast_const()), r)?.test_all() as c_int));
            sync_entry!([stringify!($tn), "_test_any_vector"] test_any_vector
                (ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *mut $t) -> usize
                => |st, r| Ok(st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Values(cmp_values.cast_const()), r)?.test_any().unwrap_or(usize::MAX)));
            sync_entry!([stringify!($tn), "_test_some_vector"] test_some_vector
                (ivars: *mut $t, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, cmp_values: *mut $t) -> usize
                => |st, r| st.wait_set(ivars.cast_const(), nelems, status, cmp, Against::Values(cmp_values.cast_const()), r)?.test_some(indices));
        }
    )*};
}

mod typed {
    use super::*;
    crate::sync_types!(sync_routines);
}

/// SHMEM_CMP_NE: the deprecated shmem_wait forms wait for the value to differ.
const CMP_NE: c_int = 1;

// Deprecated (OpenSHMEM 1.3): shmem_wait, shmem_wait_until on long, shmem_TYPENAME_wait.
sync_entry!(["wait"] shmem_wait (ivar: *mut c_long, cmp_value: c_long) -> ()
    => |st, r| st.wait_until(ivar.cast_const(), CMP_NE, cmp_value, r).map(drop));
sync_entry!(["wait_until"] shmem_wait_until (ivar: *mut c_long, cmp: c_int, cmp_value: c_long) -> ()
    => |st, r| st.wait_until(ivar.cast_const(), cmp, cmp_value, r).map(drop));
sync_entry!(["short_wait"] shmem_short_wait (ivar: *mut c_short, cmp_value: c_short) -> ()
    => |st, r| st.wait_until(ivar.cast_const(), CMP_NE, cmp_value, r).map(drop));
sync_entry!(["int_wait"] shmem_int_wait (ivar: *mut c_int, cmp_value: c_int) -> ()
    => |st, r| st.wait_until(ivar.cast_const(), CMP_NE, cmp_value, r).map(drop));
sync_entry!(["long_wait"] shmem_long_wait (ivar: *mut c_long, cmp_value: c_long) -> ()
    => |st, r| st.wait_until(ivar.cast_const(), CMP_NE, cmp_value, r).map(drop));
sync_entry!(["longlong_wait"] shmem_longlong_wait (ivar: *mut c_longlong, cmp_value: c_longlong) -> ()
    => |st, r| st.wait_until(ivar.cast_const(), CMP_NE, cmp_value, r).map(drop));
