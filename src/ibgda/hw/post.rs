//! The host posting on queues the device otherwise owns, with no kernel running: the
//! connection warm-up at init (one zero-byte RDMA WRITE per QP, waited for), and host quiet
//! (wait until every WQE the device rang has completed, posting a signaled NOP when the last
//! ones asked for no completion). The same protocol as device/ibgda/ibgda_post.h: counters in
//! 64-byte blocks, the doorbell record's send counter, one 8-byte doorbell store, CQEs taken by
//! owner bit with the 16-bit WQE counter widened against the producer counter.
//!
//! Ran in CI against the software HCA model on host memory (tests below). NEVER MET HARDWARE:
//! the same code with the queues in GPU memory ([`GpuIo`]) and the doorbell a UAR register.

use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use crate::cuda::{self, Stream};
use crate::error::{Error, ErrorKind, Result};
use crate::ib::doorbell::doorbell_word;
use crate::ibgda::abi::QpState;
use crate::ibgda::mlx5::*;

/// Byte access to queue memory.
pub trait QueueIo {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<()>;
    fn write(&self, addr: u64, data: &[u8]) -> Result<()>;
}

/// Queue memory the CPU addresses directly (pinned host memory, or plain memory in tests).
pub struct HostIo(());

impl HostIo {
    /// # Safety
    /// Every address later passed to this value's methods must be valid host memory for the
    /// length given (reads and writes may race only with the NIC, as with DMA).
    pub unsafe fn new() -> HostIo {
        HostIo(())
    }
}

impl QueueIo for HostIo {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: valid per the contract of `new`; volatile because the NIC writes it.
            *b = unsafe { std::ptr::read_volatile((addr as *const u8).add(i)) };
        }
        Ok(())
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<()> {
        for (i, b) in data.iter().enumerate() {
            // SAFETY: valid per the contract of `new`.
            unsafe { std::ptr::write_volatile((addr as *mut u8).add(i), *b) };
        }
        fence(Ordering::SeqCst);
        Ok(())
    }
}

/// Queue memory in the GPU, reached with blocking copies on a stream of the current context.
pub struct GpuIo {
    stream: Stream,
}

impl GpuIo {
    /// # Safety
    /// Every address later passed must lie in device memory of the current context, valid for
    /// the length given.
    pub unsafe fn new() -> Result<GpuIo> {
        Ok(GpuIo { stream: Stream::create().map_err(|e| e.into_error(ROUTINE))? })
    }
    fn copy(&self, dst: u64, src: u64, len: usize) -> Result<()> {
        // SAFETY: one side is a live host slice, the other device memory (the contract of `new`);
        // both outlive the synchronize.
        unsafe { cuda::memcpy_async(dst, src, len, self.stream.0) }.map_err(|e| e.into_error(ROUTINE))?;
        cuda::stream_synchronize(self.stream.0).map_err(|e| e.into_error(ROUTINE))
    }
}

impl QueueIo for GpuIo {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        self.copy(out.as_mut_ptr() as u64, addr, out.len())
    }
    fn write(&self, addr: u64, data: &[u8]) -> Result<()> {
        self.copy(addr, data.as_ptr() as u64, data.len())
    }
}

const ROUTINE: &str = "nvshmem_init";

/// One QP driven from the host: `q` is a host copy of its descriptor (the caller reads it
/// from, and writes it back to, wherever the device keeps it); `queues` reaches its send queue
/// and CQ, `records` its doorbell records; `ring` is the CPU address of its doorbell register.
pub struct HostPost<'a> {
    pub queues: &'a dyn QueueIo,
    pub records: &'a dyn QueueIo,
    pub q: &'a mut QpState,
    pub ring: u64,
}

/// How a host wait ended.
pub enum Waited {
    Done,
    /// The first error CQE of the QP, in words.
    ErrorCqe(Error),
    TimedOut,
}

/// The self-test's operations (see `HostPost::one_op`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneOp {
    Write,
    Read,
    FetchAdd,
}

/// Registered local memory the NIC writes into (READ data, fetched values): 8 bytes.
pub struct Landing {
    pub addr: u64,
    pub lkey: u32,
}

/// Where a WQE goes: remote address and key, and the address vector on a DCI.
pub struct Target<'a> {
    pub raddr: u64,
    pub rkey: u32,
    pub av: Option<&'a [u8; 48]>,
}

