//! Address translation, and the route each put and get takes: the shm transport
//! (transport/shm.rs) to PEs on this host, the network transport (remote.rs) to the others.

use crate::error::{Error, ErrorKind, Result};
use crate::transport::shm;
pub use crate::transport::shm::copy_bytes;

use super::State;

impl State {
    /// Where `len` bytes at symmetric address `addr` of this PE lie for PE `pe`, as mapped here.
    /// The heap is tried inline (the common case); static data and the error out of line.
    #[inline(always)]
    pub fn translate(&self, addr: *const u8, len: usize, pe: usize) -> Result<*mut u8> {
        if let Some(off) = self.heap.offset_of(addr as usize, len) {
            return Ok((self.heap.bases[pe] + off) as *mut u8);
        }
        self.translate_static(addr, len, pe)
    }

    #[inline(never)]
    pub(super) fn translate_static(&self, addr: *const u8, len: usize, pe: usize) -> Result<*mut u8> {
        if let Some(s) = &self.statics {
            if let Some(off) = s.offset_of(addr as usize, len) {
                return Ok((s.bases[pe] + off) as *mut u8);
            }
        }
        Err(self.not_symmetric(addr, len))
    }

    #[cold]
    pub fn not_symmetric(&self, addr: *const u8, len: usize) -> Error {
        let (base, user) = (self.heap.my_base(), self.heap.my_base() + self.heap.reserved);
        if self.heap.touches_reserved(addr as usize, len) {
            return Error::of(
                ErrorKind::NotSymmetric, format!(
                    "address {addr:p} ({len} bytes) is not symmetric: it reaches into the runtime's reserved area [{base:#x}, {user:#x}) at the start of the symmetric heap, which holds the runtime's control words; use only memory returned by shmem_malloc (the user part is [{user:#x}, {:#x}))",
                    base + self.heap.size
                ),
            );
        }
        Error::of(
            ErrorKind::NotSymmetric, format!(
                "address {addr:p} ({len} bytes) is not symmetric: it is neither inside the symmetric heap [{:#x}, {:#x}) nor in the program's global/static data; allocate it with shmem_malloc",
                user,
                base + self.heap.size
            ),
        )
    }

    /// `pe`'s heap base in `bases` (`shm.rma_bases` or `shm.amo_bases`), after checking the PE number
    /// (one comparison: a negative `pe` becomes a huge index and fails the same bound). 0 means
    /// "on another host, through the network": one load gives the PE check, the route and the
    /// base, so the shm path pays one compare-and-branch for the route.
    #[inline(always)]
    pub fn base_in(&self, bases: &[usize], pe: i32) -> Result<usize> {
        match bases.get(pe as usize) {
            Some(&base) => Ok(base),
            None => Err(self.bad_pe(pe)),
        }
    }

    /// Where `len` bytes at symmetric `addr` lie for `pe` (whose heap is mapped at `base`).
    #[inline(always)]
    pub fn mapped(&self, base: usize, addr: *const u8, len: usize, pe: i32) -> Result<*mut u8> {
        match self.heap.offset_of(addr as usize, len) {
            Some(off) => Ok((base + off) as *mut u8),
            None => self.translate_static(addr, len, pe as usize),
        }
    }

    /// Contiguous put: `n` bytes from local `src` to symmetric `dest` on `pe`.
    /// `src` is the C caller's buffer (NULL is rejected); the remote side is range-checked.
    #[inline(always)]
    pub fn put_bytes(&self, dest: *const u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        self.rma_bytes::<PUT, false>(dest.cast_mut(), src, n, pe)
    }

    /// Contiguous get: `n` bytes from symmetric `src` on `pe` into local `dest`.
    /// `dest` is the C caller's buffer (NULL is rejected); the remote side is range-checked.
    #[inline(always)]
    pub fn get_bytes(&self, dest: *mut u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        self.rma_bytes::<GET, false>(dest, src, n, pe)
    }

