//! Unique-id bootstrap (`nvshmemx_get_uniqueid` + `nvshmemx_init_attr` with
//! NVSHMEMX_INIT_WITH_UNIQUEID): the program passes a 128-byte id from rank 0 to every rank
//! itself (MPI, a file, torch.distributed), and the id is all the PEs need to find each other.
//!
//! The id holds a rendezvous name (an abstract Unix socket: nothing on disk) and a random
//! 128-bit secret. At init, rank 0 starts a star server (the same one `rshmemrun` runs) and a
//! doorman on the rendezvous name; every other rank connects to the doorman, proves it knows
//! the secret, and only then learns the star's address. A process that does not hold the id
//! cannot join. The star then provides every collective the runtime needs, descriptor passing
//! included. One host for now (the socket is local); a TCP doorman is the multi-host step.

use std::io::{Read, Write};
use std::os::fd::{OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::star::{StarClient, StarServer};
use super::Bootstrap;
use crate::error::{Error, Result};

/// Bytes of the opaque part of nvshmemx_uniqueid_t (after its `int version`).
pub const ID_BYTES: usize = 124;
const ID_MAGIC: &[u8; 4] = b"RUID";
const SECRET: usize = 16;
const NAME_AT: usize = 4 + SECRET + 1;

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut b);
    }
    b
}

/// A fresh id: rendezvous name and secret. Touches nothing else (no socket, no GPU).
pub fn new_id() -> [u8; ID_BYTES] {
    let mut id = [0u8; ID_BYTES];
    let tag: [u8; 8] = random_bytes();
    let name = format!("rshmem-uid-{}-{:016x}", std::process::id(), u64::from_le_bytes(tag));
    id[..4].copy_from_slice(ID_MAGIC);
    id[4..4 + SECRET].copy_from_slice(&random_bytes::<SECRET>());
    id[4 + SECRET] = name.len() as u8;
    id[NAME_AT..NAME_AT + name.len()].copy_from_slice(name.as_bytes());
    id
}

struct Parsed {
    secret: [u8; SECRET],
    name: String,
}

fn parse(id: &[u8; ID_BYTES], routine: &'static str) -> Result<Parsed> {
    let len = id[4 + SECRET] as usize;
    if &id[..4] != ID_MAGIC || len == 0 || NAME_AT + len > ID_BYTES {
        return Err(Error::invalid(
            routine,
            "the unique id was not made by nvshmemx_get_uniqueid of this library (pass rank 0's id, unchanged, to every rank)",
        ));
    }
    let name = String::from_utf8(id[NAME_AT..NAME_AT + len].to_vec())
        .map_err(|_| Error::invalid(routine, "the unique id is corrupt (its rendezvous name is not text)"))?;
    Ok(Parsed { secret: id[4..4 + SECRET].try_into().unwrap(), name })
}

fn err(routine: &'static str, what: String) -> Error {
    Error::bootstrap(what).in_routine(routine)
}

/// A star joined through a unique id; rank 0 also runs the server and the doorman.
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
        let (address, server) = if rank == 0 { Self::host(&p, nranks, timeout, routine)? } else { (Self::ask(&p, rank, timeout, routine)?, None) };
        let client = StarClient::connect(&address, rank, nranks, timeout, None)?.named("uniqueid");
        Ok(UidStar { client: Some(client), server, timeout })
    }

    /// Rank 0: start the star and a doorman that hands its address to holders of the secret.
    fn host(p: &Parsed, nranks: usize, timeout: Duration, routine: &'static str) -> Result<(String, Option<JoinHandle<()>>)> {
        let server = StarServer::bind(nranks)?;
        let address = server.address().to_string();
        let sa = SocketAddr::from_abstract_name(p.name.as_bytes()).map_err(|e| err(routine, format!("rendezvous name: {e}")))?;
        let door = UnixListener::bind_addr(&sa).map_err(|e| {
            err(routine, format!("binding the rendezvous of this unique id failed ({e}); was the same id used for two jobs at once? Make a new one with nvshmemx_get_uniqueid"))
        })?;
        let secret = p.secret;
        let reply = address.clone();
        let handle = std::thread::Builder::new()
            .name("rshmem-uid".into())
            .spawn(move || {
                let doorman = std::thread::spawn(move || doorman(door, secret, reply, nranks - 1, timeout));
                if let Err(e) = server.serve(timeout) {
                    eprintln!("rshmem: unique-id bootstrap: {e}");
                }
                let _ = doorman.join();
            })
            .map_err(|e| Error::system(routine, "spawning the bootstrap thread", e))?;
        Ok((address, Some(handle)))
    }

    /// Other ranks: prove we hold the id, learn the star's address.
    fn ask(p: &Parsed, rank: usize, timeout: Duration, routine: &'static str) -> Result<String> {
        let sa = SocketAddr::from_abstract_name(p.name.as_bytes()).map_err(|e| err(routine, format!("rendezvous name: {e}")))?;
        let deadline = Instant::now() + timeout;
        let mut s = loop {
            match UnixStream::connect_addr(&sa) {
                Ok(s) => break s,
                Err(e) if Instant::now() > deadline => {
                    return Err(err(routine, format!(
                        "rank {rank} could not reach rank 0's rendezvous within {:.0} s ({e}); rank 0 must call nvshmemx_init_attr with the same id (on this host)",
                        timeout.as_secs_f64()
                    )))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        s.set_read_timeout(Some(timeout)).ok();
        let mut hello = [0u8; SECRET + 4];
        hello[..SECRET].copy_from_slice(&p.secret);
        hello[SECRET..].copy_from_slice(&(rank as u32).to_le_bytes());
        s.write_all(&hello).map_err(|e| err(routine, format!("rendezvous: {e}")))?;
        let mut len = [0u8; 2];
        s.read_exact(&mut len).map_err(|e| err(routine, format!("rank 0 refused rank {rank} at the rendezvous ({e})")))?;
        let mut addr = vec![0u8; u16::from_le_bytes(len) as usize];
        s.read_exact(&mut addr).map_err(|e| err(routine, format!("rendezvous: {e}")))?;
        String::from_utf8(addr).map_err(|_| err(routine, "rendezvous: garbled reply".into()))
    }

    fn client(&self) -> &StarClient {
        self.client.as_ref().expect("the star client lives until drop")
    }
}

/// Serves `expected` genuine ranks (or stops at the deadline); strangers get nothing.
fn doorman(door: UnixListener, secret: [u8; SECRET], address: String, expected: usize, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    let _ = door.set_nonblocking(true);
    let mut served = 0;
    while served < expected && Instant::now() < deadline {
        match door.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                s.set_read_timeout(Some(Duration::from_secs(5))).ok();
                let mut hello = [0u8; SECRET + 4];
                if s.read_exact(&mut hello).is_ok() && hello[..SECRET] == secret {
                    let mut reply = (address.len() as u16).to_le_bytes().to_vec();
                    reply.extend_from_slice(address.as_bytes());
                    if s.write_all(&reply).is_ok() {
                        served += 1;
                    }
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
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
        if let Some(h) = self.server.take() {
            let deadline = Instant::now() + self.timeout;
            while !h.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_ranks_join_with_one_id_and_a_stranger_cannot() {
        let id = new_id();
        let t = Duration::from_secs(10);
        let mut forged = id;
        forged[5] ^= 0xff; // wrong secret, right name
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
