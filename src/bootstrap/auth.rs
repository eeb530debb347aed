//! Mutual proof that both ends of a bootstrap connection belong to the same job.
//!
//! Every job has a secret of [`SECRET_BYTES`] random bytes that only its processes hold (how it
//! reaches them: `docs/ARCHITECTURE.md`, "Bootstrap and trust"). Before anything else crosses a
//! connection, each side proves it holds the secret without sending it: an HMAC-SHA256, keyed
//! by the secret, over a fresh nonce from each side. A recorded exchange is worthless later,
//! because the other side's nonce will differ.
//!
//! Wire format (integers little-endian; sizes in bytes):
//! ```text
//! client -> server  hello    "RSHc"(4) version:u32(4) client_nonce(32)              = 40
//! server -> client  reply    "RSHs"(4) version:u32(4) server_nonce(32) server_proof(32) = 72
//! client -> server  proof    client_proof(32)                                         = 32
//! server -> client  verdict  1 = accepted, 0 = refused                                = 1
//!   server_proof = HMAC-SHA256(secret, "rshmem-auth-v1 server" || client_nonce || server_nonce)
//!   client_proof = HMAC-SHA256(secret, "rshmem-auth-v1 client" || client_nonce || server_nonce)
//! ```
//! The client checks the server's proof before it sends its own, so a process squatting on
//! the rendezvous address learns nothing and gets nothing. The two labels differ so a proof
//! cannot be reflected back to the side that made it. After an accepted verdict the caller's
//! own protocol follows on the same connection.
//!
//! Everything here works over any `Read + Write` stream with timeouts ([`Conn`]), so the
//! multi-host TCP rendezvous uses it unchanged; checking the peer's user id (SO_PEERCRED) is
//! the Unix socket's extra, done by the caller.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Bytes of a job secret (256 bits).
pub const SECRET_BYTES: usize = 32;
const NONCE: usize = 32;
const PROOF: usize = 32;
const VERSION: u32 = 1;
const CLIENT_MAGIC: &[u8; 4] = b"RSHc";
const SERVER_MAGIC: &[u8; 4] = b"RSHs";
const SERVER_LABEL: &[u8] = b"rshmem-auth-v1 server";
const CLIENT_LABEL: &[u8] = b"rshmem-auth-v1 client";
const ACCEPTED: u8 = 1;
const REFUSED: u8 = 0;

pub type Secret = [u8; SECRET_BYTES];

/// A fresh job secret from the kernel's random pool; fails (closed) when there is none.
pub fn new_secret() -> io::Result<Secret> {
    crate::sys::random::bytes()
}

/// A byte stream whose reads and writes can be given a time limit (Unix or TCP sockets).
pub trait Conn: Read + Write {
    fn set_timeouts(&self, limit: Option<Duration>) -> io::Result<()>;
}

impl Conn for std::os::unix::net::UnixStream {
    fn set_timeouts(&self, limit: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(limit)?;
        self.set_write_timeout(limit)
    }
}

impl Conn for std::net::TcpStream {
    fn set_timeouts(&self, limit: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(limit)?;
        self.set_write_timeout(limit)
    }
}

/// Why a handshake failed: what the peer did, in words a log line can carry.
#[derive(Debug)]
pub enum AuthError {
    /// The connection broke, closed early, or the deadline passed (`what` says at which step).
    Io { what: &'static str, err: io::Error },
    /// The first bytes were not an rshmem handshake at all.
    BadMagic([u8; 4]),
    /// An rshmem handshake of another protocol version (a mix of library versions).
    BadVersion(u32),
    /// The peer does not hold this job's secret (or replayed someone else's proof).
    BadProof,
    /// The server heard our proof and refused it: we do not hold the secret it has.
    Refused,
    /// No randomness for a nonce.
    NoRandomness(io::Error),
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthError::Io { what, err } if is_timeout(err) => write!(f, "no complete {what} before the deadline"),
            AuthError::Io { what, err } if err.kind() == io::ErrorKind::UnexpectedEof => {
                write!(f, "the connection closed during the {what}")
            }
            AuthError::Io { what, err } => write!(f, "{what}: {err}"),
            AuthError::BadMagic(m) => write!(f, "not an rshmem handshake (it began with bytes {m:02x?})"),
            AuthError::BadVersion(v) => {
                write!(f, "rshmem handshake version {v}, expected {VERSION} (different rshmem versions in one job?)")
            }
            AuthError::BadProof => write!(f, "wrong proof of the job secret"),
            AuthError::Refused => write!(f, "the rendezvous refused this process's proof of the job secret"),
            AuthError::NoRandomness(e) => write!(f, "no randomness for a nonce (getrandom: {e})"),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// Time left until `deadline`, or a timeout error when none is left.
fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
    }
    Ok(left)
}