impl HostPost<'_> {
    /// A WQE at the current producer index: ctrl [+ address vector] [+ remote address + an
    /// empty inline segment], asking for a completion.
    fn wqe(&self, opcode: u8, target: Option<&Target<'_>>) -> Vec<u8> {
        let empty_inline = INLINE_SEG.to_be_bytes();
        self.wqe_with(opcode, target, if target.is_some() { &empty_inline } else { &[] })
    }

    /// A WQE at the current producer index: ctrl [+ address vector] [+ remote address] +
    /// `payload` (inline data, data or atomic segments; padded to 16-byte segments).
    fn wqe_with(&self, opcode: u8, target: Option<&Target<'_>>, payload: &[u8]) -> Vec<u8> {
        let av = target.and_then(|t| t.av);
        let ds = 1 + av.map_or(0, |_| 3) + target.map_or(0, |_| 1) + payload.len().div_ceil(DS_BYTES);
        let mut w = vec![0u8; (ds * DS_BYTES).div_ceil(SEND_WQE_BB) * SEND_WQE_BB];
        let idx = (self.q.ready_head & 0xffff) as u32;
        w[0..4].copy_from_slice(&((idx << 8) | opcode as u32).to_be_bytes());
        w[4..8].copy_from_slice(&((self.q.qpn << 8) | ds as u32).to_be_bytes());
        w[11] = CTRL_CQ_UPDATE;
        let mut at = DS_BYTES;
        if let Some(av) = av {
            w[at..at + 48].copy_from_slice(av);
            at += 48;
        }
        if let Some(t) = target {
            w[at..at + 8].copy_from_slice(&t.raddr.to_be_bytes());
            w[at + 8..at + 12].copy_from_slice(&t.rkey.to_be_bytes());
            at += DS_BYTES;
        }
        w[at..at + payload.len()].copy_from_slice(payload);
        w
    }

    /// Writes `wqe` at the producer index, advances every producer counter past it, writes the
    /// doorbell record and rings. Returns the new producer index.
    fn post(&mut self, wqe: &[u8], signaled: bool) -> Result<u64> {
        let (base, nbb) = (self.q.ready_head, (wqe.len() / SEND_WQE_BB) as u64);
        let mask = (1u64 << self.q.log_nwqes) - 1;
        for (i, bb) in wqe.chunks(SEND_WQE_BB).enumerate() {
            self.queues.write(self.q.sq_buf + (((base + i as u64) & mask) << SEND_WQE_SHIFT), bb)?;
        }
        let end = base + nbb;
        self.q.resv_head = end;
        self.q.ready_head = end;
        self.q.posted_head = end;
        if signaled {
            self.q.signaled_head = end;
        }
        self.records.write(self.q.sq_dbrec + 4 * SND_DBR as u64, &((end & 0xffff) as u32).to_be_bytes())?;
        fence(Ordering::SeqCst);
        // SAFETY: `ring` is the QP's doorbell register (a mapped UAR page, or in tests the
        // model's doorbell word): one aligned 8-byte store rings.
        unsafe { std::ptr::write_volatile(self.ring as *mut u64, doorbell_word(end, self.q.qpn)) };
        Ok(end)
    }

    /// Consumes every valid CQE (as the device's poll_cq does).
    fn poll(&mut self) -> Result<()> {
        let (log, q) = (self.q.log_ncqes as u64, &mut *self.q);
        let (cmask, wmask) = ((1u64 << log) - 1, (1u64 << q.log_nwqes) - 1);
        let start = q.cq_cons;
        let mut ci = start;
        loop {
            let mut cqe = [0u8; CQE_SIZE];
            self.queues.read(q.cq_buf + ((ci & cmask) << 6), &mut cqe)?;
            let op_own = cqe[63];
            let opcode = op_own >> 4;
            if opcode == CQE_INVALID || (op_own & 1) as u64 != (ci >> log) & 1 {
                break;
            }
            let w16 = u16::from_be_bytes([cqe[60], cqe[61]]);
            if opcode == CQE_REQ_ERR || opcode == CQE_RESP_ERR {
                if q.err_count == 0 {
                    q.err_vendor = cqe[54];
                    q.err_syndrome = cqe[55];
                    q.err_opcode = cqe[56];
                    q.err_cqe_opcode = opcode;
                    q.err_wqe_index = w16 as u32;
                }
                q.err_count += 1;
            }
            let w = q.posted_head - (q.posted_head as u16).wrapping_sub(w16) as u64;
            let mut ctrl = [0u8; 8];
            self.queues.read(q.sq_buf + ((w & wmask) << SEND_WQE_SHIFT), &mut ctrl)?;
            let ds = u32::from_be_bytes(ctrl[4..8].try_into().expect("4 bytes")) & 0xff;
            q.completed_head = q.completed_head.max(w + (ds as u64).div_ceil(4));
            ci += 1;
        }
        if ci != start {
            q.cq_cons = ci;
            self.records.write(q.cq_dbrec, &((ci & 0xff_ffff) as u32).to_be_bytes())?;
        }
        Ok(())
    }

    /// Polls until `completed_head` reaches `target`, an error CQE arrives, or `timeout`.
    fn wait(&mut self, target: u64, timeout: Duration, me: u32, what: &str) -> Result<()> {
        match self.wait_for(target, Instant::now() + timeout, me)? {
            Waited::Done => Ok(()),
            Waited::ErrorCqe(e) => Err(e),
            Waited::TimedOut => Err(Error::of(
                ErrorKind::System,
                format!("PE {me}: {what} on QP {:#x} got no completion within {} s", self.q.qpn, timeout.as_secs()),
            )),
        }
    }

    /// Polls until `completed_head` reaches `target` (Done), an error CQE arrives, or `deadline`.
    /// Err only when the queue memory cannot be read.
    fn wait_for(&mut self, target: u64, deadline: Instant, me: u32) -> Result<Waited> {
        loop {
            self.poll()?;
            if let Some(e) = crate::ibgda::qp_error(self.q, me) {
                return Ok(Waited::ErrorCqe(e));
            }
            if self.q.completed_head >= target {
                return Ok(Waited::Done);
            }
            if Instant::now() > deadline {
                return Ok(Waited::TimedOut);
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// One signaled 8-byte operation for the self-test, waited for until `deadline`:
    /// an RDMA WRITE of `value` (inline), an RDMA READ into `land`, or a fetch-add of `value`
    /// whose old value lands in `land`.
    pub fn one_op(&mut self, op: OneOp, t: &Target<'_>, value: u64, land: &Landing, deadline: Instant, me: u32) -> Result<Waited> {
        let data_seg = |l: &Landing| {
            let mut d = [0u8; 16];
            d[0..4].copy_from_slice(&8u32.to_be_bytes());
            d[4..8].copy_from_slice(&l.lkey.to_be_bytes());
            d[8..16].copy_from_slice(&l.addr.to_be_bytes());
            d
        };
        let wqe = match op {
            OneOp::Write => {
                let mut p = [0u8; 16];
                p[0..4].copy_from_slice(&(INLINE_SEG | 8).to_be_bytes());
                p[4..12].copy_from_slice(&value.to_le_bytes());
                self.wqe_with(OPCODE_RDMA_WRITE, Some(t), &p)
            }
            OneOp::Read => self.wqe_with(OPCODE_RDMA_READ, Some(t), &data_seg(land)),
            OneOp::FetchAdd => {
                let mut p = [0u8; 32];
                p[0..8].copy_from_slice(&value.to_be_bytes());
                p[16..32].copy_from_slice(&data_seg(land));
                self.wqe_with(OPCODE_ATOMIC_FA, Some(t), &p)
            }
        };
        let end = self.post(&wqe, true)?;
        self.wait_for(end, deadline, me)
    }

    /// One signaled WQE of `opcode` (with `opmod`) toward `t`, `payload` after the remote
    /// address (data, atomic and data segments), waited for up to `timeout`: host-initiated RMA
    /// and AMOs (ibgda/host_rma.rs). `what` names the operation in a timeout's message.
    #[allow(clippy::too_many_arguments)]
    pub fn run_wqe(&mut self, opcode: u8, opmod: u8, t: &Target<'_>, payload: &[u8], timeout: Duration, me: u32, what: &str) -> Result<()> {
        let mut w = self.wqe_with(opcode, Some(t), payload);
        w[0] = opmod; // the ctrl segment's first byte
        let end = self.post(&w, true)?;
        self.wait(end, timeout, me, what)
    }

    /// The connection warm-up: one zero-byte RDMA WRITE to `t`, waited for.
    pub fn warm_up(&mut self, t: &Target<'_>, me: u32, timeout: Duration) -> Result<()> {
        let wqe = self.wqe(OPCODE_RDMA_WRITE, Some(t));
        let end = self.post(&wqe, true)?;
        let peer = if t.av.is_some() { "a DC target".to_string() } else { format!("PE {}", self.q.peer_pe) };
        self.wait(end, timeout, me, &format!("the warm-up write to {peer}"))
    }

    /// Host quiet: every WQE rung so far has completed (a signaled NOP is posted when no
    /// signaled WQE reaches the end). No kernel may be posting on this QP meanwhile.
    pub fn quiet(&mut self, me: u32, timeout: Duration) -> Result<()> {
        if self.q.completed_head >= self.q.ready_head {
            return crate::ibgda::qp_error(self.q, me).map_or(Ok(()), Err);
        }
        if self.q.signaled_head < self.q.ready_head {
            let nop = self.wqe(OPCODE_NOP, None);
            self.post(&nop, true)?;
        }
        let target = self.q.ready_head;
        self.wait(target, timeout, me, "quiet")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ibgda::model::host::{new_queues, AlignedBuf, QpParams};
    use crate::ibgda::model::{Fabric, HostMemory, ModelConfig, Nic};
    use std::sync::Arc;

    const KEY: u32 = 0x77;

    /// One QP of PE 0 toward its own heap, served by a model NIC on host memory.
    fn setup(log_nwqes: u16) -> (Nic, QpState, crate::ibgda::model::host::QueueMem, AlignedBuf) {
        let heap = AlignedBuf::new(4096);
        let fabric = Fabric::new();
        fabric.register(0, KEY, heap.addr(), 4096);
        let (q, mem) = new_queues(QpParams { qpn: 0x123, peer_pe: 0, log_nwqes, signal_every: 4, ..Default::default() });
        let nic = Nic::start(0, fabric, Arc::new(HostMemory), ModelConfig::default());
        // SAFETY: the queues in `mem` outlive the NIC (the test drops the NIC first).
        unsafe { nic.attach_config(q, true) };
        (nic, q, mem, heap)
    }

    /// Runs `f` on a host poster over the QP of `setup` (16 blocks); returns what `f` returned and
    /// the descriptor as it was left, once the model NIC stopped.
    fn with_qp<R>(f: impl FnOnce(&mut HostPost<'_>, u64) -> R) -> (R, QpState) {
        let (nic, mut q, _mem, heap) = setup(4);
        // SAFETY: every address used is in the host queues of `setup`, alive in this function.
        let io = unsafe { HostIo::new() };
        let ring = q.bf_reg;
        let r = f(&mut HostPost { queues: &io, records: &io, q: &mut q, ring }, heap.addr());
        drop(nic);
        (r, q)
    }

    fn to(heap: u64, rkey: u32) -> Target<'static> {
        Target { raddr: heap, rkey, av: None }
    }

    #[test]
    fn warm_up_posts_one_write_and_leaves_counters_at_one_block() {
        let (rec, q) = with_qp(|hp, heap| {
            hp.warm_up(&to(heap, KEY), 0, Duration::from_secs(20)).unwrap();
            let mut rec = [0u8; 4];
            hp.records.read(hp.q.cq_dbrec, &mut rec).unwrap();
            u32::from_be_bytes(rec)
        });
        assert_eq!((q.resv_head, q.ready_head, q.posted_head, q.signaled_head, q.completed_head, q.cq_cons), (1, 1, 1, 1, 1, 1));
        assert_eq!(q.err_count, 0);
        assert_eq!(rec, 1, "the CQ doorbell record holds the consumer index");
    }

    #[test]
    fn a_bad_key_at_warm_up_is_an_error_naming_the_operation_and_pe() {
        let (e, _) = with_qp(|hp, heap| hp.warm_up(&to(heap, KEY + 1), 0, Duration::from_secs(20)).unwrap_err().to_string());
        assert!(e.contains("RDMA WRITE") && e.contains("to PE 0") && e.contains("remote access error"), "{e}");
    }

    #[test]
    fn quiet_adds_a_signaled_nop_after_unsignaled_work_and_wraps_the_queue() {
        let ((), q) = with_qp(|hp, heap| {
            hp.warm_up(&to(heap, KEY), 0, Duration::from_secs(20)).unwrap();
            // 40 rounds of 3 unsignaled writes then quiet: 160 blocks through a 16-block queue.
            for _ in 0..40 {
                for _ in 0..3 {
                    let mut w = hp.wqe(OPCODE_RDMA_WRITE, Some(&to(heap, KEY)));
                    w[11] = 0; // no completion asked
                    hp.post(&w, false).unwrap();
                }
                hp.quiet(0, Duration::from_secs(20)).unwrap();
                assert_eq!(hp.q.completed_head, hp.q.ready_head);
            }
        });
        assert_eq!(q.ready_head, 1 + 40 * 4, "each round: three writes and one NOP");
        assert!(q.cq_cons > 40 && q.err_count == 0);
    }

    #[test]
    fn wqes_carry_the_address_vector_on_a_dci() {
        let av = [0x5a; 48];
        let ((w, n), _) =
            with_qp(|hp, _| (hp.wqe(OPCODE_RDMA_WRITE, Some(&Target { raddr: 0x1122, rkey: 9, av: Some(&av) })), hp.wqe(OPCODE_NOP, None)));
        assert_eq!(w.len(), 128, "ctrl + AV + raddr + inline header: 6 segments, 2 blocks");
        assert_eq!(&w[4..8], &[0, 0x01, 0x23, 6], "qpn 0x123, ds 6");
        assert_eq!(&w[16..64], &av[..]);
        assert_eq!(&w[64..72], &0x1122u64.to_be_bytes());
        assert_eq!(&w[72..76], &9u32.to_be_bytes());
        assert_eq!(&w[80..84], &INLINE_SEG.to_be_bytes());
        assert_eq!((n.len(), n[3], n[7], n[11]), (64, OPCODE_NOP, 1, CTRL_CQ_UPDATE));
    }
}
