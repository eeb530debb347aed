//! Remote memory access routines (OpenSHMEM 1.5 §9.5): put, get, p, g, iput, iget and the
//! non-blocking forms, typed (Table 5), sized (8..128 bits) and byte-wise (`mem`), each with a
//! `shmem_ctx_` twin taking a context first.
//!
//! On shared memory a non-blocking operation is the blocking copy: it is complete on return,
//! which is a correct implementation of "complete by the next quiet".

use std::ffi::{c_int, c_void};

use super::ctx::ShmemCtx;
use super::ffi_boundary;
use crate::capi::types::LongDouble;
use crate::error::Result;
use crate::runtime::ctx::DEFAULT;
use crate::runtime::rma::{bytes, Strided, GET, PUT};
use crate::runtime::State;
use crate::sys::longdouble::{x87_return_entry, x87_value_arg_entry};

/// The body of the block routines: `nelems` elements of `size` bytes between `src` and `dest`
/// on context `ctx`.
#[inline(always)]
fn block<const DIR: bool, const NBI: bool, T>(
    st: &State,
    ctx: usize,
    dest: *mut T,
    src: *const T,
    nelems: usize,
    size: usize,
    pe: c_int,
) -> Result<()> {
    st.ctx_rma::<DIR, NBI>(ctx, dest.cast(), src.cast(), bytes(nelems, size)?, pe)
}

/// The body of iput and iget (strides in elements).
#[inline(always)]
fn strided<const DIR: bool, T>(st: &State, ctx: usize, dest: *mut T, src: *const T, s: Strided, pe: c_int) -> Result<()> {
    st.ctx_strided::<DIR>(ctx, dest.cast(), src.cast(), s, pe)
}

/// The eight routines of one family (`$pre` is e.g. "shmem_int_" or "shmem_", `$suf` "" or
/// "8", `$size` the element size), without and with a context.
macro_rules! block_routines {
    ($pre:expr, $ctxpre:expr, $suf:expr, $t:ty, $size:expr) => {
        block_routines!(@pair $pre, $ctxpre, $suf, $t, $size, put ctx_put "put" "" PUT false);
        block_routines!(@pair $pre, $ctxpre, $suf, $t, $size, get ctx_get "get" "" GET false);
        block_routines!(@pair $pre, $ctxpre, $suf, $t, $size, put_nbi ctx_put_nbi "put" "_nbi" PUT true);
        block_routines!(@pair $pre, $ctxpre, $suf, $t, $size, get_nbi ctx_get_nbi "get" "_nbi" GET true);
    };
    (@pair $pre:expr, $ctxpre:expr, $suf:expr, $t:ty, $size:expr, $f:ident $ctx_f:ident $op:literal $nbi:literal $dir:ident $is_nbi:literal) => {
        #[export_name = concat!($pre, $op, $suf, $nbi)]
        pub extern "C" fn $f(dest: *mut $t, src: *const $t, nelems: usize, pe: c_int) {
            ffi_boundary!(concat!($pre, $op, $suf, $nbi), |st| block::<$dir, $is_nbi, _>(st, DEFAULT, dest, src, nelems, $size, pe))
        }
        #[export_name = concat!($ctxpre, $op, $suf, $nbi)]
        pub extern "C" fn $ctx_f(ctx: ShmemCtx, dest: *mut $t, src: *const $t, nelems: usize, pe: c_int) {
            ffi_boundary!(concat!($ctxpre, $op, $suf, $nbi), |st| block::<$dir, $is_nbi, _>(st, ctx.value(), dest, src, nelems, $size, pe))
        }
    };
}

/// iput and iget (strides in elements), without and with a context.
macro_rules! strided_routines {
    ($pre:expr, $ctxpre:expr, $suf:expr, $t:ty, $size:expr) => {
        strided_routines!(@pair $pre, $ctxpre, $suf, $t, $size, iput ctx_iput "iput" PUT);
        strided_routines!(@pair $pre, $ctxpre, $suf, $t, $size, iget ctx_iget "iget" GET);
    };
    (@pair $pre:expr, $ctxpre:expr, $suf:expr, $t:ty, $size:expr, $f:ident $ctx_f:ident $op:literal $dir:ident) => {
        #[export_name = concat!($pre, $op, $suf)]
        pub extern "C" fn $f(dest: *mut $t, src: *const $t, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            ffi_boundary!(concat!($pre, $op, $suf), |st| strided::<$dir, _>(st, DEFAULT, dest, src, Strided { dst, sst, nelems, size: $size }, pe))
        }
        #[export_name = concat!($ctxpre, $op, $suf)]
        pub extern "C" fn $ctx_f(ctx: ShmemCtx, dest: *mut $t, src: *const $t, dst: isize, sst: isize, nelems: usize, pe: c_int) {
            ffi_boundary!(concat!($ctxpre, $op, $suf), |st| strided::<$dir, _>(st, ctx.value(), dest, src, Strided { dst, sst, nelems, size: $size }, pe))
        }
    };
}

