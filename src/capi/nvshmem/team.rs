//! Teams (NVSHMEM host API): handles are int32 indices of the runtime's team table
//! (NVSHMEM_TEAM_WORLD 0, NVSHMEM_TEAM_SHARED 1, NVSHMEMX_TEAM_NODE 2, ...; splits start at
//! NVSHMEM_TEAMS_MIN = 6; NVSHMEM_TEAM_INVALID = -1). The split logic is the OpenSHMEM one
//! (runtime/team.rs); runtime/gpu/team.rs adds the device's copy of the table.

use std::ffi::{c_int, c_long};

use crate::capi::team::{selected_contexts, split_into, Handle};
use crate::capi::{ffi_boundary, Status, StatusCode};
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::team::Triplet;

/// nvshmem_team_t.
pub type NvTeam = i32;
pub const TEAM_INVALID: NvTeam = -1;

/// nvshmem_team_config_t (NVSHMEM 3.x, version 2: 64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NvTeamConfig {
    pub version: c_int,
    pub num_contexts: c_int,
    pub uniqueid: u64,
    pub padding: [u8; 48],
}
const _: () = assert!(std::mem::size_of::<NvTeamConfig>() == 64);

/// config_mask bits (NVSHMEM_TEAM_CONFIG_MASK_*).
pub const MASK_NUM_CONTEXTS: c_long = 1;
pub const MASK_UNIQUEID: c_long = 2;

/// The num_contexts a split asks for (0 unless the mask selects the field).
fn config_contexts(config: *const NvTeamConfig, mask: c_long, which: &str) -> Result<i32> {
    if mask & !(MASK_NUM_CONTEXTS | MASK_UNIQUEID) != 0 {
        return Err(Error::invalid_value(format!(
            "{which} mask {mask:#x} has bits that name no configuration field (NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS = 1, _UNIQUEID = 2)"
        )));
    }
    selected_contexts(config, mask & MASK_NUM_CONTEXTS != 0, which, "num_contexts", |c| c.num_contexts)
}

impl Handle for NvTeam {
    const INVALID: Self = TEAM_INVALID;
    const INVALID_NAME: &'static str = "NVSHMEM_TEAM_INVALID";
    const WHAT: &'static str = "an nvshmem_team_t";
    fn of(id: usize) -> Self {
        id as NvTeam
    }
    fn is_invalid(self) -> bool {
        self < 0
    }
}

#[no_mangle]
pub extern "C" fn nvshmem_team_my_pe(team: NvTeam) -> c_int {
    ffi_boundary!(nvshmem_team_my_pe, |st| Ok(st.gpu_team_info(team).map_or(-1, |t| t.0)))
}

#[no_mangle]
pub extern "C" fn nvshmem_team_n_pes(team: NvTeam) -> c_int {
    ffi_boundary!(nvshmem_team_n_pes, |st| Ok(st.gpu_team_info(team).map_or(-1, |t| t.1)))
}

#[no_mangle]
pub extern "C" fn nvshmem_team_translate_pe(src_team: NvTeam, src_pe: c_int, dest_team: NvTeam) -> c_int {
    ffi_boundary!(nvshmem_team_translate_pe, |st| Ok(st.gpu_team_translate(src_team, src_pe, dest_team)))
}

#[no_mangle]
pub extern "C" fn nvshmem_team_get_config(team: NvTeam, config: Option<&mut NvTeamConfig>) {
    ffi_boundary!(nvshmem_team_get_config, |st| {
        let (_, t) = st.gpu_team(team)?;
        let Some(config) = config else {
            return Err(Error::invalid_value("config is NULL; pass the address of an nvshmem_team_config_t"));
        };
        config.num_contexts = t.num_contexts;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn nvshmem_team_split_strided(
    parent_team: NvTeam,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const NvTeamConfig,
    config_mask: c_long,
    new_team: *mut NvTeam,
) -> c_int {
    ffi_boundary!(nvshmem_team_split_strided => StatusCode, |st| {
        split_into(ROUTINE, parent_team, [(new_team, "new_team")], || {
            let contexts = config_contexts(config, config_mask, "config")?;
            let loud = st.gpu_team_info(parent_team).is_some_and(|t| t.0 == 0);
            Ok((loud, [st.gpu_team_split_strided(parent_team, Triplet { start, stride, size }, contexts, ROUTINE)?]))
        })
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn nvshmem_team_split_2d(
    parent_team: NvTeam,
    xrange: c_int,
    xaxis_config: *const NvTeamConfig,
    xaxis_mask: c_long,
    xaxis_team: *mut NvTeam,
    yaxis_config: *const NvTeamConfig,
    yaxis_mask: c_long,
    yaxis_team: *mut NvTeam,
) -> c_int {
    ffi_boundary!(nvshmem_team_split_2d => StatusCode, |st| {
        split_into(ROUTINE, parent_team, [(xaxis_team, "xaxis_team"), (yaxis_team, "yaxis_team")], || {
            let xc = config_contexts(xaxis_config, xaxis_mask, "xaxis_config")?;
            let yc = config_contexts(yaxis_config, yaxis_mask, "yaxis_config")?;
            let loud = st.gpu_team_info(parent_team).is_some_and(|t| t.0 == 0);
            let (x, y) = st.gpu_team_split_2d(parent_team, xrange, xc, yc, ROUTINE)?;
            Ok((loud, [x, y]))
        })
    })
}

#[no_mangle]
pub extern "C" fn nvshmem_team_destroy(team: NvTeam) {
    ffi_boundary!(nvshmem_team_destroy, || {
        if team == TEAM_INVALID {
            return Ok(());
        }
        crate::runtime::state()?.gpu_team_destroy(team)
    })
}

/// Teams formed from a unique id (NVSHMEM 3.4) are not supported: every member gets an error
/// naming the alternative, and NVSHMEM_TEAM_INVALID.
#[no_mangle]
pub extern "C" fn nvshmemx_team_get_uniqueid(_uniqueid: *mut u64) -> c_int {
    ffi_boundary!(nvshmemx_team_get_uniqueid => Status, || Err(team_uid_unsupported()))
}

#[no_mangle]
pub extern "C" fn nvshmemx_team_init(
    team: Option<&mut NvTeam>,
    _config: *mut NvTeamConfig,
    _config_mask: c_long,
    npes: c_int,
    pe_idx_in_team: c_int,
) -> c_int {
    ffi_boundary!(nvshmemx_team_init => Status, || {
        if let Some(team) = team {
            *team = TEAM_INVALID;
        }
        let _ = (npes, pe_idx_in_team);
        Err(team_uid_unsupported())
    })
}

fn team_uid_unsupported() -> Error {
    Error::of(
        ErrorKind::Unsupported, "teams from a unique id are not supported by rshmem; split a parent team instead (nvshmem_team_split_strided / nvshmem_team_split_2d)",
    )
}
