//! A safe layer over rdma-core (libibverbs + mlx5dv/DevX), loaded at run time.
//!
//! - here: loading, device discovery with PCIe/NUMA placement and distance to a GPU, the
//!   verbs RC state machine and attributes, [`QpAddress`] (what PEs exchange through the
//!   bootstrap to connect);
//! - [`verbs`](mod@verbs): device context, protection domain, memory registration (dma-buf first, then
//!   `ibv_reg_mr`, which reaches GPU memory through nvidia-peermem), CQ, SRQ, verbs RC QPs,
//!   address vectors, UAR pages;
//! - [`prm`]: our own encoders of the mlx5 PRM commands the DevX path sends;
//! - [`devx`]: umem registration and DevX object creation/modification behind a call table
//!   ([`devx::DevxOps`]) that tests replace with a recorder;
//! - [`doorbell`]: where doorbells ring (GPU-mapped UAR or a CPU thread) and that CPU thread.
//!
//! What has run in CI (no RDMA device anywhere in this project): loading the libraries, or
//! failing cleanly without them; `ibv_get_device_list` answering "no device"; the layouts of our
//! declarations against the rdma-core 44 headers (tests/ibgda_layout.rs, tests/ib_devx.rs);
//! every PRM encoder field by field; the DevX command sequence against a recorder
//! (`crate::ibgda::hw`); the pure parts (attributes, state machine, address encoding, NIC/GPU
//! distance, doorbell decision, the CPU doorbell thread on host memory).
//!
//! NEVER MET HARDWARE: every call that needs a device (all of [`verbs`](mod@verbs) past `Context::open`'s
//! "not found", all of [`devx::DevxCtx`], and a UAR store). It is written against the rdma-core
//! 44 headers and the public PRM field tables and has never been executed.

pub mod devx;
pub mod doorbell;
pub mod prm;
pub mod sys;
pub mod verbs;

pub use doorbell::DoorbellPath;
pub use verbs::{Context, Cq, Mr, Pd, RcQp, Srq, Uar};

use std::ffi::{c_int, CStr};
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind, Result};
use sys::*;

const ROUTINE: &str = "nvshmem_init";

pub(crate) fn unsupported(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Unsupported, ROUTINE, msg)
}
pub(crate) fn failed(what: &str) -> Error {
    Error::system(ROUTINE, what, std::io::Error::last_os_error())
}

/// Registers memory with the NIC as both registrations do (a verbs MR, a DevX umem): through
/// its dma-buf (`dmabuf` = fd, offset of the memory in it) when there is one, else or when that
/// fails by address. `by_dmabuf` and `by_address` make the two calls (named `dmabuf_call` and
/// `address_call` in messages; null is failure, with errno). Returns the handle and, when it
/// was registered by address, why not through dma-buf; the error names `what` (the memory and
/// what it was registered as), both attempts and the usual fix.
pub(crate) fn register_dmabuf_first<T>(
    what: &str,
    dmabuf: Option<(i32, u64)>,
    dmabuf_call: &str,
    by_dmabuf: impl FnOnce(i32, u64) -> *mut T,
    address_call: &str,
    by_address: impl FnOnce() -> *mut T,
) -> Result<(*mut T, Option<String>)> {
    let mut why = String::from("no dma-buf handle for this memory");
    if let Some((fd, offset)) = dmabuf {
        let p = by_dmabuf(fd, offset);
        if !p.is_null() {
            return Ok((p, None));
        }
        why = format!("{dmabuf_call} failed: {}", std::io::Error::last_os_error());
    }
    let p = by_address();
    if p.is_null() {
        return Err(Error::new(
            ErrorKind::System,
            ROUTINE,
            format!(
                "registering {what} failed ({why}; then {address_call}: {}); for GPU memory load nvidia-peermem or use a kernel with dma-buf support",
                std::io::Error::last_os_error()
            ),
        ));
    }
    Ok((p, Some(why)))
}

/// libibverbs, loaded once. Err says in plain words why RDMA is unavailable.
pub fn verbs() -> Result<&'static Verbs> {
    static V: OnceLock<std::result::Result<Verbs, String>> = OnceLock::new();
    V.get_or_init(Verbs::load).as_ref().map_err(|e| unsupported(format!("no RDMA: {e} (install rdma-core / libibverbs1)")))
}

