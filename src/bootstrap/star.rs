//! The star rendezvous: one server, every PE a client, over an abstract Unix socket (no file
//! on disk; it disappears with its process). Operations are lock-step collectives: the server
//! reads one request from every rank, then answers each with everybody's contributions.
//!
//! The socket's name is visible to every local user (/proc/net/unix), so nothing is sent to a
//! connection before it has proven it belongs to the job: the kernel's SO_PEERCRED must show
//! the job's user, then both sides run the mutual handshake of [`super::auth`] over the job
//! secret. Connections are admitted concurrently, each with its own deadline, so a stranger
//! that connects and stays silent holds up nobody; strangers are dropped with an INFO line.
//!
//! After the handshake a PE sends its hello (rank, job size: two u32); then each collective is
//! a request header (op, fd count, payload length), the payload and the descriptors, answered
//! by a reply header, every rank's (length, fd count), the payloads and the descriptors.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::auth::{self, AuthError, Conn, Secret};
use super::link::{Link, Listener};
use crate::error::{Error, Result};
use crate::log;
use crate::sys::fdpass::{self, PeerCred};

const OP_GATHER: u8 = 1;
const OP_BYE: u8 = 2;
const REPLY_OK: u8 = 0;
const REPLY_ERR: u8 = 1;

/// Largest contribution one PE may make to one exchange. The largest in use (IBGDA's
/// connection records, a few hundred bytes per peer) stays far below it; a header announcing
/// more is refused instead of allocated.
pub const MAX_PAYLOAD: usize = 16 << 20;
/// Most descriptors one PE may contribute to one exchange (the runtime sends one or two).
pub const MAX_PE_FDS: usize = 64;
/// Longest error text a server sends back.
const MAX_REASON: usize = 64 << 10;
/// Handshakes in progress at once; a newer connection drops the oldest (see `admit`).
const MAX_PENDING: usize = 128;

/// The handshakes in progress, oldest first: (id, connection, who it is for the log).
#[derive(Default)]
struct Pending {
    next: u64,
    open: std::collections::VecDeque<(u64, Arc<Link>, String)>,
}

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

fn fresh_address() -> Result<String> {
    let tag: [u8; 8] = crate::sys::random::bytes().map_err(|e| io_err("no randomness for the rendezvous name (getrandom)", e))?;
    Ok(format!("rshmem-{}-{:016x}", std::process::id(), u64::from_le_bytes(tag)))
}

/// The server side (run by `rshmemrun`, or by rank 0 in a thread).
pub struct StarServer {
    /// The Unix listener, then the TCP one if [`listen_tcp`](Self::listen_tcp) added it.
    listeners: Vec<Listener>,
    address: String,
    tcp_address: Option<String>,
    size: usize,
    secret: Secret,
}

struct Member {
    stream: Link,
    pid: i32,
}

/// What a connection's handshake thread reports to the accepting loop.
struct Arrival {
    stream: Link,
    cred: PeerCred,
    rank: usize,
    size: usize,
}

/// Every member's request payload and descriptors, and how many of them said goodbye.
type Requests = (Vec<Vec<u8>>, Vec<Vec<OwnedFd>>, usize);

impl StarServer {
    pub fn bind(size: usize, secret: Secret) -> Result<StarServer> {
        StarServer::bind_named(size, &fresh_address()?, secret)
    }

    /// Binds a name every PE can work out for itself (the unique id's rendezvous).
    pub fn bind_named(size: usize, address: &str, secret: Secret) -> Result<StarServer> {
        let address = address.to_string();
        let sa = SocketAddr::from_abstract_name(address.as_bytes()).map_err(|e| io_err("socket name", e))?;
        let listener = UnixListener::bind_addr(&sa).map_err(|e| io_err("bind", e))?;
        listener.set_nonblocking(true).map_err(|e| io_err("listen", e))?;
        Ok(StarServer { listeners: vec![Listener::Unix(listener)], address, tcp_address: None, size, secret })
    }

    /// Also listens on TCP at `ip` (PEs on other hosts join there); returns `tcp:ADDR:PORT`.
    pub fn listen_tcp(&mut self, ip: std::net::IpAddr) -> Result<String> {
        let (l, addr) = Listener::tcp(ip).map_err(|e| io_err(&format!("listening on TCP at {ip}"), e))?;
        self.listeners.push(l);
        self.tcp_address = Some(addr.clone());
        Ok(addr)
    }

