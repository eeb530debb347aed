//! Host-initiated RMA on GPU memory (blocking; `_nbi` forms queued on the library's stream and
//! complete at quiet; iput/iget strided),
//! and host ordering/synchronization. Source and destination buffers may be host or device
//! memory: the copy engine moves the bytes through the peer mapping.

use std::ffi::{c_int, c_void};

use super::super::with_state;
use crate::cuda::kernels::AmoOp;
use crate::runtime::gpu::host_rma::Direction;
use crate::runtime::gpu::{bad_signal_op, SIGNAL_ADD, SIGNAL_SET};

#[no_mangle]
pub extern "C" fn nvshmem_putmem(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int) {
    with_state("nvshmem_putmem", |st| st.gpu_put(dest.cast(), src.cast(), bytes, pe, "nvshmem_putmem"))
}

#[no_mangle]
pub extern "C" fn nvshmem_getmem(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int) {
    with_state("nvshmem_getmem", |st| st.gpu_get(dest.cast(), src.cast(), bytes, pe, "nvshmem_getmem"))
}

#[no_mangle]
pub extern "C" fn nvshmem_putmem_nbi(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int) {
    with_state("nvshmem_putmem_nbi", |st| st.gpu_put_nbi(dest.cast(), src.cast(), bytes, pe, "nvshmem_putmem_nbi"))
}

#[no_mangle]
pub extern "C" fn nvshmem_getmem_nbi(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int) {
    with_state("nvshmem_getmem_nbi", |st| st.gpu_get_nbi(dest.cast(), src.cast(), bytes, pe, "nvshmem_getmem_nbi"))
}

/// put, get, put_nbi, get_nbi, iput, iget for one element type or size (`$pre` e.g. "nvshmem_int_").
macro_rules! block_routines {
    ($pre:expr, $suf:expr, $size:expr) => {
        #[export_name = concat!($pre, "put", $suf)]
        pub extern "C" fn put(dest: *mut c_void, src: *const c_void, nelems: usize, pe: c_int) {
            const R: &str = concat!($pre, "put", $suf);
            with_state(R, |st| st.gpu_put(dest.cast(), src.cast(), bytes(nelems, $size, R)?, pe, R))
        }
        #[export_name = concat!($pre, "get", $suf)]
        pub extern "C" fn get(dest: *mut c_void, src: *const c_void, nelems: usize, pe: c_int) {
            const R: &str = concat!($pre, "get", $suf);
            with_state(R, |st| st.gpu_get(dest.cast(), src.cast(), bytes(nelems, $size, R)?, pe, R))
        }
        #[export_name = concat!($pre, "put", $suf, "_nbi")]
        pub extern "C" fn put_nbi(dest: *mut c_void, src: *const c_void, nelems: usize, pe: c_int) {
            const R: &str = concat!($pre, "put", $suf, "_nbi");
            with_state(R, |st| st.gpu_put_nbi(dest.cast(), src.cast(), bytes(nelems, $size, R)?, pe, R))
        }
        #[export_name = concat!($pre, "get", $suf, "_nbi")]
        pub extern "C" fn get_nbi(dest: *mut c_void, src: *const c_void, nelems: usize, pe: c_int) {
            const R: &str = concat!($pre, "get", $suf, "_nbi");
            with_state(R, |st| st.gpu_get_nbi(dest.cast(), src.cast(), bytes(nelems, $size, R)?, pe, R))
        }
        #[export_name = concat!($pre, "iput", $suf)]
        pub extern "C" fn iput(dest: *mut c_void, src: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            const R: &str = concat!($pre, "iput", $suf);
            with_state(R, |st| st.gpu_strided(Direction::Put, dest.cast(), src.cast(), dst, sst, nelems, $size, pe, None, R))
        }
        #[export_name = concat!($pre, "iget", $suf)]
        pub extern "C" fn iget(dest: *mut c_void, src: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            const R: &str = concat!($pre, "iget", $suf);
            with_state(R, |st| st.gpu_strided(Direction::Get, src.cast(), dest.cast(), dst, sst, nelems, $size, pe, None, R))
        }
    };
}