/// libmlx5 (mlx5dv, DevX), loaded once.
pub fn mlx5() -> Result<&'static Mlx5> {
    static M: OnceLock<std::result::Result<Mlx5, String>> = OnceLock::new();
    M.get_or_init(Mlx5::load).as_ref().map_err(|e| unsupported(format!("no mlx5 direct verbs: {e} (install ibverbs-providers)")))
}

/// One RDMA device as discovery sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    /// NUMA node of its PCIe function (None when sysfs does not say).
    pub numa_node: Option<i32>,
    /// The PCIe path from the root complex, e.g. `pci0000:00/0000:00:01.0/0000:01:00.0`.
    pub pci_path: Option<String>,
}

/// The RDMA devices of this machine. `Ok(empty)` means rdma-core is present but there is no
/// device (the usual answer here); `Err` means rdma-core itself is missing.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    let v = verbs()?;
    let mut n: c_int = 0;
    // SAFETY: n is a valid out-pointer; the list is freed below.
    let list = unsafe { (v.ibv_get_device_list)(&mut n) };
    if list.is_null() {
        // ENOSYS without /sys/class/infiniband: no device, not an error of ours.
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for i in 0..n.max(0) as usize {
        // SAFETY: the list holds n valid device pointers.
        let dev = unsafe { *list.add(i) };
        // SAFETY: dev is valid; the name is a NUL-terminated string owned by the device.
        let name = unsafe { CStr::from_ptr((v.ibv_get_device_name)(dev)) }.to_string_lossy().into_owned();
        let sys = format!("/sys/class/infiniband/{name}/device");
        let numa_node = std::fs::read_to_string(format!("{sys}/numa_node")).ok().and_then(|s| s.trim().parse().ok());
        let pci_path = std::fs::canonicalize(&sys).ok().and_then(|p| pci_path_of(&p.to_string_lossy()));
        out.push(DeviceInfo { name, numa_node, pci_path });
    }
    // SAFETY: list came from ibv_get_device_list.
    unsafe { (v.ibv_free_device_list)(list) };
    Ok(out)
}

