//! The hardware set-up as data and a command sequence, with no device in it: which queues a PE
//! creates ([`Plan`], [`Role`]), where they sit in the queue memory ([`Layout`]), what PEs tell
//! each other through the bootstrap ([`PeInfo`]), the DevX commands that create and connect
//! them ([`create_objects`], [`connect`]) through a [`DevxOps`] call table, and the device
//! descriptors that result ([`descriptors`], [`peer_table`], [`dct_table`]).
//!
//! All of it runs in CI against the recording call table (`crate::ib::devx::fake`).

use crate::error::{Error, Result};
use crate::ib::devx::{DevxOps, ObjId, UMEM_PAGE};
use crate::ib::prm::{self, QpKind, UmemRef};
use crate::ib::{QpAddress, ACK_TIMEOUT, HOP_LIMIT, LOG_RD_ATOMIC, MIN_RNR_NAK, RETRY};
use crate::ibgda::abi::{PeerState, QpState, QP_DCI, QP_RC};
use crate::ibgda::mlx5::{CQE_SIZE, EXTENDED_UD_AV, SEND_WQE_BB};
use crate::ibgda::model::host::descriptor;
pub use crate::ibgda::model::host::Posting;

/// What one PE builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub me: usize,
    pub npes: usize,
    /// RC QPs toward each remote PE (NVSHMEM_IBGDA_NUM_RC_PER_PE).
    pub num_rc: usize,
    /// DC initiators (NVSHMEM_IBGDA_NUM_DCI).
    pub num_dci: usize,
    /// DC targets (NVSHMEM_IBGDA_NUM_DCT).
    pub num_dct: usize,
    pub log_nwqes: u16,
    /// PEs reached through the NIC.
    pub remote: Vec<bool>,
}

/// What a send queue is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Rc { peer: usize, index: usize },
    Dci { index: usize },
}

impl Plan {
    /// The send queues, in creation order: RC QPs by remote PE then index, then the DCIs.
    pub fn roles(&self) -> Vec<Role> {
        let rc = (0..self.npes).filter(|&p| self.remote[p]).flat_map(|peer| (0..self.num_rc).map(move |index| Role::Rc { peer, index }));
        rc.chain((0..self.num_dci).map(|index| Role::Dci { index })).collect()
    }
}

fn round_up(x: u64, to: u64) -> u64 {
    x.div_ceil(to) * to
}

/// Offsets of each queue inside the three queue buffers (send queues, CQs, doorbell records),
/// every queue starting on a umem page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub nq: usize,
    pub sq_stride: u64,
    pub cq_stride: u64,
}

impl Layout {
    pub fn new(nq: usize, log_nwqes: u16) -> Layout {
        let n = 1u64 << log_nwqes;
        Layout { nq, sq_stride: round_up(n * SEND_WQE_BB as u64, UMEM_PAGE), cq_stride: round_up(n * CQE_SIZE as u64, UMEM_PAGE) }
    }
    pub fn sq_bytes(&self) -> u64 {
        self.nq.max(1) as u64 * self.sq_stride
    }
    pub fn cq_bytes(&self) -> u64 {
        self.nq.max(1) as u64 * self.cq_stride
    }
    /// One 64-byte line per queue: send doorbell record at 0, CQ doorbell record at 32.
    pub fn dbr_bytes(&self) -> u64 {
        round_up(self.nq.max(1) as u64 * 64, UMEM_PAGE)
    }
    pub fn sq(&self, k: usize) -> u64 {
        k as u64 * self.sq_stride
    }
    pub fn cq(&self, k: usize) -> u64 {
        k as u64 * self.cq_stride
    }
    pub fn sq_dbr(&self, k: usize) -> u64 {
        k as u64 * 64
    }
    pub fn cq_dbr(&self, k: usize) -> u64 {
        k as u64 * 64 + 32
    }
}

/// The umem ids of the three queue buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Umems {
    pub sq: u32,
    pub cq: u32,
    pub dbr: u32,
}

/// Device numbers the commands name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    pub pdn: u32,
    pub uar_page: u32,
    pub eqn: u32,
    /// The verbs CQ and SRQ a DC target is attached to (they never see a completion).
    pub dct_cqn: u32,
    pub srqn: u32,
    pub dc_key: u64,
}

