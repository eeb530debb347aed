//! The fabric transport: PEs on other hosts, over libfabric (the layer in `crate::fabric`).
//!
//! At init (collective, only in jobs that span hosts) every PE opens one endpoint, registers
//! its whole symmetric heap and its symmetric static data once, and sends its endpoint address
//! and the two regions' keys to all PEs in one allgather; peers are inserted into the address
//! vector in PE order. A PE whose endpoint cannot be opened still takes part in the exchange
//! (with an empty record), so every PE fails with a message instead of hanging.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{AmoType, Segment, Transport};
use crate::bootstrap::Bootstrap;
use crate::error::{Error, ErrorKind, Result};
use crate::fabric::{AtomicOp, AtomicValue, Fabric, Peer, Region, RemoteRegion, Settings};

/// What one PE tells the others.
struct Record {
    address: Vec<u8>,
    heap: RemoteRegion,
    statics: Option<RemoteRegion>,
}

impl Record {
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = (self.address.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(&self.address);
        b.extend_from_slice(&self.heap.to_bytes());
        if let Some(s) = self.statics {
            b.extend_from_slice(&s.to_bytes());
        }
        b
    }

    fn from_bytes(b: &[u8]) -> Option<Record> {
        let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let address = b.get(4..4usize.checked_add(n)?)?.to_vec();
        let rest = &b[4 + n..];
        let heap = RemoteRegion::from_bytes(rest.get(..RemoteRegion::BYTES)?)?;
        let statics = match rest.len() - RemoteRegion::BYTES {
            0 => None,
            RemoteRegion::BYTES => Some(RemoteRegion::from_bytes(&rest[RemoteRegion::BYTES..])?),
            _ => return None,
        };
        Some(Record { address, heap, statics })
    }
}

pub struct FabricTransport {
    fabric: Fabric,
    /// Per PE (in PE order, this PE included): its endpoint, heap and static data.
    peers: Vec<Peer>,
    heaps: Vec<RemoteRegion>,
    statics: Vec<Option<RemoteRegion>>,
    /// Our own registrations, kept for as long as peers may use them.
    regions: Vec<Region>,
    /// Per PE: injected writes or atomics went there since the last quiet. The provider counts
    /// an injected operation complete when it is sent, not when the peer has applied it, so
    /// quiet follows them with one read from that PE (see `quiet`).
    unflushed: Vec<AtomicBool>,
    /// Per PE: some operation went there since the last quiet (so a failure that quiet or
    /// fence reads can name the PEs it may concern).
    outstanding: Vec<AtomicBool>,
    /// Per PE: its host name, for messages.
    hosts: Vec<String>,
}

impl FabricTransport {
    /// Collective: opens the endpoint, registers `heap` and `statics` (this PE's own memory,
    /// which must outlive the transport) and exchanges addresses and keys with every PE.
    pub fn start(boot: &dyn Bootstrap, heap: (*mut u8, usize), statics: Option<(*mut u8, usize)>) -> Result<FabricTransport> {
        let opened = Settings::from_env().and_then(|s| Fabric::open(&s)).and_then(needs_atomics).and_then(|f| {
            // SAFETY: the caller's heap and static data outlive this transport (State drops the
            // transport before it unmaps them), and are mapped (backed on first touch).
            let mut regions = vec![unsafe { f.register(heap.0, heap.1) }?];
            if let Some((p, n)) = statics {
                // SAFETY: as above.
                regions.push(unsafe { f.register(p, n) }?);
            }
            let record = Record { address: f.address()?, heap: regions[0].remote(), statics: regions.get(1).map(Region::remote) };
            Ok((f, regions, record))
        });
        let mine = opened.as_ref().map(|(_, _, r)| r.to_bytes()).unwrap_or_default();
        let all = boot.allgather(&mine)?;
        let (fabric, regions, _) = opened?;
        let mut records = Vec::with_capacity(all.len());
        for (pe, b) in all.iter().enumerate() {
            if b.is_empty() {
                return Err(Error::bootstrap(format!("PE {pe} could not open its fabric endpoint (its own message says why)")));
            }
            records.push(
                Record::from_bytes(b)
                    .ok_or_else(|| Error::bootstrap(format!("PE {pe} sent a malformed fabric record ({} bytes)", b.len())))?,
            );
        }
        let addresses: Vec<Vec<u8>> = records.iter().map(|r| r.address.clone()).collect();
        let peers = fabric.insert_peers(&addresses)?;
        Ok(FabricTransport {
            heaps: records.iter().map(|r| r.heap).collect(),
            statics: records.iter().map(|r| r.statics).collect(),
            unflushed: (0..peers.len()).map(|_| AtomicBool::new(false)).collect(),
            outstanding: (0..peers.len()).map(|_| AtomicBool::new(false)).collect(),
            hosts: Vec::new(),
            peers,
            fabric,
            regions,
        })
    }

    /// Names each PE's host in messages (`hosts`, in PE order).
    pub fn with_hosts(mut self, hosts: Vec<String>) -> FabricTransport {
        self.hosts = hosts;
        self
    }

