//! Host-side operations to PEs on other hosts. The route table (`State::routes`, built once
//! at init) says which PEs those are; the network transport (`State::net`) carries the data.
//! The shm path (rma.rs `base_in`) learns the route from the same lookup that gives it the
//! PE's heap base, so a single-host job pays nothing for it.

use std::mem::size_of;

use super::ctx::check_aligned;
use super::rma::{check_local, remote, Strided, GET, PUT};
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
    fn segment_of(&self, addr: *const u8, len: usize) -> Result<(Segment, usize)> {
        if let Some(off) = self.heap.offset_of(addr as usize, len) {
            return Ok((Segment::Heap, off));
        }
        match self.statics.as_ref().and_then(|s| s.offset_of(addr as usize, len)) {
            Some(off) => Ok((Segment::Statics, off)),
            None => Err(self.not_symmetric(addr, len)),
        }
    }

    fn network(&self, pe: usize) -> Result<&dyn Transport> {
        self.net.as_deref().ok_or_else(|| self.off_host(pe))
    }

    /// put to a PE on another host.
    #[inline(always)]
    pub(super) fn net_put(&self, dest: *const u8, src: *const u8, n: usize, pe: usize) -> Result<()> {
        self.net_rma::<PUT, false>(dest.cast_mut(), src, n, pe)
    }

    /// get from a PE on another host.
    #[inline(always)]
    pub(super) fn net_get(&self, dest: *mut u8, src: *const u8, n: usize, pe: usize) -> Result<()> {
        self.net_rma::<GET, false>(dest, src, n, pe)
    }

    /// put (`PUT`) or get of `n` bytes with a PE on another host, in C order (dest, src) as in
    /// `rma_bytes`; `NBI`: posted now, complete (the data there) at quiet.
    #[inline(never)]
    pub(super) fn net_rma<const PUT: bool, const NBI: bool>(&self, dest: *mut u8, src: *const u8, n: usize, pe: usize) -> Result<()> {
        let (seg, off) = self.segment_of(remote::<PUT>(dest, src), n)?;
        check_local::<PUT>(dest, src)?;
        let net = self.network(pe)?;
        match (PUT, NBI) {
            // SAFETY: `src` is the C caller's buffer of `n` bytes (non-null, checked above).
            (true, false) => net.put(pe, seg, off, unsafe { std::slice::from_raw_parts(src, n) }),
            // SAFETY: `dest` is the C caller's writable buffer of `n` bytes (non-null, above).
            (false, false) => net.get(pe, seg, off, unsafe { std::slice::from_raw_parts_mut(dest, n) }),
            // SAFETY: `src` is the caller's buffer of `n` bytes, which the specification of
            // put_nbi keeps valid and unchanged until the next quiet.
            (true, true) => unsafe { net.put_nbi(pe, seg, off, src, n) },
            // SAFETY: `dest` is the caller's buffer of `n` bytes, which the specification of
            // get_nbi leaves to the runtime until the next quiet.
            (false, true) => unsafe { net.get_nbi(pe, seg, off, dest, n) },
        }
    }

    /// p (one element) to a PE on another host.
    #[inline(never)]
    pub(super) fn net_p<T: Copy>(&self, dest: *const T, value: T, pe: usize) -> Result<()> {
        check_aligned::<T>(dest.cast_mut().cast())?;
        self.net_put(dest.cast(), (&value as *const T).cast(), size_of::<T>(), pe)
    }

    /// g (one element) from a PE on another host.
    #[inline(never)]
    pub(super) fn net_g<T: Copy>(&self, src: *const T, pe: usize) -> Result<T> {
        check_aligned::<T>(src.cast_mut().cast())?;
        let mut v = std::mem::MaybeUninit::<T>::uninit();
        self.net_get(v.as_mut_ptr().cast(), src.cast(), size_of::<T>(), pe)?;
        // SAFETY: net_get filled all size_of::<T>() bytes; T is a plain C type (any bits valid).
        Ok(unsafe { v.assume_init() })
    }

    /// iput (`PUT`) or iget with a PE on another host: one write or read per element (each
    /// source element of a put may be reused when its write returns, as for a blocking put).
    #[inline(never)]
    pub(super) fn net_strided<const PUT: bool>(&self, dest: *mut u8, src: *const u8, s: Strided, pe: usize) -> Result<()> {
        let size = s.size as isize;
        for i in 0..s.nelems as isize {
            let (d, from) = (dest.wrapping_offset(i * s.dst * size), src.wrapping_offset(i * s.sst * size));
            self.net_rma::<PUT, false>(d, from, s.size, pe)?;
        }
        Ok(())
    }

    /// The word at symmetric `addr` on `pe`, for an AMO through the network transport (in a
    /// multi-host job every AMO goes there, to PEs on this host too: see `State::amo_bases`).
    #[inline(never)]
    pub(super) fn net_word(&self, addr: *const u8, len: usize, pe: usize) -> Result<NetWord<'_>> {
        let (seg, off) = self.segment_of(addr, len)?;
        Ok(NetWord { net: self.network(pe)?, pe, seg, off, to_self: pe == self.me })
    }

    /// The error of an operation to a PE on another host when no network transport runs.
    #[cold]
    pub fn off_host(&self, pe: usize) -> Error {
        Error::of(
            ErrorKind::Unsupported,
            format!(
                "PE {pe} is on another host ({}) but no network transport was started for this job; run the job on one host",
                self.routes.ids[pe].describe()
            ),
        )
    }
}

/// A word on some PE that AMOs reach through the network transport.
#[derive(Clone, Copy)]
pub struct NetWord<'a> {
    pub net: &'a dyn Transport,
    pub pe: usize,
    pub seg: Segment,
    pub off: usize,
    /// The word is this PE's own: a non-fetching AMO to it completes before returning, so the
    /// PE's next plain read of its own memory sees it (as it does in a one-host job).
    pub to_self: bool,
}