/// This PE's port, as the commands and the peers need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Local {
    pub port: u8,
    /// lid, mtu, link layer, GID and GID index (qpn and psn unused).
    pub addr: QpAddress,
    pub traffic_class: u8,
    pub sl: u8,
}

/// A created send queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltQp {
    pub role: Role,
    pub obj: ObjId,
    pub qpn: u32,
    pub cqn: u32,
}

/// What [`create_objects`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    pub qps: Vec<BuiltQp>,
    pub dcts: Vec<u32>,
}

fn describe(role: Role) -> String {
    match role {
        Role::Rc { peer, index } => format!("RC QP {index} toward PE {peer}"),
        Role::Dci { index } => format!("DCI {index}"),
    }
}

/// Registers the three queue buffers (device addresses; `dmabuf` = a dma-buf fd of each with
/// the buffer's offset in it, when the driver gave one).
pub fn register_umems(ops: &mut dyn DevxOps, layout: &Layout, addrs: [u64; 3], dmabuf: [Option<(i32, u64)>; 3]) -> Result<Umems> {
    let sq = ops.umem_reg("send queues", addrs[0], layout.sq_bytes() as usize, dmabuf[0])?;
    let cq = ops.umem_reg("completion queues", addrs[1], layout.cq_bytes() as usize, dmabuf[1])?;
    let dbr = ops.umem_reg("doorbell records", addrs[2], layout.dbr_bytes() as usize, dmabuf[2])?;
    Ok(Umems { sq, cq, dbr })
}

/// Creates, per send queue, its CQ then the QP (RC or DCI) on it, then the DC targets.
pub fn create_objects(ops: &mut dyn DevxOps, plan: &Plan, layout: &Layout, u: Umems, res: &Resources, local: &Local) -> Result<Built> {
    let mut qps = Vec::new();
    for (k, role) in plan.roles().into_iter().enumerate() {
        let what = describe(role);
        let cq = prm::create_cq(&prm::CqParams {
            log_size: plan.log_nwqes as u8,
            uar_page: res.uar_page,
            eqn: res.eqn,
            buf: UmemRef { id: u.cq, offset: layout.cq(k) },
            dbr: UmemRef { id: u.dbr, offset: layout.cq_dbr(k) },
        });
        let (_, cqn) = ops.create(&format!("the CQ of {what}"), &cq)?;
        let qp = prm::create_qp(&prm::QpParams {
            kind: if matches!(role, Role::Rc { .. }) { QpKind::Rc } else { QpKind::Dci },
            pdn: res.pdn,
            uar_page: res.uar_page,
            cqn,
            log_sq_size: plan.log_nwqes as u8,
            sq: UmemRef { id: u.sq, offset: layout.sq(k) },
            dbr: UmemRef { id: u.dbr, offset: layout.sq_dbr(k) },
        });
        let (obj, qpn) = ops.create(&what, &qp)?;
        qps.push(BuiltQp { role, obj, qpn, cqn });
    }
    let mut dcts = Vec::new();
    for d in 0..plan.num_dct {
        let cmd = prm::create_dct(&prm::DctParams {
            pdn: res.pdn,
            cqn: res.dct_cqn,
            srqn: res.srqn,
            access_key: res.dc_key,
            mtu: local.addr.mtu,
            port: local.port,
            gid_index: local.addr.gid_index,
            hop_limit: HOP_LIMIT,
            tclass: local.traffic_class,
            min_rnr_nak: MIN_RNR_NAK,
        });
        dcts.push(ops.create(&format!("DC target {d}"), &cmd)?.1);
    }
    Ok(Built { qps, dcts })
}

/// What every PE publishes through the bootstrap: its heap's address and key, its port address,
/// the numbers of its RC QPs (`rc[peer * num_rc + i]`: its QP i toward `peer`, 0 where none) and
/// of its DC targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeInfo {
    pub heap_base: u64,
    pub rkey: u32,
    pub addr: QpAddress,
    pub rc: Vec<u32>,
    pub dct: Vec<u32>,
}

const INFO_TAG: u32 = 0x4942_5231; // "1RBI": version 1 of this encoding

