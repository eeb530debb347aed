//! On-stream operations: enqueued on the caller's CUDA stream, they return at once and take
//! effect in stream order: copy-engine copies (also strided, for iput/iget) and stream memory
//! operations, and the library's one-block kernels for p (a value of 1-8 bytes), waits with any
//! comparison, and signal ADD. g_on_stream returns its value, so it synchronizes the stream.

use std::ffi::{c_int, c_void};

use super::rma::{rma, strided};
use crate::capi::ffi_boundary;
use crate::cuda::CUstream;
use crate::runtime::gpu::host_rma::{signal_op, Direction, HostOp, StreamWait, When};
use crate::runtime::State;

/// nvshmemx_{put,get}mem{,_nbi}_on_stream: the nbi forms are the blocking ones (both return at
/// once; the copy is done when the stream passes it).
macro_rules! mem_on_stream {
    ($($name:ident => $kind:ident),*) => { $(
        #[no_mangle]
        pub extern "C" fn $name(dest: *mut c_void, src: *const c_void, bytes: usize, pe: c_int, stream: CUstream) {
            ffi_boundary!($name, |st| rma(st, HostOp::$kind { dest: dest.cast(), src: src.cast(), bytes }, pe, When::Stream(stream)))
        }
    )* };
}
mem_on_stream!(
    nvshmemx_putmem_on_stream => Put,
    nvshmemx_putmem_nbi_on_stream => Put,
    nvshmemx_getmem_on_stream => Get,
    nvshmemx_getmem_nbi_on_stream => Get
);

/// Completes this PE's on-stream puts in stream order. Copies enqueued on the stream are
/// complete and visible when the next operation on it starts, so there is nothing to add.
#[no_mangle]
pub extern "C" fn nvshmemx_quiet_on_stream(_stream: CUstream) {
    ffi_boundary!(nvshmemx_quiet_on_stream, |st| st.gpu().map(|_| ()))
}

/// A signal in stream order: SET is a stream memory write, ADD the atomic kernel (P2P).
fn signal_on_stream(
    st: &crate::runtime::State,
    sig: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    stream: CUstream,
) -> crate::error::Result<()> {
    rma(st, HostOp::Signal { sig: sig.cast(), op: signal_op(sig_op)?, value: signal }, pe, When::Stream(stream))
}

#[no_mangle]
pub extern "C" fn nvshmemx_signal_op_on_stream(sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int, stream: CUstream) {
    ffi_boundary!(nvshmemx_signal_op_on_stream, |st| signal_on_stream(st, sig_addr, signal, sig_op, pe, stream))
}

/// The data, then the signal, both in stream order (the signal is written after the copy
/// completes); `bytes` is `nelems` elements of `size` bytes.
#[allow(clippy::too_many_arguments)]
fn put_signal_on_stream(
    st: &State,
    dest: *mut c_void,
    src: *const c_void,
    nelems: usize,
    size: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    stream: CUstream,
) -> crate::error::Result<()> {
    signal_op(sig_op)?;
    let bytes = bytes(nelems, size)?;
    rma(st, HostOp::Put { dest: dest.cast(), src: src.cast(), bytes }, pe, When::Stream(stream))?;
    signal_on_stream(st, sig_addr, signal, sig_op, pe, stream)
}

/// nvshmemx_putmem_signal{,_nbi}_on_stream (the nbi form is the blocking one, as above), or
/// with `$pre`, `$suf` and `$size` the typed and sized forms.
macro_rules! put_signal_on_stream {
    ($($name:ident: $export:expr, $size:expr);* $(;)?) => { $(
        #[export_name = $export]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $name(
            dest: *mut c_void,
            src: *const c_void,
            nelems: usize,
            sig_addr: *mut u64,
            signal: u64,
            sig_op: c_int,
            pe: c_int,
            stream: CUstream,
        ) {
            ffi_boundary!($export, |st| put_signal_on_stream(st, dest, src, nelems, $size, sig_addr, signal, sig_op, pe, stream))
        }
    )* };
}
put_signal_on_stream!(
    nvshmemx_putmem_signal_on_stream: "nvshmemx_putmem_signal_on_stream", 1;
    nvshmemx_putmem_signal_nbi_on_stream: "nvshmemx_putmem_signal_nbi_on_stream", 1;
);