/// `read_exact` that gives up at `deadline` however slowly the bytes trickle in.
pub fn read_exact_by<C: Conn + ?Sized>(conn: &mut C, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        conn.set_timeouts(Some(remaining(deadline)?))?;
        match conn.read(&mut buf[got..]) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed the connection")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted || is_timeout(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `write_all` that gives up at `deadline` (a peer that never reads cannot hold us).
pub fn write_all_by<C: Conn + ?Sized>(conn: &mut C, buf: &[u8], deadline: Instant) -> io::Result<()> {
    let mut sent = 0;
    while sent < buf.len() {
        conn.set_timeouts(Some(remaining(deadline)?))?;
        match conn.write(&buf[sent..]) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "peer stopped reading")),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted || is_timeout(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn proof(secret: &Secret, label: &[u8], client_nonce: &[u8], server_nonce: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(label);
    mac.update(client_nonce);
    mac.update(server_nonce);
    mac
}

fn io_step(what: &'static str) -> impl FnOnce(io::Error) -> AuthError {
    move |err| AuthError::Io { what, err }
}

fn check_header(bytes: &[u8], magic: &[u8; 4]) -> Result<(), AuthError> {
    if &bytes[..4] != magic {
        return Err(AuthError::BadMagic(bytes[..4].try_into().expect("4 bytes")));
    }
    let version = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(AuthError::BadVersion(version));
    }
    Ok(())
}

/// The server's half: returns Ok once the client has proven it holds `secret` (and has been
/// told so). Every read and write ends by `deadline`. Leaves the stream's timeouts unset.
pub fn serve<C: Conn + ?Sized>(conn: &mut C, secret: &Secret, deadline: Instant) -> Result<(), AuthError> {
    let r = serve_steps(conn, secret, deadline);
    let _ = conn.set_timeouts(None);
    r
}

fn serve_steps<C: Conn + ?Sized>(conn: &mut C, secret: &Secret, deadline: Instant) -> Result<(), AuthError> {
    let mut hello = [0u8; 8 + NONCE];
    read_exact_by(conn, &mut hello, deadline).map_err(io_step("hello"))?;
    check_header(&hello, CLIENT_MAGIC)?;
    let client_nonce = &hello[8..];
    let server_nonce: [u8; NONCE] = crate::sys::random::bytes().map_err(AuthError::NoRandomness)?;
    let mut reply = Vec::with_capacity(8 + NONCE + PROOF);
    reply.extend_from_slice(SERVER_MAGIC);
    reply.extend_from_slice(&VERSION.to_le_bytes());
    reply.extend_from_slice(&server_nonce);
    reply.extend_from_slice(&proof(secret, SERVER_LABEL, client_nonce, &server_nonce).finalize().into_bytes());
    write_all_by(conn, &reply, deadline).map_err(io_step("server proof"))?;
    let mut client_proof = [0u8; PROOF];
    read_exact_by(conn, &mut client_proof, deadline).map_err(io_step("client proof"))?;
    let genuine = proof(secret, CLIENT_LABEL, client_nonce, &server_nonce).verify_slice(&client_proof).is_ok();
    let verdict = if genuine { ACCEPTED } else { REFUSED };
    write_all_by(conn, &[verdict], deadline).map_err(io_step("verdict"))?;
    if genuine {
        Ok(())
    } else {
        Err(AuthError::BadProof)
    }
}

/// The client's half: returns Ok once the server has proven it holds `secret` and accepted
/// our proof. Every read and write ends by `deadline`. Leaves the stream's timeouts unset.
pub fn join<C: Conn + ?Sized>(conn: &mut C, secret: &Secret, deadline: Instant) -> Result<(), AuthError> {
    let r = join_steps(conn, secret, deadline);
    let _ = conn.set_timeouts(None);
    r
}

fn join_steps<C: Conn + ?Sized>(conn: &mut C, secret: &Secret, deadline: Instant) -> Result<(), AuthError> {
    let client_nonce: [u8; NONCE] = crate::sys::random::bytes().map_err(AuthError::NoRandomness)?;
    let mut hello = Vec::with_capacity(8 + NONCE);
    hello.extend_from_slice(CLIENT_MAGIC);
    hello.extend_from_slice(&VERSION.to_le_bytes());
    hello.extend_from_slice(&client_nonce);
    write_all_by(conn, &hello, deadline).map_err(io_step("hello"))?;
    let mut reply = [0u8; 8 + NONCE + PROOF];
    read_exact_by(conn, &mut reply, deadline).map_err(io_step("server proof"))?;
    check_header(&reply, SERVER_MAGIC)?;
    let server_nonce = &reply[8..8 + NONCE];
    proof(secret, SERVER_LABEL, &client_nonce, server_nonce).verify_slice(&reply[8 + NONCE..]).map_err(|_| AuthError::BadProof)?;
    let mine = proof(secret, CLIENT_LABEL, &client_nonce, server_nonce).finalize().into_bytes();
    write_all_by(conn, &mine, deadline).map_err(io_step("client proof"))?;
    let mut verdict = [0u8; 1];
    read_exact_by(conn, &mut verdict, deadline).map_err(io_step("verdict"))?;
    if verdict[0] == ACCEPTED {
        Ok(())
    } else {
        Err(AuthError::Refused)
    }
}

/// The secret as text (for an environment variable or a launcher's key-value store).
pub fn to_hex(secret: &Secret) -> String {
    secret.iter().map(|b| format!("{b:02x}")).collect()
}

/// Any bytes as hex text.
pub fn to_hex_bytes(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The inverse of [`to_hex_bytes`]; None for odd lengths or non-hex text.
pub fn from_hex_bytes(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len() / 2).map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()).collect()
}

