//! Doorbells: where the device posting path rings the NIC ([`DoorbellPath`]), the doorbell
//! word itself ([`doorbell_word`]), and [`CpuRinger`], the CPU thread that rings for GPU
//! threads when the NIC's doorbell page cannot be mapped into the GPU.
//!
//! Ran in CI: the decision and its wording, the doorbell word, and the ringer against plain
//! host memory standing in for the UAR page. NEVER MET HARDWARE: a ringer storing to a real UAR.

use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Where the doorbell of the device posting path is rung.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DoorbellPath {
    /// The UAR page is mapped into the GPU: threads ring it themselves.
    Gpu,
    /// The driver refused that mapping: the GPU advances a counter, a CPU thread rings.
    Cpu { reason: String },
}

impl DoorbellPath {
    /// Decides from the outcome of mapping the UAR into the GPU (`Err` carries the driver's
    /// answer), in words rshmem-info prints.
    pub fn from_mapping(result: std::result::Result<(), String>) -> DoorbellPath {
        match result {
            Ok(()) => DoorbellPath::Gpu,
            Err(why) => DoorbellPath::Cpu {
                reason: format!(
                    "the NIC doorbell page could not be mapped into the GPU ({why}); GPU threads hand doorbells \
                     to a CPU thread instead (set the NVIDIA driver option PeerMappingOverride=1 to allow the mapping)"
                ),
            },
        }
    }
    pub fn describe(&self) -> String {
        match self {
            DoorbellPath::Gpu => "GPU threads ring the NIC doorbell directly (UAR page mapped into the GPU)".into(),
            DoorbellPath::Cpu { reason } => reason.clone(),
        }
    }
}

/// The 8 bytes an mlx5 doorbell store writes: the first 8 bytes of a ctrl segment with the
/// producer index `pi` (mod 2^16) in its WQE-index field and `qpn` in its QP field (big-endian
/// words `pi << 8`, `qpn << 8`), as the `u64` a little-endian 8-byte store of them is.
pub fn doorbell_word(pi: u64, qpn: u32) -> u64 {
    let mut b = [0u8; 8];
    b[0..4].copy_from_slice(&(((pi & 0xffff) as u32) << 8).to_be_bytes());
    b[4..8].copy_from_slice(&(qpn << 8).to_be_bytes());
    u64::from_le_bytes(b)
}

/// One send queue a [`CpuRinger`] rings for.
#[derive(Clone, Copy, Debug)]
pub struct RingTarget {
    /// Address of the 64-bit producer counter the device advances (its `posted_head`).
    pub posted: u64,
    /// Address of the send queue's doorbell record (two big-endian words; `[1]` = send counter).
    pub dbrec: u64,
    pub qpn: u32,
}

/// A CPU thread that rings doorbells for the device: it watches each target's producer counter
/// and, when it moved, writes the doorbell record and stores the doorbell word to the UAR
/// register. Stops (and joins) on drop.
pub struct CpuRinger {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl CpuRinger {
    /// Starts ringing for `targets` through the doorbell register at `reg_addr`.
    ///
    /// # Safety
    /// Every target's `posted` and `dbrec` and `reg_addr` must stay valid, host-addressable and
    /// 8-byte (counters, register) or 4-byte (record) aligned until the ringer is dropped.
    pub unsafe fn start(targets: Vec<RingTarget>, reg_addr: u64) -> CpuRinger {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // What was rung before the ringer started (e.g. by a warm-up) is not rung again.
        // SAFETY: here and in the thread: valid until the ringer is dropped (the contract).
        let mut last: Vec<u64> =
            targets.iter().map(|t| unsafe { AtomicU64::from_ptr(t.posted as *mut u64) }.load(Ordering::Acquire)).collect();
        let thread = std::thread::Builder::new()
            .name("rshmem-doorbell".into())
            .spawn(move || {
                let mut idle = 0u32;
                while !flag.load(Ordering::Relaxed) {
                    let mut rang = false;
                    for (t, seen) in targets.iter().zip(last.iter_mut()) {
                        // SAFETY: as above.
                        rang |= unsafe { ring_if_moved(t, seen, reg_addr) };
                    }
                    idle = if rang { 0 } else { idle.saturating_add(1) };
                    match idle {
                        0..=1000 => std::hint::spin_loop(),
                        1001..=2000 => std::thread::yield_now(),
                        _ => std::thread::sleep(Duration::from_micros(50)),
                    }
                }
            })
            .expect("spawning the doorbell thread");
        CpuRinger { stop, thread: Some(thread) }
    }
}

impl Drop for CpuRinger {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Rings `t` if its producer counter moved past `seen`.
///
/// # Safety
/// As for [`CpuRinger::start`].
unsafe fn ring_if_moved(t: &RingTarget, seen: &mut u64, reg_addr: u64) -> bool {
    // SAFETY: an aligned 64-bit counter the device updates with system-scope stores.
    let posted = unsafe { AtomicU64::from_ptr(t.posted as *mut u64) }.load(Ordering::Acquire);
    if posted == *seen {
        return false;
    }
    // SAFETY: the send counter word of an aligned doorbell record.
    unsafe { AtomicU32::from_ptr((t.dbrec + 4) as *mut u32) }.store(((posted & 0xffff) as u32).to_be(), Ordering::Release);
    // The record (and the WQEs the device published before advancing the counter) must reach
    // memory before the NIC sees the doorbell.
    fence(Ordering::SeqCst);
    // SAFETY: the doorbell register (or, in tests, an aligned word); one 8-byte store rings.
    unsafe { std::ptr::write_volatile(reg_addr as *mut u64, doorbell_word(posted, t.qpn)) };
    *seen = posted;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorbell_fallback_says_why_in_plain_words() {
        assert_eq!(DoorbellPath::from_mapping(Ok(())), DoorbellPath::Gpu);
        let d = DoorbellPath::from_mapping(Err("cudaHostRegister: operation not supported".into()));
        let s = d.describe();
        assert!(s.contains("CPU thread") && s.contains("operation not supported") && s.contains("PeerMappingOverride"), "{s}");
    }

    #[test]
    fn doorbell_word_is_a_ctrl_segments_first_eight_bytes() {
        let w = doorbell_word(0x1_2345, 0xab_cdef);
        // Index 0x2345 (mod 2^16) << 8, then qpn << 8, each big-endian, in memory order.
        assert_eq!(w.to_le_bytes(), [0x00, 0x23, 0x45, 0x00, 0xab, 0xcd, 0xef, 0x00]);
    }

    #[test]
    fn ringer_writes_the_record_then_the_doorbell_when_the_counter_moves() {
        let posted = Box::new(AtomicU64::new(0));
        let dbrec = Box::new([AtomicU32::new(0), AtomicU32::new(0)]);
        let uar = Box::new(AtomicU64::new(0));
        let t = RingTarget { posted: posted.as_ptr() as u64, dbrec: dbrec.as_ptr() as u64, qpn: 0x42 };
        // SAFETY: the boxes outlive the ringer (dropped at the end of the test, after it).
        let ringer = unsafe { CpuRinger::start(vec![t], uar.as_ptr() as u64) };
        posted.store(0x1_0003, Ordering::Release);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while uar.load(Ordering::Acquire) == 0 {
            assert!(std::time::Instant::now() < deadline, "the ringer never rang");
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(ringer);
        assert_eq!(u32::from_be(dbrec[1].load(Ordering::Acquire)), 3);
        assert_eq!(uar.load(Ordering::Acquire), doorbell_word(0x1_0003, 0x42));
        assert_eq!(dbrec[0].load(Ordering::Acquire), 0, "the receive counter is not ours");
    }
}
