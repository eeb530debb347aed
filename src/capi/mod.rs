//! The C entry points, one file per chapter of the OpenSHMEM specification (NVSHMEM's host API
//! lives beside them). Each function is thin: its body runs inside the one C boundary below
//! (`boundary` and its reactions), which fences panics, names the routine and maps errors.
//!
//! ABI: constant values, type representations and exported objects follow Open MPI's OSHMEM,
//! so programs built with Debian's `oshcc` run with `LD_PRELOAD=librshmem.so`.

pub mod types;
// Generated type lists (macros), before the modules that expand them.
#[macro_use]
mod type_tables;

pub mod amo;
pub mod coll;
pub mod ctx;
pub mod lock;
pub mod memory;
pub mod nvshmem;
pub mod p2p;
pub mod profiling;
pub mod rma;
pub mod setup;
pub mod shmemx;
pub mod signal;
pub mod team;

use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::abi::RshmemStatus;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime;

// The C boundary: one macro, `ffi_boundary!`. Every exported routine keeps its signature
// written out (the C prototype, as the headers and cbindgen read it) and its body is one call:
//
//     #[no_mangle]
//     pub extern "C" fn shmem_my_pe() -> c_int {
//         ffi_boundary!(shmem_my_pe, |st| Ok(st.me as c_int))
//     }
//
// The first argument names the routine: the function's own name (an identifier, stringified)
// or, for routines exported under another name, the `export_name` expression (`concat!(...)`);
// the body sees it as `ROUTINE`. `|st|` looks up the runtime state first (every routine after
// init); `||` does not. The body returns `Result`; the macro fences panics, names every error
// made below it (the runtime carries no routine names) and reacts as the routine's return type
// allows, through the `Reaction` trait:
// - by default the return type decides (`CReturn`): void, numbers and pointers have no value to
//   spare for an error, so the error is fatal (a message naming the routine, then a global exit);
// - where one C type has two meanings, the routine names the other reaction after `=>`:
//   `=> Status` (an `int` that is an NVSHMEM/OpenSHMEM status: a warning, then the error's code
//   from `ErrorKind::status`, the one table of C codes; `=> StatusCode` when the body picks
//   the code), `=> NullOnError<_>` (a pointer that
//   is NULL on failure: a warning, then NULL), `=> AllocOrNull<_>` (the allocation routines:
//   NULL after a warning when the heap is full, `ErrorKind::HeapFull`; any other error fatal).
// Routines that fail without an error (a split that makes no team, a context not created)
// say why with `warn_failed`, which names the routine too.
// Everything is inlined into the entry point, so the happy path is the body alone
// (catch_unwind costs nothing until something unwinds); the error paths are out of line.

/// The C boundary (see above): `ffi_boundary!(name [=> Reaction], |st| body)` or
/// `ffi_boundary!(name [=> Reaction], || body)`.
macro_rules! ffi_boundary {
    (@run $name:expr, $how:ty, || $body:expr) => {{
        const ROUTINE: &str = $name;
        $crate::capi::react::<$how>(ROUTINE, || $body)
    }};
    (@run $name:expr, $how:ty, |$st:ident| $body:expr) => {{
        const ROUTINE: &str = $name;
        $crate::capi::react::<$how>(ROUTINE, || {
            let $st = $crate::runtime::state()?;
            $body
        })
    }};
    ($name:ident => $how:ty, $($body:tt)+) => {
        $crate::capi::ffi_boundary!(@run stringify!($name), $how, $($body)+)
    };
    ($name:ident, $($body:tt)+) => {
        $crate::capi::ffi_boundary!(@run stringify!($name), $crate::capi::ByType<_>, $($body)+)
    };
    ($name:expr => $how:ty, $($body:tt)+) => {
        $crate::capi::ffi_boundary!(@run $name, $how, $($body)+)
    };
    ($name:expr, $($body:tt)+) => {
        $crate::capi::ffi_boundary!(@run $name, $crate::capi::ByType<_>, $($body)+)
    };
}
pub(crate) use ffi_boundary;

