//! TCP socket options the bootstrap needs: noticing a peer that vanished without a word.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

/// Makes the kernel declare the connection dead when the peer stops answering for about
/// `after` (its host gone, its link down, a cable pulled): keepalive probes start after
/// `after / 3` of silence and repeat every `after / 6` (at least 1 s each), three times; data
/// left unacknowledged for `after` fails the same way (TCP_USER_TIMEOUT). A read or write then
/// fails with ETIMEDOUT instead of waiting for ever.
pub fn dead_peer_after(socket: &impl AsRawFd, after: Duration) -> io::Result<()> {
    let secs = after.as_secs().max(3);
    let idle = (secs / 3).max(1) as libc::c_int;
    let interval = (secs / 6).max(1) as libc::c_int;
    let user_timeout_ms = after.as_millis().clamp(1000, libc::c_int::MAX as u128) as libc::c_int;
    let options = [
        (libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1),
        (libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, idle),
        (libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, interval),
        (libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3),
        (libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, user_timeout_ms),
    ];
    for (level, name, value) in options {
        // SAFETY: setsockopt on a socket the caller owns, with a c_int value of its size.
        let rc = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::dead_peer_after;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    fn get(s: &TcpStream, level: libc::c_int, name: libc::c_int) -> libc::c_int {
        let mut v: libc::c_int = -1;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt into a c_int of the length given.
        let rc = unsafe { libc::getsockopt(s.as_raw_fd(), level, name, (&mut v as *mut libc::c_int).cast(), &mut len) };
        assert_eq!(rc, 0);
        v
    }

    #[test]
    fn a_silent_peer_is_given_up_after_the_time_asked() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        dead_peer_after(&s, Duration::from_secs(6)).unwrap();
        assert_eq!(get(&s, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(get(&s, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 2);
        assert_eq!(get(&s, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 1);
        assert_eq!(get(&s, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 3);
        assert_eq!(get(&s, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT), 6000);
    }
}
