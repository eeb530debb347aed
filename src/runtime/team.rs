//! Teams: strided sets of world PEs. A C handle is an index into this table (shmem_team_t is
//! index + 1 as a pointer, so NULL is SHMEM_TEAM_INVALID; nvshmem_team_t is the index itself).

use std::sync::{Arc, RwLock};

use super::barrier::PeSet;
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

impl TeamTable {
    pub fn new(me: usize, npes: usize) -> TeamTable {
        let all = Team { set: PeSet::world(npes), my_index: me, num_contexts: 0, parent: None };
        TeamTable { slots: RwLock::new(vec![Some(Arc::new(all.clone())), Some(Arc::new(all.clone())), Some(Arc::new(all))]) }
    }

    /// The team behind handle index `id`, or an error naming the routine.
    pub fn get(&self, id: usize, routine: &'static str) -> Result<Arc<Team>> {
        let slots = self.slots.read().unwrap_or_else(|p| p.into_inner());
        slots.get(id).and_then(|t| t.clone()).ok_or_else(|| {
            Error::new(ErrorKind::InvalidArgument, routine, format!("team handle {id} is not a live team on this PE (destroyed, SHMEM_TEAM_INVALID, or this PE is not a member)"))
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

    /// Removes a team; the predefined teams cannot be destroyed.
    pub fn remove(&self, id: usize, routine: &'static str) -> Result<()> {
        if id <= NODE {
            return Err(Error::invalid(routine, "the predefined teams (WORLD, SHARED, NODE) cannot be destroyed"));
        }
        let mut slots = self.slots.write().unwrap_or_else(|p| p.into_inner());
        match slots.get_mut(id) {
            Some(s @ Some(_)) => {
                *s = None;
                Ok(())
            }
            _ => Err(Error::invalid(routine, format!("team handle {id} is not a live team"))),
        }
    }
}