    /// A failure of the fabric layer, left for the C boundary to name (the layer names its
    /// errors after the operation it ran, not the routine the user called); one of the
    /// provider (not a refused argument) names `pes` in its message: "fabric: toward PE 3 on
    /// host b: ...".
    #[cold]
    fn toward(&self, e: Error, pes: &[usize]) -> Error {
        let mut e = e.unnamed();
        if e.kind != ErrorKind::System || pes.is_empty() {
            return e;
        }
        let name = |pe: usize| match self.hosts.get(pe) {
            Some(h) => format!("PE {pe} on host {h}"),
            None => format!("PE {pe}"),
        };
        let mut names: Vec<String> = pes.iter().take(4).map(|&pe| name(pe)).collect();
        if pes.len() > 4 {
            names.push(format!("{} more PEs", pes.len() - 4));
        }
        let rest = e.message.strip_prefix("fabric: ").unwrap_or(&e.message).to_string();
        e.message = format!("fabric: toward {}: {rest}", names.join(", "));
        e
    }

    /// Marks an operation to `pe` as outstanding until the next quiet; passes `r` through,
    /// naming `pe` in a failure.
    fn to_pe<T>(&self, pe: usize, r: Result<T>) -> Result<T> {
        self.outstanding[pe].store(true, Ordering::Release);
        r.map_err(|e| self.toward(e, &[pe]))
    }

    /// The PEs some operation went to since the last quiet.
    fn outstanding_pes(&self) -> Vec<usize> {
        self.outstanding.iter().enumerate().filter(|(_, f)| f.load(Ordering::Acquire)).map(|(pe, _)| pe).collect()
    }

    /// This PE's registration holding a local buffer (symmetric memory), if any.
    fn own_region(&self, p: *const u8, len: usize) -> Option<&Region> {
        self.regions.iter().find(|r| r.contains(p as usize, len))
    }

    fn region(&self, pe: usize, seg: Segment) -> Result<&RemoteRegion> {
        match seg {
            Segment::Heap => Ok(&self.heaps[pe]),
            Segment::Statics => self.statics[pe]
                .as_ref()
                .ok_or_else(|| Error::invalid_value(format!("PE {pe} has no symmetric static data (RSHMEM_SYMMETRIC_STATICS=0 there?)"))),
        }
    }
}

/// Every AMO of a multi-host job goes through the provider (docs/ARCHITECTURE.md, "AMO
/// atomicity"), so a provider without atomics cannot run one: say so at init.
fn needs_atomics(f: Fabric) -> Result<Fabric> {
    if f.info().atomics {
        return Ok(f);
    }
    Err(Error::new(
        ErrorKind::Unsupported,
        "shmem_init",
        format!(
            "fabric provider {} has no atomics, which OpenSHMEM AMOs, locks and signals across hosts need; \
             choose a provider that has them with FI_PROVIDER (e.g. FI_PROVIDER=tcp, which runs with ofi_rxm, or verbs)",
            f.info().provider
        ),
    ))
}

/// Element types as u64 bit patterns (floats by their bits, so NaN payloads survive).
trait Bits: AtomicValue {
    fn from_bits(b: u64) -> Self;
    fn to_bits(self) -> u64;
}

macro_rules! bits {
    ($($t:ty: $from:expr, $to:expr;)*) => {$(
        impl Bits for $t {
            fn from_bits(b: u64) -> $t {
                ($from)(b)
            }
            fn to_bits(self) -> u64 {
                ($to)(self)
            }
        }
    )*};
}
bits! {
    i32: |b: u64| b as u32 as i32, |v: i32| v as u32 as u64;
    u32: |b: u64| b as u32, |v: u32| v as u64;
    i64: |b: u64| b as i64, |v: i64| v as u64;
    u64: |b: u64| b, |v: u64| v;
    f32: |b: u64| f32::from_bits(b as u32), |v: f32| v.to_bits() as u64;
    f64: f64::from_bits, f64::to_bits;
}

/// Runs `$body` with `$T` bound to the Rust type of an AmoType.
macro_rules! typed {
    ($ty:expr, $T:ident => $body:expr) => {
        typed!(@arms $ty, $T, $body; I32 i32, U32 u32, I64 i64, U64 u64, F32 f32, F64 f64)
    };
    (@arms $ty:expr, $T:ident, $body:expr; $($kind:ident $t:ty),*) => {
        match $ty {
            $(AmoType::$kind => {
                type $T = $t;
                $body
            })*
        }
    };
}

impl Transport for FabricTransport {
    fn describe(&self) -> String {
        format!("fabric {}", self.fabric.info().describe())
    }

    fn put(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        let r = self.region(pe, seg)?;
        let info = self.fabric.info();
        // Injected, or staged on a provider whose writes complete when sent (fabric/stage.rs).
        if src.len() <= info.inject_size || !info.delivery_complete {
            self.unflushed[pe].store(true, Ordering::Release);
        }
        self.to_pe(pe, self.fabric.put(self.peers[pe], src, None, r, off))
    }