/// One line for rshmem-info: which RDMA devices exist, or why there are none.
pub fn discovery_summary() -> String {
    match devices() {
        Err(e) => e.message,
        Ok(d) if d.is_empty() => "no RDMA device (rdma-core is installed, but the kernel reports no InfiniBand/RoCE device)".into(),
        Ok(d) => d
            .iter()
            .map(|x| {
                format!(
                    "{} (NUMA {}, PCIe {})",
                    x.name,
                    x.numa_node.map_or("?".into(), |n| n.to_string()),
                    x.pci_path.as_deref().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `pci0000:00/0000:00:01.0/0000:01:00.0` from a sysfs device path.
pub fn pci_path_of(sysfs: &str) -> Option<String> {
    let start = sysfs.find("/pci")? + 1;
    Some(sysfs[start..].trim_end_matches('/').to_string())
}

/// PCIe distance between two functions: hops up from each to their deepest common bridge
/// (0 = same function; different root complexes count as far apart as possible).
pub fn pci_distance(a: &str, b: &str) -> u32 {
    let pa: Vec<&str> = a.split('/').collect();
    let pb: Vec<&str> = b.split('/').collect();
    if pa.first() != pb.first() {
        return u32::MAX;
    }
    let common = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
    (pa.len() - common + pb.len() - common) as u32
}

/// Picks the NIC closest to a GPU: smallest PCIe distance, then same NUMA node, then name order.
pub fn closest_nic<'a>(nics: &'a [DeviceInfo], gpu_pci: &str, gpu_numa: Option<i32>) -> Option<&'a DeviceInfo> {
    nics.iter().min_by_key(|n| {
        let d = n.pci_path.as_deref().map_or(u32::MAX, |p| pci_distance(p, gpu_pci));
        let numa = if gpu_numa.is_some() && n.numa_node == gpu_numa { 0 } else { 1 };
        (d, numa, n.name.clone())
    })
}

// ---- queue pair state machine and attributes (pure) ----

/// The RC QP states we drive through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Error,
}

impl QpState {
    /// The next state on the way to RTS, or an error naming the illegal step.
    pub fn step(self, to: QpState) -> Result<QpState> {
        let ok = matches!((self, to), (QpState::Reset, QpState::Init) | (QpState::Init, QpState::Rtr) | (QpState::Rtr, QpState::Rts))
            || to == QpState::Error
            || (to == QpState::Reset);
        if ok {
            Ok(to)
        } else {
            Err(Error::new(ErrorKind::Internal, ROUTINE, format!("queue pair transition {self:?} -> {to:?} is not allowed")))
        }
    }
}

/// What a PE publishes about one of its QPs so the peer can connect to it. 32 bytes on the wire
/// (little-endian), exchanged with the bootstrap's allgather/alltoall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct QpAddress {
    pub qpn: u32,
    pub psn: u32,
    pub lid: u16,
    pub port: u8,
    /// enum ibv_mtu (1 = 256 .. 5 = 4096)
    pub mtu: u8,
    /// IBV_LINK_LAYER_INFINIBAND or _ETHERNET (RoCE: the GID is the address)
    pub link_layer: u8,
    pub gid_index: u8,
    pub gid: [u8; 16],
}

impl QpAddress {
    pub const WIRE_LEN: usize = 32;
    /// Encoding version in the first byte of the reserved area, checked on decode.
    const TAG: u8 = 0x51;

    pub fn encode(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0..4].copy_from_slice(&self.qpn.to_le_bytes());
        b[4..8].copy_from_slice(&self.psn.to_le_bytes());
        b[8..10].copy_from_slice(&self.lid.to_le_bytes());
        b[10] = self.port;
        b[11] = self.mtu;
        b[12] = self.link_layer;
        b[13] = self.gid_index;
        b[14] = Self::TAG;
        b[16..32].copy_from_slice(&self.gid);
        b
    }

    pub fn decode(b: &[u8]) -> Result<QpAddress> {
        if b.len() != Self::WIRE_LEN || b[14] != Self::TAG {
            return Err(Error::bootstrap(format!(
                "a peer sent a malformed IBGDA queue pair address ({} bytes, tag {:#x}): are all PEs running the same rshmem?",
                b.len(),
                b.get(14).copied().unwrap_or(0)
            )));
        }
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&b[16..32]);
        Ok(QpAddress {
            qpn: u32::from_le_bytes(b[0..4].try_into().unwrap()),
            psn: u32::from_le_bytes(b[4..8].try_into().unwrap()) & 0xff_ffff,
            lid: u16::from_le_bytes(b[8..10].try_into().unwrap()),
            port: b[10],
            mtu: b[11],
            link_layer: b[12],
            gid_index: b[13],
            gid,
        })
    }
}

/// Access rights of the heap registration and of RC QPs: local write, remote read/write/atomic.
pub const HEAP_ACCESS: c_int = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

/// Connection timing of every RC QP and DC target, the verbs QPs' attributes here and the DevX
/// commands of `ibgda::hw::plan` alike: 4.096 µs × 2^20 ≈ 4 s before a retry, 7 retries (and 7
/// RNR retries), 2^4 = 16 reads/atomics in flight each way, RNR NAK timer code 12, hop limit 255.
pub const ACK_TIMEOUT: u8 = 20;
pub const RETRY: u8 = 7;
pub const LOG_RD_ATOMIC: u8 = 4;
pub const MIN_RNR_NAK: u8 = 12;
pub const HOP_LIMIT: u8 = 255;

