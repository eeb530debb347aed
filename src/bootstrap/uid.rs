//! Unique-id bootstrap (`nvshmemx_get_uniqueid` + `nvshmemx_init_attr` with
//! NVSHMEMX_INIT_WITH_UNIQUEID): the program passes a 128-byte id from rank 0 to every rank
//! itself (MPI, a file, torch.distributed), and the id is all the PEs need to find each other.
//!
//! The id holds a rendezvous name (an abstract Unix socket: nothing on disk), a random
//! 256-bit job secret, a hash of the node identity of the host that made it, and a TCP address
//! (interface: RSHMEM_BOOTSTRAP_IFNAME, or the first one up other than loopback) whose port
//! `new_id` reserves by binding it then. At init, rank 0 starts the star (the same server
//! `rshmemrun` runs) on that name and that port, and every rank joins it by proving it holds
//! the secret (see `super::auth`): over the Unix name from the id's host, over TCP from any
//! other (then the per-host level, `super::hier`, carries descriptors inside each host). A
//! process that does not hold the id cannot join: the id must be kept like a password.

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::auth::{Secret, SECRET_BYTES};
use super::star::{StarClient, StarServer};
use super::{net, Bootstrap, JobStar};
use crate::error::{Error, ErrorKind, Result};
use crate::transport::node::NodeId;

/// Bytes of the opaque part of nvshmemx_uniqueid_t (after its `int version`).
pub const ID_BYTES: usize = 124;
/// Layout: magic | secret | node hash (8) | TCP address: family (0 none, 4, 6), 16 address
/// bytes, port (2) | name length (1) | name.
const ID_MAGIC: &[u8; 4] = b"RUI3";
const NODE_AT: usize = 4 + SECRET_BYTES;
const TCP_AT: usize = NODE_AT + 8;
const NAME_LEN_AT: usize = TCP_AT + 19;
const NAME_AT: usize = NAME_LEN_AT + 1;
/// Reserved ports kept at most (a program that makes ids in a loop must not run out of files).
const MAX_RESERVED: usize = 16;

/// The TCP listeners `new_id` bound in this process, by rendezvous name: when rank 0 runs here,
/// it serves on the one its id names.
static RESERVED: Mutex<Vec<(String, TcpListener)>> = Mutex::new(Vec::new());

/// 8 bytes that differ between hosts (same host = same node identity, see transport::node).
fn node_hash() -> [u8; 8] {
    Sha256::digest(NodeId::current().to_bytes())[..8].try_into().expect("8 bytes")
}

/// A fresh id: rendezvous name, secret, and a TCP port reserved on the bootstrap interface
/// (none when no interface but loopback is up, unless RSHMEM_BOOTSTRAP_IFNAME asks for one).
pub fn new_id() -> Result<[u8; ID_BYTES]> {
    let secret = super::new_job_secret()?;
    let tag: [u8; 8] = crate::sys::random::bytes().map_err(|e| Error::bootstrap(format!("bootstrap: no randomness (getrandom: {e})")))?;
    let name = format!("rshmem-uid-{}-{:016x}", std::process::id(), u64::from_le_bytes(tag));
    let mut id = [0u8; ID_BYTES];
    id[..4].copy_from_slice(ID_MAGIC);
    id[4..NODE_AT].copy_from_slice(&secret);
    id[NODE_AT..TCP_AT].copy_from_slice(&node_hash());
    let iface = match net::chosen_interface() {
        Ok(iface) => Some(iface),
        Err(why) if !crate::env::current(crate::env::BOOTSTRAP_IFNAME).1.trim().is_empty() => {
            return Err(Error::bootstrap(format!("bootstrap: {why}")))
        }
        Err(_) => None,
    };
    if let Some(iface) = iface {
        let listener = TcpListener::bind((iface.addr, 0)).map_err(|e| {
            Error::bootstrap(format!("bootstrap: reserving a TCP port on {} ({}) for the unique id: {e}", iface.name, iface.addr))
        })?;
        let addr = listener.local_addr().map_err(|e| Error::bootstrap(format!("bootstrap: the unique id's TCP port: {e}")))?;
        write_tcp(&mut id[TCP_AT..NAME_LEN_AT], addr);
        let mut reserved = RESERVED.lock().unwrap_or_else(|p| p.into_inner());
        if reserved.len() >= MAX_RESERVED {
            reserved.remove(0);
        }
        reserved.push((name.clone(), listener));
    }
    id[NAME_LEN_AT] = name.len() as u8;
    id[NAME_AT..NAME_AT + name.len()].copy_from_slice(name.as_bytes());
    Ok(id)
}

