//! The star rendezvous: one server, every PE a client, over an abstract Unix socket (no file
//! on disk; it disappears with its process). Operations are lock-step collectives: the server
//! reads one request from every rank, then answers each with everybody's contributions.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::sys::fdpass::{self, MAX_FDS};

const MAGIC: u32 = 0x5253_484d; // "RSHM"
const OP_GATHER: u8 = 1;
const OP_BYE: u8 = 2;
const REPLY_OK: u8 = 0;
const REPLY_ERR: u8 = 1;

fn io_err(what: &str, e: std::io::Error) -> Error {
    Error::bootstrap(format!("bootstrap: {what}: {e}"))
}

/// Request header: op, fd count, payload length.
fn header(op: u8, nfds: u32, len: u64) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[0] = op;
    h[4..8].copy_from_slice(&nfds.to_le_bytes());
    h[8..16].copy_from_slice(&len.to_le_bytes());
    h
}

fn read_u32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().unwrap())
}
fn read_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

/// Receives `count` descriptors sent in chunks of at most MAX_FDS, each riding on one byte.
fn recv_fds(sock: &UnixStream, count: usize) -> std::io::Result<Vec<OwnedFd>> {
    let mut fds = Vec::with_capacity(count);
    while fds.len() < count {
        let chunk = (count - fds.len()).min(MAX_FDS);
        let mut byte = [0u8; 1];
        let got = fdpass::recv_with_fds(sock, &mut byte, chunk)?;
        if got.len() != chunk {
            return Err(std::io::Error::other(format!("expected {chunk} descriptors, got {}", got.len())));
        }
        fds.extend(got);
    }
    Ok(fds)
}

fn send_fds(sock: &UnixStream, fds: &[RawFd]) -> std::io::Result<()> {
    for chunk in fds.chunks(MAX_FDS) {
        fdpass::send_with_fds(sock, &[0u8], chunk)?;
    }
    Ok(())
}

fn fresh_address() -> String {
    let mut seed = [0u8; 8];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut seed);
    }
    format!("rshmem-{}-{:016x}", std::process::id(), u64::from_le_bytes(seed))
}

/// The server side (run by `rshmemrun`, or by rank 0 in a thread).
pub struct StarServer {
    listener: UnixListener,
    address: String,
    size: usize,
}

struct Member {
    stream: UnixStream,
    pid: i32,
}

impl StarServer {
    pub fn bind(size: usize) -> Result<StarServer> {
        StarServer::bind_named(size, &fresh_address())
    }