/// RESET → INIT.
pub fn init_attr(port: u8) -> (IbvQpAttr, c_int) {
    let a = IbvQpAttr { qp_state: IBV_QPS_INIT, pkey_index: 0, port_num: port, qp_access_flags: HEAP_ACCESS as u32, ..Default::default() };
    (a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
}

/// INIT → RTR toward `remote`. RoCE (and IB with a GID) uses the global route.
pub fn rtr_attr(local_port: u8, remote: &QpAddress, traffic_class: u8, sl: u8) -> (IbvQpAttr, c_int) {
    let mut a = IbvQpAttr {
        qp_state: IBV_QPS_RTR,
        path_mtu: remote.mtu.clamp(1, 5) as u32,
        dest_qp_num: remote.qpn,
        rq_psn: remote.psn,
        max_dest_rd_atomic: 1 << LOG_RD_ATOMIC,
        min_rnr_timer: MIN_RNR_NAK,
        ..Default::default()
    };
    a.ah_attr.dlid = remote.lid;
    a.ah_attr.sl = sl;
    a.ah_attr.port_num = local_port;
    if remote.link_layer == IBV_LINK_LAYER_ETHERNET || remote.gid != [0; 16] {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = remote.gid;
        a.ah_attr.grh.sgid_index = remote.gid_index;
        a.ah_attr.grh.hop_limit = HOP_LIMIT;
        a.ah_attr.grh.traffic_class = traffic_class;
    }
    (a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
}

/// RTR → RTS with our send PSN.
pub fn rts_attr(local_psn: u32) -> (IbvQpAttr, c_int) {
    let a = IbvQpAttr {
        qp_state: IBV_QPS_RTS,
        sq_psn: local_psn & 0xff_ffff,
        timeout: ACK_TIMEOUT,
        retry_cnt: RETRY,
        rnr_retry: RETRY,
        max_rd_atomic: 1 << LOG_RD_ATOMIC,
        ..Default::default()
    };
    (a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_without_a_device_is_a_clean_answer() {
        // Here: rdma-core installed (or not), no device. Either way: no panic, a plain answer.
        match devices() {
            Ok(d) => assert!(d.is_empty() || !d[0].name.is_empty()),
            Err(e) => assert!(e.message.contains("no RDMA"), "{e}"),
        }
        let s = discovery_summary();
        assert!(!s.is_empty());
        if devices().map(|d| d.is_empty()).unwrap_or(false) {
            assert!(s.starts_with("no RDMA device"), "{s}");
            assert!(Context::open("mlx5_0").is_err());
        }
    }

    #[test]
    fn a_refused_devx_context_names_the_cause_and_the_fix() {
        let e = verbs::devx_open_error("mlx5_0", std::io::Error::from_raw_os_error(libc::EPERM)).to_string();
        assert!(e.starts_with("nvshmem_init: opening RDMA device mlx5_0 for DevX (mlx5dv_open_device) failed:"), "{e}");
        assert!(e.contains("permission denied") && e.contains("CAP_NET_RAW"), "{e}");
        let e = verbs::devx_open_error("mlx5_1", std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)).to_string();
        assert!(e.contains("has no DevX") && e.contains("ConnectX-5 or newer"), "{e}");
    }

    #[test]
    fn state_machine_allows_only_the_path_to_rts() {
        assert_eq!(QpState::Reset.step(QpState::Init).unwrap(), QpState::Init);
        assert_eq!(QpState::Init.step(QpState::Rtr).unwrap(), QpState::Rtr);
        assert_eq!(QpState::Rtr.step(QpState::Rts).unwrap(), QpState::Rts);
        assert!(QpState::Reset.step(QpState::Rts).is_err());
        assert!(QpState::Init.step(QpState::Rts).is_err());
        assert!(QpState::Rts.step(QpState::Init).is_err());
        assert_eq!(QpState::Rts.step(QpState::Error).unwrap(), QpState::Error);
        assert_eq!(QpState::Error.step(QpState::Reset).unwrap(), QpState::Reset);
    }

    #[test]
    fn attributes_carry_the_fields_each_transition_needs() {
        let (a, m) = init_attr(1);
        assert_eq!((a.qp_state, a.port_num, a.qp_access_flags), (IBV_QPS_INIT, 1, HEAP_ACCESS as u32));
        assert_eq!(m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        let ib = QpAddress { qpn: 0x1234, psn: 77, lid: 9, port: 1, mtu: 5, link_layer: IBV_LINK_LAYER_INFINIBAND, ..Default::default() };
        let (a, m) = rtr_attr(1, &ib, 0, 3);
        assert_eq!((a.dest_qp_num, a.rq_psn, a.ah_attr.dlid, a.ah_attr.sl, a.path_mtu), (0x1234, 77, 9, 3, 5));
        assert_eq!(a.ah_attr.is_global, 0, "plain IB with no GID needs no global route");
        assert!(m & IBV_QP_AV != 0 && m & IBV_QP_DEST_QPN != 0 && m & IBV_QP_RQ_PSN != 0);
        let roce = QpAddress { link_layer: IBV_LINK_LAYER_ETHERNET, gid: [0xfe; 16], gid_index: 3, ..ib };
        let (a, _) = rtr_attr(1, &roce, 106, 0);
        assert_eq!((a.ah_attr.is_global, a.ah_attr.grh.sgid_index, a.ah_attr.grh.traffic_class), (1, 3, 106));
        assert_eq!(a.ah_attr.grh.dgid, [0xfe; 16]);
        let (a, m) = rts_attr(0x1ff_ffff);
        assert_eq!((a.qp_state, a.sq_psn), (IBV_QPS_RTS, 0xff_ffff));
        assert!(m & IBV_QP_SQ_PSN != 0 && m & IBV_QP_MAX_QP_RD_ATOMIC != 0);
    }

    #[test]
    fn addresses_round_trip_and_garbage_is_refused() {
        let a = QpAddress { qpn: 0xabcdef, psn: 0x123456, lid: 0xbeef, port: 2, mtu: 4, link_layer: 2, gid_index: 3, gid: [7; 16] };
        assert_eq!(QpAddress::decode(&a.encode()).unwrap(), a);
        assert!(QpAddress::decode(&[0u8; 32]).is_err());
        assert!(QpAddress::decode(&a.encode()[..31]).is_err());
    }

    #[test]
    fn nic_closest_to_the_gpu_wins() {
        assert_eq!(pci_path_of("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0").unwrap(), "pci0000:00/0000:00:01.0/0000:01:00.0");
        let gpu = "pci0000:00/0000:00:01.0/0000:02:00.0/0000:03:00.0";
        let near = DeviceInfo {
            name: "mlx5_1".into(),
            numa_node: Some(0),
            pci_path: Some("pci0000:00/0000:00:01.0/0000:02:00.0/0000:04:00.0".into()),
        };
        let far = DeviceInfo { name: "mlx5_0".into(), numa_node: Some(0), pci_path: Some("pci0000:00/0000:00:03.0/0000:05:00.0".into()) };
        let other_root = DeviceInfo { name: "mlx5_2".into(), numa_node: Some(1), pci_path: Some("pci0000:80/0000:80:01.0".into()) };
        assert_eq!(pci_distance(near.pci_path.as_ref().unwrap(), gpu), 2);
        assert_eq!(pci_distance(other_root.pci_path.as_ref().unwrap(), gpu), u32::MAX);
        let nics = [far.clone(), other_root, near.clone()];
        assert_eq!(closest_nic(&nics, gpu, Some(0)).unwrap().name, "mlx5_1");
    }

    #[test]
    fn registration_tries_dma_buf_first_then_by_address() {
        let mut mem = 0u8;
        let ok: *mut u8 = &mut mem;
        let null = std::ptr::null_mut::<u8>();
        let reg = |dmabuf, by_dmabuf: *mut u8, by_address: *mut u8, calls: &mut Vec<String>| {
            let calls = std::cell::RefCell::new(calls);
            register_dmabuf_first(
                "4096 bytes at 0x1000 (test)",
                dmabuf,
                "reg_dmabuf",
                |fd, offset| {
                    calls.borrow_mut().push(format!("dmabuf {fd} {offset}"));
                    by_dmabuf
                },
                "reg_addr",
                || {
                    calls.borrow_mut().push("address".into());
                    by_address
                },
            )
        };
        // A dma-buf that registers: no call by address, no reason given.
        let mut calls = Vec::new();
        assert_eq!(reg(Some((7, 64)), ok, null, &mut calls).unwrap(), (ok, None));
        assert_eq!(calls, ["dmabuf 7 64"]);
        // No dma-buf: by address, saying why.
        let mut calls = Vec::new();
        let (p, why) = reg(None, ok, ok, &mut calls).unwrap();
        assert_eq!((p, calls.as_slice()), (ok, ["address".to_string()].as_slice()));
        assert_eq!(why.as_deref(), Some("no dma-buf handle for this memory"));
        // A dma-buf that fails: then by address, naming the failed call.
        let mut calls = Vec::new();
        let (p, why) = reg(Some((7, 0)), null, ok, &mut calls).unwrap();
        assert_eq!((p, calls.len()), (ok, 2));
        assert!(why.unwrap().starts_with("reg_dmabuf failed: "));
        // Both fail: one error naming the memory, both attempts and the fix.
        let e = reg(Some((7, 0)), null, null, &mut Vec::new()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::System);
        for part in ["registering 4096 bytes at 0x1000 (test) failed (reg_dmabuf failed: ", "; then reg_addr: ", "nvidia-peermem"] {
            assert!(e.message.contains(part), "{part:?} not in {}", e.message);
        }
    }
}
