//! Atomic memory operations (OpenSHMEM 1.5 §9.8): the blocking AMOs, their context forms, the
//! non-blocking fetching forms (`_nbi`, result written to a local `fetch`) and the deprecated
//! names of OpenSHMEM 1.3. Each call is one hardware atomic on the target PE's word (see
//! `runtime::amo`); on shared memory a non-blocking AMO is complete when it returns.

use crate::runtime::amo::write_fetch;

/// Defines the C routine `shmem_<stem>` (`plain`) or the pair `shmem_<stem>` and
/// `shmem_ctx_<stem>` (`pair`) from one body. The body sees `$st` (the runtime state), `$pe`
/// (the world PE: the ctx form maps its argument through the context's team), and returns
/// `Result<$ret>`.
macro_rules! entry {
    (plain [$($stem:tt)*] $f:ident ($($arg:ident : $aty:ty),*) -> $ret:ty => |$st:ident, $pe:ident| $body:expr) => {
        #[export_name = concat!("shmem_", $($stem)*)]
        #[allow(clippy::unused_unit)]
        pub extern "C" fn $f($($arg: $aty,)* pe: std::ffi::c_int) -> $ret {
            $crate::capi::ffi_boundary!(concat!("shmem_", $($stem)*), |$st| {
                let $pe = pe;
                $body
            })
        }
    };
    (pair [$($stem:tt)*] $f:ident, $ctx_f:ident ($($arg:ident : $aty:ty),*) -> $ret:ty => |$st:ident, $pe:ident| $body:expr) => {
        $crate::capi::amo::entry!(plain [$($stem)*] $f ($($arg: $aty),*) -> $ret => |$st, $pe| $body);
        #[export_name = concat!("shmem_ctx_", $($stem)*)]
        #[allow(clippy::unused_unit)]
        pub extern "C" fn $ctx_f(ctx: $crate::capi::ctx::ShmemCtx, $($arg: $aty,)* pe: std::ffi::c_int) -> $ret {
            $crate::capi::ffi_boundary!(concat!("shmem_ctx_", $($stem)*), |$st| {
                let $pe = $st.ctx_pe(ctx.value(), pe)?;
                $body
            })
        }
    };
}
pub(crate) use entry;

/// One module per type (`$tn => $t`) holding the routines listed, with `T` = `$t`; each
/// routine is `pair f, ctx_f (args) -> ret => |st, pe| body;` or `plain f (...) ...` (as
/// `entry!`), and its C name is `shmem_<tn>_<f>` (and `shmem_ctx_<tn>_<f>`).
macro_rules! amos {
    ($routines:tt; $($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
            #[allow(unused_imports)]
            use super::*;
            type T = $t;
            amos!(@each $tn $routines);
        }
    )*};
    (@each $tn:ident [$($kind:ident $f:ident $(, $ctx_f:ident)? ($($args:tt)*) -> $ret:ty => |$st:ident, $pe:ident| $body:expr;)*]) => {$(
        entry!($kind [stringify!($tn), concat!("_", stringify!($f))] $f $(, $ctx_f)? ($($args)*) -> $ret => |$st, $pe| $body);
    )*};
}

/// Table 8 (bitwise AMO types): and, or, xor and their fetching forms.
macro_rules! bitwise_amos {
    ($($types:tt)*) => {
        amos! { [
            pair atomic_fetch_and, ctx_atomic_fetch_and (dest: *mut T, value: T) -> T
                => |st, pe| Ok(st.word(dest, pe)?.fetch_and(value));
            pair atomic_fetch_or, ctx_atomic_fetch_or (dest: *mut T, value: T) -> T
                => |st, pe| Ok(st.word(dest, pe)?.fetch_or(value));
            pair atomic_fetch_xor, ctx_atomic_fetch_xor (dest: *mut T, value: T) -> T
                => |st, pe| Ok(st.word(dest, pe)?.fetch_xor(value));
            pair atomic_and, ctx_atomic_and (dest: *mut T, value: T) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.and(value));
            pair atomic_or, ctx_atomic_or (dest: *mut T, value: T) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.or(value));
            pair atomic_xor, ctx_atomic_xor (dest: *mut T, value: T) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.xor(value));
            pair atomic_fetch_and_nbi, ctx_atomic_fetch_and_nbi (fetch: *mut T, dest: *mut T, value: T) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_and(value));
            pair atomic_fetch_or_nbi, ctx_atomic_fetch_or_nbi (fetch: *mut T, dest: *mut T, value: T) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_or(value));
            pair atomic_fetch_xor_nbi, ctx_atomic_fetch_xor_nbi (fetch: *mut T, dest: *mut T, value: T) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_xor(value));
        ]; $($types)* }
    };
}