    /// Binds a name every PE can work out for itself (used when no launcher store exists).
    pub fn bind_named(size: usize, address: &str) -> Result<StarServer> {
        let address = address.to_string();
        let sa = SocketAddr::from_abstract_name(address.as_bytes()).map_err(|e| io_err("socket name", e))?;
        let listener = UnixListener::bind_addr(&sa).map_err(|e| io_err("bind", e))?;
        Ok(StarServer { listener, address, size })
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    /// Blocks until some PE is connecting (between sessions: after a shmem_finalize, a PE
    /// may call shmem_init again, and the deadline starts only when one does).
    pub fn wait_for_client(&self) {
        let mut pfd = libc::pollfd { fd: self.listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for a descriptor we own; -1 waits without limit.
        while unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {}
    }

    /// Tells the PEs that already joined why start-up failed, so each can report it.
    fn refuse(members: &[Option<Member>], err: &Error) {
        for m in members.iter().flatten() {
            let why = err.message.trim_start_matches("bootstrap: ").as_bytes();
            let _ = (&m.stream).write_all(&header(REPLY_ERR, 0, why.len() as u64)).and_then(|_| (&m.stream).write_all(why));
        }
    }

    fn accept_all(&self, timeout: Duration) -> Result<Vec<Member>> {
        let deadline = Instant::now() + timeout;
        let mut members: Vec<Option<Member>> = (0..self.size).map(|_| None).collect();
        self.listener.set_nonblocking(true).map_err(|e| io_err("listen", e))?;
        let mut joined = 0;
        while joined < self.size {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).map_err(|e| io_err("accept", e))?;
                    stream.set_read_timeout(Some(timeout)).ok();
                    let mut hello = [0u8; 16];
                    stream.read_exact(&mut hello).map_err(|e| io_err("reading a PE's hello", e))?;
                    let (magic, rank, size, pid) =
                        (read_u32(&hello), read_u32(&hello[4..]) as usize, read_u32(&hello[8..]) as usize, read_u32(&hello[12..]) as i32);
                    if magic != MAGIC || size != self.size || rank >= self.size || members[rank].is_some() {
                        let err = Error::bootstrap(format!(
                            "bootstrap: a process joined as PE {rank} of {size}, but this job has {} PEs (or PE {rank} joined twice)",
                            self.size
                        ));
                        StarServer::refuse(&members, &err);
                        return Err(err);
                    }
                    stream.set_read_timeout(None).ok();
                    members[rank] = Some(Member { stream, pid });
                    joined += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() > deadline {
                        let missing: Vec<String> =
                            members.iter().enumerate().filter(|(_, m)| m.is_none()).map(|(r, _)| r.to_string()).collect();
                        let err = Error::bootstrap(format!(
                            "bootstrap: timed out after {:.0} s waiting for PE(s) {} to start (raise RSHMEM_BOOTSTRAP_TIMEOUT if start-up is slow)",
                            timeout.as_secs_f64(),
                            missing.join(", ")
                        ));
                        StarServer::refuse(&members, &err);
                        return Err(err);
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(io_err("accept", e)),
            }
        }
        Ok(members.into_iter().map(|m| m.unwrap()).collect())
    }

    /// Serves collectives until every PE says goodbye. Returns the PEs' process ids on success.
    /// The server can serve again afterwards (a later shmem_init of the same PEs).
    pub fn serve(&self, timeout: Duration) -> Result<Vec<i32>> {
        let members = self.accept_all(timeout)?;
        let pids: Vec<i32> = members.iter().map(|m| m.pid).collect();
        loop {
            let mut payloads = Vec::with_capacity(members.len());
            let mut fds: Vec<Vec<OwnedFd>> = Vec::with_capacity(members.len());
            let mut byes = 0;
            let mut failure: Option<String> = None;
            for (rank, m) in members.iter().enumerate() {
                let mut h = [0u8; 16];
                if let Err(e) = (&m.stream).read_exact(&mut h) {
                    failure = Some(format!("PE {rank} (pid {}) left the job during start-up or shutdown: {e}", m.pid));
                    break;
                }
                let (op, nfds, len) = (h[0], read_u32(&h[4..]) as usize, read_u64(&h[8..]) as usize);
                let mut data = vec![0u8; len];
                let got = (&m.stream).read_exact(&mut data).and_then(|_| recv_fds(&m.stream, nfds));
                match got {
                    Ok(f) => fds.push(f),
                    Err(e) => {
                        failure = Some(format!("PE {rank}: {e}"));
                        break;
                    }
                }
                if op == OP_BYE {
                    byes += 1;
                }
                payloads.push(data);
            }
            if let Some(why) = failure {
                for m in &members {
                    let _ = (&m.stream).write_all(&header(REPLY_ERR, 0, why.len() as u64)).and_then(|_| (&m.stream).write_all(why.as_bytes()));
                }
                return Err(Error::bootstrap(format!("bootstrap: {why}")));
            }
            if byes == members.len() {
                return Ok(pids);
            }
            // Reply: per rank (len, nfds), then payloads, then all descriptors in rank order.
            let mut reply = Vec::new();
            for (p, f) in payloads.iter().zip(&fds) {
                reply.extend_from_slice(&(p.len() as u64).to_le_bytes());
                reply.extend_from_slice(&(f.len() as u64).to_le_bytes());
            }
            for p in &payloads {
                reply.extend_from_slice(p);
            }
            let raw: Vec<RawFd> = fds.iter().flatten().map(|f| f.as_raw_fd()).collect();
            for (rank, m) in members.iter().enumerate() {
                let sent = (&m.stream)
                    .write_all(&header(REPLY_OK, raw.len() as u32, reply.len() as u64))
                    .and_then(|_| (&m.stream).write_all(&reply))
                    .and_then(|_| send_fds(&m.stream, &raw));
                if let Err(e) = sent {
                    return Err(Error::bootstrap(format!("bootstrap: PE {rank} (pid {}) is gone: {e}", m.pid)));
                }
            }
        }
    }
}

/// What a collective exchange returns: every rank's bytes and descriptors, in rank order.
type Gathered = (Vec<Vec<u8>>, Vec<Vec<OwnedFd>>);

/// One PE's connection to the star.
pub struct StarClient {
    stream: Mutex<UnixStream>,
    rank: usize,
    size: usize,
    control_fd: Option<RawFd>,
    name: &'static str,
}

impl StarClient {
    pub fn connect(address: &str, rank: usize, size: usize, timeout: Duration, control_fd: Option<RawFd>) -> Result<StarClient> {
        if rank >= size {
            return Err(Error::bootstrap(format!("bootstrap: rank {rank} is not below the job size {size}")));
        }
        let sa = SocketAddr::from_abstract_name(address.as_bytes()).map_err(|e| io_err("socket name", e))?;
        let deadline = Instant::now() + timeout;
        let mut stream = loop {
            match UnixStream::connect_addr(&sa) {
                Ok(s) => break s,
                Err(e) if Instant::now() > deadline => {
                    return Err(Error::bootstrap(format!(
                        "bootstrap: PE {rank} could not reach the rendezvous at @{address} within {:.0} s: {e}",
                        timeout.as_secs_f64()
                    )))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        let mut hello = [0u8; 16];
        hello[..4].copy_from_slice(&MAGIC.to_le_bytes());
        hello[4..8].copy_from_slice(&(rank as u32).to_le_bytes());
        hello[8..12].copy_from_slice(&(size as u32).to_le_bytes());
        hello[12..16].copy_from_slice(&(std::process::id()).to_le_bytes());
        stream.write_all(&hello).map_err(|e| io_err("hello", e))?;
        Ok(StarClient { stream: Mutex::new(stream), rank, size, control_fd, name: "star" })
    }

    pub fn named(mut self, name: &'static str) -> StarClient {
        self.name = name;
        self
    }

    fn exchange(&self, op: u8, mine: &[u8], fds: &[RawFd]) -> Result<Gathered> {
        let s = self.stream.lock().unwrap_or_else(|p| p.into_inner());
        let sent = (&*s)
            .write_all(&header(op, fds.len() as u32, mine.len() as u64))
            .and_then(|_| (&*s).write_all(mine))
            .and_then(|_| send_fds(&s, fds));
        sent.map_err(|e| io_err("lost the rendezvous server", e))?;
        if op == OP_BYE {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut h = [0u8; 16];
        (&*s).read_exact(&mut h).map_err(|e| io_err("lost the rendezvous server", e))?;
        let (status, nfds, len) = (h[0], read_u32(&h[4..]) as usize, read_u64(&h[8..]) as usize);
        let mut body = vec![0u8; len];
        (&*s).read_exact(&mut body).map_err(|e| io_err("reading a reply", e))?;
        if status == REPLY_ERR {
            return Err(Error::bootstrap(format!("bootstrap: {}", String::from_utf8_lossy(&body))));
        }
        let mut all_fds = recv_fds(&s, nfds).map_err(|e| io_err("receiving descriptors", e))?.into_iter();
        let mut out = Vec::with_capacity(self.size);
        let mut out_fds = Vec::with_capacity(self.size);
        let mut at = 16 * self.size;
        for r in 0..self.size {
            let plen = read_u64(&body[16 * r..]) as usize;
            let pfds = read_u64(&body[16 * r + 8..]) as usize;
            out.push(body[at..at + plen].to_vec());
            out_fds.push(all_fds.by_ref().take(pfds).collect());
            at += plen;
        }
        Ok((out, out_fds))
    }

    /// Tells the server this PE is done; it stops once all have.
    pub fn goodbye(&self) {
        let _ = self.exchange(OP_BYE, &[], &[]);
    }
}

impl super::Bootstrap for StarClient {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.exchange(OP_GATHER, mine, &[]).map(|(d, _)| d)
    }
    fn allgather_fds(&self, mine: &[RawFd]) -> Result<Vec<Vec<OwnedFd>>> {
        self.exchange(OP_GATHER, &[], mine).map(|(_, f)| f)
    }
    fn report_global_exit(&self, status: i32) {
        if let Some(fd) = self.control_fd {
            let line = format!("exit {} {}\n", self.rank, status);
            // SAFETY: writing a small buffer to an inherited pipe descriptor.
            unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
        }
    }
    fn name(&self) -> &'static str {
        self.name
    }
}

impl Drop for StarClient {
    fn drop(&mut self) {
        self.goodbye();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::Bootstrap;

    #[test]
    fn three_clients_allgather_bytes_and_descriptors() {
        let server = StarServer::bind(3).unwrap();
        let addr = server.address().to_string();
        let t = std::thread::spawn(move || server.serve(Duration::from_secs(10)));
        let clients: Vec<_> = (0..3)
            .map(|r| {
                let addr = addr.clone();
                std::thread::spawn(move || {
                    let c = StarClient::connect(&addr, r, 3, Duration::from_secs(10), None).unwrap();
                    let all = c.allgather(&[r as u8; 5][..r + 1]).unwrap();
                    assert_eq!(all, vec![vec![0u8], vec![1, 1], vec![2, 2, 2]]);
                    let f = crate::sys::shm::memfd("t", 4096).unwrap();
                    let fds = c.allgather_fds(&[f.as_raw_fd()]).unwrap();
                    assert_eq!(fds.iter().map(|v| v.len()).collect::<Vec<_>>(), vec![1, 1, 1]);
                    c.barrier().unwrap();
                })
            })
            .collect();
        for c in clients {
            c.join().unwrap();
        }
        assert_eq!(t.join().unwrap().unwrap().len(), 3);
    }

    #[test]
    fn a_missing_pe_is_named_after_the_timeout() {
        let server = StarServer::bind(2).unwrap();
        let addr = server.address().to_string();
        let t = std::thread::spawn(move || server.serve(Duration::from_millis(300)));
        let _c = StarClient::connect(&addr, 0, 2, Duration::from_secs(5), None).unwrap();
        let err = t.join().unwrap().unwrap_err();
        assert!(err.message.contains("PE(s) 1"), "{}", err.message);
    }

    #[test]
    fn the_pes_that_came_are_told_who_is_missing() {
        let server = StarServer::bind(3).unwrap();
        let addr = server.address().to_string();
        let t = std::thread::spawn(move || server.serve(Duration::from_millis(300)));
        let c = StarClient::connect(&addr, 2, 3, Duration::from_secs(5), None).unwrap();
        let err = c.allgather(b"x").unwrap_err();
        assert!(err.message.contains("waiting for PE(s) 0, 1"), "{}", err.message);
        assert!(!err.message.contains("bootstrap: bootstrap"), "{}", err.message);
        assert!(t.join().unwrap().is_err());
    }

    #[test]
    fn a_server_serves_a_second_session_after_finalize() {
        let server = StarServer::bind(2).unwrap();
        let addr = server.address().to_string();
        let t = std::thread::spawn(move || {
            server.serve(Duration::from_secs(10)).unwrap();
            server.wait_for_client();
            server.serve(Duration::from_secs(10)).unwrap();
        });
        for session in 0..2u8 {
            let pes: Vec<_> = (0..2)
                .map(|r| {
                    let addr = addr.clone();
                    std::thread::spawn(move || {
                        let c = StarClient::connect(&addr, r, 2, Duration::from_secs(10), None).unwrap();
                        assert_eq!(c.allgather(&[session, r as u8]).unwrap(), vec![vec![session, 0], vec![session, 1]]);
                    })
                })
                .collect();
            pes.into_iter().for_each(|p| p.join().unwrap());
        }
        t.join().unwrap();
    }

    #[test]
    fn a_pe_that_leaves_fails_the_others() {
        let server = StarServer::bind(2).unwrap();
        let addr = server.address().to_string();
        let t = std::thread::spawn(move || server.serve(Duration::from_secs(5)));
        let a = StarClient::connect(&addr, 0, 2, Duration::from_secs(5), None).unwrap();
        let b = StarClient::connect(&addr, 1, 2, Duration::from_secs(5), None).unwrap();
        std::mem::forget(b.stream.lock().unwrap().try_clone().unwrap().shutdown(std::net::Shutdown::Both));
        let err = a.allgather(b"x").unwrap_err();
        assert!(err.message.contains("PE 1"), "{}", err.message);
        assert!(t.join().unwrap().is_err());
        std::mem::forget(b);
    }
}