/// The sized RMA families (`shmem_put8` ... `shmem_put128`, `nvshmem_put8` ..., on the host
/// and on a stream): `pub mod s8` ... `s128` in the module where it is called, each expanding
/// `$routines!($args.., "<bits>", <bytes>)` with that module's parent's names in scope.
macro_rules! sized_modules {
    ($routines:ident $(, $arg:expr)*) => {
        $crate::capi::sized_modules!(@each $routines [$($arg),*]; s8 => 8, s16 => 16, s32 => 32, s64 => 64, s128 => 128);
    };
    (@each $routines:ident [$($arg:expr),*]; $name:ident => $bits:literal $(, $more:ident => $more_bits:literal)*) => {
        pub mod $name {
            use super::super::*;
            $routines!($($arg,)* stringify!($bits), $bits / 8);
        }
        $crate::capi::sized_modules!(@each $routines [$($arg),*]; $($more => $more_bits),*);
    };
    (@each $routines:ident [$($arg:expr),*];) => {};
}
pub(crate) use sized_modules;

/// `shmem_my_pe`/`shmem_n_pes` and their NVSHMEM twins: this PE's number and the number of PEs
/// of the job, each an error (named after the routine) before initialization. `c_int` is the
/// caller's (both files import it); aliases such as `_my_pe` call the routines by name
/// (scripts/check-boundary.py reads the names this call gives).
macro_rules! pe_queries {
    ($my_pe:ident, $n_pes:ident) => {
        #[no_mangle]
        pub extern "C" fn $my_pe() -> c_int {
            $crate::capi::ffi_boundary!($my_pe, |st| Ok(st.me as c_int))
        }

        #[no_mangle]
        pub extern "C" fn $n_pes() -> c_int {
            $crate::capi::ffi_boundary!($n_pes, |st| Ok(st.npes as c_int))
        }
    };
}
pub(crate) use pe_queries;

/// Runs a routine's body with panics fenced; an error comes back named after `routine`.
#[inline(always)]
pub fn boundary<R>(routine: &'static str, body: impl FnOnce() -> Result<R>) -> Result<R> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(named(e, routine)),
        Err(panic) => Err(panic_error(routine, panic)),
    }
}

/// What a C entry point returns: its body's value on success (converted by `Returned`), and on
/// an error (already named after the routine) what `failed` makes of it.
pub trait Reaction {
    /// What the body returns on success.
    type Value: Returned<Self::Out>;
    /// The C return type.
    type Out;
    fn failed(e: Error) -> Self::Out;
}

/// A body's value as the C return type `Out`: itself, or (a status body's `()`) success.
pub trait Returned<Out> {
    fn returned(self) -> Out;
}

impl<T> Returned<T> for T {
    #[inline(always)]
    fn returned(self) -> T {
        self
    }
}

impl Returned<c_int> for () {
    #[inline(always)]
    fn returned(self) -> c_int {
        RshmemStatus::Success as c_int
    }
}

/// `ffi_boundary!`'s expansion: the body under `boundary`, then the reaction `R`.
#[inline(always)]
pub fn react<R: Reaction>(routine: &'static str, body: impl FnOnce() -> Result<R::Value>) -> R::Out {
    match boundary(routine, body) {
        Ok(v) => v.returned(),
        Err(e) => R::failed(e),
    }
}

/// A C return type's own reaction to an error (the default one, `ByType`).
pub trait CReturn {
    fn on_error(e: Error) -> Self;
}

/// The reaction the return type `T` chooses (`CReturn`).
pub struct ByType<T>(std::marker::PhantomData<T>);

impl<T: CReturn> Reaction for ByType<T> {
    type Value = T;
    type Out = T;
    #[inline(always)]
    fn failed(e: Error) -> T {
        T::on_error(e)
    }
}