/// Table 7 (extended AMO types): fetch, set, swap.
mod extended {
    use super::*;
    crate::amo_extended_types!(amos, [
        pair atomic_fetch, ctx_atomic_fetch (source: *const T) -> T
            => |st, pe| Ok(st.word(source, pe)?.fetch());
        pair atomic_set, ctx_atomic_set (dest: *mut T, value: T) -> ()
            => |st, pe| st.word(dest, pe).map(|w| w.set(value));
        pair atomic_swap, ctx_atomic_swap (dest: *mut T, value: T) -> T
            => |st, pe| Ok(st.word(dest, pe)?.swap(value));
        pair atomic_fetch_nbi, ctx_atomic_fetch_nbi (fetch: *mut T, source: *const T) -> ()
            => |st, pe| write_fetch(fetch, st.word(source, pe)?.fetch());
        pair atomic_swap_nbi, ctx_atomic_swap_nbi (fetch: *mut T, dest: *mut T, value: T) -> ()
            => |st, pe| write_fetch(fetch, st.word(dest, pe)?.swap(value));
    ]);
}

/// Table 6 (standard AMO types): compare_swap, fetch_inc, inc, fetch_add, add.
mod standard {
    use super::*;
    crate::amo_standard_types!(amos, [
        pair atomic_compare_swap, ctx_atomic_compare_swap (dest: *mut T, cond: T, value: T) -> T
            => |st, pe| Ok(st.word(dest, pe)?.compare_swap(cond, value));
        pair atomic_fetch_inc, ctx_atomic_fetch_inc (dest: *mut T) -> T
            => |st, pe| Ok(st.word(dest, pe)?.fetch_inc());
        pair atomic_inc, ctx_atomic_inc (dest: *mut T) -> ()
            => |st, pe| st.word(dest, pe).map(|w| w.inc());
        pair atomic_fetch_add, ctx_atomic_fetch_add (dest: *mut T, value: T) -> T
            => |st, pe| Ok(st.word(dest, pe)?.fetch_add(value));
        pair atomic_add, ctx_atomic_add (dest: *mut T, value: T) -> ()
            => |st, pe| st.word(dest, pe).map(|w| w.add(value));
        pair atomic_compare_swap_nbi, ctx_atomic_compare_swap_nbi (fetch: *mut T, dest: *mut T, cond: T, value: T) -> ()
            => |st, pe| write_fetch(fetch, st.word(dest, pe)?.compare_swap(cond, value));
        pair atomic_fetch_inc_nbi, ctx_atomic_fetch_inc_nbi (fetch: *mut T, dest: *mut T) -> ()
            => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_inc());
        pair atomic_fetch_add_nbi, ctx_atomic_fetch_add_nbi (fetch: *mut T, dest: *mut T, value: T) -> ()
            => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_add(value));
    ]);
}

mod bitwise {
    use super::*;
    crate::amo_bitwise_types!(bitwise_amos);
}

/// Deprecated (OpenSHMEM 1.3 and earlier) fetch, set, swap (int, long, longlong, float, double)
/// and cswap, finc, inc, fadd, add (int, long, longlong).
mod deprecated {
    mod extended {
        amos! { [
            plain fetch (target: *const T) -> T
                => |st, pe| Ok(st.word(target, pe)?.fetch());
            plain set (target: *mut T, value: T) -> ()
                => |st, pe| st.word(target, pe).map(|w| w.set(value));
            plain swap (target: *mut T, value: T) -> T
                => |st, pe| Ok(st.word(target, pe)?.swap(value));
        ]; int => i32, long => i64, longlong => i64, float => f32, double => f64 }
    }
    mod standard {
        amos! { [
            plain cswap (target: *mut T, cond: T, value: T) -> T
                => |st, pe| Ok(st.word(target, pe)?.compare_swap(cond, value));
            plain finc (target: *mut T) -> T
                => |st, pe| Ok(st.word(target, pe)?.fetch_inc());
            plain inc (target: *mut T) -> ()
                => |st, pe| st.word(target, pe).map(|w| w.inc());
            plain fadd (target: *mut T, value: T) -> T
                => |st, pe| Ok(st.word(target, pe)?.fetch_add(value));
            plain add (target: *mut T, value: T) -> ()
                => |st, pe| st.word(target, pe).map(|w| w.add(value));
        ]; int => i32, long => i64, longlong => i64 }
    }
}

/// Open MPI's OSHMEM also exports the bitwise AMOs for int, long and long long (its C11 generic
/// macros pick them for those types), so binaries built with `oshcc` call them: we export them
/// too for the LD_PRELOAD swap-in. Not declared in our shmem.h (not in the specification).
mod oshmem_bitwise {
    use super::*;
    bitwise_amos! { int => i32, long => i64, longlong => i64 }
}