impl PeInfo {
    /// Little-endian: tag, npes, num_rc, num_dct (u32 each), heap base (u64), rkey, pad (u32),
    /// the 32-byte port address, then the RC QP numbers and the DCT numbers (u32 each).
    pub fn encode(&self, npes: usize, num_rc: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(64 + 4 * (self.rc.len() + self.dct.len()));
        for v in [INFO_TAG, npes as u32, num_rc as u32, self.dct.len() as u32] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&self.heap_base.to_le_bytes());
        b.extend_from_slice(&self.rkey.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&self.addr.encode());
        for v in self.rc.iter().chain(&self.dct) {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// Decodes PE `pe`'s contribution, which must match our job shape.
    pub fn decode(b: &[u8], pe: usize, npes: usize, num_rc: usize, num_dct: usize) -> Result<PeInfo> {
        let word = |i: usize| b.get(4 * i..4 * i + 4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")));
        let shape = [word(0), word(1), word(2), word(3)];
        let want = [Some(INFO_TAG), Some(npes as u32), Some(num_rc as u32), Some(num_dct as u32)];
        let len = 64 + 4 * (npes * num_rc + num_dct);
        if shape != want || b.len() != len {
            return Err(Error::bootstrap(format!(
                "PE {pe} sent IBGDA connection data of another shape ({} bytes, header {shape:?}; expected {len} bytes for {npes} PEs, \
                 {num_rc} RC QPs per PE and {num_dct} DC targets): are all PEs running the same rshmem with the same NVSHMEM_IBGDA_* settings?",
                b.len()
            )));
        }
        let u32s = |from: usize, n: usize| (0..n).map(|i| word(from + i).expect("length checked")).collect::<Vec<u32>>();
        Ok(PeInfo {
            heap_base: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            rkey: word(6).expect("length checked"),
            addr: QpAddress::decode(&b[32..64])?,
            rc: u32s(16, npes * num_rc),
            dct: u32s(16 + npes * num_rc, num_dct),
        })
    }
}

/// The global route toward `remote`, when the link needs one (RoCE, or a non-zero GID).
fn grh(local: &Local, remote: &QpAddress, rmac: Option<[u8; 6]>) -> Option<prm::Grh> {
    let global = remote.link_layer == crate::ib::sys::IBV_LINK_LAYER_ETHERNET || remote.gid != [0; 16];
    global.then_some(prm::Grh {
        rgid: remote.gid,
        sgid_index: local.addr.gid_index,
        hop_limit: HOP_LIMIT,
        tclass: local.traffic_class,
        rmac,
    })
}

/// Drives every send queue RESET → INIT → RTR → RTS: an RC QP toward the QP its peer created
/// for us (`peers[peer].rc[me * num_rc + index]`), a DCI on its own. `rmac(peer)` gives the next
/// hop's MAC on RoCE (None on InfiniBand).
pub fn connect(
    ops: &mut dyn DevxOps,
    plan: &Plan,
    built: &Built,
    local: &Local,
    peers: &[PeInfo],
    rmac: &dyn Fn(usize) -> Option<[u8; 6]>,
) -> Result<()> {
    let rts = prm::RtsParams {
        next_send_psn: local.addr.psn,
        ack_timeout: ACK_TIMEOUT,
        retry_count: RETRY,
        rnr_retry: RETRY,
        log_sra_max: LOG_RD_ATOMIC,
    };
    for q in &built.qps {
        let what = describe(q.role);
        let (kind, rtr) = match q.role {
            Role::Rc { peer, index } => {
                let remote = &peers[peer].addr;
                let remote_qpn = peers[peer].rc[plan.me * plan.num_rc + index];
                let rtr = prm::RtrParams {
                    mtu: local.addr.mtu.min(remote.mtu),
                    remote_qpn,
                    next_rcv_psn: remote.psn,
                    log_rra_max: LOG_RD_ATOMIC,
                    min_rnr_nak: MIN_RNR_NAK,
                    port: local.port,
                    rlid: remote.lid,
                    sl: local.sl,
                    grh: grh(local, remote, rmac(peer)),
                };
                (QpKind::Rc, rtr)
            }
            Role::Dci { .. } => {
                let rtr = prm::RtrParams {
                    mtu: local.addr.mtu,
                    remote_qpn: 0,
                    next_rcv_psn: 0,
                    log_rra_max: 0,
                    min_rnr_nak: 0,
                    port: local.port,
                    rlid: 0,
                    sl: local.sl,
                    grh: None,
                };
                (QpKind::Dci, rtr)
            }
        };
        ops.modify(q.obj, &what, &prm::rst2init_qp(q.qpn, kind, local.port))?;
        ops.modify(q.obj, &what, &prm::init2rtr_qp(q.qpn, kind, &rtr))?;
        ops.modify(q.obj, &what, &prm::rtr2rts_qp(q.qpn, &rts))?;
    }
    Ok(())
}

/// Device addresses of the queue buffers and of the doorbell register as the device reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueAddrs {
    pub sq: u64,
    pub cq: u64,
    pub dbr: u64,
    /// The UAR doorbell register mapped into the GPU (0 with a CPU doorbell).
    pub bf_reg: u64,
    pub cpu_doorbell: bool,
}

/// The device descriptors: RC QPs at `peer * num_rc + index` of an `npes * num_rc` array (zero
/// where there is none), and the DCIs.
pub fn descriptors(plan: &Plan, layout: &Layout, built: &Built, a: &QueueAddrs, p: &Posting) -> (Vec<QpState>, Vec<QpState>) {
    let mut rc = vec![QpState::zeroed(); plan.npes * plan.num_rc];
    let mut dci = Vec::new();
    for (k, q) in built.qps.iter().enumerate() {
        let mut d = descriptor(q.qpn, q.cqn, plan.log_nwqes, p, a.cpu_doorbell);
        d.sq_buf = a.sq + layout.sq(k);
        d.cq_buf = a.cq + layout.cq(k);
        d.sq_dbrec = a.dbr + layout.sq_dbr(k);
        d.cq_dbrec = a.dbr + layout.cq_dbr(k);
        d.bf_reg = a.bf_reg;
        match q.role {
            Role::Rc { peer, index } => {
                d.kind = QP_RC;
                d.peer_pe = peer as u32;
                rc[peer * plan.num_rc + index] = d;
            }
            Role::Dci { .. } => {
                d.kind = QP_DCI;
                d.peer_pe = u32::MAX;
                dci.push(d);
            }
        }
    }
    (rc, dci)
}

/// How to address each PE's heap: base and key as that PE published them, and for DC the
/// address vector toward it (`avs[pe]`, as the provider built it) with the DC key and the
/// number of the PE's first DC target patched in.
pub fn peer_table(peers: &[PeInfo], avs: &[Option<[u8; 48]>], heap_size: u64, dc_key: u64) -> Vec<PeerState> {
    peers
        .iter()
        .zip(avs)
        .map(|(info, av)| {
            let mut p = PeerState::zeroed();
            p.heap_base = info.heap_base;
            p.heap_size = heap_size;
            p.rkey = info.rkey;
            if let (Some(av), Some(&dct)) = (av, info.dct.first()) {
                p.av = *av;
                p.av[0..8].copy_from_slice(&dc_key.to_be_bytes());
                p.av[8..12].copy_from_slice(&(dct | EXTENDED_UD_AV).to_be_bytes());
                p.av_size = 48;
            }
            p
        })
        .collect()
}

/// The DCT table the device reads (`PeState.dcts`, `u32[npes * num_dct]`, PE-major): entry
/// `pe * num_dct + d` is DC target `d` of PE `pe`, as that PE published it. Every PE creates and
/// publishes its targets, local PEs too, so their entries are real numbers (as on the model,
/// `dc::dct_table`). The numbers are the 24-bit ones CREATE_DCT returned, stored unmasked; the
/// device keeps only the low 24 bits when it writes one into an address vector.
pub fn dct_table(peers: &[PeInfo], num_dct: usize) -> Vec<u32> {
    let mut t = vec![0u32; peers.len() * num_dct];
    for (pe, info) in peers.iter().enumerate() {
        for (d, &n) in info.dct.iter().take(num_dct).enumerate() {
            t[pe * num_dct + d] = n;
        }
    }
    t
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
