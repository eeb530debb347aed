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
        self.put_bytes_as::<false>(dest, src, n, pe)
    }

    /// put (NBI false) or put_nbi (NBI true: to another host, complete at quiet; on shared
    /// memory the data is in place when it returns either way).
    #[inline(always)]
    pub(crate) fn put_bytes_as<const NBI: bool>(&self, dest: *const u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        if n == 0 {
            // Nothing moves, so no address needs to be valid (only the PE number).
            return self.check_pe(pe).map(|_| ());
        }
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            let p = pe as usize;
            return if NBI { self.net_put_nbi(dest, src, n, p) } else { self.net_put(dest, src, n, p) };
        }
        let r = self.mapped(base, dest, n, pe)?;
        check_local(src, "source")?;
        // SAFETY: r..r+n lies inside a live shared mapping (mapped checked the range); src is
        // the caller's buffer of n bytes (overlap is allowed: put to self).
        unsafe { shm::put(r, src, n) };
        Ok(())
    }

    /// Contiguous get: `n` bytes from symmetric `src` on `pe` into local `dest`.
    /// `dest` is the C caller's buffer (NULL is rejected); the remote side is range-checked.
    #[inline(always)]
    pub fn get_bytes(&self, dest: *mut u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        self.get_bytes_as::<false>(dest, src, n, pe)
    }

    /// get (NBI false) or get_nbi (NBI true: from another host, the data is there at quiet).
    #[inline(always)]
    pub(crate) fn get_bytes_as<const NBI: bool>(&self, dest: *mut u8, src: *const u8, n: usize, pe: i32) -> Result<()> {
        if n == 0 {
            return self.check_pe(pe).map(|_| ());
        }
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            let p = pe as usize;
            return if NBI { self.net_get_nbi(dest, src, n, p) } else { self.net_get(dest, src, n, p) };
        }
        let r = self.mapped(base, src, n, pe)?;
        check_local(dest, "destination")?;
        // SAFETY: as in put_bytes_as, with the roles of the buffers swapped.
        unsafe { shm::get(dest, r, n) };
        Ok(())
    }

    /// Strided put of `nelems` elements of `size` bytes; strides are in elements (iput).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_strided(
        &self,
        dest: *const u8,
        src: *const u8,
        dst: isize,
        sst: isize,
        nelems: usize,
        size: usize,
        pe: i32,
    ) -> Result<()> {
        if nelems == 0 {
            return Ok(());
        }
        let (lo, len) = span(dest, dst, nelems, size)?;
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            // The whole span first, as on this host: one error naming it, nothing moved.
            self.translate(lo, len, self.me)?;
            return self.net_put_strided(dest, src, dst, sst, nelems, size, pe as usize);
        }
        let r = self.mapped(base, lo, len, pe)?;
        check_local(src, "source")?;
        // SAFETY: every element lies inside the translated span [lo, lo+len), mapped at r; the
        // source elements are the caller's.
        unsafe { shm::copy_strided(r.wrapping_offset(dest as isize - lo as isize), src, dst, sst, nelems, size) };
        Ok(())
    }

    /// Strided get (iget).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn get_strided(
        &self,
        dest: *mut u8,
        src: *const u8,
        dst: isize,
        sst: isize,
        nelems: usize,
        size: usize,
        pe: i32,
    ) -> Result<()> {
        if nelems == 0 {
            return Ok(());
        }
        let (lo, len) = span(src, sst, nelems, size)?;
        let base = self.base_in(&self.shm.rma_bases, pe)?;
        if base == 0 {
            // The whole span first, as on this host: one error naming it, nothing moved.
            self.translate(lo, len, self.me)?;
            return self.net_get_strided(dest, src, dst, sst, nelems, size, pe as usize);
        }
        let r = self.mapped(base, lo, len, pe)?;
        check_local(dest, "destination")?;
        // SAFETY: as in put_strided, with the roles of the buffers swapped.
        unsafe { shm::copy_strided(dest, r.wrapping_offset(src as isize - lo as isize), dst, sst, nelems, size) };
        Ok(())
    }
}

#[inline(always)]
fn check_local(p: *const u8, which: &'static str) -> Result<()> {
    if p.is_null() {
        return Err(null_buffer(which));
    }
    Ok(())
}

#[cold]
fn null_buffer(which: &'static str) -> Error {
    Error::invalid_value(format!("the {which} buffer is NULL"))
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
