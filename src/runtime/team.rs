//! Teams: strided sets of world PEs. A C handle is an index into this table (shmem_team_t is
//! index + 1 as a pointer, so NULL is SHMEM_TEAM_INVALID; nvshmem_team_t is the index itself).
//! The table is local: a split stores the new team only on its members. Splits are collectives
//! over the parent (coll.rs): the members publish their arguments and compare them, so a
//! disagreement is a named error, and an invalid triplet fails alike on every member. In the
//! same exchange they publish which handles are free on them, and the new team takes the lowest
//! handle free on every member of the parent: a team has one handle on all its members, even
//! when earlier splits gave the PEs different teams (device collectives find a team's mailboxes
//! on a peer by the handle). Host teams need no storage of their own for synchronisation (see
//! barrier.rs).

use std::sync::{Arc, RwLock};

use super::barrier::PeSet;
use super::State;
use crate::error::{Error, ErrorKind, Result};

pub const WORLD: usize = 0;
pub const SHARED: usize = 1;
/// NVSHMEM's NVSHMEMX_TEAM_NODE: on one host, the same PEs as SHARED.
pub const NODE: usize = 2;

#[derive(Clone, Debug)]
pub struct Team {
    pub set: PeSet,
    /// This PE's index in the team (teams exist only on their members).
    pub my_index: usize,
    /// shmem_team_config_t::num_contexts as requested at creation.
    pub num_contexts: i32,
    /// The team it was split from (None for the predefined teams).
    pub parent: Option<usize>,
}

pub struct TeamTable {
    slots: RwLock<Vec<Option<Arc<Team>>>>,
}

/// Handles a split can give: the first MAX_TEAMS indices of the table (NVSHMEM's default limit
/// is 32 teams, SOS's 10).
pub const MAX_TEAMS: usize = 256;
/// Words of a free-handle mask (bit i % 64 of word i / 64: handle i is free).
pub const FREE_WORDS: usize = MAX_TEAMS / 64;

/// The lowest handle set in `free` (the AND of the members' masks), cleared there so that the
/// second team of a 2-D split takes the next one.
fn take_handle(free: &mut [u64]) -> Option<usize> {
    let w = free.iter().position(|w| *w != 0)?;
    let bit = free[w].trailing_zeros() as usize;
    free[w] &= !(1u64 << bit);
    Some(w * 64 + bit)
}

impl TeamTable {
    pub fn new(me: usize, npes: usize) -> TeamTable {
        let all = |chan| Some(Arc::new(Team { set: PeSet { chan, ..PeSet::world(npes) }, my_index: me, num_contexts: 0, parent: None }));
        TeamTable { slots: RwLock::new(vec![all(WORLD), all(SHARED), all(NODE)]) }
    }

    /// The team behind handle index `id`, or an error naming the routine.
    pub fn get(&self, id: usize) -> Result<Arc<Team>> {
        let slots = self.slots.read().unwrap_or_else(|p| p.into_inner());
        slots.get(id).and_then(|t| t.clone()).ok_or_else(|| {
            Error::of(
                ErrorKind::NotMember, format!("team #{id} is not a live team on this PE: it was destroyed, or it is not a team handle; pass a team this PE is a member of"),
            )
        })
    }

    /// Stores a new team and returns its index (the lowest free slot).
    pub fn insert(&self, team: Team) -> usize {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        let team = Some(Arc::new(team));
        if let Some(i) = slots.iter().position(|s| s.is_none()) {
            slots[i] = team;
            i
        } else {
            slots.push(team);
            slots.len() - 1
        }
    }

    /// Replaces predefined team `id` (SHARED, NODE) at init, when the job spans hosts.
    pub fn set_predefined(&self, id: usize, team: Team) {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        if id <= NODE {
            slots[id] = Some(Arc::new(team));
        }
    }

    /// Which handles below MAX_TEAMS are free on this PE.
    pub fn free_handles(&self) -> [u64; FREE_WORDS] {
        let slots = self.slots.read().unwrap_or_else(|p| p.into_inner());
        let mut free = [!0u64; FREE_WORDS];
        for (i, s) in slots.iter().enumerate().take(MAX_TEAMS) {
            if s.is_some() {
                free[i / 64] &= !(1u64 << (i % 64));
            }
        }
        free
    }

    /// Stores a new team at handle `id`, which its split's members chose among the handles
    /// free on all of them.
    pub fn insert_at(&self, id: usize, team: Team) -> Result<()> {
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        if slots.len() <= id {
            slots.resize(id + 1, None);
        }
        if slots[id].is_some() {
            return Err(Error::of(
                ErrorKind::Internal,
                format!("team handle {id}, agreed free by the split's members, is taken on this PE"),
            ));
        }
        slots[id] = Some(Arc::new(team));
        Ok(())
    }

