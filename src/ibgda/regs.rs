//! Local buffers registered with the NIC (`nvshmemx_buffer_register`) and the device's table of
//! them (`abi::RegTable`, in GPU memory, pointed to by `PeState.regs`). The device looks a put's
//! source or a get's destination up there (`local_key` in device/ibgda/ibgda_pe.h): found, the
//! NIC reads or writes it in one RDMA WRITE or READ; not found, the bytes travel through inline
//! WQEs or the landing slots, which is correct but slow.
//!
//! The table is rewritten whole on every change (2 KiB). A kernel that reads it while it changes
//! can at worst miss an entry and take the slow path: NVSHMEM asks that a buffer be registered
//! before the kernels using it start, and unregistered after they end.

use crate::error::{Error, ErrorKind, Result};

use super::abi::{RegEntry, RegTable, MAX_REGS};
use super::cuda::DevBuf;

/// What one registration holds on to until it is removed (a verbs MR, or a model key).
pub struct Registrations<H> {
    live: Vec<(RegEntry, H)>,
}

impl<H> Default for Registrations<H> {
    fn default() -> Self {
        Registrations { live: Vec::new() }
    }
}

impl<H> Registrations<H> {
    /// Whether one more buffer fits; the error says what to do otherwise.
    pub fn check_room(&self) -> Result<()> {
        if self.live.len() >= MAX_REGS {
            return Err(Error::of(
                ErrorKind::Unsupported, format!("{MAX_REGS} buffers are registered with the IBGDA NIC already; unregister one (nvshmemx_buffer_unregister) or allocate from the symmetric heap"),
            ));
        }
        Ok(())
    }
    /// Adds `[base, base+size)` under `lkey` (the caller checked room and overlaps).
    pub fn add(&mut self, base: u64, size: u64, lkey: u32, handle: H) {
        self.live.push((RegEntry { base, size, lkey, ..RegEntry::default() }, handle));
    }
    /// Removes the buffer registered at `base`, giving back its handle.
    pub fn remove(&mut self, base: u64) -> Option<H> {
        let i = self.live.iter().position(|(e, _)| e.base == base)?;
        Some(self.live.remove(i).1)
    }
    /// Removes every buffer.
    pub fn clear(&mut self) -> Vec<H> {
        self.live.drain(..).map(|(_, h)| h).collect()
    }
    /// The table as the device reads it.
    pub fn image(&self) -> RegTable {
        let mut t = RegTable { count: self.live.len() as u32, reserved: [0; 3], reg: [RegEntry::default(); MAX_REGS] };
        for (slot, (e, _)) in t.reg.iter_mut().zip(&self.live) {
            *slot = *e;
        }
        t
    }
    /// Writes the table into the device's copy.
    pub fn publish(&self, table: &DevBuf) -> Result<()> {
        let image = self.image();
        // SAFETY: RegTable is repr(C) plain data; any byte view of it is valid.
        let bytes = unsafe { std::slice::from_raw_parts((&image as *const RegTable).cast::<u8>(), std::mem::size_of::<RegTable>()) };
        table.upload(0, bytes).map_err(|e| Error::of(ErrorKind::System, format!("updating the IBGDA registration table: {e}")))
    }
}

/// A device buffer for the table (zeroed: no registrations).
pub fn new_table() -> Result<DevBuf> {
    DevBuf::new(std::mem::size_of::<RegTable>())
        .map_err(|e| Error::new(ErrorKind::System, "nvshmem_init", format!("IBGDA set-up: allocating the registration table: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_lists_the_live_buffers_in_order_and_removal_closes_the_gap() {
        let mut r = Registrations::default();
        r.add(0x1000, 64, 7, "a");
        r.add(0x9000, 128, 8, "b");
        r.add(0x20000, 4096, 9, "c");
        assert_eq!(r.remove(0x9000), Some("b"));
        assert_eq!(r.remove(0x9000), None);
        let t = r.image();
        assert_eq!(t.count, 2);
        assert_eq!((t.reg[0].base, t.reg[0].size, t.reg[0].lkey), (0x1000, 64, 7));
        assert_eq!((t.reg[1].base, t.reg[1].size, t.reg[1].lkey), (0x20000, 4096, 9));
        assert_eq!(t.reg[2], RegEntry::default());
        assert_eq!(r.clear(), vec!["a", "c"]);
        assert_eq!(r.image().count, 0);
    }

    #[test]
    fn a_full_table_refuses_with_the_way_out() {
        let mut r = Registrations::default();
        for i in 0..MAX_REGS as u64 {
            r.check_room().unwrap();
            r.add(i * 0x1000, 16, i as u32, ());
        }
        let e = r.check_room().unwrap_err().to_string();
        assert!(e.contains("64 buffers") && e.contains("nvshmemx_buffer_unregister"), "{e}");
        r.remove(0);
        assert!(r.check_room().is_ok());
    }
}
