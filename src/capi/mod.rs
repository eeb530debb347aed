//! The C entry points, one file per chapter of the OpenSHMEM specification (NVSHMEM's host API
//! lives beside them). Each function is thin: it calls `fence`, which catches panics and turns
//! every error into the OpenSHMEM reaction (message naming the routine, then global exit).
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

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{Error, ErrorKind, Result};
use crate::runtime::{self, State};

/// Runs the body of an OpenSHMEM routine: Ok returns the value; an error or a panic is fatal.
/// Inlined into every entry point so that the happy path is the body alone (catch_unwind costs
/// nothing until something unwinds); the error paths are out of line.
#[inline(always)]
pub fn fence<R>(routine: &'static str, body: impl FnOnce() -> Result<R>) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => fail(&e),
        Err(panic) => fail_panic(routine, panic),
    }
}

#[cold]
#[inline(never)]
fn fail(e: &Error) -> ! {
    runtime::fatal(e)
}

#[cold]
#[inline(never)]
fn fail_panic(routine: &'static str, panic: Box<dyn std::any::Any + Send>) -> ! {
    runtime::fatal(&panic_error(routine, panic))
}

/// Like `fence`, with the runtime state already looked up (every routine after init).
#[inline(always)]
pub fn with_state<R>(routine: &'static str, body: impl FnOnce(&'static State) -> Result<R>) -> R {
    fence(routine, || body(runtime::state(routine)?))
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

fn panic_error(routine: &'static str, panic: Box<dyn std::any::Any + Send>) -> Error {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::new(ErrorKind::Internal, routine, format!("internal error (please report): {what}"))
}
