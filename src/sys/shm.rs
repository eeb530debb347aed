//! Anonymous shared memory: memfd segments and their mappings.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::last_os_error;

/// Creates an anonymous memory file of `size` bytes (sparse: pages are backed on first touch).
/// It has no name in any file system, so nothing can be left behind in /dev/shm.
pub fn memfd(name: &str, size: usize) -> io::Result<OwnedFd> {
    let cname = std::ffi::CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: cname is a valid NUL-terminated string for the duration of the call.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(last_os_error());
    }
    // SAFETY: fd was just returned by memfd_create and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: plain syscall on a file descriptor we own.
    if unsafe { libc::ftruncate(owned.as_raw_fd(), size as libc::off_t) } != 0 {
        return Err(last_os_error());
    }
    Ok(owned)
}

/// A shared mapping of a memory file, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain shared memory; concurrent access is governed by the SHMEM
// memory model the caller implements, not by Rust ownership.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` read-write and shared, at an address the kernel picks.
    pub fn map(fd: &OwnedFd, len: usize) -> io::Result<Mapping> {
        Self::map_at(fd, len, std::ptr::null_mut(), 0)
    }

    /// Maps over `addr` exactly (MAP_FIXED), replacing whatever was mapped there.
    ///
    /// # Safety
    /// `addr..addr+len` must be memory this process owns and whose current contents the caller
    /// has already copied into `fd`; anything else mapped there is replaced.
    pub unsafe fn map_fixed(fd: &OwnedFd, len: usize, addr: *mut u8) -> io::Result<Mapping> {
        Self::map_at(fd, len, addr, libc::MAP_FIXED)
    }

    /// Like `map`, at an address that is a multiple of `align` (a power of two, at least a page):
    /// reserves `len + align` bytes of address space, maps the file at the aligned address in
    /// it, and gives the rest back.
    pub fn map_aligned(fd: &OwnedFd, len: usize, align: usize) -> io::Result<Mapping> {
        debug_assert!(align.is_power_of_two() && align >= page_size());
        let span = len.checked_add(align).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a fresh anonymous reservation, inaccessible until the file is mapped over it.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), span, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(last_os_error());
        }
        let (start, at) = (p as usize, (p as usize).next_multiple_of(align));
        // SAFETY: at..at+len lies inside the reservation just made, which nothing else uses;
        // the unmaps give back only the reservation's parts before and after it.
        unsafe {
            let m = Self::map_at(fd, len, at as *mut u8, libc::MAP_FIXED);
            if at > start {
                libc::munmap(p, at - start);
            }
            let end = at + len;
            if start + span > end {
                libc::munmap(end as *mut libc::c_void, start + span - end);
            }
            if m.is_err() {
                libc::munmap(at as *mut libc::c_void, len);
            }
            m
        }
    }

    fn map_at(fd: &OwnedFd, len: usize, addr: *mut u8, extra: libc::c_int) -> io::Result<Mapping> {
        // SAFETY: mapping a file descriptor we hold; with MAP_FIXED the caller vouches for addr.
        let p = unsafe {
            libc::mmap(
                addr.cast(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_NORESERVE | extra,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(last_os_error());
        }
        Ok(Mapping { base: p.cast(), len })
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes every access to the mapping fault: for the stand-in of a PE on another host, so a
    /// put or get that no transport can carry ends the PE (SIGSEGV) instead of losing data.
    pub fn forbid_access(&self) -> io::Result<()> {
        // SAFETY: base/len describe a live mapping owned by self; no reference into it exists.
        if unsafe { libc::mprotect(self.base.cast(), self.len, libc::PROT_NONE) } != 0 {
            return Err(last_os_error());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: base/len came from a successful mmap and are unmapped exactly once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// Replaces the pages at `addr` with private anonymous memory holding `contents`.
///
/// # Safety
/// `addr..addr+contents.len()` must be a page-aligned range this process owns; its old
/// mapping is discarded.
pub unsafe fn replace_with_private(addr: *mut u8, contents: &[u8]) {
    let p = libc::mmap(
        addr.cast(),
        contents.len(),
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
        -1,
        0,
    );
    if p != libc::MAP_FAILED {
        std::ptr::copy_nonoverlapping(contents.as_ptr(), addr, contents.len());
    }
}
