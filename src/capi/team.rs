//! Team management routines (OpenSHMEM 1.5 §9.4).
//!
//! `shmem_team_t` is a pointer whose value is the team-table index + 1: NULL is
//! SHMEM_TEAM_INVALID, 1 is SHMEM_TEAM_WORLD, 2 is SHMEM_TEAM_SHARED (runtime/team.rs). Team
//! handles are local: a split gives members a handle and non-members SHMEM_TEAM_INVALID.

use std::ffi::{c_int, c_long, c_void};
use std::sync::Arc;

use super::{ffi_boundary, warn_failed};
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::team::{Split, Team, Triplet, WORLD};
use crate::runtime::State;

pub type ShmemTeam = *mut c_void;

/// shmem_team_config_t (OpenSHMEM 1.5: one field).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TeamConfig {
    pub num_contexts: c_int,
}

/// SHMEM_TEAM_NUM_CONTEXTS: the config_mask bit for `num_contexts`.
pub const TEAM_NUM_CONTEXTS: c_long = 1;

pub const TEAM_INVALID: ShmemTeam = std::ptr::null_mut();

/// Table index of a handle; None for SHMEM_TEAM_INVALID.
pub fn team_index(t: ShmemTeam) -> Option<usize> {
    (t as usize).checked_sub(1)
}

pub fn team_handle(id: usize) -> ShmemTeam {
    (id + 1) as ShmemTeam
}

/// The team a routine that needs a live team operates on (collectives, splits' parents).
pub fn team_of(st: &State, t: ShmemTeam) -> Result<(usize, Arc<Team>)> {
    match team_index(t) {
        None => Err(Error::of(
            ErrorKind::NotMember, "the team is SHMEM_TEAM_INVALID: this PE is not a member of it (a split gives non-members SHMEM_TEAM_INVALID) or it was never created; only members may use a team",
        )),
        Some(id) => Ok((id, st.teams.get(id)?)),
    }
}

/// The num_contexts a split asks for (0, the default, unless the mask selects it).
fn config_contexts(config: *const TeamConfig, mask: c_long, which: &str) -> Result<i32> {
    if mask & !TEAM_NUM_CONTEXTS != 0 {
        return Err(Error::invalid_value(format!("{which} mask {mask:#x} has bits that name no configuration parameter; SHMEM_TEAM_NUM_CONTEXTS ({TEAM_NUM_CONTEXTS}) is the only one"),
        ));
    }
    selected_contexts(config, mask & TEAM_NUM_CONTEXTS != 0, which, "SHMEM_TEAM_NUM_CONTEXTS", |c| c.num_contexts)
}

/// The num_contexts of a split's config (either API's), once its mask is checked: 0 unless the
/// mask `selected` the field (its bit named `bit`), then read from `config` by `field`, >= 0.
pub(crate) fn selected_contexts<C>(config: *const C, selected: bool, which: &str, bit: &str, field: fn(&C) -> c_int) -> Result<i32> {
    if !selected {
        return Ok(0);
    }
    if config.is_null() {
        return Err(Error::invalid_value(format!("{which} mask selects {bit} but the config pointer is NULL")));
    }
    // SAFETY: the caller passes a readable team config of its API (checked non-NULL above).
    let n = field(unsafe { &*config });
    if n < 0 {
        return Err(Error::invalid_value(format!("{which}.num_contexts = {n}; it must be >= 0")));
    }
    Ok(n)
}

/// A split's out-parameter `what` (the address of a `handle`, "a shmem_team_t") is not NULL.
pub(crate) fn out_param<T>(p: *mut T, what: &str, handle: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::invalid_value(format!("{what} is NULL; pass the address of {handle} to receive the new team")));
    }
    Ok(())
}

fn out_handle(p: *mut ShmemTeam, what: &str) -> Result<()> {
    out_param(p, what, "a shmem_team_t")
}

/// A split's outcome for the C caller: the new team's table index where this PE is in it, and
/// the spec's status (0, or the error's code when the arguments describe no team: every member
/// fails alike, and one of them, `loud`, says why in a warning naming the routine).
pub(crate) fn split_outcome(routine: &'static str, split: Split, loud: bool) -> (Option<usize>, c_int) {
    match split {
        Split::Member(id) => (Some(id), 0),
        Split::NotMember => (None, 0),
        Split::Failed(e) => {
            if loud {
                warn_failed(routine, &e, "");
            }
            (None, e.kind.code())
        }
    }
}

/// Stores a split's result in `*out` (SHMEM_TEAM_INVALID where this PE is in no new team);
/// returns the status.
fn give(routine: &'static str, split: Split, out: *mut ShmemTeam, loud: bool) -> c_int {
    let (member, rc) = split_outcome(routine, split, loud);
    // SAFETY: out was checked non-NULL and points at the caller's shmem_team_t.
    unsafe { *out = member.map_or(TEAM_INVALID, team_handle) };
    rc
}

#[no_mangle]
pub extern "C" fn shmem_team_my_pe(team: ShmemTeam) -> c_int {
    ffi_boundary!(shmem_team_my_pe, |st| {
        if team_index(team).is_none() {
            return Ok(-1);
        }
        Ok(team_of(st, team)?.1.my_index as c_int)
    })
}

