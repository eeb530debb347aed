//! The per-host level of a bootstrap: descriptors (heap memfds, GPU heap handles) only ever
//! travel between PEs of one host.
//!
//! Over the job's star (Unix or TCP) every PE sends its node identity
//! ([`crate::transport::node::NodeId`]). When all PEs share one host and every link is a Unix
//! socket, the star itself carries descriptors and nothing more happens. Otherwise the lowest PE
//! of each host starts a Unix star for its host's PEs (guarded by the same job secret), sends
//! its name over the job's star, and each PE joins its host's star. `allgather_fds` then runs on
//! that local star: entries of PEs on other hosts come back empty, so the runtime never tries to
//! map another host's memory.

use std::os::fd::{OwnedFd, RawFd};
use std::thread::JoinHandle;
use std::time::Duration;

use super::auth::Secret;
use super::star::{StarClient, StarServer};
use super::Bootstrap;
use crate::error::{Error, Result};
use crate::transport::node::NodeId;

pub struct PerHost {
    global: Box<dyn Bootstrap>,
    local: Option<StarClient>,
    server: Option<JoinHandle<Result<Vec<i32>>>>,
    /// The PEs on this host, in rank order (this PE among them).
    local_pes: Vec<usize>,
    hosts: usize,
    timeout: Duration,
}

/// Wraps the job's star `global`; collective over every PE.
pub fn over(global: Box<dyn Bootstrap>, secret: &Secret, timeout: Duration) -> Result<Box<dyn Bootstrap>> {
    let (rank, size) = (global.rank(), global.size());
    let me = NodeId::current();
    let mut record = vec![u8::from(global.carries_fds())];
    record.extend(me.to_bytes());
    let all = global.allgather(&record)?;
    let mut ids = Vec::with_capacity(size);
    for (pe, r) in all.iter().enumerate() {
        let id = r.split_first().and_then(|(_, rest)| NodeId::from_bytes(rest));
        ids.push(id.ok_or_else(|| Error::bootstrap(format!("bootstrap: PE {pe} sent a malformed node identity")))?);
    }
    let local_pes: Vec<usize> = (0..size).filter(|pe| ids[*pe] == me).collect();
    let mut hosts: Vec<&NodeId> = Vec::new();
    for id in &ids {
        if !hosts.contains(&id) {
            hosts.push(id);
        }
    }
    if hosts.len() > 1 {
        // The fabric transport will be needed: its library loads meanwhile.
        crate::fabric::preload();
    }
    if hosts.len() == 1 && all.iter().all(|r| r[0] == 1) {
        return Ok(global);
    }
    let leader = local_pes[0];
    let (name, server) = if rank == leader {
        let s = StarServer::bind(local_pes.len(), *secret)?;
        let (name, thread) = super::serve_in_thread(s, timeout)?;
        (name, Some(thread))
    } else {
        (String::new(), None)
    };
    let names = global.allgather(name.as_bytes())?;
    let leader_name = String::from_utf8_lossy(&names[leader]).into_owned();
    let index = local_pes.iter().position(|pe| *pe == rank).expect("this PE is on its own host");
    let local = StarClient::connect(&leader_name, index, local_pes.len(), timeout, None, secret)
        .map_err(|e| Error::bootstrap(format!("{} (joining the per-host rendezvous of PE {leader} on host {})", e.message, me.hostname)))?
        .named(global.name());
    crate::log::info(&format!(
        "bootstrap: the job spans {} host(s); this host ({}) runs PE(s) {:?}",
        hosts.len(),
        me.describe(),
        local_pes
    ));
    Ok(Box::new(PerHost { global, local: Some(local), server, local_pes, hosts: hosts.len(), timeout }))
}

impl PerHost {
    fn local(&self) -> &StarClient {
        self.local.as_ref().expect("the local star lives until drop")
    }
}

impl Bootstrap for PerHost {
    fn rank(&self) -> usize {
        self.global.rank()
    }
    fn size(&self) -> usize {
        self.global.size()
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.global.allgather(mine)
    }
    /// Only this host's PEs exchange descriptors; the others' entries are empty.
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>> {
        let here = self.local().allgather_fds(mine)?;
        let mut out: Vec<Vec<OwnedFd>> = (0..self.size()).map(|_| Vec::new()).collect();
        for (pe, fds) in self.local_pes.iter().zip(here) {
            out[*pe] = fds;
        }
        Ok(out)
    }
    fn local_pes(&self) -> Vec<usize> {
        self.local_pes.clone()
    }
    fn hosts(&self) -> usize {
        self.hosts
    }
    fn report_global_exit(&self, status: i32) {
        self.global.report_global_exit(status)
    }
    fn name(&self) -> &'static str {
        self.global.name()
    }
}

impl Drop for PerHost {
    /// Leaves the host's star (its leader waits, bounded, for the others), then the job's.
    fn drop(&mut self) {
        drop(self.local.take());
        super::join_server(self.server.take(), self.timeout);
    }
}
