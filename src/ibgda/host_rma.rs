//! Host-initiated RMA and AMOs over IBGDA: what `nvshmem_putmem`, `nvshmem_*_atomic_*` and the
//! on-stream forms do toward a PE whose GPU memory's route is `Ibgda`. The host never posts on
//! the queues GPU threads use (a kernel may be posting there at the same time); it owns one RC
//! QP per remote PE of its own, its queues in host memory, served by the same NIC, and posts on
//! it with the protocol of `hw/post.rs` (`HostPost`). Every operation is signaled and waited
//! for, so it is complete when the call returns and host quiet has nothing to add.
//!
//! Local data goes through a registered staging buffer (the caller's buffer may be host or
//! device memory the NIC cannot name): a put copies into it and posts RDMA WRITEs from it, a
//! get posts RDMA READs into it and copies out, an AMO's old value lands in it. AMOs are
//! encoded as the device encodes them (device/ibgda/ibgda_post.h `post_amo`): fetch-add,
//! compare-swap and their masked forms, so they stay atomic with the GPU threads' AMOs on the
//! same words (both are executed by the NIC).
//!
//! Runs on the software HCA model (`RSHMEM_IBGDA_NIC=model`); a ConnectX would need host QPs
//! created through DevX as the device's are (not done: see `Ibgda::host`).

use std::sync::Mutex;
use std::time::Duration;

use crate::cuda::kernels::AmoOp;
use crate::error::{Error, ErrorKind, Result};

use super::abi::QpState;
use super::hw::post::{HostIo, HostPost, Target};
use super::mlx5::*;
use super::model::host::{new_queues, QpParams, QueueMem};
use super::model::{Fabric, Nic};

/// How long one host operation may wait for its completion.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The key of PE `pe`'s host staging buffer.
pub fn stage_key(pe: usize) -> u32 {
    0x0030_0000 + pe as u32
}

/// Copies `len` bytes between two addresses the caller names (host or device memory), complete
/// on return: how data gets into and out of the staging buffer.
pub type Copy<'a> = &'a dyn Fn(u64, u64, usize) -> Result<()>;

/// A buffer of host memory (at least 8 bytes) the NIC reads from and writes into.
pub struct Stage {
    pub addr: u64,
    pub len: usize,
    pub key: u32,
    /// Keeps the memory alive (pinned host memory on the GPU, plain memory in tests).
    pub owner: Box<dyn std::any::Any + Send + Sync>,
}

/// One remote PE's heap as the NIC names it.
#[derive(Clone, Copy, Debug)]
pub struct RemoteHeap {
    pub base: u64,
    pub rkey: u32,
}

struct Qp {
    q: QpState,
    _mem: QueueMem,
}

/// The host's own queue pairs toward the PEs reached through IBGDA.
pub struct HostQueues {
    qps: Mutex<Vec<Option<Qp>>>,
    /// One user at a time (copy in, post, wait, copy out); taken before `qps`.
    stage: Mutex<Stage>,
    heaps: Vec<RemoteHeap>,
    me: usize,
}

/// What a WQE does, with its segments after the remote address.
struct Wqe {
    opcode: u8,
    opmod: u8,
    payload: Vec<u8>,
}

/// A data segment naming `len` bytes of local memory at `addr` under `key`.
fn data_seg(len: u32, key: u32, addr: u64) -> [u8; 16] {
    let mut d = [0u8; 16];
    d[0..4].copy_from_slice(&len.to_be_bytes());
    d[4..8].copy_from_slice(&key.to_be_bytes());
    d[8..16].copy_from_slice(&addr.to_be_bytes());
    d
}

