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
use crate::runtime::team::{Split, Team, Triplet};
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
        Some(t) => RshmemDeviceTeam {
            start: t.set.start as i32,
            stride: t.set.stride as i32,
            size: t.set.size as i32,
            my_index: t.my_index as i32,
        },
        None => RshmemDeviceTeam::default(),
    }
}

impl GpuState {
    /// Writes entry `id` of the device team table (None clears it), blocking.
    fn write_device_team(&self, id: usize, t: Option<&Team>) -> Result<()> {
        if id >= MAX_DEVICE_TEAMS {
            return Ok(());
        }
        let entry = device_team(t);
        let at = self.base + (self.area.teams() + id * std::mem::size_of::<RshmemDeviceTeam>()) as u64;
        cu(self.ctx.make_current())?;
        // SAFETY: `at` is entry `id` of the team table in this PE's runtime area (mapped, inside
        // the reserved area); `entry` outlives the copy, complete at the sync below.
        cu(unsafe {
            cuda::memcpy_async(at, (&entry as *const RshmemDeviceTeam) as u64, std::mem::size_of::<RshmemDeviceTeam>(), self.stream.0)
        })?;
        self.sync()
    }

    /// Clears team `id`'s small-collective state (call numbers, acknowledgements, slots), if it
    /// has any; blocking. Returns whether there was some.
    fn clear_device_coll_state(&self, id: usize) -> Result<bool> {
        let ranges = self.area.coll_team_ranges(id);
        if ranges.is_empty() {
            return Ok(false);
        }
        cu(self.ctx.make_current())?;
        for (off, len) in ranges {
            // SAFETY: the range lies in this PE's runtime area (mapped at init, never unmapped
            // while the state lives); nothing else writes it while no team has handle `id`.
            cu(unsafe { cuda::memset_async(self.base + off as u64, 0, len, self.stream.0) })?;
        }
        self.sync()?;
        Ok(true)
    }
}

/// `pes` (ascending) as a strided set, if they are one.
fn strided(pes: &[usize]) -> Option<PeSet> {
    let (&first, rest) = pes.split_first()?;
    let stride = rest.first().map_or(1, |&p| p - first);
    pes.windows(2).all(|w| w[1] - w[0] == stride && stride > 0).then_some(PeSet { start: first, stride, size: pes.len(), chan: 0 })
}

impl State {
    /// At nvshmem_init: NVSHMEM's predefined handles 3..5 in the team table (so that splits
    /// start at NVSHMEM_TEAMS_MIN), and the device's copy of all six.
    pub(super) fn gpu_teams_init(&self, g: &GpuState) -> Result<()> {
        const R: &str = "nvshmem_init";
        let me = PeSet { start: self.me, stride: 1, size: 1, chan: 0 };
        // One host: SHARED and NODE are the world (team.rs); the PEs with this node-local rank
        // on every node are this PE alone. Across hosts SHARED and NODE are this host's PEs
        // (the usual `cudaSetDevice(node rank)` then picks the GPU rshmem picked), and
        // SAME_MYPE_NODE the PEs of this node rank on every host. The PEs on this PE's GPU are
        // taken to be this PE alone; every PE leads its GPU.
        let mut same_rank = me;
        if self.multi_host {
            let hosts = &self.routes.hosts;
            let host: Vec<usize> = (0..self.npes).filter(|&p| hosts[p] == hosts[self.me]).collect();
            let rank = host.iter().position(|&p| p == self.me).unwrap_or(0);
            let node = strided(&host).unwrap_or(me);
            for id in [crate::runtime::team::SHARED, crate::runtime::team::NODE] {
                self.teams.set_predefined(
                    id,
                    Team { set: PeSet { chan: id, ..node }, my_index: node.index_of(self.me).unwrap_or(0), num_contexts: 0, parent: None },
                );
            }
            let peers: Vec<usize> = (0..=hosts.iter().copied().max().unwrap_or(0))
                .filter_map(|h| (0..self.npes).filter(|&p| hosts[p] == h).nth(rank))
                .collect();
            same_rank = strided(&peers).filter(|s| s.index_of(self.me).is_some()).unwrap_or(me);
            crate::log::info(&format!(
                "teams across hosts: NODE/SHARED are PEs {}, SAME_MYPE_NODE PEs {}",
                node.describe(),
                same_rank.describe()
            ));
        }
        let extra = [(3, same_rank, same_rank.index_of(self.me).unwrap_or(0)), (4, me, 0), (5, PeSet::world(self.npes), self.me)];
        for (want, set, my_index) in extra {
            let got = self.teams.insert(Team { set: PeSet { chan: want, ..set }, my_index, num_contexts: 0, parent: None });
            if got != want {
                return Err(Error::new(ErrorKind::Internal, R, format!("predefined team {want} landed in slot {got}")));
            }
        }
        for id in 0..TEAMS_MIN {
            let t = self.teams.get(id)?;
            g.write_device_team(id, Some(&t))?;
        }
        Ok(())
    }

