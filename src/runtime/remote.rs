//! Host-side operations to PEs on other hosts. The route table (`State::routes`, built once
//! at init) says which PEs those are; the network transport (`State::net`) carries the data.
//! The shm path (rma.rs `locate`) learns the route from the same lookup that gives it the
//! PE's heap base, so a single-host job pays nothing for it.

use super::State;
use crate::error::{Error, ErrorKind, Result};
use crate::transport::{Route, Segment, Transport};

impl State {
    /// `pe` when it is a valid PE reached over the network; None otherwise (the shm path then
    /// handles it, bad PE numbers included).
    #[inline(always)]
    pub fn network_pe(&self, pe: i32) -> Option<usize> {
        if !self.multi_host {
            return None;
        }
        let p = usize::try_from(pe).ok().filter(|p| *p < self.npes)?;
        (self.routes.route(p) == Route::Network).then_some(p)
    }

    /// Which symmetric segment `addr..addr+len` lies in, and its offset there.
    fn segment_of(&self, addr: *const u8, len: usize, routine: &'static str) -> Result<(Segment, usize)> {
        if let Some(off) = self.heap.offset_of(addr as usize, len) {
            return Ok((Segment::Heap, off));
        }
        match self.statics.as_ref().and_then(|s| s.offset_of(addr as usize, len)) {
            Some(off) => Ok((Segment::Statics, off)),
            None => Err(self.not_symmetric(addr, len, routine)),
        }
    }

    fn network(&self, pe: usize, routine: &'static str) -> Result<&dyn Transport> {
        self.net.as_deref().ok_or_else(|| self.off_host(pe, routine))
    }

    /// put to a PE on another host.
    #[inline(never)]
    pub(super) fn net_put(&self, dest: *const u8, src: *const u8, n: usize, pe: usize, routine: &'static str) -> Result<()> {
        let (seg, off) = self.segment_of(dest, n, routine)?;
        if src.is_null() {
            return Err(Error::invalid(routine, "the source buffer is NULL"));
        }
        // SAFETY: `src` is the C caller's buffer of `n` bytes (non-null, checked above).
        let data = unsafe { std::slice::from_raw_parts(src, n) };
        self.network(pe, routine)?.put(pe, seg, off, data, routine)
    }

    /// get from a PE on another host.
    #[inline(never)]
    pub(super) fn net_get(&self, dest: *mut u8, src: *const u8, n: usize, pe: usize, routine: &'static str) -> Result<()> {
        let (seg, off) = self.segment_of(src, n, routine)?;
        if dest.is_null() {
            return Err(Error::invalid(routine, "the destination buffer is NULL"));
        }
        // SAFETY: `dest` is the C caller's writable buffer of `n` bytes (non-null, above).
        let data = unsafe { std::slice::from_raw_parts_mut(dest, n) };
        self.network(pe, routine)?.get(pe, seg, off, data, routine)
    }

    /// The error of an operation that has no network path yet, to a PE on another host.
    #[cold]
    pub fn off_host(&self, pe: usize, routine: &'static str) -> Error {
        Error::new(
            ErrorKind::Unsupported,
            routine,
            format!(
                "PE {pe} is on another host ({}); this routine is not wired to the network transport yet (only \
                 put and get reach other hosts so far); run the job on one host",
                self.routes.ids[pe].describe()
            ),
        )
    }
}
