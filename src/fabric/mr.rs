//! Memory registration, in the modes the provider demands:
//! - FI_MR_VIRT_ADDR: peers address a region by its virtual address; without it, by the offset
//!   from the region's start. `RemoteRegion::base` is the address or 0, so either way the
//!   remote address of byte `off` is `base + off`.
//! - FI_MR_PROV_KEY: the provider picks the key (taken only on a trusted network, provider.rs);
//!   without it the key is random (getrandom, as wide as the provider's keys): it is all that
//!   keeps a stranger who reaches the provider's port out of the heap, and it travels only over
//!   the authenticated bootstrap (transport/fabric.rs).
//! - FI_MR_ENDPOINT: a region is bound to the endpoint and enabled before use.
//! - FI_MR_LOCAL: local buffers must be registered too; an operation whose local buffer has no
//!   region registers it for the operation's duration (ops.rs).
//! - FI_MR_ALLOCATED: memory must be backed when registered; the caller's promise (`register`).
//!
//! FI_MR_RAW (keys wider than 64 bits) is not offered, so providers needing it are not chosen.

use std::sync::Arc;

use super::{sys, Fabric, Inner};
use crate::error::Result;

/// Memory registered with the domain: peers may read and write it while this lives.
pub struct Region {
    inner: Arc<Inner>,
    mr: *mut sys::fid_mr,
    base: usize,
    len: usize,
}

// SAFETY: a registered region is a provider object used under FI_THREAD_SAFE; the memory it
// names is the caller's (see `register`).
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

/// What a peer needs to reach a region: sent to it once, at registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteRegion {
    /// Remote address of byte 0: its virtual address (FI_MR_VIRT_ADDR) or 0 (offsets).
    pub base: u64,
    pub key: u64,
    pub len: u64,
}

impl RemoteRegion {
    pub const BYTES: usize = 24;

    pub fn to_bytes(self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[..8].copy_from_slice(&self.base.to_le_bytes());
        b[8..16].copy_from_slice(&self.key.to_le_bytes());
        b[16..].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Option<RemoteRegion> {
        let word = |i: usize| Some(u64::from_le_bytes(b.get(i * 8..i * 8 + 8)?.try_into().ok()?));
        (b.len() == Self::BYTES).then_some(())?;
        Some(RemoteRegion { base: word(0)?, key: word(1)?, len: word(2)? })
    }

    /// The remote address of `len` bytes at `off`, or None when they fall outside the region.
    pub fn at(&self, off: usize, len: usize) -> Option<u64> {
        let end = (off as u64).checked_add(len as u64)?;
        (end <= self.len).then(|| self.base + off as u64)
    }
}

impl Region {
    /// The descriptor local operations on this memory pass (fi_mr_desc).
    pub(super) fn desc(&self) -> sys::Ptr {
        // SAFETY: mr is a live region of this domain (closed only on Drop).
        unsafe { (*self.mr).mem_desc }
    }

    /// Whether [ptr, ptr+len) lies inside this region.
    pub fn contains(&self, ptr: usize, len: usize) -> bool {
        ptr >= self.base && ptr.checked_add(len).is_some_and(|end| end <= self.base + self.len)
    }

    pub fn remote(&self) -> RemoteRegion {
        let virt = self.inner.info.requires(sys::FI_MR_VIRT_ADDR);
        // SAFETY: as in `desc`.
        let key = unsafe { (*self.mr).key };
        RemoteRegion { base: if virt { self.base as u64 } else { 0 }, key, len: self.len as u64 }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: the region was opened by `register` and is closed once; the Inner it belongs to
        // is kept alive by our Arc until after this.
        let rc = unsafe { sys::close(self.mr.cast()) };
        if rc < 0 {
            crate::log::warn(&format!("fabric: deregistering memory failed: {}", self.inner.lib.api.describe(rc)));
        }
    }
}

impl Fabric {
    /// Registers `len` bytes at `ptr` for local use and for remote reads, writes and atomics.
    ///
    /// # Safety
    /// The memory must stay allocated (and, where the provider requires FI_MR_ALLOCATED, be
    /// backed by pages) for as long as the returned Region lives; peers may change it at any
    /// time while it does.
    pub unsafe fn register(&self, ptr: *mut u8, len: usize) -> Result<Region> {
        register(&self.inner, ptr, len)
    }
}

pub(super) fn register(inner: &Arc<Inner>, ptr: *mut u8, len: usize) -> Result<Region> {
    let access = sys::FI_READ | sys::FI_WRITE | sys::FI_REMOTE_READ | sys::FI_REMOTE_WRITE;
    let mut mr = std::ptr::null_mut();
    let mut tries = 0;
    loop {
        let key = if inner.info.requires(sys::FI_MR_PROV_KEY) { 0 } else { random_key(inner.info.key_size)? };
        // SAFETY: the caller vouches for [ptr, ptr+len); `mr` receives the new region.
        let rc = unsafe { sys::mr_reg(inner.domain, ptr.cast(), len, access, key, &mut mr) };
        tries += 1;
        // A random key another region already has (-FI_ENOKEY): draw again.
        if rc == -sys::FI_ENOKEY && key != 0 && tries < 4 {
            continue;
        }
        inner.check(&format!("fi_mr_reg of {len} bytes at {ptr:p}"), rc)?;
        break;
    }
    let region = Region { inner: inner.clone(), mr, base: ptr as usize, len };
    if inner.info.requires(sys::FI_MR_ENDPOINT) {
        let f: *mut sys::fid = mr.cast();
        // SAFETY: a fresh region and the open endpoint of the same domain (FI_MR_ENDPOINT:
        // bind, then enable, before the key is used).
        unsafe {
            inner.check("fi_mr_bind", sys::bind(f, inner.ep.cast(), 0))?;
            inner.check("fi_mr_enable", sys::control(f, sys::FI_ENABLE, std::ptr::null_mut()))?;
        }
    }
    Ok(region)
}

/// A random memory key of `size` bytes (8 where the provider says nothing), never 0; fails
/// closed when the kernel has no randomness.
fn random_key(size: usize) -> Result<u64> {
    let bits = if size == 0 || size >= 8 { 64 } else { size as u32 * 8 };
    loop {
        let raw = u64::from_le_bytes(crate::sys::random::bytes().map_err(|e| {
            super::error(format!("no randomness for a memory key (getrandom: {e}); refusing to register memory with a guessable key"))
        })?);
        let key = if bits == 64 { raw } else { raw & ((1u64 << bits) - 1) };
        if key != 0 {
            return Ok(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::random_key;

    #[test]
    fn memory_keys_are_random_nonzero_and_as_wide_as_the_provider_allows() {
        let keys: Vec<u64> = (0..64).map(|_| random_key(8).unwrap()).collect();
        assert!(keys.iter().all(|&k| k != 0));
        let mut unique = keys.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), keys.len(), "64 random 64-bit keys, no repeats");
        assert!(keys.iter().any(|&k| k >> 32 != 0), "the high half is used");
        assert!((0..64).all(|_| random_key(4).unwrap() >> 32 == 0), "4-byte keys stay within 4 bytes");
        assert!((0..64).map(|_| random_key(0).unwrap()).any(|k| k >> 32 != 0), "0 (unstated) means 8 bytes");
    }
}