// Void, numbers and pointers: every value is a valid result, so an error ends the job.
macro_rules! fatal_on_error {
    (@impl [$($g:ident)?] $t:ty) => {
        impl<$($g)?> CReturn for $t {
            #[inline(always)]
            fn on_error(e: Error) -> Self {
                fail(&e)
            }
        }
    };
    (impl<T> for $(*$ptr:ident T),*) => {$(
        fatal_on_error!(@impl [T] *$ptr T);
    )*};
    ($($t:ty),*) => {$(
        fatal_on_error!(@impl [] $t);
    )*};
}
fatal_on_error!((), i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);
fatal_on_error!(crate::abi::LongDouble, ctx::ShmemCtx);
fatal_on_error!(impl<T> for *mut T, *const T);

/// `=> Status`: an `int` that is a status: NVSHMEMX_SUCCESS (0) when the body returns `Ok(())`,
/// or after a warning naming the routine, the error's code (`ErrorKind::status`).
pub type Status = StatusOf<()>;

/// `=> StatusCode`: like `Status` for bodies that choose their own code (`Ok(rc)`).
pub type StatusCode = StatusOf<c_int>;

/// The two status reactions: the body's `()` or code is returned as `Returned` makes it.
pub struct StatusOf<V>(std::marker::PhantomData<V>);

impl<V: Returned<c_int>> Reaction for StatusOf<V> {
    type Value = V;
    type Out = c_int;
    #[inline(always)]
    fn failed(e: Error) -> c_int {
        warned(&e).code()
    }
}

/// `=> ValueOnError<V>`: an `int` query whose header documents the value `V` for "unknown"
/// (rshmem_pes_on_my_gpu: 1): the body's value, or after a warning naming the routine, `V`.
pub struct ValueOnError<const V: c_int>;

impl<const V: c_int> Reaction for ValueOnError<V> {
    type Value = c_int;
    type Out = c_int;
    #[inline(always)]
    fn failed(e: Error) -> c_int {
        warned(&e);
        V
    }
}

// The pointer reactions: the pointer, or NULL once `$report` has said why.
macro_rules! null_after {
    ($(#[$doc:meta])* $name:ident, $report:path) => {
        $(#[$doc])*
        pub struct $name<T>(std::marker::PhantomData<T>);

        impl<T> Reaction for $name<T> {
            type Value = *mut T;
            type Out = *mut T;
            #[inline(always)]
            fn failed(e: Error) -> *mut T {
                $report(&e);
                std::ptr::null_mut()
            }
        }
    };
}

null_after!(
    /// `=> NullOnError<_>`: a pointer, or after a warning naming the routine, NULL.
    NullOnError,
    warned
);
null_after!(
    /// `=> AllocOrNull<_>`, the allocation routines (shmem_malloc, nvshmem_malloc, ...): the
    /// block, or NULL after a warning naming the routine when the heap has no room for it
    /// (`ErrorKind::HeapFull`, which every PE meets alike, so all of them return NULL).
    /// RSHMEM_ABORT_ON_OOM=1 makes that fatal, as every other error is.
    AllocOrNull,
    heap_full
);

/// Says why a routine failed without ending the job (it returns NULL or nonzero instead, as
/// `returning` tells): a warning naming the routine.
#[cold]
#[inline(never)]
pub(crate) fn warn_failed(routine: &'static str, e: &Error, returning: &str) {
    let e = e.clone().named(routine);
    crate::log::warn(&format!("{e}{returning}"));
}

/// `alloc_or_null`'s error path: returns (for NULL) only when the heap is full and the job
/// goes on.
#[cold]
#[inline(never)]
fn heap_full(e: &Error) {
    if e.kind != ErrorKind::HeapFull || crate::env::enabled(crate::env::ABORT_ON_OOM) {
        fail(e);
    }
    warn_failed(e.routine, e, " (returning NULL; RSHMEM_ABORT_ON_OOM=1 ends the job instead)");
}

#[cold]
#[inline(never)]
fn named(e: Error, routine: &'static str) -> Error {
    e.named(routine)
}

#[cold]
#[inline(never)]
fn fail(e: &Error) -> ! {
    runtime::fatal(e)
}

#[cold]
#[inline(never)]
fn warned(e: &Error) -> ErrorKind {
    crate::log::warn(&e.to_string());
    e.kind
}

/// Writes a C out-parameter, ignoring NULL (the routines that take one allow it to be absent).
pub(crate) fn write_out<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: C callers pass either NULL (handled above) or a pointer to writable storage
        // for one T, as the routine's prototype requires.
        unsafe { out.write(value) };
    }
}

