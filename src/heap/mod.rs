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

/// Address space that the GPU heap windows of all PEs may take together in one process (each
/// process reserves every PE's slot): 32 TiB, a quarter of x86-64's user address space.
pub const GPU_WINDOW_BUDGET: usize = 32 << 40;

/// Bytes of user allocations one PE's GPU heap may grow to. NVSHMEM (with CUDA VMM, its
/// default) grows its heap on demand up to NVSHMEM_MAX_MEMORY_PER_GPU whatever
/// NVSHMEM_SYMMETRIC_SIZE says, so programs written for it allocate past the nominal size (its
/// ring-reduce example takes 2 x 512 MiB of the default 1 GiB, then more). rshmem does the same:
/// the limit is `max_per_gpu`, but never less than `symmetric`, and at most this PE's share of
/// GPU_WINDOW_BUDGET (large jobs) unless `symmetric` asks for more. Only address space is
/// reserved; GPU memory is taken as allocations need it.
pub fn gpu_user_limit(symmetric: usize, max_per_gpu: usize, npes: usize) -> usize {
    let share = GPU_WINDOW_BUDGET / npes.max(1);
    symmetric.max(max_per_gpu.min(share))
}

/// shmem_align's / nvshmem_align's alignment must be a power of two that the heaps' placement
/// can honour (`limit`: what every PE's heap base is aligned to).
pub fn check_alignment(align: usize, limit: usize) -> Result<()> {
    if !align.is_power_of_two() {
        return Err(Error::invalid_value(format!("alignment {align} is not a power of two")));
    }
    if align > limit {
        return Err(Error::invalid_value(format!(
            "alignment {align} is larger than the {limit} bytes the symmetric heap can align to on every PE; ask for at most {limit}"
        )));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::alloc::Allocator;
    use crate::heap::gpu::ALLOC_ALIGN;

    const MIB: usize = 1 << 20;
    const GIB: usize = 1 << 30;

    #[test]
    fn gpu_limit_is_nvshmem_max_memory_never_below_symmetric_size() {
        // NVSHMEM's defaults: SYMMETRIC_SIZE 1 GiB, MAX_MEMORY_PER_GPU 256 GiB.
        assert_eq!(gpu_user_limit(GIB, 256 * GIB, 4), 256 * GIB);
        // A SYMMETRIC_SIZE above the maximum wins (the user asked for it).
        assert_eq!(gpu_user_limit(1 << 40, 256 * GIB, 2), 1 << 40);
        // Large jobs share the address-space budget, but keep their SYMMETRIC_SIZE.
        assert_eq!(gpu_user_limit(GIB, 256 * GIB, 1024), 32 * GIB);
        assert_eq!(gpu_user_limit(64 * GIB, 256 * GIB, 4096), 64 * GIB);
        assert!(gpu_user_limit(GIB, 256 * GIB, 512) * 512 <= GPU_WINDOW_BUDGET);
        assert_eq!(gpu_user_limit(GIB, 256 * GIB, 0), 256 * GIB);
    }

    /// NVSHMEM's ring-reduce example under the default sizes: two 512 MiB buffers, then a
    /// small calloc. With the heap limited to SYMMETRIC_SIZE the calloc found no room; with the
    /// GPU limit it fits, at the same offsets on every PE (two allocators, same calls).
    #[test]
    fn ring_reduce_allocations_fit_the_default_gpu_heap() {
        let reserved = 64 * 1024;
        let exact = heap_bytes(reserved, GIB).unwrap();
        let mut old = Allocator::new(reserved, exact);
        assert!(old.alloc(512 * MIB, ALLOC_ALIGN).is_some() && old.alloc(512 * MIB, ALLOC_ALIGN).is_some());
        assert_eq!(old.alloc(256, ALLOC_ALIGN), None, "the nominal size alone is full");

        let end = heap_bytes(reserved, gpu_user_limit(GIB, 256 * GIB, 2)).unwrap();
        let (mut a, mut b) = (Allocator::new(reserved, end), Allocator::new(reserved, end));
        let mut offsets = Vec::new();
        for size in [512 * MIB, 512 * MIB, 256] {
            let x = a.alloc(size, ALLOC_ALIGN).expect("fits");
            assert_eq!(Some(x), b.alloc(size, ALLOC_ALIGN));
            assert_eq!(x % ALLOC_ALIGN, 0);
            offsets.push(x);
        }
        assert_eq!(offsets, vec![reserved, reserved + 512 * MIB, reserved + GIB]);
        // The third block lies past the nominal heap: backing it is the next growth's job.
        assert!(offsets[2] + 256 > exact);
    }

    #[test]
    fn heap_bytes_rounds_the_user_part_and_adds_the_runtime_area() {
        assert_eq!(heap_bytes(4096, 8 * 1024), Some(4096 + SIZE_STEP));
        assert_eq!(heap_bytes(4096, 0), Some(4096 + SIZE_STEP));
        assert_eq!(heap_bytes(0, 3 * SIZE_STEP), Some(3 * SIZE_STEP));
        assert_eq!(heap_bytes(1, usize::MAX), None);
    }
}