/// Single-element p and g; long double has its own (see below), so it is skipped here.
macro_rules! element_routines {
    (longdouble, $t:ty) => {};
    ($name:ident, $t:ty) => {
        #[export_name = concat!("shmem_", stringify!($name), "_p")]
        pub extern "C" fn p(dest: *mut $t, value: $t, pe: c_int) {
            ffi_boundary!(concat!("shmem_", stringify!($name), "_p"), |st| st.ctx_p(DEFAULT, dest, value, pe))
        }
        #[export_name = concat!("shmem_", stringify!($name), "_g")]
        pub extern "C" fn g(src: *const $t, pe: c_int) -> $t {
            ffi_boundary!(concat!("shmem_", stringify!($name), "_g"), |st| st.ctx_g(DEFAULT, src, pe))
        }
        #[export_name = concat!("shmem_ctx_", stringify!($name), "_p")]
        pub extern "C" fn ctx_p(ctx: ShmemCtx, dest: *mut $t, value: $t, pe: c_int) {
            ffi_boundary!(concat!("shmem_ctx_", stringify!($name), "_p"), |st| st.ctx_p(ctx.value(), dest, value, pe))
        }
        #[export_name = concat!("shmem_ctx_", stringify!($name), "_g")]
        pub extern "C" fn ctx_g(ctx: ShmemCtx, src: *const $t, pe: c_int) -> $t {
            ffi_boundary!(concat!("shmem_ctx_", stringify!($name), "_g"), |st| st.ctx_g(ctx.value(), src, pe))
        }
    };
}

/// One module per standard RMA type, e.g. `typed::int::put` is `shmem_int_put`.
macro_rules! typed_rma {
    ($($name:ident => $t:ty),* $(,)?) => {
        $(
            pub mod $name {
                use super::super::*;
                block_routines!(
                    concat!("shmem_", stringify!($name), "_"), concat!("shmem_ctx_", stringify!($name), "_"), "", $t, size_of::<$t>()
                );
                strided_routines!(
                    concat!("shmem_", stringify!($name), "_"), concat!("shmem_ctx_", stringify!($name), "_"), "", $t, size_of::<$t>()
                );
                element_routines!($name, $t);
            }
        )*
    };
}

/// The typed families (Table 5).
pub mod typed {
    crate::rma_types!(typed_rma);
}

/// Sized families: shmem_put8 .. shmem_put128 and friends (8..128-bit elements, no alignment
/// assumed), as `sized::s32::put` etc.
pub mod sized {
    /// One sized family: put, get, their nbi and ctx forms, iput, iget of `$size`-byte elements.
    macro_rules! sized_routines {
        ($suf:expr, $size:expr) => {
            block_routines!("shmem_", "shmem_ctx_", $suf, c_void, $size);
            strided_routines!("shmem_", "shmem_ctx_", $suf, c_void, $size);
        };
    }
    crate::capi::sized_modules!(sized_routines);

    /// Byte-wise: shmem_putmem, shmem_getmem and their nbi and ctx forms.
    pub mod mem {
        use super::super::*;
        block_routines!("shmem_", "shmem_ctx_", "mem", c_void, 1);
    }
}

// long double p and g: the value is passed and returned in x87 form (see sys/longdouble.rs).
// The trampolines below hand these functions a pointer to the value (p) or to a result buffer (g).

extern "C" fn longdouble_p(dest: *mut LongDouble, pe: c_int, value: *const LongDouble) {
    ffi_boundary!("shmem_longdouble_p", |st| {
        // SAFETY: the trampoline passes the address of the caller's stacked argument (16 bytes).
        let v = unsafe { value.read() };
        st.ctx_p(DEFAULT, dest, v, pe)
    })
}

extern "C" fn ctx_longdouble_p(ctx: ShmemCtx, dest: *mut LongDouble, pe: c_int, value: *const LongDouble) {
    ffi_boundary!("shmem_ctx_longdouble_p", |st| {
        // SAFETY: as in longdouble_p.
        let v = unsafe { value.read() };
        st.ctx_p(ctx.value(), dest, v, pe)
    })
}

extern "C" fn longdouble_g(src: *const LongDouble, pe: c_int, out: *mut LongDouble) {
    ffi_boundary!("shmem_longdouble_g", |st| {
        let v = st.ctx_g(DEFAULT, src, pe)?;
        // SAFETY: the trampoline passes its own 16-byte, 16-aligned result buffer.
        unsafe { out.write(v) };
        Ok(())
    })
}

extern "C" fn ctx_longdouble_g(ctx: ShmemCtx, src: *const LongDouble, pe: c_int, out: *mut LongDouble) {
    ffi_boundary!("shmem_ctx_longdouble_g", |st| {
        let v = st.ctx_g(ctx.value(), src, pe)?;
        // SAFETY: as in longdouble_g.
        unsafe { out.write(v) };
        Ok(())
    })
}

// Integer registers: the first unused one carries the extra pointer.
x87_value_arg_entry!(
    /// C: `void shmem_longdouble_p(long double *dest, long double value, int pe)`
    /// (dest in rdi, pe in esi, value on the stack).
    shmem_longdouble_p, "lea rdx, [rsp + 8]", longdouble_p
);
x87_value_arg_entry!(
    /// C: `void shmem_ctx_longdouble_p(shmem_ctx_t ctx, long double *dest, long double value, int pe)`
    /// (ctx in rdi, dest in rsi, pe in edx, value on the stack).
    shmem_ctx_longdouble_p, "lea rcx, [rsp + 8]", ctx_longdouble_p
);
x87_return_entry!(
    /// C: `long double shmem_longdouble_g(const long double *src, int pe)` (result in st(0)).
    shmem_longdouble_g, "mov rdx, rsp", longdouble_g
);
x87_return_entry!(
    /// C: `long double shmem_ctx_longdouble_g(shmem_ctx_t ctx, const long double *src, int pe)`.
    shmem_ctx_longdouble_g, "mov rcx, rsp", ctx_longdouble_g
);