    /// The live team behind NVSHMEM handle `team`, or an error naming it.
    pub fn gpu_team(&self, team: i32) -> Result<(usize, Arc<Team>)> {
        if team < 0 {
            return Err(Error::of(
                ErrorKind::NotMember,
                format!("team {team} is NVSHMEM_TEAM_INVALID: this PE is not a member of it (a split gives non-members NVSHMEM_TEAM_INVALID) or it was never created"),
            ));
        }
        Ok((team as usize, self.teams.get(team as usize)?))
    }

    /// Records a new team in the device table (after a split made it on this PE) with its
    /// device collectives' state cleared, then waits for the team's other members to have done
    /// the same: no member's first device collective can reach a slot that is still to be
    /// cleared (a handle may have served an earlier team).
    fn gpu_publish_split(&self, split: &Split, routine: &'static str) -> Result<()> {
        if let Split::Member(id) = split {
            let t = self.teams.get(*id)?;
            if *id >= MAX_DEVICE_TEAMS {
                crate::log::warn(&format!(
                    "{routine}: team handle {id} is beyond the device team table ({MAX_DEVICE_TEAMS} entries): it works on the host and on streams, not in device code; destroy teams no longer needed"
                ));
            }
            let g = self.gpu()?;
            let cleared = g.clear_device_coll_state(*id)?;
            g.write_device_team(*id, Some(&t))?;
            if cleared {
                let _serial = self.serialize_channel(t.set.chan);
                self.sync_set(&t.set, &Caller::sync(routine))?;
            }
        }
        Ok(())
    }

    /// nvshmem_team_split_strided in GPU mode.
    pub fn gpu_team_split_strided(&self, parent: i32, t: Triplet, num_contexts: i32, routine: &'static str) -> Result<Split> {
        let (pid, p) = self.gpu_team(parent)?;
        let split = self.team_split_strided(pid, &p, t, num_contexts, routine)?;
        self.gpu_publish_split(&split, routine)?;
        Ok(split)
    }

    /// nvshmem_team_split_2d in GPU mode.
    pub fn gpu_team_split_2d(&self, parent: i32, xrange: i32, xc: i32, yc: i32, routine: &'static str) -> Result<(Split, Split)> {
        let (pid, p) = self.gpu_team(parent)?;
        let (x, y) = self.team_split_2d(pid, &p, xrange, xc, yc, routine)?;
        self.gpu_publish_split(&x, routine)?;
        self.gpu_publish_split(&y, routine)?;
        Ok((x, y))
    }

    /// nvshmem_team_destroy: the predefined teams stay; others leave both tables.
    pub fn gpu_team_destroy(&self, team: i32) -> Result<()> {
        let (id, _) = self.gpu_team(team)?;
        if id < TEAMS_MIN {
            return Err(Error::invalid_value(format!(
                "team {id} is a predefined team (handles below NVSHMEM_TEAMS_MIN = {TEAMS_MIN}); it cannot be destroyed"
            )));
        }
        self.gpu()?.write_device_team(id, None)?;
        self.ctxs.destroy_team(id);
        self.teams.remove(id)
    }

    /// nvshmem_team_translate_pe: -1 when either team is not live here or the PE is not in both.
    pub fn gpu_team_translate(&self, src: i32, pe: i32, dest: i32) -> i32 {
        let get = |t: i32| (t >= 0).then(|| self.teams.get(t as usize).ok()).flatten();
        match (get(src), get(dest)) {
            (Some(a), Some(b)) => a.translate(pe, &b),
            _ => -1,
        }
    }

    /// nvshmem_team_my_pe / nvshmem_team_n_pes: (index, size), None when not a live team here.
    pub fn gpu_team_info(&self, team: i32) -> Option<(i32, i32)> {
        let t = (team >= 0).then(|| self.teams.get(team as usize).ok()).flatten()?;
        Some((t.my_index as i32, t.set.size as i32))
    }

    /// nvshmem_barrier / nvshmem_team_sync on the host: (quiet, then) the CPU barrier over the
    /// team's PEs.
    pub fn gpu_team_barrier_host(&self, team: i32, quiet: bool, routine: &'static str) -> Result<()> {
        let (_, t) = self.gpu_team(team)?;
        if quiet {
            self.gpu_quiet()?;
        }
        let _serial = self.serialize_channel(t.set.chan);
        self.sync_set(&t.set, &Caller::sync(routine))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's PEs become NODE/SHARED only when they form a strided set (PeSet's shape).
    #[test]
    fn host_pes_as_a_strided_set() {
        let s = strided(&[2, 3]).unwrap();
        assert_eq!((s.start, s.stride, s.size), (2, 1, 2));
        assert_eq!(s.index_of(3), Some(1));
        let s = strided(&[1, 3, 5]).unwrap();
        assert_eq!((s.start, s.stride, s.size), (1, 2, 3));
        let s = strided(&[4]).unwrap();
        assert_eq!((s.start, s.size, s.index_of(4)), (4, 1, Some(0)));
        assert!(strided(&[0, 1, 3]).is_none(), "irregular hosts fall back to the PE alone");
        assert!(strided(&[]).is_none());
    }
}