#[no_mangle]
pub extern "C" fn shmem_team_n_pes(team: ShmemTeam) -> c_int {
    ffi_boundary!(shmem_team_n_pes, |st| {
        if team_index(team).is_none() {
            return Ok(-1);
        }
        Ok(team_of(st, team)?.1.set.size as c_int)
    })
}

#[no_mangle]
pub extern "C" fn shmem_team_get_config(team: ShmemTeam, config_mask: c_long, config: Option<&mut TeamConfig>) -> c_int {
    ffi_boundary!(shmem_team_get_config, |st| {
        if team_index(team).is_none() {
            return Ok(1);
        }
        let (_, t) = team_of(st, team)?;
        if config_mask & !TEAM_NUM_CONTEXTS != 0 {
            return Err(Error::invalid_value(format!("config_mask {config_mask:#x} has bits that name no configuration parameter; SHMEM_TEAM_NUM_CONTEXTS ({TEAM_NUM_CONTEXTS}) is the only one")));
        }
        if config_mask & TEAM_NUM_CONTEXTS != 0 {
            let Some(config) = config else {
                return Err(Error::invalid_value("config is NULL; pass the address of a shmem_team_config_t"));
            };
            config.num_contexts = t.num_contexts;
        }
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn shmem_team_translate_pe(src_team: ShmemTeam, src_pe: c_int, dest_team: ShmemTeam) -> c_int {
    ffi_boundary!(shmem_team_translate_pe, |st| {
        if team_index(src_team).is_none() || team_index(dest_team).is_none() {
            return Ok(-1);
        }
        let (_, from) = team_of(st, src_team)?;
        let (_, to) = team_of(st, dest_team)?;
        Ok(from.translate(src_pe, &to))
    })
}

/// shmem_ptr with a team-relative PE (OpenSHMEM 1.6; SOS has had it since 1.5.2): NULL for
/// SHMEM_TEAM_INVALID, a PE number outside the team, or memory this PE cannot load or store.
#[no_mangle]
pub extern "C" fn shmem_team_ptr(team: ShmemTeam, dest: *const c_void, pe: c_int) -> *mut c_void {
    ffi_boundary!(shmem_team_ptr, |st| {
        let world_pe = match team_index(team) {
            None => -1,
            Some(_) => team_of(st, team)?.1.translate(pe, &*st.teams.get(WORLD)?),
        };
        // shmem_ptr names its own errors, as when a program calls it.
        Ok(if world_pe == -1 { std::ptr::null_mut() } else { super::setup::shmem_ptr(dest, world_pe) })
    })
}

#[no_mangle]
pub extern "C" fn shmem_team_split_strided(
    parent_team: ShmemTeam,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const TeamConfig,
    config_mask: c_long,
    new_team: *mut ShmemTeam,
) -> c_int {
    ffi_boundary!(shmem_team_split_strided, |st| {
        out_handle(new_team, "new_team")?;
        if team_index(parent_team).is_none() {
            return Ok(give(
                ROUTINE,
                Split::Failed(Error::invalid_value("parent_team is SHMEM_TEAM_INVALID; no team was created")),
                new_team,
                true,
            ));
        }
        let (pid, parent) = team_of(st, parent_team)?;
        let contexts = config_contexts(config, config_mask, "config")?;
        let loud = parent.my_index == 0;
        Ok(give(ROUTINE, st.team_split_strided(pid, &parent, Triplet { start, stride, size }, contexts, ROUTINE)?, new_team, loud))
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn shmem_team_split_2d(
    parent_team: ShmemTeam,
    xrange: c_int,
    xaxis_config: *const TeamConfig,
    xaxis_mask: c_long,
    xaxis_team: *mut ShmemTeam,
    yaxis_config: *const TeamConfig,
    yaxis_mask: c_long,
    yaxis_team: *mut ShmemTeam,
) -> c_int {
    ffi_boundary!(shmem_team_split_2d, |st| {
        out_handle(xaxis_team, "xaxis_team")?;
        out_handle(yaxis_team, "yaxis_team")?;
        if team_index(parent_team).is_none() {
            let e = Error::invalid_value("parent_team is SHMEM_TEAM_INVALID; no teams were created");
            give(ROUTINE, Split::Failed(e.clone()), xaxis_team, true);
            return Ok(give(ROUTINE, Split::Failed(e), yaxis_team, false));
        }
        let (pid, parent) = team_of(st, parent_team)?;
        let xc = config_contexts(xaxis_config, xaxis_mask, "xaxis_config")?;
        let yc = config_contexts(yaxis_config, yaxis_mask, "yaxis_config")?;
        let (x, y) = st.team_split_2d(pid, &parent, xrange, xc, yc, ROUTINE)?;
        let loud = parent.my_index == 0;
        let rx = give(ROUTINE, x, xaxis_team, loud);
        let ry = give(ROUTINE, y, yaxis_team, loud && rx == 0);
        Ok(if rx != 0 { rx } else { ry })
    })
}

#[no_mangle]
pub extern "C" fn shmem_team_destroy(team: ShmemTeam) {
    ffi_boundary!(shmem_team_destroy, |st| {
        let Some(id) = team_index(team) else { return Ok(()) };
        st.teams.get(id)?;
        st.ctxs.destroy_team(id);
        st.teams.remove(id)
    })
}
