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

/// A team handle of either API, as the C split routines give it out: `shmem_team_t` (a
/// pointer) or `nvshmem_team_t` (an int).
pub(crate) trait Handle: Copy {
    /// The handle of no team, as its C name says it.
    const INVALID: Self;
    const INVALID_NAME: &'static str;
    /// The handle type as messages name it ("a shmem_team_t").
    const WHAT: &'static str;
    /// The handle of the team at table index `id`.
    fn of(id: usize) -> Self;
    fn is_invalid(self) -> bool;
}

impl Handle for ShmemTeam {
    const INVALID: Self = TEAM_INVALID;
    const INVALID_NAME: &'static str = "SHMEM_TEAM_INVALID";
    const WHAT: &'static str = "a shmem_team_t";
    fn of(id: usize) -> Self {
        team_handle(id)
    }
    fn is_invalid(self) -> bool {
        team_index(self).is_none()
    }
}

/// The C side of a split of `parent` (either API, strided or 2d) into the handles `outs`
/// (each with its parameter's name): every out-parameter is checked; when `parent` is the
/// invalid handle, every handle gets INVALID and the status says why; otherwise `split` runs
/// and gives whether this PE is the one that warns (`loud`) and what the split gave it for each
/// handle. A PE in no new team gets INVALID. The status is 0, or the first failure's code (when
/// the arguments describe no team: every member fails alike, and the loud one says why, once,
/// in a warning naming the routine).
pub(crate) fn split_into<H: Handle, const N: usize>(
    routine: &'static str,
    parent: H,
    outs: [(*mut H, &str); N],
    split: impl FnOnce() -> Result<(bool, [Split; N])>,
) -> Result<c_int> {
    for (p, what) in outs {
        if p.is_null() {
            return Err(Error::invalid_value(format!("{what} is NULL; pass the address of {} to receive the new team", H::WHAT)));
        }
    }
    let (loud, splits) = if parent.is_invalid() {
        let e = format!("parent_team is {}; no {} created", H::INVALID_NAME, if N == 1 { "team was" } else { "teams were" });
        (true, std::array::from_fn(|_| Split::Failed(Error::invalid_value(e.as_str()))))
    } else {
        split()?
    };
    let mut rc = 0;
    for ((p, _), split) in outs.into_iter().zip(splits) {
        let (member, r) = split_outcome(routine, split, loud && rc == 0);
        // SAFETY: p was checked non-NULL above and points at the caller's team handle.
        unsafe { *p = member.map_or(H::INVALID, H::of) };
        if rc == 0 {
            rc = r;
        }
    }
    Ok(rc)
}

/// One split's outcome for the C caller: the new team's table index where this PE is in it,
/// and the status (0, or the error's code; `loud` warns, naming the routine).
fn split_outcome(routine: &'static str, split: Split, loud: bool) -> (Option<usize>, c_int) {
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
        split_into(ROUTINE, parent_team, [(new_team, "new_team")], || {
            let (pid, parent) = team_of(st, parent_team)?;
            let contexts = config_contexts(config, config_mask, "config")?;
            Ok((parent.my_index == 0, [st.team_split_strided(pid, &parent, Triplet { start, stride, size }, contexts, ROUTINE)?]))
        })
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
        split_into(ROUTINE, parent_team, [(xaxis_team, "xaxis_team"), (yaxis_team, "yaxis_team")], || {
            let (pid, parent) = team_of(st, parent_team)?;
            let xc = config_contexts(xaxis_config, xaxis_mask, "xaxis_config")?;
            let yc = config_contexts(yaxis_config, yaxis_mask, "yaxis_config")?;
            let (x, y) = st.team_split_2d(pid, &parent, xrange, xc, yc, ROUTINE)?;
            Ok((parent.my_index == 0, [x, y]))
        })
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

#[cfg(test)]
mod tests {
    use std::ptr::addr_of_mut;

    use super::*;
    use crate::capi::nvshmem::team::NvTeam;

    #[test]
    fn split_into_checks_every_out_handle_before_the_split() {
        let mut x: ShmemTeam = team_handle(7);
        let e = split_into::<ShmemTeam, 2>(
            "shmem_team_split_2d",
            team_handle(WORLD),
            [(addr_of_mut!(x), "xaxis_team"), (std::ptr::null_mut(), "yaxis_team")],
            || panic!("the split ran although yaxis_team is NULL"),
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert_eq!(e.message, "yaxis_team is NULL; pass the address of a shmem_team_t to receive the new team");
        assert_eq!(x, team_handle(7), "no handle is written when one is NULL");
    }

    #[test]
    fn split_into_an_invalid_parent_fails_every_handle_without_splitting() {
        let (mut x, mut y): (NvTeam, NvTeam) = (5, 6);
        let rc =
            split_into("nvshmem_team_split_2d", -1 as NvTeam, [(addr_of_mut!(x), "xaxis_team"), (addr_of_mut!(y), "yaxis_team")], || {
                panic!("the split ran with an invalid parent")
            })
            .unwrap();
        assert_eq!((x, y), (-1, -1));
        assert_eq!(rc, ErrorKind::InvalidArgument.code());
        let mut t = team_handle(3);
        let rc = split_into("shmem_team_split_strided", TEAM_INVALID, [(addr_of_mut!(t), "new_team")], || panic!("split ran")).unwrap();
        assert_eq!((t, rc), (TEAM_INVALID, ErrorKind::InvalidArgument.code()));
    }

    #[test]
    fn split_into_stores_each_outcome_and_returns_the_first_failure() {
        let (mut x, mut y) = (std::ptr::null_mut(), team_handle(9));
        let rc = split_into(
            "shmem_team_split_2d",
            team_handle(WORLD),
            [(addr_of_mut!(x), "xaxis_team"), (addr_of_mut!(y), "yaxis_team")],
            || Ok((false, [Split::Member(6), Split::NotMember])),
        )
        .unwrap();
        assert_eq!((x, y, rc), (team_handle(6), TEAM_INVALID, 0));

        let (mut x, mut y): (NvTeam, NvTeam) = (0, 0);
        let rc =
            split_into("nvshmem_team_split_2d", 0 as NvTeam, [(addr_of_mut!(x), "xaxis_team"), (addr_of_mut!(y), "yaxis_team")], || {
                Ok((false, [Split::NotMember, Split::Failed(Error::of(ErrorKind::OutOfMemory, "no handle"))]))
            })
            .unwrap();
        assert_eq!((x, y, rc), (-1, -1, ErrorKind::OutOfMemory.code()));

        let (mut x, mut y): (NvTeam, NvTeam) = (0, 0);
        let rc =
            split_into("nvshmem_team_split_2d", 0 as NvTeam, [(addr_of_mut!(x), "xaxis_team"), (addr_of_mut!(y), "yaxis_team")], || {
                Ok((false, [Split::Failed(Error::of(ErrorKind::Unsupported, "x")), Split::Failed(Error::of(ErrorKind::OutOfMemory, "y"))]))
            })
            .unwrap();
        assert_eq!((x, y, rc), (-1, -1, ErrorKind::Unsupported.code()));

        let e = split_into("nvshmem_team_split_strided", 0 as NvTeam, [(addr_of_mut!(x), "new_team")], || {
            Err(Error::of(ErrorKind::NotMember, "parent"))
        })
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotMember, "an error of the split itself is the routine's error");
    }
}
