//! DC (dynamically connected) transport: what the GPU runtime and the tests share.
//!
//! With `NVSHMEM_IBGDA_NUM_RC_PER_PE=0` a PE has no QP per peer. It has a few DC initiators
//! (DCIs, `NVSHMEM_IBGDA_NUM_DCI`), each able to reach any PE, and every PE has
//! `NVSHMEM_IBGDA_NUM_DCT` DC targets (DCTs). A WQE on a DCI carries the target's address vector
//! (the mlx5 datagram segment: DC access key, DCT number, LID), so the NIC connects to that DCT
//! for as long as it takes. What each PE must learn about the others is its [`DcTargets`]: the
//! LID of its NIC, the DC access key its DCTs were created with, and their numbers. These travel
//! through the bootstrap ([`exchange`]), as QP addresses do for RC.
//!
//! On the software HCA model (the only NIC this has met) a PE's "NIC" has LID `pe + 1` and
//! numbers its DCTs from [`MODEL_DCT_BASE`]; the numbers repeat from PE to PE, as they would on
//! real NICs, so only (LID, number) names a DCT. The key is random per PE and run.

use std::hash::{BuildHasher, Hasher};

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};

use super::mlx5::{AV_HALF_BYTES, EXTENDED_UD_AV};

/// Automatic DCI count (`NVSHMEM_IBGDA_NUM_DCI` <= 0): one per SM, at most this many.
pub const AUTO_DCI_CAP: u32 = 256;
/// Largest `NVSHMEM_IBGDA_NUM_DCI` accepted.
pub const MAX_DCI: u32 = 4096;
/// Largest `NVSHMEM_IBGDA_NUM_DCT` accepted.
pub const MAX_DCT: u32 = 64;
/// First DCT number of a model NIC (a DCT number is a 24-bit QP number of its NIC; its DCIs
/// are 0x100 and up, at most 4096 of them).
pub const MODEL_DCT_BASE: u32 = 0x00_2000;

/// DCIs for a setting (`None`: automatic) on a GPU with `sms` multiprocessors.
pub fn dci_count(setting: Option<u32>, sms: u32) -> u32 {
    setting.unwrap_or_else(|| sms.clamp(1, AUTO_DCI_CAP))
}

/// One PE's DC targets, as its NIC created them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DcTargets {
    /// LID of the PE's NIC port (what the address vector's `rlid` names).
    pub lid: u16,
    /// DC access key every DCT of this PE checks.
    pub key: u64,
    /// DCT numbers (24 bits each).
    pub dcts: Vec<u32>,
}

impl DcTargets {
    /// The targets the model NIC of PE `pe` creates: LID `pe + 1`, `num_dct` DCTs, a fresh key.
    pub fn model(pe: usize, num_dct: u32) -> DcTargets {
        DcTargets { lid: (pe as u16).wrapping_add(1), key: fresh_key(), dcts: (0..num_dct).map(|i| MODEL_DCT_BASE + i).collect() }
    }

    /// Wire form for the bootstrap: lid (2), count (2), key (8), numbers (4 each), little-endian.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(12 + 4 * self.dcts.len());
        v.extend_from_slice(&self.lid.to_le_bytes());
        v.extend_from_slice(&(self.dcts.len() as u16).to_le_bytes());
        v.extend_from_slice(&self.key.to_le_bytes());
        for d in &self.dcts {
            v.extend_from_slice(&d.to_le_bytes());
        }
        v
    }

    /// Reads what PE `pe` sent; the error names the PE.
    pub fn decode(pe: usize, b: &[u8]) -> Result<DcTargets> {
        let bad = || {
            Error::invalid("nvshmem_init", format!("PE {pe} sent a malformed DC target record ({} bytes) through the bootstrap", b.len()))
        };
        if b.len() < 12 {
            return Err(bad());
        }
        let n = u16::from_le_bytes([b[2], b[3]]) as usize;
        if b.len() != 12 + 4 * n {
            return Err(bad());
        }
        Ok(DcTargets {
            lid: u16::from_le_bytes([b[0], b[1]]),
            key: u64::from_le_bytes(b[4..12].try_into().expect("8 bytes")),
            dcts: b[12..].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect(),
        })
    }

    /// The address vector toward this PE's first DCT, as the device copies it into a DCI WQE
    /// (the device writes the DCT it picks over `dqp_dct`): `(image, bytes used)`.
    pub fn av(&self, extended: bool) -> ([u8; 48], u32) {
        av_image(self.key, self.dcts.first().copied().unwrap_or(0), self.lid, extended)
    }
}

/// An mlx5 address vector (`struct mlx5_wqe_av` image, big-endian fields) addressing DCT `dct`
/// at LID `lid` with DC access key `key`: the 16-byte half form, or the 48-byte extended form
/// (no GRH fields filled: the model needs none). Returns the image and its length.
pub fn av_image(key: u64, dct: u32, lid: u16, extended: bool) -> ([u8; 48], u32) {
    let mut av = [0u8; 48];
    av[0..8].copy_from_slice(&key.to_be_bytes());
    let dqp = (dct & 0xff_ffff) | if extended { EXTENDED_UD_AV } else { 0 };
    av[8..12].copy_from_slice(&dqp.to_be_bytes());
    av[14..16].copy_from_slice(&lid.to_be_bytes());
    (av, if extended { 48 } else { AV_HALF_BYTES as u32 })
}

