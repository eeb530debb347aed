//! Communication management (OpenSHMEM 1.5 §9.4) and memory ordering (§9.9): contexts,
//! fence and quiet.

use std::ffi::{c_int, c_long, c_void};

use super::{ffi_boundary, warn_failed};
use crate::error::{Error, ErrorKind, Result};
use crate::log;
use crate::runtime::ctx::{DEFAULT, INVALID};
use crate::runtime::{team, State};

/// C `shmem_ctx_t`: an opaque pointer-sized handle (see runtime/ctx.rs for its encoding).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShmemCtx(pub *const c_void);

// SAFETY: the handle is an integer in pointer clothing; it is never dereferenced.
unsafe impl Sync for ShmemCtx {}

impl ShmemCtx {
    #[inline]
    pub fn value(self) -> usize {
        self.0 as usize
    }
    fn from_value(v: usize) -> ShmemCtx {
        ShmemCtx(v as *const c_void)
    }
}

/// `SHMEM_CTX_DEFAULT` (Open MPI's header spells it `oshmem_ctx_default`). Programs may hold a
/// copy of this object (copy relocation), so the library recognises the handle by its value.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static oshmem_ctx_default: ShmemCtx = ShmemCtx(DEFAULT as *const c_void);

/// Team table index of a C `shmem_team_t` (index + 1 as a pointer; NULL is SHMEM_TEAM_INVALID).
fn team_index(team: *mut c_void) -> Option<usize> {
    (team as usize).checked_sub(1)
}

fn team_handle(index: usize) -> *mut c_void {
    (index + 1) as *mut c_void
}

/// Common body of the two creation routines: 0 and a handle, or nonzero and SHMEM_CTX_INVALID
/// (a failed creation is not an error in OpenSHMEM, so it only logs why).
fn create(st: &State, routine: &'static str, team: Option<usize>, options: c_long, ctx: *mut ShmemCtx) -> Result<c_int> {
    if ctx.is_null() {
        return Err(Error::invalid_value("the ctx argument (where the new handle goes) is NULL"));
    }
    let (handle, rc) = match team.map(|t| st.ctx_create(t, options)) {
        Some(Ok(h)) => (h, 0),
        Some(Err(e)) => {
            warn_failed(routine, &e, " (returning nonzero, ctx = SHMEM_CTX_INVALID)");
            (INVALID, e.kind.code())
        }
        // The specification's way to ask "am I in this team?": not worth a warning.
        None => {
            log::info(&format!("{routine}: the team is SHMEM_TEAM_INVALID (returning nonzero, ctx = SHMEM_CTX_INVALID)"));
            (INVALID, ErrorKind::InvalidArgument.code())
        }
    };
    // SAFETY: ctx is non-NULL (checked) and points at the caller's shmem_ctx_t.
    unsafe { ctx.write(ShmemCtx::from_value(handle)) };
    Ok(rc)
}

#[no_mangle]
pub extern "C" fn shmem_ctx_create(options: c_long, ctx: *mut ShmemCtx) -> c_int {
    ffi_boundary!(shmem_ctx_create, |st| create(st, ROUTINE, Some(team::WORLD), options, ctx))
}

#[no_mangle]
pub extern "C" fn shmem_team_create_ctx(team: *mut c_void, options: c_long, ctx: *mut ShmemCtx) -> c_int {
    ffi_boundary!(shmem_team_create_ctx, |st| create(st, ROUTINE, team_index(team), options, ctx))
}

/// Destroys a context after completing its operations; SHMEM_CTX_INVALID is ignored.
#[no_mangle]
pub extern "C" fn shmem_ctx_destroy(ctx: ShmemCtx) {
    ffi_boundary!(shmem_ctx_destroy, |st| {
        if ctx.value() == INVALID {
            return Ok(());
        }
        st.ctx_destroy(ctx.value())
    })
}

/// 0 and the context's team, or nonzero and SHMEM_TEAM_INVALID for SHMEM_CTX_INVALID.
#[no_mangle]
pub extern "C" fn shmem_ctx_get_team(ctx: ShmemCtx, team: *mut *mut c_void) -> c_int {
    ffi_boundary!(shmem_ctx_get_team, |st| {
        if team.is_null() {
            return Err(Error::invalid_value("the team argument (where the handle goes) is NULL"));
        }
        let (handle, rc) = if ctx.value() == INVALID {
            (std::ptr::null_mut(), ErrorKind::InvalidArgument.code())
        } else {
            (team_handle(st.ctx_team(ctx.value())?), 0)
        };
        super::write_out(team, handle);
        Ok(rc)
    })
}

/// Orders this PE's puts and AMOs to each PE: on shared memory, a full memory fence.
#[no_mangle]
pub extern "C" fn shmem_fence() {
    ffi_boundary!(shmem_fence, |st| {
        st.quiet();
        Ok(())
    })
}

/// Completes this PE's puts, AMOs and nbi operations.
#[no_mangle]
pub extern "C" fn shmem_quiet() {
    ffi_boundary!(shmem_quiet, |st| {
        st.quiet();
        Ok(())
    })
}

/// shmem_fence on one context; SHMEM_CTX_INVALID does nothing.
#[no_mangle]
pub extern "C" fn shmem_ctx_fence(ctx: ShmemCtx) {
    ffi_boundary!(shmem_ctx_fence, |st| if ctx.value() == INVALID { Ok(()) } else { st.ctx_quiet(ctx.value()) })
}

/// shmem_quiet on one context; SHMEM_CTX_INVALID does nothing.
#[no_mangle]
pub extern "C" fn shmem_ctx_quiet(ctx: ShmemCtx) {
    ffi_boundary!(shmem_ctx_quiet, |st| if ctx.value() == INVALID { Ok(()) } else { st.ctx_quiet(ctx.value()) })
}
