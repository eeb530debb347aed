//! Symmetric memory on the host: one memory file per PE, mapped by every local PE, plus the
//! program's own global and static data made shareable (see `statics`).

pub mod alloc;
pub mod gpu;
pub mod statics;

use std::os::fd::AsRawFd;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::sys::shm::{memfd, Mapping};

/// Every heap is mapped at an address that is a multiple of this, in every process, so that an
/// offset aligned to any power of two up to it is an aligned address on every PE (shmem_align
/// aligns offsets; address space is only reserved, so the margin costs nothing).
pub const BASE_ALIGN: usize = 1 << 30;

/// The user part of a heap is SYMMETRIC_SIZE rounded up to a multiple of this, as NVSHMEM
/// rounds its heap up to its allocation granularity: room for the allocator's alignment padding,
/// so a program can allocate the whole SYMMETRIC_SIZE in several aligned blocks.
pub const SIZE_STEP: usize = 2 << 20;

/// Bytes of heap for `user` bytes of user allocations after a `reserved`-byte runtime area.
pub fn heap_bytes(reserved: usize, user: usize) -> Option<usize> {
    user.max(1).checked_next_multiple_of(SIZE_STEP)?.checked_add(reserved)
}

/// What an allocation that does not fit returns: NULL after a warning, as OpenSHMEM and NVSHMEM
/// specify, or `err` (fatal) with RSHMEM_ABORT_ON_OOM=1. Every PE runs the same allocator over
/// the same calls, so all of them get NULL together and the heap is unchanged.
pub fn out_of_room<T>(err: Error) -> Result<*mut T> {
    let abort = matches!(crate::env::current("ABORT_ON_OOM").1.trim().to_ascii_lowercase().as_str(), "1" | "y" | "yes" | "true" | "on");
    if abort {
        return Err(err);
    }
    crate::runtime::log::warn(&format!("{err} (returning NULL; RSHMEM_ABORT_ON_OOM=1 ends the job instead)"));
    Ok(std::ptr::null_mut())
}

/// Every PE's heap, mapped into this process. `bases[pe]` is where PE `pe`'s heap lies here.
/// The first `reserved` bytes of each heap are the runtime's (header.rs); the program's
/// symmetric memory is the rest.
pub struct HostHeap {
    maps: Vec<Mapping>,
    pub bases: Vec<usize>,
    pub size: usize,
    pub reserved: usize,
    /// Where this PE's user part starts (`bases[me] + reserved`) and its length.
    user_base: usize,
    user_size: usize,
    pub me: usize,
}

impl HostHeap {
    /// Collective: creates this PE's heap and maps every other PE's.
    pub fn create(boot: &dyn Bootstrap, size: usize, reserved: usize) -> Result<HostHeap> {
        debug_assert!(reserved <= size);
        let me = boot.rank();
        let fd = memfd(&format!("rshmem-heap-pe{me}"), size)
            .map_err(|e| Error::system("shmem_init", &format!("creating a {size}-byte symmetric heap (SYMMETRIC_SIZE)"), e))?;
        let all = boot.allgather_fds(&[fd.as_raw_fd()])?;
        let local = boot.local_pes();
        let mut maps = Vec::with_capacity(all.len());
        for (pe, fds) in all.iter().enumerate() {
            // A PE on another host shares no memory with this one: its slot is a private,
            // untouched stand-in (data to it must go through a network transport).
            let stand_in;
            let f = match fds.first() {
                Some(f) => f,
                None if !local.contains(&pe) => {
                    stand_in = memfd(&format!("rshmem-remote-pe{pe}"), size)
                        .map_err(|e| Error::system("shmem_init", &format!("reserving address space for PE {pe} on another host"), e))?;
                    &stand_in
                }
                None => return Err(Error::bootstrap(format!("PE {pe} sent no heap descriptor"))),
            };
            let m = Mapping::map_aligned(if pe == me { &fd } else { f }, size, BASE_ALIGN).map_err(|e| {
                Error::system("shmem_init", &format!("mapping PE {pe}'s {size}-byte heap (lower RSHMEM_SYMMETRIC_SIZE?)"), e)
            })?;
            if fds.is_empty() && pe != me {
                m.forbid_access().map_err(|e| Error::system("shmem_init", &format!("fencing off PE {pe}'s stand-in heap"), e))?;
            }
            maps.push(m);
        }
        let bases: Vec<usize> = maps.iter().map(|m| m.base() as usize).collect();
        let user_base = bases[me] + reserved;
        Ok(HostHeap { maps, bases, size, reserved, user_base, user_size: size - reserved, me })
    }

    /// Start of this PE's own heap.
    pub fn my_base(&self) -> usize {
        self.bases[self.me]
    }

    /// Offset of `addr` in this PE's heap, if `addr..addr+len` lies inside its user part (the
    /// runtime's reserved area is not symmetric memory for the program).
    #[inline]
    pub fn offset_of(&self, addr: usize, len: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.user_base);
        (off < self.user_size && len <= self.user_size - off).then_some(off + self.reserved)
    }

    /// Whether `addr..addr+len` touches this PE's reserved area (for the error message).
    pub fn touches_reserved(&self, addr: usize, len: usize) -> bool {
        let base = self.bases[self.me];
        addr < self.user_base && addr.saturating_add(len.max(1)) > base
    }

    pub fn mapping_count(&self) -> usize {
        self.maps.len()
    }
}