#[no_mangle]
pub extern "C" fn nvshmemx_signal_wait_until_on_stream(sig_addr: *mut u64, cmp: c_int, cmp_value: u64, stream: CUstream) {
    ffi_boundary!(nvshmemx_signal_wait_until_on_stream, |st| st.gpu_signal_wait_on_stream(sig_addr, cmp, cmp_value, stream))
}

/// The low bytes of a u64 as a value of `T` (a plain integer or float of at most 8 bytes).
fn from_bits<T: Copy>(bits: u64) -> T {
    assert!(std::mem::size_of::<T>() <= 8);
    // SAFETY: T is at most 8 bytes (asserted) and every bit pattern is a valid value of the
    // plain types used here; x86-64 and aarch64 are little-endian, so the low bytes come first.
    unsafe { std::mem::transmute_copy::<u64, T>(&bits) }
}

/// A value of `T` (at most 8 bytes) as the low bytes of a u64.
fn to_bits<T: Copy>(value: T) -> u64 {
    let mut bits = 0u64;
    let n = std::mem::size_of::<T>().min(8);
    // SAFETY: copies the n <= 8 bytes of `value` into the first n bytes of `bits`.
    unsafe { std::ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), (&mut bits as *mut u64).cast::<u8>(), n) };
    bits
}

/// put, put_nbi, get, get_nbi, iput, iget, put_signal, put_signal_nbi on a stream for one
/// element type or size (`$pre` e.g. "nvshmemx_int_", `$suf` e.g. "32").
macro_rules! stream_block_routines {
    ($pre:expr, $suf:expr, $size:expr) => {
        stream_block_routines!(@rma $pre, $suf, $size, put "put" "" Put, put_nbi "put" "_nbi" Put, get "get" "" Get, get_nbi "get" "_nbi" Get);
        stream_block_routines!(@strided $pre, $suf, $size, iput "iput" Put, iget "iget" Get);
        put_signal_on_stream!(
            put_signal: concat!($pre, "put", $suf, "_signal_on_stream"), $size;
            put_signal_nbi: concat!($pre, "put", $suf, "_signal_nbi_on_stream"), $size;
        );
    };
    (@rma $pre:expr, $suf:expr, $size:expr, $($f:ident $op:literal $nbi:literal $kind:ident),*) => { $(
        #[export_name = concat!($pre, $op, $suf, $nbi, "_on_stream")]
        pub extern "C" fn $f(dest: *mut c_void, src: *const c_void, nelems: usize, pe: c_int, stream: CUstream) {
            ffi_boundary!(concat!($pre, $op, $suf, $nbi, "_on_stream"), |st| rma(st, HostOp::$kind { dest: dest.cast(), src: src.cast(), bytes: bytes(nelems, $size)? }, pe, When::Stream(stream)))
        }
    )* };
    (@strided $pre:expr, $suf:expr, $size:expr, $($f:ident $op:literal $dir:ident),*) => { $(
        #[export_name = concat!($pre, $op, $suf, "_on_stream")]
        pub extern "C" fn $f(dest: *mut c_void, src: *const c_void, dst: isize, sst: isize, nelems: usize, pe: c_int, stream: CUstream) {
            ffi_boundary!(concat!($pre, $op, $suf, "_on_stream"), |st| rma(st, strided(Direction::$dir, dest, src, dst, sst, nelems, $size), pe, When::Stream(stream)))
        }
    )* };
}

fn bytes(nelems: usize, size: usize) -> crate::error::Result<usize> {
    crate::runtime::rma::bytes(nelems, size)
}