    /// Not marked for quiet's read-back: the receiver learns of the message by seeing it.
    fn put_message(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        let r = self.region(pe, seg)?;
        self.to_pe(pe, self.fabric.put(self.peers[pe], src, None, r, off))
    }

    fn get(&self, pe: usize, seg: Segment, off: usize, dst: &mut [u8]) -> Result<()> {
        let r = self.region(pe, seg)?;
        let got = self.fabric.get(self.peers[pe], dst, None, r, off);
        got.map_err(|e| self.toward(e, &[pe]))
    }

    unsafe fn put_nbi(&self, pe: usize, seg: Segment, off: usize, src: *const u8, len: usize) -> Result<()> {
        let r = self.region(pe, seg)?;
        let local = self.own_region(src, len);
        // SAFETY: the caller keeps `src` valid and unchanged until quiet (the trait's contract).
        self.to_pe(pe, unsafe { self.fabric.put_nbi(self.peers[pe], src, len, local, r, off) })
    }

    unsafe fn get_nbi(&self, pe: usize, seg: Segment, off: usize, dst: *mut u8, len: usize) -> Result<()> {
        let r = self.region(pe, seg)?;
        let local = self.own_region(dst, len);
        // SAFETY: the caller leaves `dst` alone until quiet (the trait's contract).
        self.to_pe(pe, unsafe { self.fabric.get_nbi(self.peers[pe], dst, len, local, r, off) })
    }

    fn amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<()> {
        let r = self.region(pe, seg)?;
        self.unflushed[pe].store(true, Ordering::Release); // always injected
        self.to_pe(pe, typed!(ty, T => self.fabric.atomic(self.peers[pe], op, <T as Bits>::from_bits(value), r, off)))
    }

    fn fetch_amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<u64> {
        let r = self.region(pe, seg)?;
        typed!(ty, T => self.fabric.fetch_atomic(self.peers[pe], op, <T as Bits>::from_bits(value), r, off).map(<T as Bits>::to_bits))
            .map_err(|e| self.toward(e, &[pe]))
    }

    fn compare_swap(&self, pe: usize, seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64) -> Result<u64> {
        let r = self.region(pe, seg)?;
        typed!(ty, T => self.fabric.compare_swap(self.peers[pe], <T as Bits>::from_bits(cond), <T as Bits>::from_bits(value), r, off).map(<T as Bits>::to_bits))
            .map_err(|e| self.toward(e, &[pe]))
    }

    fn fence(&self) -> Result<()> {
        self.fabric.fence().map_err(|e| self.toward(e, &self.outstanding_pes()))
    }

    fn progress(&self, block: std::time::Duration) {
        self.fabric.progress(block)
    }

    fn pause(&self, max: std::time::Duration) {
        self.fabric.pause(max)
    }

    /// Completes everything posted, then makes the injected writes and atomics visible: a read
    /// from each PE that got some returns only after them (one connection per peer, processed
    /// in order), so a third PE told afterwards sees their effect. The reads to all such PEs
    /// go out at once and are waited for together: one round trip, not one per PE.
    /// A failure read meanwhile names the PEs operations went to since the last quiet.
    fn quiet(&self) -> Result<()> {
        let probes: Vec<(Peer, &RemoteRegion)> = (self.unflushed.iter().enumerate())
            .filter(|(_, flag)| flag.swap(false, Ordering::AcqRel))
            .map(|(pe, _)| (self.peers[pe], &self.heaps[pe]))
            .collect();
        self.fabric.quiet_reading(&probes).map_err(|e| self.toward(e, &self.outstanding_pes()))?;
        for flag in &self.outstanding {
            flag.store(false, Ordering::Release);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_reject_garbage() {
        let heap = RemoteRegion { base: 0x7f00_0000_0000, key: 42, len: 1 << 30 };
        let statics = Some(RemoteRegion { base: 0x40_0000, key: 43, len: 4096 });
        for s in [None, statics] {
            let r = Record { address: vec![1, 2, 3, 4, 5], heap, statics: s };
            let back = Record::from_bytes(&r.to_bytes()).unwrap();
            assert_eq!((back.address, back.heap, back.statics), (r.address.clone(), heap, s));
        }
        let b = Record { address: vec![9; 16], heap, statics }.to_bytes();
        assert!(Record::from_bytes(&b[..b.len() - 1]).is_none());
        assert!(Record::from_bytes(&[0xff, 0xff, 0xff, 0xff, 1]).is_none(), "address length past the end");
        assert!(Record::from_bytes(&[]).is_none());
    }

    #[test]
    fn bits_round_trip() {
        assert_eq!(i32::from_bits((-5i32).to_bits()), -5);
        assert_eq!(f64::from_bits(Bits::to_bits(-1.5f64)), -1.5);
        assert_eq!(<f32 as Bits>::from_bits(Bits::to_bits(2.25f32)), 2.25);
    }
}
