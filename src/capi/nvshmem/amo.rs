//! Host-initiated atomics on GPU memory (blocking), through the one host path (`State::gpu_op`):
//! on a P2P peer one launch of the library's one-thread atomic kernel on the mapped word.

use std::ffi::c_int;

use crate::capi::ffi_boundary;
use crate::cuda::kernels::AmoOp;
use crate::error::Result;
use crate::runtime::gpu::host_rma::{HostOp, When};
use crate::runtime::State;

/// The value's bytes as the low bytes of a u64 (4- and 8-byte AMO types).
fn to_bits<T: Copy>(v: T) -> u64 {
    let mut x = 0u64;
    debug_assert!(std::mem::size_of::<T>() <= 8);
    // SAFETY: copies size_of::<T>() (4 or 8) bytes of a plain value into an 8-byte integer.
    unsafe { std::ptr::copy_nonoverlapping((&v as *const T).cast::<u8>(), (&mut x as *mut u64).cast::<u8>(), std::mem::size_of::<T>()) };
    x
}

fn from_bits<T: Copy + Default>(x: u64) -> T {
    let mut v = T::default();
    // SAFETY: the inverse of to_bits; every bit pattern is a valid value of the AMO types.
    unsafe { std::ptr::copy_nonoverlapping((&x as *const u64).cast::<u8>(), (&mut v as *mut T).cast::<u8>(), std::mem::size_of::<T>()) };
    v
}

fn amo<T: Copy + Default>(st: &State, dest: *const T, a: T, b: T, pe: c_int, op: AmoOp) -> Result<T> {
    let amo = HostOp::Amo { dest: dest.cast(), op, a: to_bits(a), b: to_bits(b), size: std::mem::size_of::<T>() };
    st.gpu_op(amo, pe, When::Now).map(from_bits::<T>)
}

macro_rules! standard {
    ($($name:ident => $t:ty),* $(,)?) => { $(
        pub mod $name {
            use super::*;
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_fetch_add")]
            pub extern "C" fn fetch_add(dest: *mut $t, value: $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_fetch_add"), |st| amo(st, dest, value, 0 as $t, pe, AmoOp::Add))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_add")]
            pub extern "C" fn add(dest: *mut $t, value: $t, pe: c_int) {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_add"), |st| amo(st, dest, value, 0 as $t, pe, AmoOp::Add).map(drop))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_fetch_inc")]
            pub extern "C" fn fetch_inc(dest: *mut $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_fetch_inc"), |st| amo(st, dest, 1 as $t, 0 as $t, pe, AmoOp::Add))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_inc")]
            pub extern "C" fn inc(dest: *mut $t, pe: c_int) {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_inc"), |st| amo(st, dest, 1 as $t, 0 as $t, pe, AmoOp::Add).map(drop))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_compare_swap")]
            pub extern "C" fn compare_swap(dest: *mut $t, cond: $t, value: $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_compare_swap"), |st| amo(st, dest, cond, value, pe, AmoOp::CompareSwap))
            }
        }
    )* };
}

macro_rules! extended {
    ($($name:ident => $t:ty),* $(,)?) => { $(
        pub mod $name {
            use super::*;
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_fetch")]
            pub extern "C" fn fetch(dest: *const $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_fetch"), |st| amo(st, dest, <$t>::default(), <$t>::default(), pe, AmoOp::Fetch))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_set")]
            pub extern "C" fn set(dest: *mut $t, value: $t, pe: c_int) {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_set"), |st| amo(st, dest, value, <$t>::default(), pe, AmoOp::Set).map(drop))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_swap")]
            pub extern "C" fn swap(dest: *mut $t, value: $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_swap"), |st| amo(st, dest, value, <$t>::default(), pe, AmoOp::Swap))
            }
        }
    )* };
}

macro_rules! bitwise {
    ($($name:ident => $t:ty),* $(,)?) => { $(
        pub mod $name {
            use super::*;
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_and")]
            pub extern "C" fn and(dest: *mut $t, value: $t, pe: c_int) {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_and"), |st| amo(st, dest, value, 0, pe, AmoOp::And).map(drop))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_or")]
            pub extern "C" fn or(dest: *mut $t, value: $t, pe: c_int) {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_or"), |st| amo(st, dest, value, 0, pe, AmoOp::Or).map(drop))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_xor")]
            pub extern "C" fn xor(dest: *mut $t, value: $t, pe: c_int) {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_xor"), |st| amo(st, dest, value, 0, pe, AmoOp::Xor).map(drop))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_fetch_and")]
            pub extern "C" fn fetch_and(dest: *mut $t, value: $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_fetch_and"), |st| amo(st, dest, value, 0, pe, AmoOp::And))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_fetch_or")]
            pub extern "C" fn fetch_or(dest: *mut $t, value: $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_fetch_or"), |st| amo(st, dest, value, 0, pe, AmoOp::Or))
            }
            #[export_name = concat!("nvshmem_", stringify!($name), "_atomic_fetch_xor")]
            pub extern "C" fn fetch_xor(dest: *mut $t, value: $t, pe: c_int) -> $t {
                ffi_boundary!(concat!("nvshmem_", stringify!($name), "_atomic_fetch_xor"), |st| amo(st, dest, value, 0, pe, AmoOp::Xor))
            }
        }
    )* };
}

/// inc, fetch_inc, add, fetch_add, compare_swap.
pub mod standard_types {
    use super::*;
    crate::amo_standard_types!(standard);
}

/// fetch, set, swap.
pub mod extended_types {
    use super::*;
    crate::amo_extended_types!(extended);
}

/// and, or, xor and their fetching forms.
pub mod bitwise_types {
    use super::*;
    crate::amo_bitwise_types!(bitwise);
}