fn write_tcp(out: &mut [u8], addr: SocketAddr) {
    match addr.ip() {
        IpAddr::V4(a) => {
            out[0] = 4;
            out[1..5].copy_from_slice(&a.octets());
        }
        IpAddr::V6(a) => {
            out[0] = 6;
            out[1..17].copy_from_slice(&a.octets());
        }
    }
    out[17..19].copy_from_slice(&addr.port().to_be_bytes());
}

fn read_tcp(b: &[u8]) -> Option<SocketAddr> {
    let port = u16::from_be_bytes([b[17], b[18]]);
    let ip = match b[0] {
        4 => IpAddr::from(<[u8; 4]>::try_from(&b[1..5]).ok()?),
        6 => IpAddr::from(<[u8; 16]>::try_from(&b[1..17]).ok()?),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

struct Parsed {
    secret: Secret,
    name: String,
    node: [u8; 8],
    tcp: Option<SocketAddr>,
}

fn parse(id: &[u8; ID_BYTES]) -> Result<Parsed> {
    let len = id[NAME_LEN_AT] as usize;
    if &id[..4] != ID_MAGIC || len == 0 || NAME_AT + len > ID_BYTES || !matches!(id[TCP_AT], 0 | 4 | 6) {
        return Err(Error::invalid_value(
            "the unique id was not made by nvshmemx_get_uniqueid of this library (pass rank 0's id, unchanged, to every rank)",
        ));
    }
    let name = String::from_utf8(id[NAME_AT..NAME_AT + len].to_vec())
        .map_err(|_| Error::invalid_value("the unique id is corrupt (its rendezvous name is not text)"))?;
    Ok(Parsed {
        secret: id[4..NODE_AT].try_into().expect("secret bytes"),
        name,
        node: id[NODE_AT..TCP_AT].try_into().expect("8 bytes"),
        tcp: read_tcp(&id[TCP_AT..NAME_LEN_AT]),
    })
}

/// A bootstrap error; the C boundary names the routine.
fn err(what: String) -> Error {
    Error::of(ErrorKind::Bootstrap, what)
}

/// A star joined through a unique id (a [`JobStar`] once joined); rank 0 also runs the server.
pub struct UidStar;

impl UidStar {
    /// Collective over the `nranks` processes that hold `id`; with the per-host level on top
    /// (PEs on other hosts than the id's join over TCP).
    pub fn join(id: &[u8; ID_BYTES], rank: usize, nranks: usize, timeout: Duration) -> Result<Box<dyn Bootstrap>> {
        if nranks == 0 || rank >= nranks {
            return Err(Error::invalid_value(format!("rank {rank} of {nranks}: the rank must be below the number of ranks")));
        }
        let p = parse(id)?;
        // This runs before init sets the log level, and the joining waits for every rank:
        // rank 0's rendezvous must log the strangers it refuses meanwhile (RSHMEM_DEBUG=INFO).
        if let Ok(cfg) = crate::env::Config::from_env() {
            crate::log::set(cfg.log_level, usize::MAX);
        }
        let server = if rank == 0 { Some(Self::host(&p, nranks, timeout)?) } else { None };
        let here = super::hostname();
        let address = match p.tcp {
            _ if p.node == node_hash() => p.name.clone(),
            Some(sa) => net::tcp_address(&sa),
            None => {
                return Err(err(format!(
                        "rank {rank} on host {here} is not on the host that made the unique id, and that host listens on no network interface \
                     (none but loopback was up there); set RSHMEM_BOOTSTRAP_IFNAME where nvshmemx_get_uniqueid runs to the interface the hosts share"
                    ),
                ))
            }
        };
        let reached = StarClient::reach(&address, rank, timeout).map_err(|e| {
            err(format!(
                "{}; rank 0 must call nvshmemx_init_attr with the same id, in the process (or on the host) that made it",
                e.message
            ))
        })?;
        let client = StarClient::join(reached, nranks, None, &p.secret).map_err(Error::unnamed)?;
        JobStar::from_parts(client.named("uniqueid"), server, timeout, p.secret).per_host().map_err(Error::unnamed)
    }

    /// Rank 0: start the star on the id's name and TCP port, guarded by the id's secret.
    fn host(p: &Parsed, nranks: usize, timeout: Duration) -> Result<JoinHandle<Result<Vec<i32>>>> {
        let mut server = StarServer::bind_named(nranks, &p.name, p.secret).map_err(|e| {
            err(format!("{}: binding the rendezvous of this unique id failed; was the same id used for two jobs at once? Make a new one with nvshmemx_get_uniqueid", e.message))
        })?;
        if let Some(sa) = p.tcp {
            // The port new_id reserved, when this process made the id; else bind it now.
            let reserved = {
                let mut list = RESERVED.lock().unwrap_or_else(|e| e.into_inner());
                list.iter().position(|(n, _)| *n == p.name).map(|i| list.remove(i).1)
            };
            let listener = match reserved {
                Some(l) => l,
                None => TcpListener::bind(sa).map_err(|e| {
                    err(format!("rank 0 cannot listen at {sa}, the address in the unique id: {e}; rank 0 must run on the host whose nvshmemx_get_uniqueid made the id"))
                })?,
            };
            server.listen_on(listener).map_err(Error::unnamed)?;
        }
        std::thread::Builder::new()
            .name("rshmem-uid".into())
            .spawn(move || {
                server.serve(timeout).map_err(|e| {
                    eprintln!("rshmem: unique-id bootstrap: {e}");
                    Error::from(e)
                })
            })
            .map_err(|e| Error::os("spawning the bootstrap thread", e))
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
        let stranger = std::thread::spawn(move || UidStar::join(&forged, 2, 3, Duration::from_millis(300)).map(|_| ()));
        let ranks: Vec<_> = (0..3)
            .map(|r| {
                std::thread::spawn(move || {
                    let b = UidStar::join(&id, r, 3, t).unwrap();
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
        let e = UidStar::join(&[7u8; ID_BYTES], 0, 2, Duration::from_secs(1)).err().unwrap();
        assert!(e.message.contains("nvshmemx_get_uniqueid"), "{}", e.message);
    }

    #[test]
    fn a_rank_that_cannot_reach_rank_0_is_told_the_fix_under_the_routine_called() {
        let id = new_id().unwrap();
        // Nobody runs rank 0 with this id: rank 1 cannot reach its rendezvous.
        let e = UidStar::join(&id, 1, 2, Duration::from_millis(200)).err().unwrap();
        assert!(e.message.contains("could not reach the rendezvous"), "{}", e.message);
        assert!(e.message.contains("rank 0 must call nvshmemx_init_attr with the same id"), "{}", e.message);
        assert_eq!(e.routine, crate::error::UNNAMED, "the C boundary names the routine");
        // What the C boundary does with it (capi::boundary):
        let shown = e.named("nvshmemx_init_attr").to_string();
        assert!(shown.starts_with("nvshmemx_init_attr: "), "{shown}");
    }
}
