//! nvshmemx_buffer_register_symmetric / nvshmemx_buffer_unregister_symmetric: a program's own
//! GPU allocation (cuMemCreate, exportable as a POSIX file descriptor) made symmetric.
//!
//! Every PE's window slot is `stride` bytes: the heap from 0 to `heap_end`, then
//! REGISTER_SYMMETRIC_SPACE bytes for registered allocations. A registration is collective:
//! every PE passes an allocation of the same size; all take the same offset in that space
//! (first fit, the same on every PE since every PE registers and unregisters the same sizes in
//! the same order), export their allocation's handle, and map every PE's at that offset of its
//! slot. The returned address then works like nvshmem_malloc memory: device RMA (the same
//! peer arithmetic), host and on-stream operations (`offset_of` finds it).
//!
//! Across hosts a descriptor cannot travel and a peer's memory is not mapped: only the PEs of
//! this host exchange and map their allocations; a PE on another host reaches this PE's one
//! through the proxy, by the same offset (its target side copies into the registered range as
//! into the heap: gpu/proxy.rs `reachable`). Whether every PE could export its allocation is
//! agreed over the whole job.

use std::os::fd::AsRawFd;

use super::{cu, GpuState};
use crate::cuda::{self, Mapping, PhysMem};
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::alloc::{agree, Op};
use crate::runtime::State;
use crate::transport::Route;

/// One registration: its offset and size in every slot, and the mappings (every PE's
/// allocation, ours included) that keep it there.
struct Registered {
    off: usize,
    len: usize,
    // Field order is drop order: unmap, then release the handles.
    _maps: Vec<Mapping>,
    _mems: Vec<PhysMem>,
}

#[derive(Default)]
pub struct Registry {
    list: Vec<Registered>,
}

impl Registry {
    /// Whether `off..off+len` lies inside one registration.
    pub fn covers(&self, off: usize, len: usize) -> bool {
        self.list.iter().any(|r| off >= r.off && len <= r.off + r.len - off)
    }

    /// The lowest offset in `from..to` with `len` bytes free.
    fn first_fit(&self, from: usize, to: usize, len: usize) -> Option<usize> {
        let mut taken: Vec<(usize, usize)> = self.list.iter().map(|r| (r.off, r.off + r.len)).collect();
        taken.sort_unstable();
        let mut at = from;
        for (lo, hi) in taken {
            if lo >= at + len {
                break;
            }
            at = at.max(hi);
        }
        (at.checked_add(len)? <= to).then_some(at)
    }
}

impl State {
    /// Collective: maps every PE's `size`-byte allocation at `buf` into the symmetric window;
    /// returns this PE's symmetric address of it.
    pub fn gpu_register_symmetric(&self, buf: *mut u8, size: usize) -> Result<*mut u8> {
        let g = self.gpu()?;
        if g.ibgda.is_some() {
            return Err(Error::of(ErrorKind::Unsupported, "registering user allocations symmetrically is not supported with IBGDA peers (NVSHMEM_DISABLE_P2P=1); allocate with nvshmem_malloc"));
        }
        // Agreed first: every PE then reaches the same verdict on the arguments.
        let _serial = self.serialize_collectives();
        agree(&self.gpu_heap()?, Op::RegisterSymmetric, size as u64, 0)?;
        let gran = g.heap.lock().unwrap_or_else(|p| p.into_inner()).granularity;
        if size == 0 || !size.is_multiple_of(gran) {
            return Err(Error::invalid_value(format!(
                "buffer {buf:p} of {size} bytes: the size must be a positive multiple of the allocation granularity ({gran} bytes)"
            )));
        }
        cu(g.ctx.make_current())?;
        let off = g.symmetric.lock().unwrap_or_else(|p| p.into_inner()).first_fit(g.heap_end, g.stride, size);
        // This PE's allocation, exported. A failure here still takes part in the exchange
        // (sending no descriptor), so every PE learns of it and none waits.
        let local = PhysMem::retain(buf as u64, size).and_then(|mem| mem.export_fd().map(|fd| (mem, fd)));
        let fds: Vec<i32> = local.as_ref().map(|(_, fd)| vec![fd.as_raw_fd()]).unwrap_or_default();
        let all = self.boot.allgather_fds(&fds)?; // this host's PEs' (a PE on another host: none)
        let exported = self.boot.allgather(&[local.is_ok() as u8])?;
        let (mine, _fd) = match local {
            Ok(pair) => pair,
            Err(e) => {
                return Err(Error::invalid_value(format!("{buf:p} is not an exportable cuMemCreate allocation of at least {size} bytes ({e}); create it with CUmemAllocationProp.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR"),
                ))
            }
        };
        if let Some(pe) = exported.iter().position(|v| v.first() != Some(&1)) {
            return Err(Error::invalid_value(format!("PE {pe} could not export its allocation (see its message); nothing was registered")));
        }
        let Some(off) = off else {
            return Err(Error::of(
                ErrorKind::OutOfMemory, format!("no {size} bytes free in the address space for registered allocations; set RSHMEM_REGISTER_SYMMETRIC_SPACE higher (now {} bytes)", g.stride - g.heap_end),
            ));
        };
        let mapped = self.map_everyone(g, mine, &all, off, size);
        // Everyone mapped, or nobody keeps a mapping: the outcome is agreed before returning.
        let ok = self.boot.allgather(&[mapped.is_ok() as u8])?;
        let (maps, mems) = mapped.map_err(Error::from)?;
        if let Some(pe) = ok.iter().position(|v| v.first() != Some(&1)) {
            return Err(Error::of(
                ErrorKind::Internal,
                format!("PE {pe} could not map the registered allocations (see its message); nothing was registered"),
            ));
        }
        g.symmetric.lock().unwrap_or_else(|p| p.into_inner()).list.push(Registered { off, len: size, _maps: maps, _mems: mems });
        Ok((g.base + off as u64) as *mut u8)
    }