    /// A contiguous put (`PUT`: local `src` to symmetric `dest` on `pe`) or get (symmetric `src`
    /// on `pe` to local `dest`) of `n` bytes, blocking or (`NBI`) non-blocking: to another host
    /// complete at quiet; on shared memory the data is in place when it returns either way.
    #[inline(always)]
    pub(crate) fn rma_bytes<const PUT: bool, const NBI: bool>(&self, dest: *mut u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        if n == 0 {
            // Nothing moves, so no address needs to be valid (only the PE number).
            return self.check_pe(pe).map(|_| ());
        }
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            return self.net_rma::<PUT, NBI>(dest, src, n, pe as usize);
        }
        let r = self.mapped(base, remote::<PUT>(dest, src), n, pe)?;
        check_local::<PUT>(dest, src)?;
        // SAFETY: r..r+n lies inside a live shared mapping (mapped checked the range); the local
        // side is the caller's buffer of n bytes (overlap is allowed: put or get to self).
        unsafe {
            if PUT {
                shm::put(r, src, n)
            } else {
                shm::get(dest, r, n)
            }
        };
        Ok(())
    }

    /// A strided put (`PUT`, iput) or get (iget) of `s.nelems` elements; strides count elements.
    pub(crate) fn rma_strided<const PUT: bool>(&self, dest: *mut u8, src: *const u8, s: Strided, pe: i32) -> Result<()> {
        if s.nelems == 0 {
            return Ok(());
        }
        let (lo, len) = if PUT { s.span(dest, s.dst)? } else { s.span(src, s.sst)? };
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            // The whole span first, as on this host: one error naming it, nothing moved.
            self.translate(lo, len, self.me)?;
            return self.net_strided::<PUT>(dest, src, s, pe as usize);
        }
        let r = self.mapped(base, lo, len, pe)?;
        check_local::<PUT>(dest, src)?;
        // Every remote element lies inside the translated span [lo, lo+len), mapped at r.
        let (to, from) = if PUT {
            (r.wrapping_offset(dest as isize - lo as isize), src)
        } else {
            (dest, r.wrapping_offset(src as isize - lo as isize).cast_const())
        };
        // SAFETY: the remote elements lie in the span mapped at r (above); the local elements
        // are the caller's.
        unsafe { shm::copy_strided(to, from, s.dst, s.sst, s.nelems, s.size) };
        Ok(())
    }
}

/// `rma_bytes`' and `rma_strided`'s direction: put (to the remote PE) or get (from it).
pub(crate) const PUT: bool = true;
pub(crate) const GET: bool = false;

/// The symmetric (remote) side of a transfer given in C order (dest, src).
#[inline(always)]
pub(crate) fn remote<const PUT: bool>(dest: *mut u8, src: *const u8) -> *const u8 {
    if PUT {
        dest.cast_const()
    } else {
        src
    }
}

/// The local side of a transfer must be a buffer: the source of a put, the destination of a get.
#[inline(always)]
pub(crate) fn check_local<const PUT: bool>(dest: *mut u8, src: *const u8) -> Result<()> {
    let (p, which) = if PUT { (src, "source") } else { (dest.cast_const(), "destination") };
    if p.is_null() {
        return Err(null_buffer(which));
    }
    Ok(())
}

#[cold]
fn null_buffer(which: &'static str) -> Error {
    Error::invalid_value(format!("the {which} buffer is NULL"))
}

/// The shape of a strided transfer (iput, iget): `nelems` elements of `size` bytes, `dst`
/// elements apart at the destination and `sst` at the source.
#[derive(Clone, Copy, Debug)]
pub struct Strided {
    pub dst: isize,
    pub sst: isize,
    pub nelems: usize,
    pub size: usize,
}

impl Strided {
    /// Lowest address and byte length these elements touch at `addr` with `stride`.
    pub(crate) fn span(&self, addr: *const u8, stride: isize) -> Result<(*const u8, usize)> {
        span(addr, stride, self.nelems, self.size)
    }
}

/// Lowest address and byte length touched by a strided access; errors on overflow.
pub(crate) fn span(addr: *const u8, stride: isize, nelems: usize, size: usize) -> Result<(*const u8, usize)> {
    let overflow = || {
        let hint = if nelems > isize::MAX as usize { " (a count of 2^63 or more: a negative count converted to size_t?)" } else { "" };
        Error::invalid_value(format!("stride {stride} × {nelems} elements of {size} bytes overflows the address space{hint}"))
    };
    if nelems > isize::MAX as usize {
        return Err(overflow());
    }
    let reach = stride.checked_mul(nelems as isize - 1).and_then(|r| r.checked_mul(size as isize)).ok_or_else(overflow)?;
    let (lo, hi) = if reach >= 0 { (0, reach) } else { (reach, 0) };
    let len = (hi - lo).checked_add(size as isize).ok_or_else(overflow)? as usize;
    Ok(((addr as isize + lo) as *const u8, len))
}

/// Checked `count * size`, for routines that take element counts.
pub fn bytes(count: usize, size: usize) -> Result<usize> {
    count.checked_mul(size).ok_or_else(|| {
        Error::invalid_value(format!("{count} elements of {size} bytes overflow size_t (size overflow); check the element count"))
    })
}