    /// Also serves on `listener`, bound beforehand (the unique id's reserved port).
    pub fn listen_on(&mut self, listener: std::net::TcpListener) -> Result<String> {
        let addr =
            listener.local_addr().and_then(|a| listener.set_nonblocking(true).map(|_| a)).map_err(|e| io_err("listening on TCP", e))?;
        let addr = super::net::tcp_address(&addr);
        self.listeners.push(Listener::Tcp(listener));
        self.tcp_address = Some(addr.clone());
        Ok(addr)
    }

    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn tcp_address(&self) -> Option<&str> {
        self.tcp_address.as_deref()
    }

    /// Tells the PEs that already joined why start-up failed, so each can report it.
    fn refuse(members: &[Option<Member>], err: &Error) {
        for m in members.iter().flatten() {
            let why = err.message.trim_start_matches("bootstrap: ").as_bytes();
            let _ = (&m.stream).write_all(&header(REPLY_ERR, 0, why.len() as u64)).and_then(|_| (&m.stream).write_all(why));
        }
    }

    fn log_refusal(&self, cred: Option<PeerCred>, why: &str) {
        let who = match cred {
            Some(c) => format!("uid {} (pid {})", c.uid, c.pid),
            None => "an unknown process".into(),
        };
        log::info(&format!("rendezvous @{}: refused a connection from {who}: {why}", self.address));
    }

    /// Checks a new connection's user, then proves it (in a thread of its own, so a silent one
    /// delays nobody) and reads its hello; what it learns goes to `arrivals`. With
    /// [`MAX_PENDING`] handshakes in progress, the oldest is dropped to make room: a process of
    /// the job proves itself within a round trip, so the oldest unfinished one is a stranger
    /// that went silent, and a flood of those must not lock the PEs out.
    fn admit(&self, stream: Link, arrivals: &mpsc::Sender<Arrival>, pending: &Arc<Mutex<Pending>>, limit: Duration) {
        let uid = fdpass::own_uid();
        // Over TCP the kernel cannot tell who connected: the handshake alone decides.
        let cred = match stream.peer() {
            Some(Ok(c)) => c,
            Some(Err(e)) => return self.log_refusal(None, &format!("its credentials are unreadable ({e})")),
            None => PeerCred { uid, pid: 0 },
        };
        if cred.uid != uid {
            return self.log_refusal(Some(cred), &format!("another user (this job runs as uid {uid})"));
        }
        let who = match stream.is_tcp() {
            true => format!("TCP connection from {}", stream.peer_place()),
            false => format!("connection from uid {} (pid {})", cred.uid, cred.pid),
        };
        let stream = Arc::new(stream);
        let id = {
            let mut table = pending.lock().unwrap_or_else(|e| e.into_inner());
            if table.open.len() >= MAX_PENDING {
                if let Some((_, oldest, was)) = table.open.pop_front() {
                    oldest.shutdown();
                    log::info(&format!(
                        "rendezvous @{}: dropped the unfinished handshake of a {was} to admit a newer connection ({MAX_PENDING} were in progress)",
                        self.address
                    ));
                }
            }
            table.next += 1;
            let id = table.next;
            table.open.push_back((id, stream.clone(), who.clone()));
            id
        };
        let (secret, address, tx, table) = (self.secret, self.address.clone(), arrivals.clone(), pending.clone());
        let handshake = move || {
            let deadline = Instant::now() + limit;
            let outcome = {
                let link: &Link = &stream;
                link.set_nonblocking(false)
                    .map_err(|err| AuthError::Io { what: "setup", err })
                    .and_then(|_| auth::serve(&mut &*link, &secret, deadline))
                    .and_then(|_| {
                        let mut hello = [0u8; 8];
                        auth::read_exact_by(&mut &*link, &mut hello, deadline).map_err(|err| AuthError::Io { what: "PE hello", err })?;
                        let _ = link.set_timeouts(None);
                        Ok((read_u32(&hello) as usize, read_u32(&hello[4..]) as usize))
                    })
            };
            // Still in the table: not dropped for a newer connection (that was logged then).
            let kept = {
                let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
                let at = t.open.iter().position(|e| e.0 == id);
                at.and_then(|i| t.open.remove(i)).is_some()
            };
            match (outcome, Arc::try_unwrap(stream)) {
                (Ok((rank, size)), Ok(stream)) if kept => {
                    let _ = tx.send(Arrival { stream, cred, rank, size });
                }
                (Err(e), _) if kept => log::info(&format!("rendezvous @{address}: refused a {who}: {e}")),
                _ => {}
            }
        };
        if let Err(e) = std::thread::Builder::new().name("rshmem-admit".into()).spawn(handshake) {
            let mut t = pending.lock().unwrap_or_else(|e| e.into_inner());
            t.open.retain(|e| e.0 != id);
            self.log_refusal(Some(cred), &format!("no thread for its handshake ({e})"));
        }
    }