    /// Every PE's allocation (ours: `mine`; the others' from their descriptors) at `off`.
    fn map_everyone(
        &self,
        g: &GpuState,
        mine: PhysMem,
        fds: &[Vec<std::os::fd::OwnedFd>],
        off: usize,
        size: usize,
    ) -> cuda::CuResult<(Vec<Mapping>, Vec<PhysMem>)> {
        let (mut maps, mut mems) = (Vec::new(), Vec::new());
        let mut mine = Some(mine);
        for (pe, f) in fds.iter().enumerate() {
            let mem = match mine.take_if(|_| pe == self.me) {
                Some(m) => m,
                None if self.routes.route(pe) == Route::Network => continue, // through the proxy
                None => PhysMem::import_fd(f[0].as_raw_fd(), size)?,
            };
            maps.push(Mapping::map(g.base_of(pe) + off as u64, &mem, g.device)?);
            mems.push(mem);
        }
        Ok((maps, mems))
    }

    /// Collective: undoes a registration (`ptr` as returned, `size` as registered) once every
    /// PE's kernels and copies are done with it.
    pub fn gpu_unregister_symmetric(&self, ptr: *mut u8, size: usize) -> Result<()> {
        let g = self.gpu()?;
        let off = (ptr as u64).wrapping_sub(g.base) as usize;
        let _serial = self.serialize_collectives();
        agree(&self.gpu_heap()?, Op::UnregisterSymmetric, off as u64, size as u64)?;
        let found = g.symmetric.lock().unwrap_or_else(|p| p.into_inner()).list.iter().position(|r| r.off == off && r.len == size);
        let Some(i) = found else {
            return Err(Error::invalid_value(format!(
                "{ptr:p} ({size} bytes) is not an address returned by nvshmemx_buffer_register_symmetric with that size"
            )));
        };
        cu(g.ctx.make_current())?;
        cu(g.ctx.synchronize())?;
        self.barrier_all(); // no PE still reaches into another's allocation
        drop(g.symmetric.lock().unwrap_or_else(|p| p.into_inner()).list.remove(i));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(spans: &[(usize, usize)]) -> Registry {
        Registry { list: spans.iter().map(|&(off, len)| Registered { off, len, _maps: Vec::new(), _mems: Vec::new() }).collect() }
    }

    #[test]
    fn first_fit_takes_the_lowest_gap_that_holds_it() {
        let r = registry(&[(100, 50), (200, 100)]);
        assert_eq!(r.first_fit(100, 1000, 50), Some(150));
        assert_eq!(r.first_fit(100, 1000, 51), Some(300));
        assert_eq!(r.first_fit(100, 350, 51), None);
        assert_eq!(registry(&[]).first_fit(64, 128, 64), Some(64));
        assert_eq!(registry(&[]).first_fit(64, 127, 64), None);
    }

    #[test]
    fn covers_only_inside_one_registration() {
        let r = registry(&[(100, 50)]);
        assert!(r.covers(100, 50) && r.covers(149, 1));
        assert!(!r.covers(99, 2) && !r.covers(149, 2) && !r.covers(150, 1));
    }
}