    /// Removes a team; the predefined teams cannot be destroyed.
    pub fn remove(&self, id: usize) -> Result<()> {
        if id <= NODE {
            return Err(Error::invalid_value("the predefined teams (WORLD, SHARED, NODE) cannot be destroyed"));
        }
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        match slots.get_mut(id) {
            Some(s @ Some(_)) => {
                *s = None;
                Ok(())
            }
            _ => Err(Error::invalid_value(format!("team handle {id} is not a live team"))),
        }
    }
}

impl Team {
    /// Team `to`'s number for this team's member `pe`, or -1 when `pe` is not a member of this
    /// team or its PE is not in `to` (shmem_team_translate_pe).
    pub fn translate(&self, pe: i32, to: &Team) -> i32 {
        if pe < 0 || pe as usize >= self.set.size {
            return -1;
        }
        to.set.index_of(self.set.pe(pe as usize)).map_or(-1, |i| i as i32)
    }
}

/// What a team split gave this PE.
#[derive(Debug)]
pub enum Split {
    /// A new team that this PE is a member of (its table index).
    Member(usize),
    /// The split was valid; this PE is not in the new team (gets SHMEM_TEAM_INVALID).
    NotMember,
    /// The arguments (the same on every member) describe no valid team: every member gets
    /// SHMEM_TEAM_INVALID and a nonzero return, as the specification says.
    Failed(Error),
}

/// The world PEs of members `start, start+stride, ...` (`size` of them) of `parent`.
fn subset(parent: &PeSet, start: usize, stride: usize, size: usize) -> PeSet {
    let stride = if size == 1 { 1 } else { parent.stride * stride };
    PeSet { start: parent.pe(start), stride, size, chan: parent.chan }
}

/// Every member fails alike when no handle is free on all of them (they all see the same AND).
fn no_free_handle() -> Split {
    Split::Failed(Error::of(
        ErrorKind::OutOfMemory, format!("no team handle below {MAX_TEAMS} is free on every member of the parent team; destroy teams no longer needed (no team was created)"),
    ))
}

/// The PEs of a strided split, as the C routines give them: `size` PEs of the parent team,
/// from its PE `start` on, `stride` apart.
#[derive(Clone, Copy, Debug)]
pub struct Triplet {
    pub start: i32,
    pub stride: i32,
    pub size: i32,
}

impl State {
    /// Stores the new team at the agreed handle `id` on its members.
    fn new_team(&self, set: PeSet, num_contexts: i32, parent: usize, id: usize) -> Result<Split> {
        // The team's collectives use the channel of its handle (barrier.rs).
        let set = PeSet { chan: id, ..set };
        match set.index_of(self.me) {
            Some(my_index) => {
                self.teams.insert_at(id, Team { set, my_index, num_contexts, parent: Some(parent) })?;
                Ok(Split::Member(id))
            }
            None => Ok(Split::NotMember),
        }
    }