    /// Admits connections until every rank has joined. The deadline starts now, or with the
    /// first PE when `from_first` (a later session: PEs may call shmem_init again at any time).
    fn accept_all(&self, timeout: Duration, from_first: bool) -> Result<Vec<Member>> {
        let mut deadline = (!from_first).then(|| Instant::now() + timeout);
        let mut members: Vec<Option<Member>> = (0..self.size).map(|_| None).collect();
        let (tx, arrivals) = mpsc::channel();
        let pending = Arc::new(Mutex::new(Pending::default()));
        let mut joined = 0;
        while joined < self.size {
            for listener in &self.listeners {
                loop {
                    match listener.accept() {
                        Ok(Some(stream)) => self.admit(stream, &tx, &pending, timeout),
                        Ok(None) => break,
                        Err(e) if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::ConnectionAborted) => {}
                        Err(e) => return Err(io_err("accept", e)),
                    }
                }
            }
            match arrivals.recv_timeout(Duration::from_millis(2)) {
                Ok(a) => {
                    // Only the job's own processes get here: a mismatch is a real mistake.
                    let taken = members.get(a.rank).and_then(|m| m.as_ref()).map(|m| m.pid);
                    if a.size != self.size || a.rank >= self.size || taken.is_some() {
                        let why = match taken {
                            Some(first) => format!("two processes of this job joined as PE {} (pids {first} and {})", a.rank, a.cred.pid),
                            None => format!(
                                "a process of this job (pid {}) joined as PE {} of {}, but this job has {} PEs",
                                a.cred.pid, a.rank, a.size, self.size
                            ),
                        };
                        let err = Error::bootstrap(format!("bootstrap: {why}"));
                        StarServer::refuse(&members, &err);
                        let _ = (&a.stream)
                            .write_all(&header(REPLY_ERR, 0, why.len() as u64))
                            .and_then(|_| (&a.stream).write_all(why.as_bytes()));
                        return Err(err);
                    }
                    members[a.rank] = Some(Member { stream: a.stream, pid: a.cred.pid });
                    joined += 1;
                    deadline.get_or_insert_with(|| Instant::now() + timeout);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => unreachable!("the loop holds a sender"),
            }
            if deadline.is_some_and(|d| Instant::now() > d) {
                let missing: Vec<String> = members.iter().enumerate().filter(|(_, m)| m.is_none()).map(|(r, _)| r.to_string()).collect();
                let err = Error::bootstrap(format!(
                    "bootstrap: timed out after {:.0} s waiting for PE(s) {} to start (raise RSHMEM_BOOTSTRAP_TIMEOUT if start-up is slow)",
                    timeout.as_secs_f64(),
                    missing.join(", ")
                ));
                StarServer::refuse(&members, &err);
                return Err(err);
            }
        }
        Ok(members.into_iter().map(|m| m.expect("every rank joined")).collect())
    }

    /// Serves one session (shmem_init .. shmem_finalize) until every PE says goodbye; every PE
    /// must join within `timeout`. Returns the PEs' process ids.
    pub fn serve(&self, timeout: Duration) -> std::result::Result<Vec<i32>, SessionError> {
        let members = self.accept_all(timeout, false)?;
        self.session(&members, timeout)
    }

    /// Serves the next session (after every PE said goodbye, a program may call shmem_init
    /// again): waits without limit for a first PE, then like [`serve`](Self::serve).
    pub fn serve_next(&self, timeout: Duration) -> std::result::Result<Vec<i32>, SessionError> {
        let members = self.accept_all(timeout, true)?;
        self.session(&members, timeout)
    }