/// The inverse of [`to_hex`]; None unless it is exactly a secret's worth of hex digits.
pub fn from_hex(text: &str) -> Option<Secret> {
    let text = text.trim();
    if text.len() != 2 * SECRET_BYTES || !text.is_ascii() {
        return None;
    }
    let mut s = [0u8; SECRET_BYTES];
    for (i, b) in s.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(s)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::thread;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    /// Runs the server half on one end of a socket pair in a thread, `client` on the other.
    fn pair<T: Send + 'static>(server_secret: Secret, client: impl FnOnce(UnixStream) -> T + Send + 'static) -> (Result<(), AuthError>, T) {
        let (mut s, c) = UnixStream::pair().unwrap();
        let peer = thread::spawn(move || client(c));
        let r = serve(&mut s, &server_secret, Instant::now() + Duration::from_millis(400));
        (r, peer.join().unwrap())
    }

    /// A client that sends `hello`, ignores the server's proof, sends `proof`; returns the verdict.
    fn blind_client(mut c: UnixStream, hello: &[u8], proof: &[u8]) -> u8 {
        c.write_all(hello).unwrap();
        let mut reply = [0u8; 72];
        c.read_exact(&mut reply).unwrap();
        c.write_all(proof).unwrap();
        let mut v = [9u8; 1];
        c.read_exact(&mut v).unwrap();
        v[0]
    }

    /// Passes the next `N` bytes from `from` on to `to` (a relay) and returns them.
    fn forward<const N: usize>(from: &mut UnixStream, to: &mut UnixStream) -> [u8; N] {
        let mut bytes = [0u8; N];
        from.read_exact(&mut bytes).unwrap();
        to.write_all(&bytes).unwrap();
        bytes
    }

    /// A squatter on the rendezvous address (no secret): takes a client's hello, answers with a
    /// server hello and a proof that cannot be right, and returns what the client sends after.
    pub(in crate::bootstrap) fn squat(mut s: UnixStream) -> Vec<u8> {
        let mut hello = [0u8; 40];
        s.read_exact(&mut hello).unwrap();
        let mut reply = b"RSHs\x01\0\0\0".to_vec();
        reply.extend_from_slice(&[1u8; 64]);
        s.write_all(&reply).unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        rest
    }

    #[test]
    fn both_sides_accept_the_same_secret() {
        let k = new_secret().unwrap();
        let (server, client) = pair(k, move |mut c| join(&mut c, &k, soon()));
        assert!(server.is_ok(), "{server:?}");
        assert!(client.is_ok(), "{client:?}");
    }

    #[test]
    fn a_wrong_secret_is_refused_on_both_sides() {
        let k = new_secret().unwrap();
        let other = new_secret().unwrap();
        let (server, client) = pair(k, move |mut c| join(&mut c, &other, soon()));
        // The client sees the server's proof fail first and never sends its own.
        let client = client.unwrap_err();
        assert!(matches!(client, AuthError::BadProof), "{client}");
        let server = server.unwrap_err();
        assert!(server.to_string().contains("client proof"), "{server}");
    }

    #[test]
    fn a_client_that_cannot_check_the_server_still_fails_its_proof() {
        // A stranger that ignores the server's proof and sends some 32 bytes.
        let k = new_secret().unwrap();
        let mut hello = b"RSHc\x01\0\0\0".to_vec();
        hello.extend_from_slice(&[7u8; 32]);
        let (server, verdict) = pair(k, move |c| blind_client(c, &hello, &[0u8; 32]));
        assert!(matches!(server, Err(AuthError::BadProof)), "{server:?}");
        assert_eq!(verdict, REFUSED);
    }

    #[test]
    fn a_replayed_client_proof_fails_because_the_server_nonce_differs() {
        let k = new_secret().unwrap();
        // Record a genuine client's bytes through a relay...
        let (mut s, mut c_end) = UnixStream::pair().unwrap();
        let server = thread::spawn(move || serve(&mut s, &k, soon()));
        let (mut relay, mut client_end) = UnixStream::pair().unwrap();
        let client = thread::spawn(move || join(&mut client_end, &k, soon()));
        let hello: [u8; 40] = forward(&mut relay, &mut c_end);
        forward::<72>(&mut c_end, &mut relay);
        let recorded_proof: [u8; 32] = forward(&mut relay, &mut c_end);
        forward::<1>(&mut c_end, &mut relay);
        assert!(server.join().unwrap().is_ok());
        assert!(client.join().unwrap().is_ok());
        // ...then replay them to a fresh server session with the same secret.
        let (server, verdict) = pair(k, move |c| blind_client(c, &hello, &recorded_proof));
        assert!(matches!(server, Err(AuthError::BadProof)), "{server:?}");
        assert_eq!(verdict, REFUSED);
    }

    #[test]
    fn garbage_is_named_as_not_a_handshake() {
        let (server, _) = pair(new_secret().unwrap(), |mut c| c.write_all(&[0x41u8; 40]).unwrap());
        let e = server.unwrap_err();
        assert!(matches!(e, AuthError::BadMagic(_)), "{e}");
        assert!(e.to_string().contains("not an rshmem handshake"), "{e}");
    }

    #[test]
    fn another_version_is_named() {
        let (server, _) = pair(new_secret().unwrap(), |mut c| {
            let mut hello = b"RSHc\x07\0\0\0".to_vec();
            hello.extend_from_slice(&[0u8; 32]);
            c.write_all(&hello).unwrap();
        });
        let e = server.unwrap_err();
        assert!(e.to_string().contains("version 7"), "{e}");
    }

    #[test]
    fn a_truncated_hello_ends_at_the_close() {
        let (server, _) = pair(new_secret().unwrap(), |mut c| c.write_all(b"RSHc\x01\0").unwrap());
        let e = server.unwrap_err();
        assert!(e.to_string().contains("connection closed during the hello"), "{e}");
    }

    #[test]
    fn silence_ends_at_the_deadline() {
        let t = Instant::now();
        let (server, keep) = pair(new_secret().unwrap(), |c| c);
        let e = server.unwrap_err();
        assert!(e.to_string().contains("no complete hello before the deadline"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        drop(keep);
    }

    #[test]
    fn a_trickle_of_bytes_does_not_extend_the_deadline() {
        let t = Instant::now();
        let (server, _) = pair(new_secret().unwrap(), |mut c| {
            for b in b"RSHc\x01\0\0\0" {
                if c.write_all(&[*b]).is_err() {
                    break;
                }
                thread::sleep(Duration::from_millis(150));
            }
        });
        let e = server.unwrap_err();
        assert!(e.to_string().contains("before the deadline"), "{e}");
        assert!(t.elapsed() < Duration::from_millis(1200) + Duration::from_millis(1000), "{:?}", t.elapsed());
    }

    #[test]
    fn a_client_is_not_fooled_by_a_squatter() {
        // Something that holds the rendezvous address but not the secret.
        let (mut c, squatter) = UnixStream::pair().unwrap();
        let fake = thread::spawn(move || squat(squatter));
        let e = join(&mut c, &new_secret().unwrap(), soon()).unwrap_err();
        assert!(matches!(e, AuthError::BadProof), "{e}");
        drop(c);
        assert!(fake.join().unwrap().is_empty(), "the client sent its proof to a squatter");
    }

    #[test]
    fn secrets_round_trip_through_hex() {
        let k = new_secret().unwrap();
        assert_eq!(from_hex(&to_hex(&k)), Some(k));
        assert_eq!(to_hex(&k).len(), 64);
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex(&"zz".repeat(32)), None);
        assert_ne!(new_secret().unwrap(), k);
    }
}
