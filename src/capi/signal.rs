//! Signaling operations (OpenSHMEM 1.5 §9.9): put-with-signal in every typed, sized and byte
//! form with its context and `_nbi` variants, `shmem_signal_fetch` and `shmem_signal_wait_until`.
//! The data is in place before the signal word changes (release ordering), and on shared memory
//! the `_nbi` forms are complete when they return.

use std::ffi::{c_int, c_void};
use std::mem::size_of;

use super::amo::entry;
use super::ffi_boundary;
use crate::runtime::rma::bytes;

/// Typed put-with-signal for Table 5 (standard RMA types).
macro_rules! typed_put_signal {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
            use super::*;
            entry!(pair [stringify!($tn), "_put_signal"] put_signal, ctx_put_signal
                (dest: *mut $t, source: *const $t, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int) -> ()
                => |st, pe| st.put_signal(dest.cast(), source.cast(), bytes(nelems, size_of::<$t>())?, sig_addr, signal, sig_op, pe));
            entry!(pair [stringify!($tn), "_put_signal_nbi"] put_signal_nbi, ctx_put_signal_nbi
                (dest: *mut $t, source: *const $t, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int) -> ()
                => |st, pe| st.put_signal(dest.cast(), source.cast(), bytes(nelems, size_of::<$t>())?, sig_addr, signal, sig_op, pe));
        }
    )*};
}

/// shmem_put<SIZE>_signal and shmem_putmem_signal: elements of `$size` bytes.
macro_rules! sized_put_signal {
    ($($m:ident : $name:literal => $size:literal),* $(,)?) => {$(
        pub mod $m {
            use super::*;
            entry!(pair [$name, "_signal"] put_signal, ctx_put_signal
                (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int) -> ()
                => |st, pe| st.put_signal(dest.cast(), source.cast(), bytes(nelems, $size)?, sig_addr, signal, sig_op, pe));
            entry!(pair [$name, "_signal_nbi"] put_signal_nbi, ctx_put_signal_nbi
                (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int) -> ()
                => |st, pe| st.put_signal(dest.cast(), source.cast(), bytes(nelems, $size)?, sig_addr, signal, sig_op, pe));
        }
    )*};
}

mod typed {
    use super::*;
    crate::rma_types!(typed_put_signal);
}

mod sized {
    use super::*;
    sized_put_signal! {
        put8: "put8" => 1, put16: "put16" => 2, put32: "put32" => 4, put64: "put64" => 8, put128: "put128" => 16,
        putmem: "putmem" => 1,
    }
}

/// Reads this PE's signal word atomically.
#[no_mangle]
pub extern "C" fn shmem_signal_fetch(sig_addr: *const u64) -> u64 {
    ffi_boundary!(shmem_signal_fetch, |st| Ok(st.word(sig_addr, st.me as c_int)?.fetch()))
}

/// Waits until this PE's signal word satisfies `cmp` against `cmp_value`; returns the value seen.
#[no_mangle]
pub extern "C" fn shmem_signal_wait_until(sig_addr: *mut u64, cmp: c_int, cmp_value: u64) -> u64 {
    ffi_boundary!(shmem_signal_wait_until, |st| st.wait_until(sig_addr.cast_const(), cmp, cmp_value, ROUTINE))
}
