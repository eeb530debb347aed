//! A rendezvous connection: an abstract Unix socket (same host; can carry descriptors and
//! tell the peer's user) or TCP (any host; bytes only). The star speaks the same protocol over
//! both; only what a TCP link cannot do differs.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::time::{Duration, Instant};

use super::auth::Conn;
use super::net;
use crate::sys::fdpass::{self, PeerCred, MAX_FDS};

/// How long a TCP peer may stay silent at the transport level (no ACK, no keepalive answer)
/// before its connection fails: its host vanished or its link went down. Below the default hang
/// timeout (10 s), so both ends of a job cut in two notice and end it, each naming the other.
pub const DEAD_PEER_AFTER: Duration = Duration::from_secs(6);

/// Every TCP link: no Nagle delay, and keepalive so a vanished peer is noticed.
fn tcp_options(s: &TcpStream) -> io::Result<()> {
    s.set_nodelay(true)?;
    crate::sys::sockopt::dead_peer_after(s, DEAD_PEER_AFTER)
}

pub enum Link {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Link {
    /// One attempt to connect to `address` (`tcp:ADDR:PORT`, else an abstract Unix name),
    /// waiting at most `limit` for a TCP connection to be set up.
    pub fn connect(address: &str, limit: Duration) -> io::Result<Link> {
        if let Some(sa) = net::parse_tcp_address(address) {
            let s = TcpStream::connect_timeout(&sa, limit.max(Duration::from_millis(1)))?;
            tcp_options(&s)?;
            return Ok(Link::Tcp(s));
        }
        if address.starts_with(net::TCP_PREFIX) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{address:?} is not tcp:ADDRESS:PORT")));
        }
        UnixStream::connect_addr(&SocketAddr::from_abstract_name(address.as_bytes())?).map(Link::Unix)
    }

    /// The peer's user and process, where the kernel can tell (Unix sockets only).
    pub fn peer(&self) -> Option<io::Result<PeerCred>> {
        match self {
            Link::Unix(s) => Some(fdpass::peer_credentials(s)),
            Link::Tcp(_) => None,
        }
    }

    pub fn is_tcp(&self) -> bool {
        matches!(self, Link::Tcp(_))
    }

    /// Where the peer is, for messages: its TCP address, or "this host".
    pub fn peer_place(&self) -> String {
        match self {
            Link::Tcp(s) => s.peer_addr().map(|a| a.to_string()).unwrap_or_else(|_| "an unknown address".into()),
            Link::Unix(_) => "this host".into(),
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Link::Unix(s) => s.set_nonblocking(on),
            Link::Tcp(s) => s.set_nonblocking(on),
        }
    }

    pub fn shutdown(&self) {
        let _ = match self {
            Link::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            Link::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    /// Sends descriptors in chunks of at most MAX_FDS, each riding on one byte.
    pub fn send_fds(&self, fds: &[RawFd]) -> io::Result<()> {
        match self {
            _ if fds.is_empty() => Ok(()),
            Link::Unix(s) => fds.chunks(MAX_FDS).try_for_each(|chunk| fdpass::send_with_fds(s, &[0u8], chunk)),
            Link::Tcp(_) => Err(cannot_cross_hosts()),
        }
    }

    /// Receives `count` descriptors sent by [`send_fds`](Self::send_fds).
    pub fn recv_fds(&self, count: usize) -> io::Result<Vec<OwnedFd>> {
        let s = match self {
            _ if count == 0 => return Ok(Vec::new()),
            Link::Unix(s) => s,
            Link::Tcp(_) => return Err(cannot_cross_hosts()),
        };
        let mut fds = Vec::with_capacity(count);
        while fds.len() < count {
            let chunk = (count - fds.len()).min(MAX_FDS);
            let mut byte = [0u8; 1];
            let got = fdpass::recv_with_fds(s, &mut byte, chunk)?;
            if got.len() != chunk {
                return Err(io::Error::other(format!("expected {chunk} descriptors, got {}", got.len())));
            }
            fds.extend(got);
        }
        Ok(fds)
    }

    /// Reads a message body (payload and descriptors) that must arrive by `deadline`: the
    /// header announcing it has already come, so the sender has no reason to pause.
    pub fn read_body(&self, len: usize, nfds: usize, deadline: Instant) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
        let mut data = vec![0u8; len];
        super::auth::read_exact_by(&mut &*self, &mut data, deadline)?;
        let limit = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        self.set_timeouts(Some(limit))?;
        let fds = self.recv_fds(nfds);
        self.set_timeouts(None)?;
        Ok((data, fds?))
    }
}

fn cannot_cross_hosts() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "descriptors cannot be passed over a TCP rendezvous (between hosts)")
}

impl Read for &Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Unix(s) => (&*s).read(buf),
            Link::Tcp(s) => (&*s).read(buf),
        }
    }
}

impl Write for &Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Link::Unix(s) => (&*s).write(buf),
            Link::Tcp(s) => (&*s).write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Conn for &Link {
    fn set_timeouts(&self, limit: Option<Duration>) -> io::Result<()> {
        match self {
            Link::Unix(s) => s.set_timeouts(limit),
            Link::Tcp(s) => s.set_timeouts(limit),
        }
    }
}

/// A listening socket of either kind.
pub enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Listener {
    /// Non-blocking accept: Ok(None) when nobody waits.
    pub fn accept(&self) -> io::Result<Option<Link>> {
        let got = match self {
            Listener::Unix(l) => l.accept().map(|(s, _)| Link::Unix(s)),
            Listener::Tcp(l) => l.accept().and_then(|(s, _)| {
                tcp_options(&s)?;
                Ok(Link::Tcp(s))
            }),
        };
        match got {
            Ok(l) => Ok(Some(l)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A non-blocking TCP listener on `ip`, on a port the kernel picks.
    pub fn tcp(ip: std::net::IpAddr) -> io::Result<(Listener, String)> {
        let l = TcpListener::bind((ip, 0))?;
        l.set_nonblocking(true)?;
        let addr = net::tcp_address(&l.local_addr()?);
        Ok((Listener::Tcp(l), addr))
    }
}