/// The atomic WQE for `op` on a `size`-byte word (`a` the value, or for compare-swap the
/// comparand with `b` the new value), its old value landing at `land`: the encoding of the
/// device's `post_amo`.
fn amo_wqe(op: AmoOp, size: usize, a: u64, b: u64, land: [u8; 16]) -> Wqe {
    let ones = if size == 8 { u64::MAX } else { 0xffff_ffff };
    let (value, compare) = match op {
        AmoOp::CompareSwap => (b & ones, a & ones),
        _ => (a & ones, 0),
    };
    // (swap, compare, swap_mask, compare_mask) of a masked compare-swap.
    let masked_cs = match op {
        AmoOp::Swap | AmoOp::Set => Some((value, 0, ones, 0)),
        AmoOp::And => Some((0, 0, !value & ones, 0)),
        AmoOp::Or => Some((value, 0, value, 0)),
        AmoOp::CompareSwap if size == 4 => Some((value, compare, ones, ones)),
        _ => None,
    };
    let opmod = if size == 8 { OPMOD_EXT_AMO_8B } else { OPMOD_EXT_AMO_4B };
    let fields = |v: &[u64]| -> Vec<u8> {
        let mut out: Vec<u8> = if size == 8 {
            v.iter().flat_map(|x| x.to_be_bytes()).collect()
        } else {
            v.iter().flat_map(|x| (*x as u32).to_be_bytes()).collect()
        };
        out.resize(out.len().next_multiple_of(16), 0);
        out
    };
    let (opcode, opmod, mut payload) = match (op, masked_cs) {
        (_, Some((s, c, sm, cm))) => (OPCODE_ATOMIC_MASKED_CS, opmod, fields(&[s, c, sm, cm])),
        (AmoOp::CompareSwap, None) => (OPCODE_ATOMIC_CS, 0, fields(&[value, compare])),
        (AmoOp::Xor, None) => (OPCODE_ATOMIC_MASKED_FA, opmod, fields(&[value, ones])),
        // Add and Fetch (an add of 0).
        (_, None) => {
            let add = if op == AmoOp::Fetch { 0 } else { value };
            if size == 8 {
                (OPCODE_ATOMIC_FA, 0, fields(&[add, 0]))
            } else {
                (OPCODE_ATOMIC_MASKED_FA, opmod, fields(&[add, 0]))
            }
        }
    };
    payload.extend_from_slice(&land);
    Wqe { opcode, opmod, payload }
}

impl HostQueues {
    /// One host QP toward each PE `remote` names, on the model NIC `nic` of PE `me`; `stage`
    /// is registered with `fabric` under its key. `heaps[pe]`: PE `pe`'s heap as the NIC
    /// names it. Each QP is warmed up (one zero-byte write, waited for).
    ///
    /// # Safety
    /// `nic` must be dropped before the returned value (it serves queues this value owns).
    pub unsafe fn on_model(
        me: usize,
        remote: &[bool],
        heaps: Vec<RemoteHeap>,
        nic: &Nic,
        fabric: &Fabric,
        stage: Stage,
    ) -> Result<HostQueues> {
        fabric.register(me as u32, stage.key, stage.addr, stage.len as u64);
        let mut qps = Vec::with_capacity(remote.len());
        for (pe, far) in remote.iter().enumerate() {
            if !far {
                qps.push(None);
                continue;
            }
            let params = QpParams { qpn: 0x10_0000 + pe as u32, peer_pe: pe as u32, log_nwqes: 6, signal_every: 1, ..Default::default() };
            let (q, mem) = new_queues(params);
            // SAFETY: the queues in `mem` live in this value, which the caller drops after `nic`.
            unsafe { nic.attach_config(q, true) };
            qps.push(Some(Qp { q, _mem: mem }));
        }
        let host = HostQueues { qps: Mutex::new(qps), stage: Mutex::new(stage), heaps, me };
        for pe in (0..remote.len()).filter(|p| remote[*p]) {
            host.with_qp(pe, |hp, me| {
                hp.warm_up(&Target { raddr: host.heaps[pe].base, rkey: host.heaps[pe].rkey, av: None }, me, TIMEOUT)
            })?;
        }
        Ok(host)
    }

