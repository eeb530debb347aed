//! Teams of GPU PEs. NVSHMEM's team handles are the CPU runtime's team-table indices
//! (runtime/team.rs: the same split logic, the same local table); what GPU mode adds is the
//! device's copy: every team this PE belongs to is written into a small table in its runtime
//! area (`RshmemDeviceTeam[MAX_DEVICE_TEAMS]`, behind `RshmemDeviceState::teams`), so device
//! collectives and team barriers work on split teams too.

use std::sync::Arc;

use super::{cu, GpuState};
use crate::abi::RshmemDeviceTeam;
use crate::cuda;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::barrier::{Caller, PeSet};
use crate::runtime::team::{Split, Team};
use crate::runtime::State;

/// Entries of the device team table (NVSHMEM_MAX_TEAMS defaults to 32). A team whose handle
/// is beyond it works on the host and on streams; device code that names it stops with a
/// message.
pub const MAX_DEVICE_TEAMS: usize = 64;

/// NVSHMEM_TEAMS_MIN: handles below it are predefined (0 WORLD, 1 SHARED, 2 NODE,
/// 3 SAME_MYPE_NODE, 4 SAME_GPU, 5 GPU_LEADERS); splits get the next free ones.
pub const TEAMS_MIN: usize = 6;

fn device_team(t: Option<&Team>) -> RshmemDeviceTeam {
    match t {
        Some(t) => RshmemDeviceTeam { start: t.set.start as i32, stride: t.set.stride as i32, size: t.set.size as i32, my_index: t.my_index as i32 },
        None => RshmemDeviceTeam::default(),
    }
}

impl GpuState {
    /// Writes entry `id` of the device team table (None clears it), blocking.
    fn write_device_team(&self, id: usize, t: Option<&Team>, routine: &'static str) -> Result<()> {
        if id >= MAX_DEVICE_TEAMS {
            return Ok(());
        }
        let entry = device_team(t);
        let at = self.base + (self.area.teams() + id * std::mem::size_of::<RshmemDeviceTeam>()) as u64;
        cu(self.ctx.make_current(), routine)?;
        // SAFETY: `at` is entry `id` of the team table in this PE's runtime area (mapped, inside
        // the reserved area); `entry` outlives the copy, complete at the sync below.
        cu(unsafe { cuda::memcpy_async(at, (&entry as *const RshmemDeviceTeam) as u64, std::mem::size_of::<RshmemDeviceTeam>(), self.stream.0) }, routine)?;
        self.sync(routine)
    }

    /// Clears team `id`'s small-collective state (call numbers, acknowledgements, slots), if it
    /// has any; blocking. Returns whether there was some.
    fn clear_device_coll_state(&self, id: usize, routine: &'static str) -> Result<bool> {
        let ranges = self.area.coll_team_ranges(id);
        if ranges.is_empty() {
            return Ok(false);
        }
        cu(self.ctx.make_current(), routine)?;
        for (off, len) in ranges {
            // SAFETY: the range lies in this PE's runtime area (mapped at init, never unmapped
            // while the state lives); nothing else writes it while no team has handle `id`.
            cu(unsafe { cuda::memset_async(self.base + off as u64, 0, len, self.stream.0) }, routine)?;
        }
        self.sync(routine)?;
        Ok(true)
    }
}

impl State {
    /// At nvshmem_init: NVSHMEM's predefined handles 3..5 in the team table (so that splits
    /// start at NVSHMEM_TEAMS_MIN), and the device's copy of all six.
    pub(super) fn gpu_teams_init(&self, g: &GpuState) -> Result<()> {
        const R: &str = "nvshmem_init";
        let me = PeSet { start: self.me, stride: 1, size: 1, chan: 0 };
        // One host: the PEs with this node-local rank on every node are this PE alone; the PEs
        // on this PE's GPU are taken to be this PE alone; every PE leads its GPU.
        let extra = [(3, me, 0), (4, me, 0), (5, PeSet::world(self.npes), self.me)];
        for (want, set, my_index) in extra {
            let got = self.teams.insert(Team { set: PeSet { chan: want, ..set }, my_index, num_contexts: 0, parent: None });
            if got != want {
                return Err(Error::new(ErrorKind::Internal, R, format!("predefined team {want} landed in slot {got}")));
            }
        }
        for id in 0..TEAMS_MIN {
            let t = self.teams.get(id, R)?;
            g.write_device_team(id, Some(&t), R)?;
        }
        Ok(())
    }

