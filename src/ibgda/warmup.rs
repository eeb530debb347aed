//! Connection warm-up at init: before the device ever sees a QP, the host posts one signaled
//! zero-byte RDMA WRITE on it (on a DCI: toward one of the DC targets, through its address
//! vector), rings, waits for the completion and consumes it. Afterwards the descriptor's counters
//! stand past that WQE, as if the device had posted and completed it. On hardware this is what
//! makes the first real operation pay no connection set-up; on the model it proves, at init, that
//! the queues, keys and (for DC) the exchanged DCT numbers and DC keys work.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

use super::abi::QpState;
use super::cuda::{DevBuf, PinnedBuf};
use super::mlx5::*;
use super::model::{HostMemory, MemoryAccess};

/// Where the send queues live.
pub enum SqMem {
    Gpu(DevBuf),
    Host(PinnedBuf),
}

impl SqMem {
    pub fn addr(&self) -> u64 {
        match self {
            SqMem::Gpu(b) => b.addr,
            SqMem::Host(b) => b.addr,
        }
    }
    fn write(&self, addr: u64, bytes: &[u8]) -> Result<()> {
        let fail = |e: String| Error::new(ErrorKind::System, "nvshmem_init", format!("IBGDA set-up: writing the warm-up WQE: {e}"));
        match self {
            SqMem::Gpu(b) => b.upload((addr - b.addr) as usize, bytes).map_err(|e| fail(e.to_string())),
            SqMem::Host(_) => HostMemory.write(addr, bytes).map_err(fail),
        }
    }
}

/// The remote end of the warm-up write.
pub struct Target<'a> {
    pub raddr: u64,
    pub rkey: u32,
    /// DCI: the address vector image (16 or 48 bytes) naming the DCT.
    pub av: Option<&'a [u8]>,
}

/// The warm-up WQE at block 0: ctrl, [address vector,] raddr, an empty inline segment.
fn wqe(q: &QpState, t: &Target) -> Vec<u8> {
    let av = t.av.unwrap_or(&[]);
    let ds = 3 + av.len() / DS_BYTES;
    let mut w = vec![0u8; ds.div_ceil(4) * SEND_WQE_BB];
    w[0..4].copy_from_slice(&(OPCODE_RDMA_WRITE as u32).to_be_bytes()); // opmod 0, index 0
    w[4..8].copy_from_slice(&((q.qpn << 8) | ds as u32).to_be_bytes());
    w[11] = CTRL_CQ_UPDATE;
    w[16..16 + av.len()].copy_from_slice(av);
    let at = 16 + av.len();
    w[at..at + 8].copy_from_slice(&t.raddr.to_be_bytes());
    w[at + 8..at + 12].copy_from_slice(&t.rkey.to_be_bytes());
    w[at + 16..at + 20].copy_from_slice(&INLINE_SEG.to_be_bytes());
    w
}

/// Posts the warm-up write on the QP described by `q` (its NIC attached), waits up to 20 s for
/// its CQE. An error CQE becomes an error naming the PEs: `describe` turns the descriptor with
/// its err_* fields set into it.
pub fn warm_up(q: &mut QpState, sq: &SqMem, dbr: &DevBuf, t: &Target, me: usize, describe: &dyn Fn(&QpState) -> Error) -> Result<()> {
    let w = wqe(q, t);
    let nbb = (w.len() / SEND_WQE_BB) as u64;
    sq.write(q.sq_buf, &w)?;
    dbr.upload((q.sq_dbrec - dbr.addr) as usize + 4 * SND_DBR, &(nbb as u32).to_be_bytes())
        .map_err(|e| Error::new(ErrorKind::System, "nvshmem_init", format!("IBGDA set-up: writing the send doorbell record: {e}")))?;
    // The doorbell: a ctrl segment's first 8 bytes with the producer index (nbb) in the index field.
    let mut db = [0u8; 8];
    db[0..4].copy_from_slice(&(((nbb as u32) << 8) | OPCODE_RDMA_WRITE as u32).to_be_bytes());
    db[4..8].copy_from_slice(&w[4..8]);
    // SAFETY: the doorbell word in this QP's pinned host memory, 8-byte aligned.
    unsafe { AtomicU64::from_ptr(q.bf_reg as *mut u64) }.store(u64::from_le_bytes(db), Ordering::Release);
    let word = |a: u64| {
        // SAFETY: CQ and CQ doorbell-record words in this QP's pinned host memory, 4-byte aligned.
        unsafe { AtomicU32::from_ptr(a as *mut u32) }
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let tail = loop {
        let tail = word(q.cq_buf + 60).load(Ordering::Acquire);
        if (tail >> 28) as u8 != CQE_INVALID {
            break tail;
        }
        if Instant::now() > deadline {
            return Err(Error::new(
                ErrorKind::System,
                "nvshmem_init",
                format!("PE {me}: the IBGDA warm-up write on QP 0x{:06x} got no completion within 20 s", q.qpn),
            ));
        }
        std::thread::sleep(Duration::from_micros(50));
    };
    if (tail >> 28) as u8 != CQE_REQ {
        // SAFETY: the CQE just written by the NIC, in pinned host memory.
        let cqe: [u8; 64] = unsafe { std::ptr::read_volatile(q.cq_buf as *const [u8; 64]) };
        q.err_count = 1;
        q.err_syndrome = cqe[55];
        q.err_vendor = cqe[54];
        q.err_opcode = OPCODE_RDMA_WRITE;
        if let Some(av) = t.av {
            q.err_dct = u32::from_be_bytes(av[8..12].try_into().expect("4 bytes")) & 0xff_ffff;
            q.err_rlid = u16::from_be_bytes([av[14], av[15]]);
        }
        return Err(describe(q));
    }
    (q.resv_head, q.ready_head, q.posted_head, q.signaled_head, q.completed_head) = (nbb, nbb, nbb, nbb, nbb);
    q.cq_cons = 1;
    word(q.cq_dbrec).store(1u32.to_be(), Ordering::Release);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_wqe_carries_the_address_vector_between_ctrl_and_raddr() {
        let mut q = QpState::zeroed();
        q.qpn = 0x123;
        let (av, n) = super::super::dc::av_image(0xfeed, 0x2001, 5, false);
        let w = wqe(&q, &Target { raddr: 0x1000, rkey: 0x77, av: Some(&av[..n as usize]) });
        assert_eq!(w.len(), 64, "ctrl + half AV + raddr + inline header: one block");
        assert_eq!(&w[4..8], &((0x123u32 << 8) | 4).to_be_bytes(), "qpn and ds 4");
        assert_eq!(w[11], CTRL_CQ_UPDATE);
        assert_eq!(&w[16..32], &av[..16]);
        assert_eq!(&w[32..40], &0x1000u64.to_be_bytes());
        assert_eq!(&w[40..44], &0x77u32.to_be_bytes());
        assert_eq!(&w[48..52], &INLINE_SEG.to_be_bytes(), "empty inline payload");
        let rc = wqe(&q, &Target { raddr: 0x1000, rkey: 0x77, av: None });
        assert_eq!((rc.len(), rc[7]), (64, 3), "RC: ctrl, raddr, inline header");
        let (av, n) = super::super::dc::av_image(0xfeed, 0x2001, 5, true);
        let full = wqe(&q, &Target { raddr: 0x1000, rkey: 0x77, av: Some(&av[..n as usize]) });
        assert_eq!((full.len(), full[7]), (128, 6), "48-byte AV: two blocks, ds 6");
    }
}
