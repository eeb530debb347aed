//! How PEs find each other and exchange what they need at start-up.
//!
//! Every launcher ends in the same place: a *star* rendezvous (one server, every PE a client,
//! over an abstract Unix socket so local PEs can also pass file descriptors). What differs is
//! how a PE learns its rank, the job size and the star's address:
//! - `rshmemrun` puts them in the environment and runs the star itself;
//! - under PMI-1 (MPICH hydra, `PMI_FD`) or PMIx (Open MPI `mpirun`/`oshrun`) rank 0 starts the
//!   star in a thread and publishes its address through the launcher's key-value store;
//! - alone, a program is a single PE.

pub mod pmi1;
pub mod pmix;
pub mod star;
pub mod uid;

use std::os::fd::{OwnedFd, RawFd};

use crate::env::Config;
use crate::error::{Error, Result};

/// What the runtime needs from a bootstrap: who am I, how many are we, and collective exchange.
/// All operations are collective over every PE, and are used only at init and finalize.
pub trait Bootstrap: Send + Sync {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Each PE contributes `mine`; every PE receives all contributions in rank order.
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Each PE contributes descriptors; every PE receives duplicates of all of them, by rank.
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>>;
    fn barrier(&self) -> Result<()> {
        self.allgather(&[]).map(|_| ())
    }
    /// Tells the launcher (if any) that this PE called shmem_global_exit(status).
    fn report_global_exit(&self, _status: i32) {}
    /// Which launcher this came from, for rshmem-info and logs.
    fn name(&self) -> &'static str;
}

/// A job of one PE: every collective is trivial.
pub struct Single;

impl Bootstrap for Single {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(vec![mine.to_vec()])
    }
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>> {
        let dup = |fd: &RawFd| {
            // SAFETY: the caller passes descriptors it owns and keeps open for this call.
            let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(*fd) };
            borrowed.try_clone_to_owned().map_err(|e| Error::system("shmem_init", "dup", e))
        };
        Ok(vec![mine.iter().map(dup).collect::<Result<_>>()?])
    }
    fn name(&self) -> &'static str {
        "single"
    }
}

/// Environment variables `rshmemrun` gives each PE.
pub const ENV_RANK: &str = "RSHMEM_RANK";
pub const ENV_SIZE: &str = "RSHMEM_NPES";
pub const ENV_STAR: &str = "RSHMEM_STAR_ADDR";
pub const ENV_CONTROL_FD: &str = "RSHMEM_CONTROL_FD";

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// Picks the bootstrap for this process (see the module comment) and connects it.
pub fn connect(cfg: &Config) -> Result<Box<dyn Bootstrap>> {
    let timeout = std::time::Duration::from_secs_f64(cfg.bootstrap_timeout_s);
    let want = cfg.bootstrap.as_str();
    let launched = std::env::var_os(ENV_STAR).is_some();
    if want == "rshmemrun" || (want == "auto" && launched) {
        let (Some(rank), Some(size), Ok(addr)) = (env_usize(ENV_RANK), env_usize(ENV_SIZE), std::env::var(ENV_STAR))
        else {
            return Err(Error::bootstrap(format!(
                "bootstrap 'rshmemrun' was chosen but {ENV_RANK}, {ENV_SIZE} or {ENV_STAR} is missing or malformed; start the program with `rshmemrun -n N prog`"
            )));
        };
        let control = env_usize(ENV_CONTROL_FD).map(|fd| fd as RawFd);
        let client = star::StarClient::connect(&addr, rank, size, timeout, control)?;
        return Ok(Box::new(client.named("rshmemrun")));
    }
    if want == "pmi" || (want == "auto" && pmi1::detected()) {
        return pmi1::bootstrap(timeout);
    }
    if want == "pmix" || (want == "auto" && pmix::detected()) {
        return pmix::bootstrap(timeout);
    }
    if want == "single" || want == "auto" {
        return Ok(Box::new(Single));
    }
    Err(Error::bootstrap(format!("unknown bootstrap {want:?}")))
}

/// Rank 0's half of a launcher-less start: start the star server and return its address for
/// the caller to publish; every rank then connects as a client.
pub fn start_star_for_job(rank: usize, size: usize, timeout: std::time::Duration) -> Result<Option<String>> {
    if rank != 0 {
        return Ok(None);
    }
    let server = star::StarServer::bind(size)?;
    let addr = server.address().to_string();
    std::thread::Builder::new()
        .name("rshmem-star".into())
        .spawn(move || {
            if let Err(e) = server.serve(timeout) {
                eprintln!("rshmem: bootstrap server: {e}");
            }
        })
        .map_err(|e| Error::system("shmem_init", "spawning the bootstrap thread", e))?;
    Ok(Some(addr))
}
