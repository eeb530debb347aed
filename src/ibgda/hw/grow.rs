//! Heap growth after nvshmem_init on the hardware NIC. The device ABI has one key per PE
//! (`PeerState.rkey`, `PeState.heap_lkey`), so when the heaps grow (collectively: every PE in
//! `nvshmem_malloc` together, see `runtime::gpu` `ensure_mapped`) each PE registers its whole
//! mapped heap again as one new MR, the PEs swap the new remote keys through the bootstrap, and
//! each PE writes the new keys into its device peer table and its new local key into its device
//! state. The older MRs stay registered until finalize: operations already posted with old keys
//! stay valid (overlapping registrations of the same memory are legal in verbs).
//!
//! In CI: the key message and the gathering ([`KeyMsg`], [`gather_keys`], [`rekey`]). NEVER MET
//! HARDWARE: [`HwIbgda::heap_grew`] itself (a real registration, the uploads).

use std::os::fd::AsRawFd;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, ErrorKind, Result};
use crate::ib::Mr;
use crate::ibgda::abi::{PeState, PeerState};

use super::gpumem::dmabuf_of;
use super::{bytes_of, HwIbgda};

const ROUTINE: &str = "nvshmem_malloc";
const KEY_TAG: u32 = 0x4b48_5231; // "1RHK": version 1 of this message
/// Bytes of a [`KeyMsg`]: tag, ok flag, rkey (u32 each), mapped bytes (u64).
pub const KEY_MSG_BYTES: usize = 20;

/// What a PE tells the others after registering its grown heap: the size it registered and its
/// new remote key, or that its registration failed (so that every PE stops with the same
/// error instead of some waiting in the next collective).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMsg {
    pub mapped: u64,
    /// None: this PE could not register its heap.
    pub rkey: Option<u32>,
}

impl KeyMsg {
    /// Little-endian: tag, ok (1 or 0), rkey, mapped.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(KEY_MSG_BYTES);
        b.extend_from_slice(&KEY_TAG.to_le_bytes());
        b.extend_from_slice(&u32::from(self.rkey.is_some()).to_le_bytes());
        b.extend_from_slice(&self.rkey.unwrap_or(0).to_le_bytes());
        b.extend_from_slice(&self.mapped.to_le_bytes());
        b
    }

    /// Reads what PE `pe` sent.
    pub fn decode(b: &[u8], pe: usize) -> Result<KeyMsg> {
        let word = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        if b.len() != KEY_MSG_BYTES || word(0) != KEY_TAG || word(1) > 1 {
            return Err(Error::bootstrap(format!(
                "PE {pe} sent a malformed IBGDA heap key message after the heap grew ({} bytes; expected {KEY_MSG_BYTES} starting with tag {KEY_TAG:#x}): \
                 are all PEs running the same rshmem?",
                b.len()
            ))
            .in_routine(ROUTINE));
        }
        Ok(KeyMsg { mapped: u64::from_le_bytes(b[12..20].try_into().expect("8 bytes")), rkey: (word(1) == 1).then(|| word(2)) })
    }
}

/// Every PE's new remote key, from the allgathered messages; `mapped` is what this PE
/// registered (all PEs grow to the same size). The error names the first PE that failed or
/// disagrees.
pub fn gather_keys(all: &[Vec<u8>], mapped: u64) -> Result<Vec<u32>> {
    let msgs = all.iter().enumerate().map(|(pe, b)| KeyMsg::decode(b, pe)).collect::<Result<Vec<_>>>()?;
    let mut keys = Vec::with_capacity(msgs.len());
    for (pe, m) in msgs.iter().enumerate() {
        let Some(rkey) = m.rkey else {
            return Err(Error::new(
                ErrorKind::System,
                ROUTINE,
                format!("the symmetric heap grew to {mapped} bytes per PE, but PE {pe} could not register its grown heap with its NIC (see PE {pe}'s error); \
                         raise NVSHMEM_CUMEM_GRANULARITY so the heap is mapped and registered whole at nvshmem_init"),
            ));
        };
        if m.mapped != mapped {
            return Err(Error::new(
                ErrorKind::Internal,
                ROUTINE,
                format!("the symmetric heap grew to {mapped} bytes here but to {} bytes on PE {pe}: the PEs' allocations differ (every PE must call nvshmem_malloc with the same sizes in the same order)", m.mapped),
            ));
        }
        keys.push(rkey);
    }
    Ok(keys)
}

/// The peer table with every PE's heap key replaced by `keys[pe]` (base, size and address
/// vectors unchanged).
pub fn rekey(table: &[PeerState], keys: &[u32]) -> Vec<PeerState> {
    table.iter().zip(keys).map(|(p, &rkey)| PeerState { rkey, ..*p }).collect()
}

/// What heap growth changes, behind HwIbgda's lock.
pub struct Grown {
    /// Bytes of the heap the newest MR covers.
    pub registered: usize,
    /// Host copies of what was uploaded.
    pub peers: Vec<PeerState>,
    pub state: PeState,
    /// Every heap MR, the one made at init first; all stay registered until finalize.
    pub mrs: Vec<Mr>,
}

fn upload_err(what: &str) -> impl Fn(crate::cuda::CuError) -> Error + '_ {
    move |e| Error::new(ErrorKind::System, ROUTINE, format!("IBGDA heap growth: uploading {what}: {e}"))
}

