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

/// Table 7 (extended AMO types): fetch, set, swap.
macro_rules! extended_amos {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
            use super::*;
            entry!(pair [stringify!($tn), "_atomic_fetch"] atomic_fetch, ctx_atomic_fetch (source: *const $t) -> $t
                => |st, pe| Ok(st.word(source, pe)?.fetch()));
            entry!(pair [stringify!($tn), "_atomic_set"] atomic_set, ctx_atomic_set (dest: *mut $t, value: $t) -> ()
                => |st, pe| Ok(st.word(dest, pe)?.set(value)));
            entry!(pair [stringify!($tn), "_atomic_swap"] atomic_swap, ctx_atomic_swap (dest: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.swap(value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_nbi"] atomic_fetch_nbi, ctx_atomic_fetch_nbi (fetch: *mut $t, source: *const $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(source, pe)?.fetch()));
            entry!(pair [stringify!($tn), "_atomic_swap_nbi"] atomic_swap_nbi, ctx_atomic_swap_nbi (fetch: *mut $t, dest: *mut $t, value: $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.swap(value)));
        }
    )*};
}

/// Table 6 (standard AMO types): compare_swap, fetch_inc, inc, fetch_add, add.
macro_rules! standard_amos {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
            use super::*;
            entry!(pair [stringify!($tn), "_atomic_compare_swap"] atomic_compare_swap, ctx_atomic_compare_swap (dest: *mut $t, cond: $t, value: $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.compare_swap(cond, value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_inc"] atomic_fetch_inc, ctx_atomic_fetch_inc (dest: *mut $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.fetch_inc()));
            entry!(pair [stringify!($tn), "_atomic_inc"] atomic_inc, ctx_atomic_inc (dest: *mut $t) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.inc()));
            entry!(pair [stringify!($tn), "_atomic_fetch_add"] atomic_fetch_add, ctx_atomic_fetch_add (dest: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.fetch_add(value)));
            entry!(pair [stringify!($tn), "_atomic_add"] atomic_add, ctx_atomic_add (dest: *mut $t, value: $t) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.add(value)));
            entry!(pair [stringify!($tn), "_atomic_compare_swap_nbi"] atomic_compare_swap_nbi, ctx_atomic_compare_swap_nbi (fetch: *mut $t, dest: *mut $t, cond: $t, value: $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.compare_swap(cond, value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_inc_nbi"] atomic_fetch_inc_nbi, ctx_atomic_fetch_inc_nbi (fetch: *mut $t, dest: *mut $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_inc()));
            entry!(pair [stringify!($tn), "_atomic_fetch_add_nbi"] atomic_fetch_add_nbi, ctx_atomic_fetch_add_nbi (fetch: *mut $t, dest: *mut $t, value: $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_add(value)));
        }
    )*};
}

/// Table 8 (bitwise AMO types): and, or, xor and their fetching forms.
macro_rules! bitwise_amos {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
            use super::*;
            entry!(pair [stringify!($tn), "_atomic_fetch_and"] atomic_fetch_and, ctx_atomic_fetch_and (dest: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.fetch_and(value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_or"] atomic_fetch_or, ctx_atomic_fetch_or (dest: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.fetch_or(value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_xor"] atomic_fetch_xor, ctx_atomic_fetch_xor (dest: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(dest, pe)?.fetch_xor(value)));
            entry!(pair [stringify!($tn), "_atomic_and"] atomic_and, ctx_atomic_and (dest: *mut $t, value: $t) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.and(value)));
            entry!(pair [stringify!($tn), "_atomic_or"] atomic_or, ctx_atomic_or (dest: *mut $t, value: $t) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.or(value)));
            entry!(pair [stringify!($tn), "_atomic_xor"] atomic_xor, ctx_atomic_xor (dest: *mut $t, value: $t) -> ()
                => |st, pe| st.word(dest, pe).map(|w| w.xor(value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_and_nbi"] atomic_fetch_and_nbi, ctx_atomic_fetch_and_nbi (fetch: *mut $t, dest: *mut $t, value: $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_and(value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_or_nbi"] atomic_fetch_or_nbi, ctx_atomic_fetch_or_nbi (fetch: *mut $t, dest: *mut $t, value: $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_or(value)));
            entry!(pair [stringify!($tn), "_atomic_fetch_xor_nbi"] atomic_fetch_xor_nbi, ctx_atomic_fetch_xor_nbi (fetch: *mut $t, dest: *mut $t, value: $t) -> ()
                => |st, pe| write_fetch(fetch, st.word(dest, pe)?.fetch_xor(value)));
        }
    )*};
}

/// Deprecated (OpenSHMEM 1.3 and earlier) fetch, set, swap: int, long, longlong, float, double.
macro_rules! old_extended_amos {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
                        entry!(plain [stringify!($tn), "_fetch"] fetch (target: *const $t) -> $t
                => |st, pe| Ok(st.word(target, pe)?.fetch()));
            entry!(plain [stringify!($tn), "_set"] set (target: *mut $t, value: $t) -> ()
                => |st, pe| Ok(st.word(target, pe)?.set(value)));
            entry!(plain [stringify!($tn), "_swap"] swap (target: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(target, pe)?.swap(value)));
        }
    )*};
}

/// Deprecated cswap, finc, inc, fadd, add: int, long, longlong.
macro_rules! old_standard_amos {
    ($($tn:ident => $t:ty),* $(,)?) => {$(
        pub mod $tn {
                        entry!(plain [stringify!($tn), "_cswap"] cswap (target: *mut $t, cond: $t, value: $t) -> $t
                => |st, pe| Ok(st.word(target, pe)?.compare_swap(cond, value)));
            entry!(plain [stringify!($tn), "_finc"] finc (target: *mut $t) -> $t
                => |st, pe| Ok(st.word(target, pe)?.fetch_inc()));
            entry!(plain [stringify!($tn), "_inc"] inc (target: *mut $t) -> ()
                => |st, pe| st.word(target, pe).map(|w| w.inc()));
            entry!(plain [stringify!($tn), "_fadd"] fadd (target: *mut $t, value: $t) -> $t
                => |st, pe| Ok(st.word(target, pe)?.fetch_add(value)));
            entry!(plain [stringify!($tn), "_add"] add (target: *mut $t, value: $t) -> ()
                => |st, pe| st.word(target, pe).map(|w| w.add(value)));
        }
    )*};
}

mod extended {
    use super::*;
    crate::amo_extended_types!(extended_amos);
}

mod standard {
    use super::*;
    crate::amo_standard_types!(standard_amos);
}

mod bitwise {
    use super::*;
    crate::amo_bitwise_types!(bitwise_amos);
}

mod deprecated {
    mod extended {
        old_extended_amos! { int => i32, long => i64, longlong => i64, float => f32, double => f64 }
    }
    mod standard {
        old_standard_amos! { int => i32, long => i64, longlong => i64 }
    }
}

/// Open MPI's OSHMEM also exports the bitwise AMOs for int, long and long long (its C11 generic
/// macros pick them for those types), so binaries built with `oshcc` call them: we export them
/// too for the LD_PRELOAD swap-in. Not declared in our shmem.h (not in the specification).
mod oshmem_bitwise {
    use super::*;
    bitwise_amos! { int => i32, long => i64, longlong => i64 }
}