/// Every PE's targets, gathered through the bootstrap (collective: every PE with IBGDA peers
/// calls it, RC ones with `None`, so a job whose PEs disagree on the transport stops with a
/// message rather than a hang). All PEs must also have the same number of DCTs (the device
/// indexes the table as `pe * num_dct + i`). `Ok(None)` for RC.
pub fn exchange(boot: &dyn Bootstrap, mine: Option<&DcTargets>) -> Result<Option<Vec<DcTargets>>> {
    let record = match mine {
        Some(t) => [&[1u8][..], &t.encode()].concat(),
        None => vec![0u8],
    };
    let all = boot.allgather(&record)?;
    let me = boot.rank();
    let differ = |what: &str, pe: usize, mine: String, theirs: String| {
        Error::invalid(
            "nvshmem_init",
            format!("{what} differs between PEs (PE {me}: {mine}, PE {pe}: {theirs}); set the same value for every PE"),
        )
    };
    let dc_of = |b: &[u8]| b.first() == Some(&1);
    if let Some(pe) = all.iter().position(|b| dc_of(b) != mine.is_some()) {
        let name = |dc: bool| if dc { "0 (DC)".to_string() } else { "1 or more (RC)".to_string() };
        return Err(differ("NVSHMEM_IBGDA_NUM_RC_PER_PE", pe, name(mine.is_some()), name(mine.is_none())));
    }
    let Some(mine) = mine else { return Ok(None) };
    let all: Vec<DcTargets> = all.iter().enumerate().map(|(pe, b)| DcTargets::decode(pe, &b[1..])).collect::<Result<_>>()?;
    if let Some((pe, t)) = all.iter().enumerate().find(|(_, t)| t.dcts.len() != mine.dcts.len()) {
        return Err(differ("NVSHMEM_IBGDA_NUM_DCT", pe, mine.dcts.len().to_string(), t.dcts.len().to_string()));
    }
    Ok(Some(all))
}

/// The PE owning DCT `dct` at LID `lid`.
pub fn owner(all: &[DcTargets], lid: u16, dct: u32) -> Option<u32> {
    all.iter().position(|t| t.lid == lid && t.dcts.contains(&(dct & 0xff_ffff))).map(|p| p as u32)
}

/// The DCT table the device reads: every PE's numbers, PE-major.
pub fn dct_table(all: &[DcTargets]) -> Vec<u32> {
    all.iter().flat_map(|t| t.dcts.iter().copied()).collect()
}

/// A DC access key nobody can guess ahead: std's per-process random hasher seeds, the process
/// id and the time. (Not a secret against an attacker on the fabric; it keeps strangers' and
/// stale WQEs out, which is what DC keys are for.)
fn fresh_key() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    h.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dci_count_is_the_setting_or_one_per_sm_capped() {
        assert_eq!(dci_count(Some(3), 132), 3);
        assert_eq!(dci_count(None, 132), 132);
        assert_eq!(dci_count(None, 1000), AUTO_DCI_CAP);
        assert_eq!(dci_count(None, 0), 1);
    }

    #[test]
    fn targets_round_trip_and_malformed_records_name_the_pe() {
        let t = DcTargets { lid: 7, key: 0x1122_3344_5566_7788, dcts: vec![0xd00, 0xd01, 0xabcdef] };
        assert_eq!(DcTargets::decode(3, &t.encode()).unwrap(), t);
        let e = DcTargets::decode(3, &t.encode()[..13]).unwrap_err().to_string();
        assert!(e.contains("PE 3") && e.contains("DC target record"), "{e}");
        let a = DcTargets::model(0, 2);
        let b = DcTargets::model(1, 2);
        assert_eq!((a.lid, b.lid, a.dcts.clone()), (1, 2, vec![MODEL_DCT_BASE, MODEL_DCT_BASE + 1]));
        assert_eq!(a.dcts, b.dcts, "DCT numbers repeat across NICs; (LID, number) is unique");
        assert_eq!(owner(&[a.clone(), b.clone()], 2, MODEL_DCT_BASE + 1), Some(1));
        assert_eq!(owner(&[a, b], 3, MODEL_DCT_BASE), None);
    }

    /// PE 0 of two, whose peer answers `theirs`.
    struct Pair(Vec<u8>);
    impl Bootstrap for Pair {
        fn rank(&self) -> usize {
            0
        }
        fn size(&self) -> usize {
            2
        }
        fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
            Ok(vec![mine.to_vec(), self.0.clone()])
        }
        fn allgather_fds(&self, _: &[std::os::fd::RawFd]) -> Result<Vec<Vec<std::os::fd::OwnedFd>>> {
            unreachable!()
        }
        fn name(&self) -> &'static str {
            "pair"
        }
    }

    #[test]
    fn exchange_gathers_targets_and_names_a_transport_or_count_mismatch() {
        let (a, b) = (DcTargets::model(0, 2), DcTargets::model(1, 2));
        let rec = |t: &DcTargets| [&[1u8][..], &t.encode()].concat();
        let all = exchange(&Pair(rec(&b)), Some(&a)).unwrap().unwrap();
        assert_eq!(all, vec![a.clone(), b]);
        assert_eq!(exchange(&Pair(vec![0]), None).unwrap(), None);
        let e = exchange(&Pair(vec![0]), Some(&a)).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_NUM_RC_PER_PE differs between PEs (PE 0: 0 (DC), PE 1: 1 or more (RC))"), "{e}");
        let e = exchange(&Pair(rec(&DcTargets::model(1, 3))), Some(&a)).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_NUM_DCT differs between PEs (PE 0: 2, PE 1: 3)"), "{e}");
    }

    #[test]
    fn address_vector_image_is_big_endian_with_the_extended_bit_only_when_asked() {
        let (av, n) = av_image(0x0102_0304_0506_0708, 0xabcdef, 0x1234, false);
        assert_eq!(n, 16);
        assert_eq!(&av[..16], &[1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0xab, 0xcd, 0xef, 0, 0, 0x12, 0x34]);
        let (av, n) = av_image(1, 0xabcdef, 0x1234, true);
        assert_eq!((n, av[8]), (48, 0x80));
    }
}
