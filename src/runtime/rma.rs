//! Address translation and data movement between PEs on shared memory.

use crate::error::{Error, ErrorKind, Result};

use super::State;

impl State {
    /// Where `len` bytes at symmetric address `addr` of this PE lie for PE `pe`, as mapped here.
    #[inline]
    pub fn translate(&self, addr: *const u8, len: usize, pe: usize, routine: &'static str) -> Result<*mut u8> {
        let a = addr as usize;
        if let Some(off) = self.heap.offset_of(a, len) {
            return Ok((self.heap.bases[pe] + off) as *mut u8);
        }
        if let Some(s) = &self.statics {
            if let Some(off) = s.offset_of(a, len) {
                return Ok((s.bases[pe] + off) as *mut u8);
            }
        }
        Err(self.not_symmetric(addr, len, routine))
    }

    pub fn not_symmetric(&self, addr: *const u8, len: usize, routine: &'static str) -> Error {
        let base = self.heap.my_base();
        Error::new(
            ErrorKind::NotSymmetric,
            routine,
            format!(
                "address {addr:p} ({len} bytes) is not symmetric: it is neither inside the symmetric heap [{:#x}, {:#x}) nor in the program's global/static data; allocate it with shmem_malloc",
                base,
                base + self.heap.size
            ),
        )
    }

    /// Like `translate`, after checking the PE number.
    #[inline]
    pub fn remote(&self, addr: *const u8, len: usize, pe: i32, routine: &'static str) -> Result<*mut u8> {
        let pe = self.check_pe(pe, routine)?;
        self.translate(addr, len, pe, routine)
    }

    /// Contiguous put: `n` bytes from local `src` to symmetric `dest` on `pe`.
    /// `src` is the C caller's buffer (NULL is rejected); the remote side is range-checked.
    #[inline]
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn put_bytes(&self, dest: *const u8, src: *const u8, n: usize, pe: i32, routine: &'static str) -> Result<()> {
        if n == 0 {
            // Nothing moves, so no address needs to be valid (only the PE number).
            return self.check_pe(pe, routine).map(|_| ());
        }
        let r = self.remote(dest, n, pe, routine)?;
        check_local(src, routine, "source")?;
        // SAFETY: r..r+n lies inside a live shared mapping (translate checked the range);
        // src is the caller's buffer of n bytes; ptr::copy tolerates overlap (put to self).
        unsafe { std::ptr::copy(src, r, n) };
        Ok(())
    }

    /// Contiguous get: `n` bytes from symmetric `src` on `pe` into local `dest`.
    /// `dest` is the C caller's buffer (NULL is rejected); the remote side is range-checked.
    #[inline]
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn get_bytes(&self, dest: *mut u8, src: *const u8, n: usize, pe: i32, routine: &'static str) -> Result<()> {
        if n == 0 {
            return self.check_pe(pe, routine).map(|_| ());
        }
        let r = self.remote(src, n, pe, routine)?;
        check_local(dest, routine, "destination")?;
        // SAFETY: as in put_bytes, with the roles of the buffers swapped.
        unsafe { std::ptr::copy(r, dest, n) };
        Ok(())
    }

    /// Strided put of `nelems` elements of `size` bytes; strides are in elements (iput).
    #[allow(clippy::too_many_arguments)]
    pub fn put_strided(
        &self, dest: *const u8, src: *const u8, dst: isize, sst: isize, nelems: usize, size: usize, pe: i32, routine: &'static str,
    ) -> Result<()> {
        if nelems == 0 {
            return Ok(());
        }
        let (lo, len) = span(dest, dst, nelems, size, routine)?;
        let r = self.remote(lo, len, pe, routine)?;
        check_local(src, routine, "source")?;
        let base = r as isize - lo as isize + dest as isize;
        for i in 0..nelems as isize {
            // SAFETY: element i lies inside the translated span [lo, lo+len); the source
            // element is the caller's.
            unsafe { std::ptr::copy((src as isize + i * sst * size as isize) as *const u8, (base + i * dst * size as isize) as *mut u8, size) };
        }
        Ok(())
    }

    /// Strided get (iget).
    #[allow(clippy::too_many_arguments)]
    pub fn get_strided(
        &self, dest: *mut u8, src: *const u8, dst: isize, sst: isize, nelems: usize, size: usize, pe: i32, routine: &'static str,
    ) -> Result<()> {
        if nelems == 0 {
            return Ok(());
        }
        let (lo, len) = span(src, sst, nelems, size, routine)?;
        let r = self.remote(lo, len, pe, routine)?;
        check_local(dest, routine, "destination")?;
        let base = r as isize - lo as isize + src as isize;
        for i in 0..nelems as isize {
            // SAFETY: as in put_strided.
            unsafe { std::ptr::copy((base + i * sst * size as isize) as *const u8, (dest as isize + i * dst * size as isize) as *mut u8, size) };
        }
        Ok(())
    }
}

fn check_local(p: *const u8, routine: &'static str, which: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::invalid(routine, format!("the {which} buffer is NULL")));
    }
    Ok(())
}

/// Lowest address and byte length touched by a strided access; errors on overflow.
fn span(addr: *const u8, stride: isize, nelems: usize, size: usize, routine: &'static str) -> Result<(*const u8, usize)> {
    let overflow = || Error::invalid(routine, format!("stride {stride} × {nelems} elements of {size} bytes overflows the address space"));
    let reach = stride.checked_mul(nelems as isize - 1).and_then(|r| r.checked_mul(size as isize)).ok_or_else(overflow)?;
    let (lo, hi) = if reach >= 0 { (0, reach) } else { (reach, 0) };
    let len = (hi - lo).checked_add(size as isize).ok_or_else(overflow)? as usize;
    Ok(((addr as isize + lo) as *const u8, len))
}

/// Checked `count * size`, for routines that take element counts.
pub fn bytes(count: usize, size: usize, routine: &'static str) -> Result<usize> {
    count.checked_mul(size).ok_or_else(|| {
        Error::invalid(routine, format!("{count} elements of {size} bytes overflow size_t (size overflow); check the element count"))
    })
}
