//! Randomness from the kernel (getrandom(2)) for secrets and nonces.

use std::io;

/// Fills `buf` from the kernel's random pool. Blocks only until the pool is first seeded (early
/// boot); fails when the kernel offers no getrandom, so callers can refuse to run rather than
/// run with a guessable secret.
pub fn fill(buf: &mut [u8]) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: getrandom writes at most len bytes into the slice it is given.
        let n = unsafe { libc::getrandom(buf[got..].as_mut_ptr().cast(), buf.len() - got, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(())
}

/// `N` random bytes.
pub fn bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    fill(&mut b)?;
    Ok(b)
}
