//! Global and static variables as symmetric data objects (OpenSHMEM §3).
//!
//! At init each PE moves its program's writable data (.data and .bss) onto a memory file:
//! it copies the current contents into the file and maps the file over the same addresses.
//! The program sees no difference, but now every local peer can map that file too, so a put
//! to a global is a store and an AMO on a global is a real atomic instruction.
//! Caveat (documented in the README): a child made with fork() and no exec shares these pages.
//! Only whole pages can be remapped, so the page holding the end of the GOT (`.got.plt`, which
//! lazy binding writes) is in the file too; but no RMA, AMO or shmem_ptr may address anything
//! below the program's own data (`DataRange::usable_start`).

use std::os::fd::AsRawFd;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::sys::phdr::{main_program_data, DataRange};
use crate::sys::shm::{memfd, Mapping};

pub struct StaticData {
    pub range: DataRange,
    /// `bases[pe]`: where PE `pe`'s data segment is mapped in this process.
    pub bases: Vec<usize>,
    own: Option<Mapping>,
    _peers: Vec<Mapping>,
}

impl Drop for StaticData {
    /// Gives the program its data back as private memory with the same contents, so it keeps
    /// running normally after shmem_finalize.
    fn drop(&mut self) {
        if let Some(own) = self.own.take() {
            let len = own.len();
            // SAFETY: the range is our own data segment, currently mapped by `own`.
            let saved = unsafe { std::slice::from_raw_parts(self.range.start as *const u8, len) }.to_vec();
            std::mem::forget(own); // replaced below, not unmapped
                                   // SAFETY: same range, same contents restored right after.
            unsafe { crate::sys::shm::replace_with_private(self.range.start as *mut u8, &saved) };
        }
    }
}

impl StaticData {
    /// Collective. Returns Ok(None) when this program has no data segment or the PEs run
    /// different programs (then only the heap is symmetric).
    pub fn share(boot: &dyn Bootstrap) -> Result<Option<StaticData>> {
        let local = main_program_data();
        let len = local.map(|r| r.end - r.start).unwrap_or(0);
        let lens = boot.allgather(&(len as u64).to_le_bytes())?;
        let same = lens.iter().all(|l| l.as_slice() == (len as u64).to_le_bytes());
        let (Some(range), true) = (local.filter(|_| len > 0), same) else {
            boot.allgather_fds(&[])?;
            return Ok(None);
        };
        let err = |what: &str, e| Error::system("shmem_init", what, e);
        let fd = memfd("rshmem-static-data", len).map_err(|e| err("creating the static-data file", e))?;
        // Copy the live contents into the file, then map the file over them.
        // SAFETY: range lies inside this program's writable data segment (from its program
        // headers), so it is readable for `len` bytes.
        let current = unsafe { std::slice::from_raw_parts(range.start as *const u8, len) };
        let written =
            std::os::unix::fs::FileExt::write_all_at(&std::fs::File::from(fd.try_clone().map_err(|e| err("dup", e))?), current, 0);
        written.map_err(|e| err("copying static data", e))?;
        // SAFETY: the range is our own data segment and the file now holds its exact contents,
        // so replacing the pages in place is invisible to the program (init runs before the
        // program starts other threads that would write globals concurrently).
        let own = unsafe { Mapping::map_fixed(&fd, len, range.start as *mut u8) }.map_err(|e| err("remapping static data", e))?;
        let all = boot.allgather_fds(&[fd.as_raw_fd()])?;
        let (me, local) = (boot.rank(), boot.local_pes());
        let mut peers = Vec::new();
        let mut bases = Vec::with_capacity(all.len());
        for (pe, fds) in all.iter().enumerate() {
            if pe == me {
                bases.push(range.start);
                continue;
            }
            let stand_in;
            let f = match fds.first() {
                Some(f) => f,
                // On another host: a private stand-in, as for the heap (heap/mod.rs).
                None if !local.contains(&pe) => {
                    stand_in = memfd("rshmem-remote-static-data", len).map_err(|e| err("reserving address space for a remote PE", e))?;
                    &stand_in
                }
                None => return Err(Error::bootstrap(format!("PE {pe} sent no static-data descriptor"))),
            };
            let m = Mapping::map(f, len).map_err(|e| err("mapping a peer's static data", e))?;
            if fds.is_empty() {
                m.forbid_access().map_err(|e| err("fencing off a remote PE's stand-in static data", e))?;
            }
            bases.push(m.base() as usize);
            peers.push(m);
        }
        Ok(Some(StaticData { range, bases, own: Some(own), _peers: peers }))
    }

    /// Offset from the mapping's start (`bases[pe]`) of `len` bytes at `addr`, if they lie in
    /// the part peers may address: the program's own data, never the GOT or `.dynamic` that
    /// share its first page.
    #[inline]
    pub fn offset_of(&self, addr: usize, len: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.range.usable_start);
        let size = self.range.usable_end - self.range.usable_start;
        (off < size && len <= size - off).then_some(addr - self.range.start)
    }
}