    /// Reads one request from every member; Err((reason, whether a PE closed its connection))
    /// when one cannot be read.
    fn gather_requests(members: &[Member], timeout: Duration) -> std::result::Result<Requests, (String, bool)> {
        let mut payloads = Vec::with_capacity(members.len());
        let mut fds = Vec::with_capacity(members.len());
        let mut byes = 0;
        for (rank, m) in members.iter().enumerate() {
            // The next request may come much later (a collective shmem_malloc after hours of
            // compute): wait for its header without limit, but for its body only so long.
            let mut h = [0u8; 16];
            if let Err(e) = std::io::Read::read_exact(&mut &m.stream, &mut h) {
                return Err((format!("PE {rank} (pid {}) left the job during start-up or shutdown: {e}", m.pid), true));
            }
            let (op, nfds, len) = (h[0], read_u32(&h[4..]) as usize, read_u64(&h[8..]));
            if op != OP_GATHER && op != OP_BYE {
                return Err((format!("PE {rank} (pid {}) sent an unknown request {op}", m.pid), false));
            }
            if len > MAX_PAYLOAD as u64 || nfds > MAX_PE_FDS {
                let why = format!(
                    "PE {rank} (pid {}) announced {len} bytes and {nfds} descriptors, more than one exchange may carry ({MAX_PAYLOAD} bytes, {MAX_PE_FDS} descriptors)",
                    m.pid
                );
                return Err((why, false));
            }
            let (data, f) = m
                .stream
                .read_body(len as usize, nfds, Instant::now() + timeout)
                .map_err(|e| (format!("PE {rank} (pid {}): {e}", m.pid), false))?;
            byes += usize::from(op == OP_BYE);
            payloads.push(data);
            fds.push(f);
        }
        Ok((payloads, fds, byes))
    }

    fn session(&self, members: &[Member], timeout: Duration) -> std::result::Result<Vec<i32>, SessionError> {
        let pids: Vec<i32> = members.iter().map(|m| m.pid).collect();
        loop {
            let (payloads, fds, byes) = match StarServer::gather_requests(members, timeout) {
                Ok(r) => r,
                Err((why, pe_left)) => {
                    for m in members {
                        let _ = (&m.stream)
                            .write_all(&header(REPLY_ERR, 0, why.len() as u64))
                            .and_then(|_| (&m.stream).write_all(why.as_bytes()));
                    }
                    return Err(SessionError { error: Error::bootstrap(format!("bootstrap: {why}")), pe_left });
                }
            };
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
                    .and_then(|_| m.stream.send_fds(&raw));
                if let Err(e) = sent {
                    let error = Error::bootstrap(format!("bootstrap: PE {rank} (pid {}) is gone: {e}", m.pid));
                    return Err(SessionError { error, pe_left: true });
                }
            }
        }
    }
}

/// Why a session of the star ended before every PE said goodbye.
#[derive(Debug)]
pub struct SessionError {
    pub error: Error,
    /// A PE closed its connection mid-session: it exited, and its own exit status says why
    /// (a launcher reports that, not this).
    pub pe_left: bool,
}

impl From<Error> for SessionError {
    fn from(error: Error) -> SessionError {
        SessionError { error, pe_left: false }
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Error {
        e.error
    }
}

impl std::ops::Deref for SessionError {
    type Target = Error;
    fn deref(&self) -> &Error {
        &self.error
    }
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

/// A connection to a star's rendezvous, not yet joined (`StarClient::reach`).
pub struct Reached {
    stream: Link,
    /// The rendezvous's address as messages show it.
    shown: String,
    rank: usize,
    timeout: Duration,
    deadline: Instant,
}

/// What a collective exchange returns: every rank's bytes and descriptors, in rank order.
type Gathered = (Vec<Vec<u8>>, Vec<Vec<OwnedFd>>);

/// One PE's connection to the star.
pub struct StarClient {
    stream: Mutex<Link>,
    rank: usize,
    size: usize,
    timeout: Duration,
    control_fd: Option<RawFd>,
    name: &'static str,
}

impl StarClient {
    /// Connects to the star at `address`, checks that it runs as this user and holds `secret`,
    /// proves that we do, and joins as `rank` of `size`.
    pub fn connect(
        address: &str,
        rank: usize,
        size: usize,
        timeout: Duration,
        control_fd: Option<RawFd>,
        secret: &Secret,
    ) -> Result<StarClient> {
        if rank >= size {
            return Err(Error::bootstrap(format!("bootstrap: rank {rank} is not below the job size {size}")));
        }
        StarClient::join(StarClient::reach(address, rank, timeout)?, size, control_fd, secret)
    }

