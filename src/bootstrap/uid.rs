//! Unique-id bootstrap (`nvshmemx_get_uniqueid` + `nvshmemx_init_attr` with
//! NVSHMEMX_INIT_WITH_UNIQUEID): the program passes a 128-byte id from rank 0 to every rank
//! itself (MPI, a file, torch.distributed), and the id is all the PEs need to find each other.
//!
//! The id holds a rendezvous name (an abstract Unix socket: nothing on disk) and a random
//! 256-bit job secret. At init, rank 0 starts the star (the same server `rshmemrun` runs) on
//! that name, and every rank joins it by proving it holds the secret (see `super::auth`): a
//! process that does not hold the id cannot join, and the id must be kept like a password.
//! One host for now (the socket is local); a TCP rendezvous is the multi-host step.

use std::os::fd::{OwnedFd, RawFd};
use std::thread::JoinHandle;
use std::time::Duration;

use super::auth::{Secret, SECRET_BYTES};
use super::star::{StarClient, StarServer};
use super::Bootstrap;
use crate::error::{Error, Result};

/// Bytes of the opaque part of nvshmemx_uniqueid_t (after its `int version`).
pub const ID_BYTES: usize = 124;
const ID_MAGIC: &[u8; 4] = b"RUI2";
const NAME_AT: usize = 4 + SECRET_BYTES + 1;

/// A fresh id: rendezvous name and secret. Touches nothing else (no socket, no GPU).
pub fn new_id() -> Result<[u8; ID_BYTES]> {
    let secret = super::new_job_secret()?;
    let tag: [u8; 8] = crate::sys::random::bytes().map_err(|e| Error::bootstrap(format!("bootstrap: no randomness (getrandom: {e})")))?;
    let name = format!("rshmem-uid-{}-{:016x}", std::process::id(), u64::from_le_bytes(tag));
    let mut id = [0u8; ID_BYTES];
    id[..4].copy_from_slice(ID_MAGIC);
    id[4..4 + SECRET_BYTES].copy_from_slice(&secret);
    id[4 + SECRET_BYTES] = name.len() as u8;
    id[NAME_AT..NAME_AT + name.len()].copy_from_slice(name.as_bytes());
    Ok(id)
}

struct Parsed {
    secret: Secret,
    name: String,
}

fn parse(id: &[u8; ID_BYTES], routine: &'static str) -> Result<Parsed> {
    let len = id[4 + SECRET_BYTES] as usize;
    if &id[..4] != ID_MAGIC || len == 0 || NAME_AT + len > ID_BYTES {
        return Err(Error::invalid(
            routine,
            "the unique id was not made by nvshmemx_get_uniqueid of this library (pass rank 0's id, unchanged, to every rank)",
        ));
    }
    let name = String::from_utf8(id[NAME_AT..NAME_AT + len].to_vec())
        .map_err(|_| Error::invalid(routine, "the unique id is corrupt (its rendezvous name is not text)"))?;
    Ok(Parsed { secret: id[4..4 + SECRET_BYTES].try_into().expect("secret bytes"), name })
}

fn err(routine: &'static str, what: String) -> Error {
    Error::bootstrap(what).in_routine(routine)
}

/// A star joined through a unique id; rank 0 also runs the server.
pub struct UidStar {
    client: Option<StarClient>,
    server: Option<JoinHandle<()>>,
    timeout: Duration,
}

impl UidStar {
    /// Collective over the `nranks` processes that hold `id`.
    pub fn join(id: &[u8; ID_BYTES], rank: usize, nranks: usize, timeout: Duration, routine: &'static str) -> Result<UidStar> {
        if nranks == 0 || rank >= nranks {
            return Err(Error::invalid(routine, format!("rank {rank} of {nranks}: the rank must be below the number of ranks")));
        }
        let p = parse(id, routine)?;
        let server = if rank == 0 { Some(Self::host(&p, nranks, timeout, routine)?) } else { None };
        let client = StarClient::connect(&p.name, rank, nranks, timeout, None, &p.secret).map_err(|e| {
            if e.message.contains("could not reach") {
                err(routine, format!("{}; rank 0 must call nvshmemx_init_attr with the same id (on this host)", e.message))
            } else {
                e.in_routine(routine)
            }
        })?;
        Ok(UidStar { client: Some(client.named("uniqueid")), server, timeout })
    }

    /// Rank 0: start the star on the id's name, guarded by the id's secret.
    fn host(p: &Parsed, nranks: usize, timeout: Duration, routine: &'static str) -> Result<JoinHandle<()>> {
        let server = StarServer::bind_named(nranks, &p.name, p.secret).map_err(|e| {
            err(routine, format!("{}: binding the rendezvous of this unique id failed; was the same id used for two jobs at once? Make a new one with nvshmemx_get_uniqueid", e.message))
        })?;
        std::thread::Builder::new()
            .name("rshmem-uid".into())
            .spawn(move || {
                if let Err(e) = server.serve(timeout) {
                    eprintln!("rshmem: unique-id bootstrap: {e}");
                }
            })
            .map_err(|e| Error::system(routine, "spawning the bootstrap thread", e))
    }

    fn client(&self) -> &StarClient {
        self.client.as_ref().expect("the star client lives until drop")
    }
}

impl Bootstrap for UidStar {
    fn rank(&self) -> usize {
        self.client().rank()
    }
    fn size(&self) -> usize {
        self.client().size()
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.client().allgather(mine)
    }
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>> {
        self.client().allgather_fds(mine)
    }
    fn name(&self) -> &'static str {
        "uniqueid"
    }
}

impl Drop for UidStar {
    /// Says goodbye; rank 0 waits (bounded) for its server to finish so peers are not cut off.
    fn drop(&mut self) {
        drop(self.client.take());
        super::join_server(self.server.take(), self.timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_ranks_join_with_one_id_and_a_stranger_cannot() {
        let id = new_id().unwrap();
        let t = Duration::from_secs(10);
        let mut forged = id;
        forged[5] ^= 0xff; // wrong secret, right name: it must not join, nor hold the others up
        let stranger = std::thread::spawn(move || UidStar::join(&forged, 2, 3, Duration::from_millis(300), "t").map(|_| ()));
        let ranks: Vec<_> = (0..3)
            .map(|r| {
                std::thread::spawn(move || {
                    let b = UidStar::join(&id, r, 3, t, "t").unwrap();
                    let all = b.allgather(&[r as u8]).unwrap();
                    assert_eq!(all, vec![vec![0], vec![1], vec![2]]);
                })
            })
            .collect();
        for r in ranks {
            r.join().unwrap();
        }
        assert!(stranger.join().unwrap().is_err());
    }

    #[test]
    fn a_foreign_id_is_refused_by_name() {
        let e = UidStar::join(&[7u8; ID_BYTES], 0, 2, Duration::from_secs(1), "nvshmemx_init_attr").err().unwrap();
        assert!(e.message.contains("nvshmemx_get_uniqueid"), "{}", e.message);
    }
}