macro_rules! typed_stream_rma {
    ($($name:ident => $t:ty),* $(,)?) => {
        $(
            pub mod $name {
                use super::super::*;
                stream_block_routines!(concat!("nvshmemx_", stringify!($name), "_"), "", std::mem::size_of::<$t>());

                #[export_name = concat!("nvshmemx_", stringify!($name), "_p_on_stream")]
                pub extern "C" fn p(dest: *mut $t, value: $t, pe: c_int, stream: CUstream) {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_p_on_stream"), |st| rma(st, HostOp::P { dest: dest.cast(), value: to_bits(value), size: std::mem::size_of::<$t>() }, pe, When::Stream(stream)))
                }

                #[export_name = concat!("nvshmemx_", stringify!($name), "_g_on_stream")]
                pub extern "C" fn g(src: *const $t, pe: c_int, stream: CUstream) -> $t {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_g_on_stream"), |st| {
                        let op = HostOp::G { src: src.cast(), size: std::mem::size_of::<$t>() };
                        st.gpu_op(op, pe, When::Stream(stream)).map(from_bits::<$t>)
                    })
                }
            }
        )*
    };
}

/// nvshmemx_<type>_{put,get}{,_nbi}, iput, iget, p, g, put_signal{,_nbi} _on_stream.
pub mod typed {
    nvshmem_rma_types!(typed_stream_rma);
}

/// nvshmemx_{put,get}{8..128}{,_nbi}, iput/iget{8..128}, put{8..128}_signal{,_nbi} _on_stream.
pub mod sized {
    crate::capi::sized_modules!(stream_block_routines, "nvshmemx_");
}

macro_rules! typed_stream_wait {
    ($($name:ident => $t:ty),* $(,)?) => {
        $(
            pub mod $name {
                use super::super::*;
                const SIGNED: bool = (<$t>::MIN as i128) < 0;

                #[export_name = concat!("nvshmemx_", stringify!($name), "_wait_until_on_stream")]
                pub extern "C" fn wait_until(ivar: *mut $t, cmp: c_int, value: $t, stream: CUstream) {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_wait_until_on_stream"), |st| wait(st, ivar, 1, std::ptr::null(), cmp, value, std::ptr::null(), stream))
                }

                #[export_name = concat!("nvshmemx_", stringify!($name), "_wait_until_all_on_stream")]
                pub extern "C" fn wait_until_all(ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, value: $t, stream: CUstream) {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_wait_until_all_on_stream"), |st| wait(st, ivars, nelems, status, cmp, value, std::ptr::null(), stream))
                }

                #[export_name = concat!("nvshmemx_", stringify!($name), "_wait_until_all_vector_on_stream")]
                pub extern "C" fn wait_until_all_vector(
                    ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, values: *mut $t, stream: CUstream,
                ) {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_wait_until_all_vector_on_stream"), |st| {
                        if values.is_null() && nelems > 0 {
                            return Err(crate::error::Error::invalid_value("cmp_values is NULL: pass one compare value per variable"));
                        }
                        wait(st, ivars, nelems, status, cmp, 0, values, stream)
                    })
                }

                #[allow(clippy::too_many_arguments)]
                fn wait(
                    st: &State, ivars: *mut $t, nelems: usize, status: *const c_int, cmp: c_int, value: $t,
                    values: *const $t, stream: CUstream,
                ) -> crate::error::Result<()> {
                    let w = StreamWait {
                        ivars: ivars.cast(),
                        nelems,
                        size: std::mem::size_of::<$t>(),
                        signed: SIGNED,
                        cmp,
                        value: to_bits(value),
                        status,
                        values: values.cast(),
                    };
                    st.gpu_wait_on_stream(&w, stream)
                }
            }
        )*
    };
}

/// nvshmemx_<type>_wait_until{,_all,_all_vector}_on_stream.
pub mod waits {
    nvshmem_wait_types!(typed_stream_wait);
}