    /// The first half of `connect`: a connection to the rendezvous at `address`, retried
    /// until `timeout`; its only error is that the rendezvous could not be reached.
    pub fn reach(address: &str, rank: usize, timeout: Duration) -> Result<Reached> {
        let deadline = Instant::now() + timeout;
        let shown = if address.starts_with(super::net::TCP_PREFIX) { address.to_string() } else { format!("@{address}") };
        let stream = loop {
            match Link::connect(address, deadline.saturating_duration_since(Instant::now())) {
                Ok(s) => break s,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput || Instant::now() > deadline => {
                    let hint = if address.starts_with(super::net::TCP_PREFIX) {
                        format!(
                            " from host {}; check that the host is up and reachable there, or choose the interface the hosts share with RSHMEM_BOOTSTRAP_IFNAME",
                            super::hostname()
                        )
                    } else {
                        String::new()
                    };
                    return Err(Error::bootstrap(format!(
                        "bootstrap: PE {rank} could not reach the rendezvous at {shown} within {:.0} s: {e}{hint}",
                        timeout.as_secs_f64()
                    )));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        Ok(Reached { stream, shown, rank, timeout, deadline })
    }

    /// The second half of `connect`: checks that the rendezvous reached runs as this user and
    /// holds `secret`, proves that we do, and joins as its rank of `size`.
    pub fn join(reached: Reached, size: usize, control_fd: Option<RawFd>, secret: &Secret) -> Result<StarClient> {
        let Reached { stream, shown, rank, timeout, deadline } = reached;
        let server = match stream.peer() {
            Some(cred) => {
                let server = cred.map_err(|e| io_err("reading the rendezvous's credentials", e))?;
                let uid = fdpass::own_uid();
                if server.uid != uid {
                    return Err(Error::bootstrap(format!(
                        "bootstrap: the process listening at {shown} (pid {}) runs as uid {}, not as this job's user (uid {uid}); PE {rank} refuses to join it",
                        server.pid, server.uid
                    )));
                }
                format!(" (pid {})", server.pid)
            }
            None => String::new(),
        };
        auth::join(&mut &stream, secret, deadline).map_err(|e| {
            Error::bootstrap(match e {
                AuthError::Refused | AuthError::BadProof => format!(
                    "bootstrap: PE {rank} and the process listening at {shown}{server} do not hold the same job secret: \
                     that is not this job's rendezvous, or this PE was not started by the job's launcher; PE {rank} sends it nothing"
                ),
                other => format!("bootstrap: PE {rank}: handshake with the rendezvous at {shown}: {other}"),
            })
        })?;
        let mut hello = [0u8; 8];
        hello[..4].copy_from_slice(&(rank as u32).to_le_bytes());
        hello[4..].copy_from_slice(&(size as u32).to_le_bytes());
        auth::write_all_by(&mut &stream, &hello, deadline).map_err(|e| io_err("hello", e))?;
        (&stream).set_timeouts(None).map_err(|e| io_err("socket", e))?;
        Ok(StarClient { stream: Mutex::new(stream), rank, size, timeout, control_fd, name: "star" })
    }

    pub fn named(mut self, name: &'static str) -> StarClient {
        self.name = name;
        self
    }

    fn exchange(&self, op: u8, mine: &[u8], fds: &[RawFd]) -> Result<Gathered> {
        if mine.len() > MAX_PAYLOAD || fds.len() > MAX_PE_FDS {
            return Err(Error::bootstrap(format!(
                "bootstrap: internal: an exchange of {} bytes and {} descriptors exceeds the limits ({MAX_PAYLOAD}, {MAX_PE_FDS})",
                mine.len(),
                fds.len()
            )));
        }
        let s = self.stream.lock().unwrap_or_else(|p| p.into_inner());
        let sent = (&*s)
            .write_all(&header(op, fds.len() as u32, mine.len() as u64))
            .and_then(|_| (&*s).write_all(mine))
            .and_then(|_| s.send_fds(fds));
        if let Err(e) = sent {
            // The server may have refused the job and said why before it closed.
            return Err(self.reason_left(&s).unwrap_or_else(|| io_err("lost the rendezvous server", e)));
        }
        if op == OP_BYE {
            return Ok((Vec::new(), Vec::new()));
        }
        // Every other PE must reach this exchange first: wait for the header without limit.
        let mut h = [0u8; 16];
        std::io::Read::read_exact(&mut &*s, &mut h).map_err(|e| io_err("lost the rendezvous server", e))?;
        let (status, nfds, len) = (h[0], read_u32(&h[4..]) as usize, read_u64(&h[8..]));
        let max_len = if status == REPLY_ERR { MAX_REASON } else { self.size * (16 + MAX_PAYLOAD) };
        if len > max_len as u64 || nfds > self.size * MAX_PE_FDS || (status != REPLY_OK && status != REPLY_ERR) {
            return Err(Error::bootstrap(format!(
                "bootstrap: garbled reply from the rendezvous (status {status}, {len} bytes, {nfds} descriptors)"
            )));
        }
        let nfds = if status == REPLY_ERR { 0 } else { nfds };
        let (body, all_fds) =
            s.read_body(len as usize, nfds, Instant::now() + self.timeout).map_err(|e| io_err("reading a reply from the rendezvous", e))?;
        if status == REPLY_ERR {
            return Err(Error::bootstrap(format!("bootstrap: {}", String::from_utf8_lossy(&body))));
        }
        let garbled = || Error::bootstrap("bootstrap: garbled reply from the rendezvous (lengths do not add up)");
        let mut all_fds = all_fds.into_iter();
        let mut out = Vec::with_capacity(self.size);
        let mut out_fds = Vec::with_capacity(self.size);
        let mut at = 16 * self.size;
        for r in 0..self.size {
            let entry = body.get(16 * r..16 * r + 16).ok_or_else(garbled)?;
            let (plen, pfds) = (read_u64(entry) as usize, read_u64(&entry[8..]) as usize);
            let payload = body.get(at..at.checked_add(plen).ok_or_else(garbled)?).ok_or_else(garbled)?;
            out.push(payload.to_vec());
            out_fds.push(all_fds.by_ref().take(pfds).collect());
            at += plen;
        }
        Ok((out, out_fds))
    }

    /// The error message a server left on the connection before closing it, if any.
    fn reason_left(&self, s: &Link) -> Option<Error> {
        let deadline = Instant::now() + Duration::from_millis(500);
        let mut h = [0u8; 16];
        auth::read_exact_by(&mut &*s, &mut h, deadline).ok()?;
        let len = read_u64(&h[8..]);
        if h[0] != REPLY_ERR || len > MAX_REASON as u64 {
            return None;
        }
        let mut why = vec![0u8; len as usize];
        auth::read_exact_by(&mut &*s, &mut why, deadline).ok()?;
        Some(Error::bootstrap(format!("bootstrap: {}", String::from_utf8_lossy(&why))))
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
    fn carries_fds(&self) -> bool {
        !self.stream.lock().unwrap_or_else(|p| p.into_inner()).is_tcp()
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
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    const LONG: Duration = Duration::from_secs(20);

    fn server(size: usize) -> (StarServer, String, Secret) {
        let secret = auth::new_secret().unwrap();
        let s = StarServer::bind(size, secret).unwrap();
        let addr = s.address().to_string();
        (s, addr, secret)
    }

    fn connect(addr: &str, rank: usize, size: usize, secret: &Secret) -> Result<StarClient> {
        StarClient::connect(addr, rank, size, LONG, None, secret)
    }

    fn raw(addr: &str) -> UnixStream {
        UnixStream::connect_addr(&SocketAddr::from_abstract_name(addr.as_bytes()).unwrap()).unwrap()
    }

    /// Serves one session and then, within `second`, the next, in a thread.
    fn serve_twice(server: StarServer, second: Duration) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            server.serve(Duration::from_secs(10)).unwrap();
            server.serve_next(second).unwrap();
        })
    }

    /// `n` PEs join and allgather their rank; returns when all have checked the result.
    fn run_pes(addr: &str, n: usize, secret: Secret) {
        let pes: Vec<_> = (0..n)
            .map(|r| {
                let addr = addr.to_string();
                std::thread::spawn(move || {
                    let c = connect(&addr, r, n, &secret).unwrap();
                    assert_eq!(c.allgather(&[r as u8]).unwrap(), (0..n as u8).map(|i| vec![i]).collect::<Vec<_>>());
                })
            })
            .collect();
        pes.into_iter().for_each(|p| p.join().unwrap());
    }

    #[test]
    fn three_clients_allgather_bytes_and_descriptors() {
        let (server, addr, secret) = server(3);
        let t = std::thread::spawn(move || server.serve(Duration::from_secs(10)));
        let clients: Vec<_> = (0..3)
            .map(|r| {
                let addr = addr.clone();
                std::thread::spawn(move || {
                    let c = connect(&addr, r, 3, &secret).unwrap();
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
        let (server, addr, secret) = server(2);
        let t = std::thread::spawn(move || server.serve(Duration::from_millis(300)));
        let _c = connect(&addr, 0, 2, &secret).unwrap();
        let err = t.join().unwrap().unwrap_err();
        assert!(err.message.contains("PE(s) 1"), "{}", err.message);
    }

    #[test]
    fn the_pes_that_came_are_told_who_is_missing() {
        let (server, addr, secret) = server(3);
        let t = std::thread::spawn(move || server.serve(Duration::from_millis(300)));
        let c = connect(&addr, 2, 3, &secret).unwrap();
        let err = c.allgather(b"x").unwrap_err();
        assert!(err.message.contains("waiting for PE(s) 0, 1"), "{}", err.message);
        assert!(!err.message.contains("bootstrap: bootstrap"), "{}", err.message);
        assert!(t.join().unwrap().is_err());
    }

    #[test]
    fn a_server_serves_a_second_session_after_finalize() {
        let (server, addr, secret) = server(2);
        let t = serve_twice(server, Duration::from_secs(10));
        run_pes(&addr, 2, secret);
        run_pes(&addr, 2, secret);
        t.join().unwrap();
    }

    #[test]
    fn garbage_and_silence_between_sessions_do_not_break_the_next_one() {
        let (server, addr, secret) = server(2);
        let t = serve_twice(server, Duration::from_millis(1500));
        run_pes(&addr, 2, secret);
        let mut garbage = raw(&addr);
        garbage.write_all(&[0xee; 64]).unwrap();
        let _silent = raw(&addr);
        std::thread::sleep(Duration::from_millis(300));
        run_pes(&addr, 2, secret);
        t.join().unwrap();
    }

    #[test]
    fn strangers_before_the_pes_delay_nobody_and_get_nothing() {
        let (server, addr, secret) = server(2);
        let t = std::thread::spawn(move || server.serve(LONG));
        // Silent, garbage, truncated, a huge announced length, a wrong secret: all first.
        let silent = raw(&addr);
        let mut garbage = raw(&addr);
        garbage.write_all(b"not a handshake at all, just bytes......").unwrap();
        let mut truncated = raw(&addr);
        truncated.write_all(b"RSHc\x01").unwrap();
        drop(truncated);
        let mut huge = raw(&addr);
        huge.write_all(&header(OP_GATHER, 0, 1 << 62)).unwrap();
        huge.write_all(&[0u8; 24]).unwrap();
        let wrong = connect(&addr, 0, 2, &auth::new_secret().unwrap()).err().unwrap();
        assert!(wrong.message.contains("do not hold the same job secret"), "{}", wrong.message);
        let started = Instant::now();
        run_pes(&addr, 2, secret);
        assert!(started.elapsed() < Duration::from_secs(5), "strangers delayed the PEs: {:?}", started.elapsed());
        assert_eq!(t.join().unwrap().unwrap().len(), 2);
        // What the garbage sender got back: at most a refusal, never a PE's data.
        garbage.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let mut got = Vec::new();
        let _ = garbage.read_to_end(&mut got);
        assert!(got.is_empty(), "a stranger received {got:?}");
        drop(silent);
    }

    #[test]
    fn a_flood_of_silent_strangers_does_not_lock_the_pes_out() {
        let (server, addr, secret) = server(2);
        let t = std::thread::spawn(move || server.serve(LONG));
        // More silent connections than handshakes may be in progress, all before the PEs.
        let silent: Vec<UnixStream> = (0..MAX_PENDING + 20).map(|_| raw(&addr)).collect();
        std::thread::sleep(Duration::from_millis(500));
        let started = Instant::now();
        run_pes(&addr, 2, secret);
        assert!(started.elapsed() < Duration::from_secs(5), "the flood delayed the PEs: {:?}", started.elapsed());
        assert_eq!(t.join().unwrap().unwrap().len(), 2);
        // The oldest were dropped (closed), and none of them received a byte.
        let mut closed = 0;
        for mut s in silent {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            let mut got = Vec::new();
            if s.read_to_end(&mut got).is_ok() {
                closed += 1;
            }
            assert!(got.is_empty(), "a stranger received {got:?}");
        }
        assert!(closed >= 20, "only {closed} silent connections were dropped");
    }

    #[test]
    fn a_replayed_join_is_refused() {
        // Record a real PE's bytes through a relay, then replay them as a stranger.
        let (server, addr, secret) = server(1);
        let relay_name = format!("rshmem-test-relay-{}", std::process::id());
        let relay = UnixListener::bind_addr(&SocketAddr::from_abstract_name(relay_name.as_bytes()).unwrap()).unwrap();
        let t = std::thread::spawn(move || {
            server.serve(LONG).unwrap();
            server.serve(Duration::from_secs(3))
        });
        let to_server = raw(&addr);
        let pe = std::thread::spawn(move || {
            let c = connect(&relay_name, 0, 1, &secret).unwrap();
            assert_eq!(c.allgather(b"x").unwrap(), vec![b"x".to_vec()]);
        });
        let (from_pe, _) = relay.accept().unwrap();
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let copy = |mut from: UnixStream, mut to: UnixStream, log: Option<Arc<Mutex<Vec<u8>>>>| {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = from.read(&mut buf) {
                    if let Some(l) = &log {
                        l.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            })
        };
        copy(from_pe.try_clone().unwrap(), to_server.try_clone().unwrap(), Some(recorded.clone()));
        copy(to_server, from_pe, None);
        pe.join().unwrap();
        let bytes = recorded.lock().unwrap().clone();
        assert!(bytes.len() >= 40 + 32 + 8, "recorded {} bytes", bytes.len());
        let mut replay = raw(&addr);
        replay.write_all(&bytes).unwrap();
        replay.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut answer = Vec::new();
        let _ = replay.read_to_end(&mut answer);
        // The server's reply (72 bytes) then a refusal: nothing of the job.
        assert_eq!(answer.len(), 73, "{answer:?}");
        assert_eq!(answer[72], 0, "the replay was accepted");
        let second = t.join().unwrap().unwrap_err();
        assert!(second.message.contains("timed out") || second.message.contains("PE(s) 0"), "{}", second.message);
    }

    #[test]
    fn a_pe_will_not_talk_to_a_squatter() {
        let name = format!("rshmem-test-squat-{}", std::process::id());
        let squatter = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
        let fake = std::thread::spawn(move || auth::tests::squat(squatter.accept().unwrap().0));
        let e = connect(&name, 0, 2, &auth::new_secret().unwrap()).err().unwrap();
        assert!(e.message.contains("do not hold the same job secret"), "{}", e.message);
        assert!(fake.join().unwrap().is_empty(), "the PE sent something to the squatter");
    }

    #[test]
    fn a_pe_announcing_a_huge_message_is_refused_not_allocated() {
        let (server, addr, secret) = server(1);
        let t = std::thread::spawn(move || server.serve(LONG));
        let c = connect(&addr, 0, 1, &secret).unwrap();
        (&*c.stream.lock().unwrap()).write_all(&header(OP_GATHER, 0, 1 << 62)).unwrap();
        let err = t.join().unwrap().unwrap_err();
        assert!(err.message.contains("more than one exchange may carry"), "{}", err.message);
        std::mem::forget(c);
    }

    #[test]
    fn a_pe_that_leaves_fails_the_others() {
        let (server, addr, secret) = server(2);
        let t = std::thread::spawn(move || server.serve(Duration::from_secs(5)));
        let a = connect(&addr, 0, 2, &secret).unwrap();
        let b = connect(&addr, 1, 2, &secret).unwrap();
        b.stream.lock().unwrap().shutdown();
        let err = a.allgather(b"x").unwrap_err();
        assert!(err.message.contains("PE 1"), "{}", err.message);
        let ended = t.join().unwrap().unwrap_err();
        assert!(ended.pe_left, "a PE closing its connection is told apart: {ended}");
        std::mem::forget(b);
    }

    #[test]
    fn two_pes_with_one_rank_are_named() {
        let (server, addr, secret) = server(2);
        let t = std::thread::spawn(move || server.serve(LONG));
        let _a = connect(&addr, 1, 2, &secret).unwrap();
        let b = connect(&addr, 1, 2, &secret).unwrap();
        let err = t.join().unwrap().unwrap_err();
        assert!(err.message.contains("two processes of this job joined as PE 1"), "{}", err.message);
        let e = b.allgather(b"x").unwrap_err();
        assert!(e.message.contains("joined as PE 1"), "{}", e.message);
    }
}
