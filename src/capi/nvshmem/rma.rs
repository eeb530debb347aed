//! Host-initiated RMA on GPU memory (blocking; `_nbi` forms queued on the library's stream and
//! complete at quiet; iput/iget strided),
//! and host ordering/synchronization. Source and destination buffers may be host or device
//! memory: the copy engine moves the bytes through the peer mapping.

use std::ffi::{c_int, c_void};

use crate::capi::ffi_boundary;
use crate::runtime::gpu::host_rma::{signal_op, Direction, HostOp, When};

/// nvshmem_{put,get}mem{,_nbi}: `bytes` bytes.
macro_rules! mem_routines {
    ($($name:ident => $kind:ident $when:ident),*) => { $(
        #[no_mangle]
        pub extern "C" fn $name(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int) {
            ffi_boundary!($name, |st| rma(st, HostOp::$kind { dest: dest.cast(), src: src.cast(), bytes }, pe, When::$when))
        }
    )* };
}
mem_routines!(
    nvshmem_putmem => Put Now,
    nvshmem_getmem => Get Now,
    nvshmem_putmem_nbi => Put Queued,
    nvshmem_getmem_nbi => Get Queued
);

/// put, get, put_nbi, get_nbi, iput, iget for one element type or size (`$pre` e.g. "nvshmem_int_").
macro_rules! block_routines {
    ($pre:expr, $suf:expr, $size:expr) => {
        block_routines!(@rma $pre, $suf, $size, put "put" "" Put Now, get "get" "" Get Now,
            put_nbi "put" "_nbi" Put Queued, get_nbi "get" "_nbi" Get Queued);
        block_routines!(@strided $pre, $suf, $size, iput "iput" Put, iget "iget" Get);
    };
    (@rma $pre:expr, $suf:expr, $size:expr, $($f:ident $op:literal $nbi:literal $kind:ident $when:ident),*) => { $(
        #[export_name = concat!($pre, $op, $suf, $nbi)]
        pub extern "C" fn $f(dest: *mut c_void, src: *const c_void, nelems: usize, pe: c_int) {
            ffi_boundary!(concat!($pre, $op, $suf, $nbi), |st| rma(
                st,
                HostOp::$kind { dest: dest.cast(), src: src.cast(), bytes: bytes(nelems, $size)? },
                pe,
                When::$when
            ))
        }
    )* };
    (@strided $pre:expr, $suf:expr, $size:expr, $($f:ident $op:literal $dir:ident),*) => { $(
        #[export_name = concat!($pre, $op, $suf)]
        pub extern "C" fn $f(dest: *mut c_void, src: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            ffi_boundary!(concat!($pre, $op, $suf), |st| rma(st, strided(Direction::$dir, dest, src, dst, sst, nelems, $size), pe, When::Now))
        }
    )* };
}

macro_rules! typed_rma {
    ($($name:ident => $t:ty),* $(,)?) => {
        $(
            pub mod $name {
                use super::super::*;
                block_routines!(concat!("nvshmem_", stringify!($name), "_"), "", std::mem::size_of::<$t>());

                #[export_name = concat!("nvshmem_", stringify!($name), "_p")]
                pub extern "C" fn p(dest: *mut $t, value: $t, pe: c_int) {
                    ffi_boundary!(concat!("nvshmem_", stringify!($name), "_p"), |st| rma(st, HostOp::Put { dest: dest.cast(), src: (&value as *const $t).cast(), bytes: std::mem::size_of::<$t>() }, pe, When::Now))
                }

                #[export_name = concat!("nvshmem_", stringify!($name), "_g")]
                pub extern "C" fn g(src: *const $t, pe: c_int) -> $t {
                    ffi_boundary!(concat!("nvshmem_", stringify!($name), "_g"), |st| {
                        let mut v = std::mem::MaybeUninit::<$t>::zeroed();
                        rma(st, HostOp::Get { dest: v.as_mut_ptr().cast(), src: src.cast(), bytes: std::mem::size_of::<$t>() }, pe, When::Now)?;
                        // SAFETY: zero-initialised, then overwritten with the fetched bytes;
                        // every bit pattern is a valid value of these plain types.
                        Ok(unsafe { v.assume_init() })
                    })
                }
            }
        )*
    };
}

fn bytes(nelems: usize, size: usize) -> crate::error::Result<usize> {
    crate::runtime::rma::bytes(nelems, size)
}

/// A host RMA operation without a value to return.
pub(super) fn rma(st: &crate::runtime::State, op: HostOp, pe: c_int, when: When) -> crate::error::Result<()> {
    st.gpu_op(op, pe, when).map(drop)
}

/// iput/iget of `nelems` elements of `size` bytes: `dest`/`src` as the C routine names them.
pub(super) fn strided(dir: Direction, dest: *mut c_void, src: *const c_void, dst: isize, sst: isize, nelems: usize, size: usize) -> HostOp {
    let (sym, local) = match dir {
        Direction::Put => (dest.cast_const().cast(), src.cast()),
        Direction::Get => (src.cast(), dest.cast_const().cast()),
    };
    HostOp::Strided { dir, sym, local, dst, sst, nelems, size }
}

/// nvshmem_<type>_{put,get,p,g}{,_nbi} on the host.
pub mod typed {
    nvshmem_rma_types!(typed_rma);
}

/// nvshmem_{put,get}{8,16,32,64,128}{,_nbi} on the host.
pub mod sized {
    crate::capi::sized_modules!(block_routines, "nvshmem_");
}

#[no_mangle]
pub extern "C" fn nvshmem_quiet() {
    ffi_boundary!(nvshmem_quiet, |st| st.gpu_quiet())
}

#[no_mangle]
pub extern "C" fn nvshmem_fence() {
    ffi_boundary!(nvshmem_fence, |st| st.gpu_quiet())
}

#[no_mangle]
pub extern "C" fn nvshmem_barrier_all() {
    ffi_boundary!(nvshmem_barrier_all, |st| st.gpu_barrier_all())
}

#[no_mangle]
pub extern "C" fn nvshmem_sync_all() {
    ffi_boundary!(nvshmem_sync_all, |st| {
        st.gpu()?;
        let _serial = st.serialize_collectives();
        st.sync_set(&crate::runtime::barrier::PeSet::world(st.npes), &crate::runtime::barrier::Caller::sync("nvshmem_sync_all"))?;
        Ok(())
    })
}

/// Reads this PE's signal word (written by peers' put-with-signal or signal_op).
#[no_mangle]
pub extern "C" fn nvshmem_signal_fetch(sig_addr: *mut u64) -> u64 {
    ffi_boundary!(nvshmem_signal_fetch, |st| {
        let mut v = 0u64;
        rma(st, HostOp::Get { dest: (&mut v as *mut u64).cast(), src: sig_addr.cast(), bytes: 8 }, st.me as c_int, When::Now)?;
        Ok(v)
    })
}

/// Host signal_op: SET is an 8-byte put, ADD an atomic.
#[no_mangle]
pub extern "C" fn nvshmemx_signal_op(sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) {
    ffi_boundary!(nvshmemx_signal_op, |st| rma(
        st,
        HostOp::Signal { sig: sig_addr.cast(), op: signal_op(sig_op)?, value: signal },
        pe,
        When::Now
    ))
}