impl HwIbgda {
    /// The heaps grew to `mapped` bytes each: register this PE's whole mapped heap as one new
    /// MR, swap the new keys with every PE through `boot`, and point the device at them. Call
    /// on every PE together. NEVER MET HARDWARE.
    pub fn heap_grew(&self, boot: &dyn Bootstrap, mapped: usize) -> Result<()> {
        let mut g = self.grown.lock().unwrap_or_else(|p| p.into_inner());
        if mapped <= g.registered {
            return Ok(());
        }
        let fd = dmabuf_of(self.heap_base, mapped);
        let mr = self.pd.register(self.heap_base, mapped, fd.as_ref().map(|f| (f.as_raw_fd(), 0)));
        drop(fd);
        let mine = KeyMsg { mapped: mapped as u64, rkey: mr.as_ref().ok().map(|m| m.rkey) };
        let all = boot.allgather(&mine.encode()).map_err(|e| e.in_routine(ROUTINE))?;
        let mr = mr.map_err(|e| e.in_routine(ROUTINE))?;
        let keys = gather_keys(&all, mapped as u64)?;
        let peers = rekey(&g.peers, &keys);
        // Only the key words change: the device may be reading the rest (and owns the state's
        // counters), so nothing else is written.
        let size = std::mem::size_of::<PeerState>();
        let at = std::mem::offset_of!(PeerState, rkey);
        for (pe, p) in peers.iter().enumerate() {
            self.peers.upload(pe * size + at, &p.rkey.to_ne_bytes()).map_err(upload_err("the peer table's keys"))?;
        }
        let mut state = g.state;
        state.heap_lkey = mr.lkey;
        let at = std::mem::offset_of!(PeState, heap_lkey);
        self.state.upload(at, &bytes_of(std::slice::from_ref(&state))[at..at + 4]).map_err(upload_err("the heap's local key"))?;
        crate::log::info(&format!(
            "IBGDA (hardware NIC {}): the heap grew to {mapped} bytes per PE; registered again by {} (lkey {:#x}, {} heap registrations kept)",
            self.ctx.name,
            mr.how,
            mr.lkey,
            g.mrs.len() + 1
        ));
        g.mrs.push(mr);
        (g.registered, g.peers, g.state) = (mapped, peers, state);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_messages_round_trip_and_a_short_one_is_refused_in_words() {
        for m in [KeyMsg { mapped: 3 << 30, rkey: Some(0xdead_beef) }, KeyMsg { mapped: 1 << 21, rkey: None }] {
            let b = m.encode();
            assert_eq!(b.len(), KEY_MSG_BYTES);
            assert_eq!(KeyMsg::decode(&b, 1).unwrap(), m);
        }
        let b = KeyMsg { mapped: 4096, rkey: Some(7) }.encode();
        let e = KeyMsg::decode(&b[..12], 3).unwrap_err().to_string();
        assert!(e.starts_with("nvshmem_malloc: ") && e.contains("PE 3") && e.contains("12 bytes") && e.contains("expected 20"), "{e}");
        let mut bad = b.clone();
        bad[0] ^= 1;
        assert!(KeyMsg::decode(&bad, 0).is_err(), "another tag");
        let mut bad = b;
        bad[4] = 2;
        assert!(KeyMsg::decode(&bad, 0).is_err(), "an ok flag other than 0 or 1");
    }

    #[test]
    fn gathered_keys_come_in_pe_order_and_a_failure_or_disagreement_is_named() {
        let msg = |rkey: Option<u32>, mapped: u64| KeyMsg { mapped, rkey }.encode();
        let all = vec![msg(Some(0x10), 1 << 30), msg(Some(0x21), 1 << 30), msg(Some(0x32), 1 << 30)];
        assert_eq!(gather_keys(&all, 1 << 30).unwrap(), vec![0x10, 0x21, 0x32]);
        let all = vec![msg(Some(0x10), 1 << 30), msg(None, 1 << 30)];
        let e = gather_keys(&all, 1 << 30).unwrap_err().to_string();
        assert!(
            e.starts_with("nvshmem_malloc: ") && e.contains("PE 1 could not register") && e.contains("NVSHMEM_CUMEM_GRANULARITY"),
            "{e}"
        );
        let all = vec![msg(Some(0x10), 1 << 30), msg(Some(0x11), 1 << 29)];
        let e = gather_keys(&all, 1 << 30).unwrap_err().to_string();
        assert!(e.contains("536870912 bytes on PE 1"), "{e}");
    }

    #[test]
    fn rekeying_changes_only_the_keys() {
        let mut p = PeerState::zeroed();
        (p.heap_base, p.heap_size, p.rkey, p.av_size) = (0x7000_0000, 1 << 30, 0x100, 48);
        p.av[9] = 0xab;
        let mut q = p;
        (q.heap_base, q.rkey) = (0x8000_0000, 0x101);
        let t = rekey(&[p, q], &[0x200, 0x201]);
        assert_eq!((t[0].rkey, t[1].rkey), (0x200, 0x201));
        assert_eq!(
            bytes_of(&[PeerState { rkey: 0x100, ..t[0] }, PeerState { rkey: 0x101, ..t[1] }]),
            bytes_of(&[p, q]),
            "all else as it was"
        );
    }
}
