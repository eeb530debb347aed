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
use crate::runtime::{self, State};

// The C boundary. Every exported routine runs its body through `boundary`, which fences
// panics and names the routine on every error made below it (the runtime carries no routine
// names), then reacts as the routine's return type allows:
// - `fence` / `with_state` (void and value-returning routines, OpenSHMEM's and NVSHMEM's): the
//   error is fatal (a message naming the routine, then a global exit);
// - `status` / `status_of` (NVSHMEM and OpenSHMEM routines returning a status): a warning, then
//   `ErrorKind::status`, the one table of C codes;
// - `null_on_error` (routines returning a pointer that may be NULL): a warning, then NULL;
// - `alloc_or_null` (the allocation routines): NULL after a warning when the heap is full
//   (`ErrorKind::HeapFull`), any other error is fatal.
// Routines that fail without an error (a split that makes no team, a context not created)
// say why with `warn_failed`, which names the routine too.
// Each is inlined into its entry point, so the happy path is the body alone (catch_unwind
// costs nothing until something unwinds); the error paths are out of line.

/// Runs a routine's body with panics fenced; an error comes back named after `routine`.
#[inline(always)]
pub fn boundary<R>(routine: &'static str, body: impl FnOnce() -> Result<R>) -> Result<R> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(named(e, routine)),
        Err(panic) => Err(panic_error(routine, panic)),
    }
}

/// For routines whose failure is fatal: Ok returns the value; an error or a panic ends the job.
#[inline(always)]
pub fn fence<R>(routine: &'static str, body: impl FnOnce() -> Result<R>) -> R {
    match boundary(routine, body) {
        Ok(v) => v,
        Err(e) => fail(&e),
    }
}

/// Like `fence`, with the runtime state already looked up (every routine after init).
#[inline(always)]
pub fn with_state<R>(routine: &'static str, body: impl FnOnce(&'static State) -> Result<R>) -> R {
    fence(routine, || body(runtime::state()?))
}

/// For routines that return a status: NVSHMEMX_SUCCESS (0), or after a warning naming the
/// routine, the error's code (`ErrorKind::status`).
#[inline]
pub fn status(routine: &'static str, body: impl FnOnce() -> Result<()>) -> c_int {
    status_of(routine, || body().map(|_| RshmemStatus::Success as c_int))
}

/// Like `status` for bodies that choose their own non-error return value.
#[inline]
pub fn status_of(routine: &'static str, body: impl FnOnce() -> Result<c_int>) -> c_int {
    match boundary(routine, body) {
        Ok(rc) => rc,
        Err(e) => warned(&e).code(),
    }
}

/// For routines that return a pointer: the pointer, or after a warning naming the routine, NULL.
#[inline]
pub fn null_on_error<T>(routine: &'static str, body: impl FnOnce() -> Result<*mut T>) -> *mut T {
    match boundary(routine, body) {
        Ok(p) => p,
        Err(e) => {
            warned(&e);
            std::ptr::null_mut()
        }
    }
}

/// For the allocation routines (shmem_malloc, nvshmem_malloc, ...): the block, or NULL after a
/// warning naming the routine when the heap has no room for it (`ErrorKind::HeapFull`, which
/// every PE meets alike, so all of them return NULL). RSHMEM_ABORT_ON_OOM=1 makes that fatal,
/// as every other error is.
#[inline(always)]
pub fn alloc_or_null<T>(routine: &'static str, body: impl FnOnce(&'static State) -> Result<*mut T>) -> *mut T {
    match boundary(routine, || body(runtime::state()?)) {
        Ok(p) => p,
        Err(e) => {
            heap_full(&e);
            std::ptr::null_mut()
        }
    }
}

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
    fn status_and_pointer_reactions() {
        assert_eq!(status_of("nvshmem_test", || Ok(42)), 42);
        assert_eq!(status("nvshmem_test", || Err(Error::of(ErrorKind::OutOfMemory, "full"))), RshmemStatus::ErrorOutOfMemory as c_int);
        let mut word = 7u64;
        let p: *mut u64 = &mut word;
        assert_eq!(null_on_error("nvshmem_test", || Ok(p)), p);
        assert!(null_on_error::<u64>("nvshmem_test", || Err(Error::invalid_value("bad size"))).is_null());
    }
}