    /// Runs `f` on the host poster of PE `pe`'s QP (one host operation at a time).
    fn with_qp<R>(&self, pe: usize, f: impl FnOnce(&mut HostPost<'_>, u32) -> Result<R>) -> Result<R> {
        let mut qps = self.qps.lock().unwrap_or_else(|e| e.into_inner());
        let Some(Some(qp)) = qps.get_mut(pe) else {
            return Err(Error::of(ErrorKind::Internal, format!("PE {} has no host queue toward PE {pe} (not an IBGDA peer)", self.me)));
        };
        // SAFETY: the QP's queues are host memory owned by `qp` (new_queues), alive here.
        let io = unsafe { HostIo::new() };
        let ring = qp.q.bf_reg;
        f(&mut HostPost { queues: &io, records: &io, q: &mut qp.q, ring }, self.me as u32)
    }

    fn stage(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.stage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Posts `w` toward `off` in PE `pe`'s heap and waits for its completion.
    fn run(&self, pe: usize, off: usize, w: &Wqe, what: &str) -> Result<()> {
        let heap = self.heaps[pe];
        let t = Target { raddr: heap.base + off as u64, rkey: heap.rkey, av: None };
        self.with_qp(pe, |hp, me| hp.run_wqe(w.opcode, w.opmod, &t, &w.payload, TIMEOUT, me, what))
    }

    /// Writes `len` bytes at `src` to offset `off` of PE `pe`'s heap, through the staging
    /// buffer (`copy` fills it), one RDMA WRITE per staging buffer's worth.
    pub fn put(&self, pe: usize, off: usize, src: u64, len: usize, copy: Copy) -> Result<()> {
        let stage = self.stage();
        for at in (0..len).step_by(stage.len) {
            let n = stage.len.min(len - at);
            copy(stage.addr, src + at as u64, n)?;
            let w = Wqe { opcode: OPCODE_RDMA_WRITE, opmod: 0, payload: data_seg(n as u32, stage.key, stage.addr).to_vec() };
            self.run(pe, off + at, &w, &format!("an RDMA WRITE of {n} bytes to PE {pe}"))?;
        }
        Ok(())
    }

    /// Reads `len` bytes at offset `off` of PE `pe`'s heap into `dst`, through the staging
    /// buffer (`copy` empties it), one RDMA READ per staging buffer's worth.
    pub fn get(&self, pe: usize, off: usize, dst: u64, len: usize, copy: Copy) -> Result<()> {
        let stage = self.stage();
        for at in (0..len).step_by(stage.len) {
            let n = stage.len.min(len - at);
            let w = Wqe { opcode: OPCODE_RDMA_READ, opmod: 0, payload: data_seg(n as u32, stage.key, stage.addr).to_vec() };
            self.run(pe, off + at, &w, &format!("an RDMA READ of {n} bytes from PE {pe}"))?;
            copy(dst + at as u64, stage.addr, n)?;
        }
        Ok(())
    }

    /// The atomic `op` on the `size`-byte word (4 or 8, aligned) at offset `off` of PE `pe`'s
    /// heap, executed by the NIC; the old value (for compare-swap `a` is the comparand, `b`
    /// the new value).
    #[allow(clippy::too_many_arguments)]
    pub fn amo(&self, pe: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        let stage = self.stage();
        let w = amo_wqe(op, size, a, b, data_seg(size as u32, stage.key, stage.addr));
        self.run(pe, off, &w, &format!("an atomic ({op:?}) on PE {pe}"))?;
        let mut old = [0u8; 8];
        // SAFETY: the staging buffer is host memory of at least 8 bytes (`Stage`), written by
        // the completion waited for above; the guard keeps other users out.
        unsafe { std::ptr::copy_nonoverlapping(stage.addr as *const u8, old.as_mut_ptr(), size) };
        Ok(u64::from_le_bytes(old))
    }
}

/// Two PEs on the software HCA model in host memory: PE 0 (this one) reaches PE 1's heap through
/// its host queue. For the tests here and in transport/ibgda.rs.
#[cfg(test)]
pub mod testing {
    use super::*;
    use crate::ibgda::gpu::heap_key;
    use crate::ibgda::model::host::AlignedBuf;
    use crate::ibgda::model::{HostMemory, ModelConfig};
    use std::sync::Arc;

    pub const HEAP: usize = 4096;

    /// Fields drop in order: the NIC stops before the queues and memory it uses go.
    pub struct Pair {
        pub nic: Nic,
        pub queues: HostQueues,
        pub heap: AlignedBuf,
    }

    impl Pair {
        /// `stage` bytes of staging buffer (small ones make transfers take several WQEs).
        pub fn new(stage: usize) -> Pair {
            let heap = AlignedBuf::new(HEAP);
            let fabric = Fabric::new();
            fabric.register(1, heap_key(1), heap.addr(), HEAP as u64);
            let nic = Nic::start(0, fabric.clone(), Arc::new(HostMemory), ModelConfig::default());
            let buf = AlignedBuf::new(stage);
            let stage = Stage { addr: buf.addr(), len: stage, key: stage_key(0), owner: Box::new(buf) };
            let heaps = vec![RemoteHeap { base: 0, rkey: 0 }, RemoteHeap { base: heap.addr(), rkey: heap_key(1) }];
            // SAFETY: `nic` is declared before `queues` in Pair, so it drops first.
            let queues = unsafe { HostQueues::on_model(0, &[false, true], heaps, &nic, &fabric, stage) }.unwrap();
            Pair { nic, queues, heap }
        }

        /// PE 1's heap bytes `off..off + n`.
        pub fn peek(&self, off: usize, n: usize) -> Vec<u8> {
            // SAFETY: inside the heap; the NIC's writes completed before the operation returned.
            (off..off + n).map(|i| unsafe { std::ptr::read_volatile((self.heap.addr() as *const u8).add(i)) }).collect()
        }

        pub fn wqes(&self) -> u64 {
            self.nic.stats().wqes.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    /// Host memory to host memory, as `LocalGpu::copy_now` does it on the GPU.
    pub fn memcpy(dst: u64, src: u64, n: usize) -> Result<()> {
        // SAFETY: the tests pass live buffers of `n` bytes on both sides.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, n) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{self, memcpy, Pair};
    use super::*;

    /// A put larger than the staging buffer arrives whole, in several RDMA WRITEs; a get
    /// brings it back.
    #[test]
    fn puts_and_gets_move_the_data_through_the_nic() {
        let p = Pair::new(64);
        let before = p.wqes();
        let data: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
        p.queues.put(1, 64, data.as_ptr() as u64, data.len(), &memcpy).unwrap();
        assert_eq!(p.peek(64, 200), data);
        assert_eq!(p.peek(60, 4), [0; 4], "nothing before the target");
        assert_eq!(p.peek(264, 4), [0; 4], "nothing after it");
        assert_eq!(p.wqes() - before, 4, "200 bytes through a 64-byte stage: 4 WRITEs");
        let mut back = vec![0u8; 200];
        p.queues.get(1, 64, back.as_mut_ptr() as u64, back.len(), &memcpy).unwrap();
        assert_eq!(back, data);
    }

    /// Every AMO the host issues changes the word as OpenSHMEM says and returns the old value,
    /// on 8- and 4-byte words; a 4-byte AMO leaves its neighbour alone.
    #[test]
    fn atomics_change_the_words_and_return_the_old_values() {
        let p = Pair::new(64);
        let amo = |off, op, size, a, b| p.queues.amo(1, off, op, size, a, b).unwrap();
        let word = |off: usize, size: usize| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&p.peek(off, size));
            u64::from_le_bytes(b)
        };
        for (off, size, ones) in [(0usize, 8usize, u64::MAX), (8, 4, 0xffff_ffff)] {
            assert_eq!(amo(off, AmoOp::Add, size, 5, 0), 0);
            assert_eq!(amo(off, AmoOp::Fetch, size, 0, 0), 5);
            assert_eq!(amo(off, AmoOp::Swap, size, 9, 0), 5);
            assert_eq!(amo(off, AmoOp::CompareSwap, size, 9, 11), 9, "comparand matches");
            assert_eq!(word(off, size), 11);
            assert_eq!(amo(off, AmoOp::CompareSwap, size, 1, 77), 11, "comparand differs");
            assert_eq!(word(off, size), 11, "a failed compare-swap leaves the word");
            assert_eq!(amo(off, AmoOp::Set, size, 0b1110, 0), 11);
            assert_eq!(amo(off, AmoOp::And, size, 0b0110, 0), 0b1110);
            assert_eq!(amo(off, AmoOp::Or, size, 0b1001, 0), 0b0110);
            assert_eq!(amo(off, AmoOp::Xor, size, 0b0101, 0), 0b1111);
            assert_eq!(word(off, size), 0b1010);
            amo(off, AmoOp::Set, size, ones, 0);
            assert_eq!(amo(off, AmoOp::Add, size, 2, 0), ones, "wraps within the word");
            assert_eq!(word(off, size), 1);
        }
        assert_eq!(word(12, 4), 0, "the 4-byte AMOs never touched the next word");
    }

    /// A put the remote key does not cover fails with the NIC's error, naming the operation and
    /// the PEs, instead of writing anywhere.
    #[test]
    fn a_put_outside_the_registration_is_a_named_error() {
        let p = Pair::new(256);
        let data = [0xabu8; 100];
        let e = p.queues.put(1, testing::HEAP - 50, data.as_ptr() as u64, data.len(), &memcpy).unwrap_err().to_string();
        assert!(e.starts_with("IBGDA RDMA WRITE") && e.contains("from PE 0 to PE 1") && e.contains("remote access error"), "{e}");
        assert_eq!(p.peek(testing::HEAP - 50, 50), [0u8; 50], "nothing landed");
    }
}
