//! Symmetric memory on the host: one memory file per PE, mapped by every local PE, plus the
//! program's own global and static data made shareable (see `statics`).

pub mod alloc;
pub mod gpu;
pub mod statics;

use std::os::fd::AsRawFd;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::sys::shm::{memfd, Mapping};

/// Every PE's heap, mapped into this process. `bases[pe]` is where PE `pe`'s heap lies here.
pub struct HostHeap {
    maps: Vec<Mapping>,
    pub bases: Vec<usize>,
    pub size: usize,
    pub me: usize,
}

impl HostHeap {
    /// Collective: creates this PE's heap and maps every other PE's.
    pub fn create(boot: &dyn Bootstrap, size: usize) -> Result<HostHeap> {
        let me = boot.rank();
        let fd = memfd(&format!("rshmem-heap-pe{me}"), size)
            .map_err(|e| Error::system("shmem_init", &format!("creating a {size}-byte symmetric heap (SYMMETRIC_SIZE)"), e))?;
        let all = boot.allgather_fds(&[fd.as_raw_fd()])?;
        let mut maps = Vec::with_capacity(all.len());
        for (pe, fds) in all.iter().enumerate() {
            let f = fds.first().ok_or_else(|| Error::bootstrap(format!("PE {pe} sent no heap descriptor")))?;
            let m = Mapping::map(if pe == me { &fd } else { f }, size).map_err(|e| {
                Error::system("shmem_init", &format!("mapping PE {pe}'s {size}-byte heap (lower RSHMEM_SYMMETRIC_SIZE?)"), e)
            })?;
            maps.push(m);
        }
        let bases = maps.iter().map(|m| m.base() as usize).collect();
        Ok(HostHeap { maps, bases, size, me })
    }

    /// Start of this PE's own heap.
    pub fn my_base(&self) -> usize {
        self.bases[self.me]
    }

    /// Offset of `addr` in this PE's heap, if `addr..addr+len` lies inside it.
    #[inline]
    pub fn offset_of(&self, addr: usize, len: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.bases[self.me]);
        (off < self.size && len <= self.size - off).then_some(off)
    }

    pub fn mapping_count(&self) -> usize {
        self.maps.len()
    }
}