macro_rules! typed_rma {
    ($($name:ident => $t:ty),* $(,)?) => {
        $(
            pub mod $name {
                use super::super::*;
                block_routines!(concat!("nvshmem_", stringify!($name), "_"), "", std::mem::size_of::<$t>());

                #[export_name = concat!("nvshmem_", stringify!($name), "_p")]
                pub extern "C" fn p(dest: *mut $t, value: $t, pe: c_int) {
                    const R: &str = concat!("nvshmem_", stringify!($name), "_p");
                    with_state(R, |st| st.gpu_put(dest.cast(), (&value as *const $t).cast(), std::mem::size_of::<$t>(), pe, R))
                }

                #[export_name = concat!("nvshmem_", stringify!($name), "_g")]
                pub extern "C" fn g(src: *const $t, pe: c_int) -> $t {
                    const R: &str = concat!("nvshmem_", stringify!($name), "_g");
                    with_state(R, |st| {
                        let mut v = std::mem::MaybeUninit::<$t>::zeroed();
                        st.gpu_get(v.as_mut_ptr().cast(), src.cast(), std::mem::size_of::<$t>(), pe, R)?;
                        // SAFETY: zero-initialised, then overwritten with the fetched bytes;
                        // every bit pattern is a valid value of these plain types.
                        Ok(unsafe { v.assume_init() })
                    })
                }
            }
        )*
    };
}

fn bytes(nelems: usize, size: usize, routine: &'static str) -> crate::error::Result<usize> {
    crate::runtime::rma::bytes(nelems, size, routine)
}

/// nvshmem_<type>_{put,get,p,g}{,_nbi} on the host.
pub mod typed {
    nvshmem_rma_types!(typed_rma);
}

/// nvshmem_{put,get}{8,16,32,64,128}{,_nbi} on the host.
pub mod sized {
    macro_rules! sized_rma {
        ($($name:ident => $bits:literal),*) => {
            $( pub mod $name {
                use super::super::*;
                block_routines!("nvshmem_", stringify!($bits), $bits / 8);
            } )*
        };
    }
    sized_rma!(s8 => 8, s16 => 16, s32 => 32, s64 => 64, s128 => 128);
}

#[no_mangle]
pub extern "C" fn nvshmem_quiet() {
    with_state("nvshmem_quiet", |st| st.gpu_quiet("nvshmem_quiet"))
}

#[no_mangle]
pub extern "C" fn nvshmem_fence() {
    with_state("nvshmem_fence", |st| st.gpu_quiet("nvshmem_fence"))
}

#[no_mangle]
pub extern "C" fn nvshmem_barrier_all() {
    with_state("nvshmem_barrier_all", |st| st.gpu_barrier_all("nvshmem_barrier_all"))
}

#[no_mangle]
pub extern "C" fn nvshmem_sync_all() {
    with_state("nvshmem_sync_all", |st| {
        st.gpu("nvshmem_sync_all")?;
        let _serial = st.serialize_collectives();
        st.sync_set(&crate::runtime::barrier::PeSet::world(st.npes), &crate::runtime::barrier::Caller::sync("nvshmem_sync_all"))?;
        Ok(())
    })
}

/// Reads this PE's signal word (written by peers' put-with-signal or signal_op).
#[no_mangle]
pub extern "C" fn nvshmem_signal_fetch(sig_addr: *mut u64) -> u64 {
    const R: &str = "nvshmem_signal_fetch";
    with_state(R, |st| {
        let mut v = 0u64;
        st.gpu_get((&mut v as *mut u64).cast(), sig_addr.cast(), 8, st.me as c_int, R)?;
        Ok(v)
    })
}

/// Host signal_op: SET is an 8-byte put, ADD an atomic (the library's one-thread kernel).
#[no_mangle]
pub extern "C" fn nvshmemx_signal_op(sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) {
    const R: &str = "nvshmemx_signal_op";
    with_state(R, |st| match sig_op {
        SIGNAL_SET => st.gpu_put(sig_addr.cast(), (&signal as *const u64).cast(), 8, pe, R),
        SIGNAL_ADD => st.gpu_amo(sig_addr.cast(), signal, 0, pe, AmoOp::Add, 8, R).map(|_| ()),
        other => Err(bad_signal_op(other, R)),
    })
}
