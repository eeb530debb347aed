//! Sending file descriptors between local processes over a Unix socket (SCM_RIGHTS).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use super::last_os_error;

/// Most descriptors one message may carry (the kernel's SCM_MAX_FD is 253).
pub const MAX_FDS: usize = 250;

fn cmsg_space(nfds: usize) -> usize {
    // SAFETY: CMSG_SPACE is a pure size computation.
    unsafe { libc::CMSG_SPACE((nfds * std::mem::size_of::<RawFd>()) as u32) as usize }
}

/// Sends `data` (at least one byte) with `fds` attached.
pub fn send_with_fds(sock: &UnixStream, data: &[u8], fds: &[RawFd]) -> io::Result<()> {
    assert!(!data.is_empty() && fds.len() <= MAX_FDS);
    let mut control = vec![0u8; cmsg_space(fds.len().max(1))];
    let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut _, iov_len: data.len() };
    // SAFETY: msghdr is plain data; zeroed is a valid initial state.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = cmsg_space(fds.len());
        // SAFETY: control is large enough for one cmsg carrying fds.len() descriptors
        // (CMSG_SPACE above), so CMSG_FIRSTHDR/CMSG_DATA stay inside it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of_val(fds) as u32) as usize;
            std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg) as *mut RawFd, fds.len());
        }
    }
    // SAFETY: msg points at live buffers for the duration of the call.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(last_os_error());
    }
    if (n as usize) < data.len() {
        // The descriptors went with the first part; the rest is ordinary stream data.
        use std::io::Write;
        (&*sock).write_all(&data[n as usize..])?;
    }
    Ok(())
}

/// Receives exactly `data.len()` bytes, collecting any descriptors that arrive with them.
pub fn recv_with_fds(sock: &UnixStream, data: &mut [u8], max_fds: usize) -> io::Result<Vec<OwnedFd>> {
    let mut fds = Vec::new();
    let mut got = 0;
    while got < data.len() {
        let mut control = vec![0u8; cmsg_space(max_fds.max(1))];
        let mut iov = libc::iovec { iov_base: data[got..].as_mut_ptr().cast(), iov_len: data.len() - got };
        // SAFETY: msghdr is plain data; zeroed is a valid initial state.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len();
        // SAFETY: msg points at live buffers for the duration of the call.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n < 0 {
            let err = last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed the connection"));
        }
        if msg.msg_flags & libc::MSG_CTRUNC != 0 {
            return Err(io::Error::other("more descriptors arrived than expected"));
        }
        // SAFETY: the kernel filled `control` with msg_controllen bytes of well-formed cmsgs;
        // the CMSG_* walkers stay within that length.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let header = libc::CMSG_LEN(0) as usize;
                    let count = ((*cmsg).cmsg_len as usize - header) / std::mem::size_of::<RawFd>();
                    let p = libc::CMSG_DATA(cmsg) as *const RawFd;
                    for i in 0..count {
                        fds.push(OwnedFd::from_raw_fd(p.add(i).read_unaligned()));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        got += n as usize;
    }
    Ok(fds)
}

/// Who is at the other end of a connected Unix socket, as the kernel recorded it when the
/// connection (or, for a client, the listening socket) was made: it cannot be forged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerCred {
    pub pid: i32,
    pub uid: u32,
}

/// SO_PEERCRED of `sock`.
pub fn peer_credentials(sock: &UnixStream) -> io::Result<PeerCred> {
    // SAFETY: ucred is plain data; zeroed is a valid initial state.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`.
    let rc = unsafe {
        libc::getsockopt(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len)
    };
    if rc != 0 {
        return Err(last_os_error());
    }
    Ok(PeerCred { pid: cred.pid, uid: cred.uid })
}

/// This process's effective user id: the only one allowed to join its jobs.
pub fn own_uid() -> u32 {
    // SAFETY: geteuid has no failure mode.
    unsafe { libc::geteuid() }
}