    /// The live team behind NVSHMEM handle `team`, or an error naming it.
    pub fn gpu_team(&self, team: i32, routine: &'static str) -> Result<(usize, Arc<Team>)> {
        if team < 0 {
            return Err(Error::new(
                ErrorKind::NotMember,
                routine,
                format!("team {team} is NVSHMEM_TEAM_INVALID: this PE is not a member of it (a split gives non-members NVSHMEM_TEAM_INVALID) or it was never created"),
            ));
        }
        Ok((team as usize, self.teams.get(team as usize, routine)?))
    }

    /// Records a new team in the device table (after a split made it on this PE) with its
    /// device collectives' state cleared, then waits for the team's other members to have done
    /// the same: no member's first device collective can reach a slot that is still to be
    /// cleared (a handle may have served an earlier team).
    fn gpu_publish_split(&self, split: &Split, routine: &'static str) -> Result<()> {
        if let Split::Member(id) = split {
            let t = self.teams.get(*id, routine)?;
            if *id >= MAX_DEVICE_TEAMS {
                crate::runtime::log::warn(&format!(
                    "{routine}: team handle {id} is beyond the device team table ({MAX_DEVICE_TEAMS} entries): it works on the host and on streams, not in device code; destroy teams no longer needed"
                ));
            }
            let g = self.gpu(routine)?;
            let cleared = g.clear_device_coll_state(*id, routine)?;
            g.write_device_team(*id, Some(&t), routine)?;
            if cleared {
                let _serial = self.serialize_channel(t.set.chan);
                self.sync_set(&t.set, &Caller::sync(routine))?;
            }
        }
        Ok(())
    }

    /// nvshmem_team_split_strided in GPU mode.
    #[allow(clippy::too_many_arguments)]
    pub fn gpu_team_split_strided(
        &self, parent: i32, start: i32, stride: i32, size: i32, num_contexts: i32, routine: &'static str,
    ) -> Result<Split> {
        let (pid, p) = self.gpu_team(parent, routine)?;
        let split = self.team_split_strided(pid, &p, start, stride, size, num_contexts, routine)?;
        self.gpu_publish_split(&split, routine)?;
        Ok(split)
    }

    /// nvshmem_team_split_2d in GPU mode.
    pub fn gpu_team_split_2d(&self, parent: i32, xrange: i32, xc: i32, yc: i32, routine: &'static str) -> Result<(Split, Split)> {
        let (pid, p) = self.gpu_team(parent, routine)?;
        let (x, y) = self.team_split_2d(pid, &p, xrange, xc, yc, routine)?;
        self.gpu_publish_split(&x, routine)?;
        self.gpu_publish_split(&y, routine)?;
        Ok((x, y))
    }

    /// nvshmem_team_destroy: the predefined teams stay; others leave both tables.
    pub fn gpu_team_destroy(&self, team: i32, routine: &'static str) -> Result<()> {
        let (id, _) = self.gpu_team(team, routine)?;
        if id < TEAMS_MIN {
            return Err(Error::invalid(routine, format!("team {id} is a predefined team (handles below NVSHMEM_TEAMS_MIN = {TEAMS_MIN}); it cannot be destroyed")));
        }
        self.gpu(routine)?.write_device_team(id, None, routine)?;
        self.ctxs.destroy_team(id);
        self.teams.remove(id, routine)
    }

    /// nvshmem_team_translate_pe: -1 when either team is not live here or the PE is not in both.
    pub fn gpu_team_translate(&self, src: i32, pe: i32, dest: i32) -> i32 {
        let get = |t: i32| (t >= 0).then(|| self.teams.get(t as usize, "nvshmem_team_translate_pe").ok()).flatten();
        match (get(src), get(dest)) {
            (Some(a), Some(b)) => a.translate(pe, &b),
            _ => -1,
        }
    }

    /// nvshmem_team_my_pe / nvshmem_team_n_pes: (index, size), None when not a live team here.
    pub fn gpu_team_info(&self, team: i32) -> Option<(i32, i32)> {
        let t = (team >= 0).then(|| self.teams.get(team as usize, "nvshmem_team_my_pe").ok()).flatten()?;
        Some((t.my_index as i32, t.set.size as i32))
    }

    /// nvshmem_barrier / nvshmem_team_sync on the host: (quiet, then) the CPU barrier over the
    /// team's PEs.
    pub fn gpu_team_barrier_host(&self, team: i32, quiet: bool, routine: &'static str) -> Result<()> {
        let (_, t) = self.gpu_team(team, routine)?;
        if quiet {
            self.gpu_quiet(routine)?;
        }
        let _serial = self.serialize_channel(t.set.chan);
        self.sync_set(&t.set, &Caller::sync(routine))
    }
}