/// Writes `text` as a NUL-terminated C string into a caller's buffer of `MAX_NAME_LEN` bytes
/// (the size SHMEM_MAX_NAME_LEN and NVSHMEM_MAX_NAME_LEN promise), cut to fit; NULL is ignored.
pub(crate) fn write_name(dst: *mut std::ffi::c_char, text: &str) {
    if dst.is_null() {
        return;
    }
    let n = text.len().min(setup::MAX_NAME_LEN - 1);
    // SAFETY: C callers pass a buffer of MAX_NAME_LEN bytes (the routine's contract); n + 1 of
    // them are written.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), dst.cast(), n);
        *dst.add(n) = 0;
    }
}

#[cold]
#[inline(never)]
fn panic_error(routine: &'static str, panic: Box<dyn std::any::Any + Send>) -> Error {
    // An error raised where it could not be returned (`runtime::raise`).
    let panic = match panic.downcast::<Error>() {
        Ok(e) => return e.named(routine),
        Err(other) => other,
    };
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::new(ErrorKind::Internal, routine, format!("internal error (please report): {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_names_errors_made_below_it() {
        let e = boundary("shmem_test", || Err::<(), _>(Error::invalid_value("nelems is negative"))).unwrap_err();
        assert_eq!(e.to_string(), "shmem_test: nelems is negative");
        // A name given below the boundary on purpose stays.
        let named = || Err::<(), _>(Error::new(ErrorKind::Bootstrap, "shmem_init", "no launcher"));
        assert_eq!(boundary("nvshmem_malloc", named).unwrap_err().to_string(), "shmem_init: no launcher");
    }

    #[test]
    fn panics_and_raised_errors_become_named_errors() {
        let e = boundary("shmem_test", || -> Result<()> { panic!("boom") }).unwrap_err();
        assert_eq!((e.kind, e.to_string().as_str()), (ErrorKind::Internal, "shmem_test: internal error (please report): boom"));
        let raised = || -> Result<()> { runtime::raise(Error::of(ErrorKind::InvalidPe, "PE 9 is out of range")) };
        let e = boundary("shmem_int_atomic_fetch", raised).unwrap_err();
        assert_eq!((e.kind, e.to_string().as_str()), (ErrorKind::InvalidPe, "shmem_int_atomic_fetch: PE 9 is out of range"));
    }

    #[test]
    fn reactions_by_return_type_and_by_name() {
        fn status(fail: bool) -> c_int {
            ffi_boundary!(nvshmem_test => Status, || if fail { Err(Error::of(ErrorKind::OutOfMemory, "full")) } else { Ok(()) })
        }
        assert_eq!((status(false), status(true)), (0, RshmemStatus::ErrorOutOfMemory as c_int));
        assert_eq!(ffi_boundary!(nvshmem_test => StatusCode, || Ok(42)), 42);
        fn share(torn: bool) -> c_int {
            ffi_boundary!(rshmem_pes_on_my_gpu => ValueOnError<1>, || if torn { panic!("share table torn") } else { Ok(3) })
        }
        assert_eq!((share(false), share(true)), (3, 1), "a panic gives the documented value");
        let mut word = 7u64;
        let p: *mut u64 = &mut word;
        assert_eq!(ffi_boundary!(nvshmem_test => NullOnError<_>, || Ok(p)), p);
        assert!(ffi_boundary!(nvshmem_test => NullOnError<u64>, || Err(Error::invalid_value("bad size"))).is_null());
        // The default reaction is the return type's; the body sees the routine's name.
        let v: f64 = ffi_boundary!(concat!("shmem_", "test"), || Ok(ROUTINE.len() as f64));
        assert_eq!(v, 10.0);
    }
}