    /// shmem_team_split_strided: collective over `parent` (table index `parent_id`). `routine`
    /// names the collective, which its members compare (coll.rs).
    pub fn team_split_strided(
        &self,
        parent_id: usize,
        parent: &Team,
        t: Triplet,
        num_contexts: i32,
        routine: &'static str,
    ) -> Result<Split> {
        let Triplet { start, stride, size } = t;
        // The collective stays open until the team is stored: splits on other threads wait,
        // so nothing takes the agreed handle in between.
        let c = self.collective(parent.set, routine)?;
        let mut free = c.begin(&[("start", start as i64), ("stride", stride as i64), ("size", size as i64)], &self.teams.free_handles())?;
        let n = parent.set.size as i64;
        let (start, stride, size) = (start as i64, stride as i64, size as i64);
        let why = if size < 1 {
            Some("size must be at least 1".to_string())
        } else if stride < 0 {
            Some("negative strides are not supported (OpenSHMEM 1.5: start is the lowest PE of the new team); use a positive stride".into())
        } else if stride == 0 && size != 1 {
            Some("stride 0 is only valid with size 1".into())
        } else if start < 0 || start >= n {
            Some(format!("start must be a PE number of the parent team, 0..={}", n - 1))
        } else if start + stride * (size - 1) >= n {
            Some(format!(
                "the last PE, start + stride*(size-1) = {}, is beyond the parent's last PE {}",
                start + stride * (size - 1),
                n - 1
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Ok(Split::Failed(Error::invalid_value(format!(
                "invalid PE triplet (start {start}, stride {stride}, size {size}) for a parent team of {n} PEs: {why}; no team was created"
            ))));
        }
        let Some(id) = take_handle(&mut free) else { return Ok(no_free_handle()) };
        let set = subset(&parent.set, start as usize, stride as usize, size as usize);
        let split = self.new_team(set, num_contexts, parent_id, id)?;
        c.finish();
        Ok(split)
    }

    /// shmem_team_split_2d: (x-axis team, y-axis team) for this PE (`routine` as above).
    pub fn team_split_2d(
        &self,
        parent_id: usize,
        parent: &Team,
        xrange: i32,
        x_contexts: i32,
        y_contexts: i32,
        routine: &'static str,
    ) -> Result<(Split, Split)> {
        let c = self.collective(parent.set, routine)?;
        let mut free = c.begin(&[("xrange", xrange as i64)], &self.teams.free_handles())?;
        if xrange < 1 {
            let e = Error::invalid_value(format!("xrange = {xrange}: it must be a positive number of PEs per row; no teams were created"));
            return Ok((Split::Failed(e.clone()), Split::Failed(e)));
        }
        let (n, xr, p) = (parent.set.size, xrange as usize, parent.my_index);
        let (x, y) = (p % xr, p / xr);
        let row = subset(&parent.set, y * xr, 1, xr.min(n - y * xr));
        let column = subset(&parent.set, x, xr, (n - x).div_ceil(xr));
        let (Some(row_id), Some(column_id)) = (take_handle(&mut free), take_handle(&mut free)) else {
            return Ok((no_free_handle(), no_free_handle()));
        };
        let teams = (self.new_team(row, x_contexts, parent_id, row_id)?, self.new_team(column, y_contexts, parent_id, column_id)?);
        c.finish();
        Ok(teams)
    }

    /// The active set of the deprecated collectives, validated; the caller must be a member
    /// (checked when the collective starts).
    pub fn active_set(&self, start: i32, log_stride: i32, size: i32) -> Result<PeSet> {
        let bad = |why: String| {
            Err(Error::of(
                ErrorKind::InvalidPe,
                format!(
                    "invalid active set (PE_start {start}, logPE_stride {log_stride}, PE_size {size}) in a job of {} PEs: {why}",
                    self.npes
                ),
            ))
        };
        if start < 0 || start as usize >= self.npes {
            return bad(format!("PE_start must be 0..={}", self.npes - 1));
        }
        if !(0..31).contains(&log_stride) {
            return bad("logPE_stride must be 0..=30".into());
        }
        if size < 1 {
            return bad("PE_size must be at least 1".into());
        }
        let last = start as i64 + ((size as i64 - 1) << log_stride);
        if last >= self.npes as i64 {
            return bad(format!("its last PE would be {last}"));
        }
        Ok(PeSet { start: start as usize, stride: 1 << log_stride, size: size as usize, chan: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team(set: PeSet, my_index: usize) -> Team {
        Team { set, my_index, num_contexts: 0, parent: None }
    }

    #[test]
    fn translate_between_teams() {
        let world = team(PeSet::world(8), 3);
        let odd = team(PeSet { start: 1, stride: 2, size: 4, chan: 0 }, 1);
        assert_eq!(world.translate(3, &odd), 1);
        assert_eq!(world.translate(4, &odd), -1);
        assert_eq!(odd.translate(3, &world), 7);
        assert_eq!(odd.translate(4, &world), -1);
        assert_eq!(odd.translate(-1, &world), -1);
    }

    /// Two PEs whose tables differ (PE A holds a team at 3 that PE B lacks, B one at 4): the
    /// AND of their masks gives a handle free on both, and a 2-D split's second team the next.
    #[test]
    fn agreed_handles_are_free_on_every_member() {
        let (a, b) = (TeamTable::new(0, 2), TeamTable::new(1, 2));
        a.insert_at(3, team(PeSet::world(1), 0)).unwrap();
        b.insert_at(4, team(PeSet::world(1), 0)).unwrap();
        b.insert_at(6, team(PeSet::world(1), 0)).unwrap();
        let mut free: Vec<u64> = a.free_handles().iter().zip(b.free_handles()).map(|(x, y)| x & y).collect();
        assert_eq!(take_handle(&mut free), Some(5));
        assert_eq!(take_handle(&mut free), Some(7));
        // A taken handle is refused, never overwritten.
        let e = a.insert_at(3, team(PeSet::world(1), 0)).unwrap_err();
        assert!(e.to_string().contains("team handle 3"), "{e}");
        // Handles freed by destroy come back; none left gives None.
        a.remove(3).unwrap();
        assert_eq!(a.free_handles()[0] & 0b1111, 0b1000);
        let mut none = vec![0u64; FREE_WORDS];
        assert_eq!(take_handle(&mut none), None);
        let mut last = vec![0u64; FREE_WORDS];
        last[FREE_WORDS - 1] = 1 << 63;
        assert_eq!(take_handle(&mut last), Some(MAX_TEAMS - 1));
    }

    #[test]
    fn subsets_compose() {
        let odd = PeSet { start: 1, stride: 2, size: 5, chan: 0 }; // 1 3 5 7 9
        let s = subset(&odd, 1, 2, 2); // members 1, 3 -> world 3, 7
        assert_eq!(s.members().collect::<Vec<_>>(), vec![3, 7]);
        let one = subset(&odd, 4, 0, 1);
        assert_eq!(one.members().collect::<Vec<_>>(), vec![9]);
    }
}
