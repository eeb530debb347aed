//! What `rshmem-info` says about the NIC path: the devices, which NIC IBGDA would use, the
//! doorbell path a PE would get and the first NIC's capabilities, each found by trying.

use crate::ib::devx::DevxCtx;
use crate::ib::doorbell::DoorbellPath;
use crate::ib::{self, Context};

use super::{caps, map_uar};

/// rshmem-info's NIC lines: the devices, the doorbell path and the first NIC's capabilities
/// (which NIC IBGDA uses is said once, by the IBGDA section: `ibgda::info`).
pub fn info_lines() -> Vec<String> {
    vec![
        format!("NICs: {}", ib::discovery_summary()),
        format!("IBGDA doorbell: {}", doorbell_probe()),
        format!("IBGDA NIC caps: {}", caps_probe()),
    ]
}

/// The first NIC's capabilities as QUERY_HCA_CAP reports them (what the queues are fitted to),
/// in words. NEVER MET HARDWARE past "no device".
pub fn caps_probe() -> String {
    let nics = match ib::devices() {
        Err(e) => return format!("not read: {}", e.message),
        Ok(d) if d.is_empty() => return "not read: no RDMA device".into(),
        Ok(d) => d,
    };
    let name = &nics[0].name;
    match Context::open(name).and_then(|c| DevxCtx::new(&c)).and_then(|mut d| caps::query(&mut d)) {
        Ok(c) => format!("{name}: {}", c.describe()),
        Err(e) => format!("not read on {name}: {}", e.message),
    }
}

/// Which doorbell path a PE on GPU 0 would get, found by trying the mapping on the first NIC;
/// in words. NEVER MET HARDWARE past "no device".
pub fn doorbell_probe() -> String {
    let nics = match ib::devices() {
        Err(e) => return format!("not decided: {}", e.message),
        Ok(d) if d.is_empty() => {
            return "not decided: no RDMA device, so no doorbell page to map (the software HCA model needs none)".into()
        }
        Ok(d) => d,
    };
    let gpu = crate::cuda::device_count()
        .ok()
        .filter(|n| *n > 0)
        .and_then(|_| crate::cuda::Device::get(0).ok())
        .and_then(|d| crate::cuda::PrimaryContext::retain(d).ok());
    let Some(gpu) = gpu else { return "not decided: no GPU to map the doorbell page into".into() };
    if let Err(e) = gpu.make_current() {
        return format!("not decided: {e}");
    }
    match Context::open(&nics[0].name).and_then(|c| c.alloc_uar()) {
        Err(e) => format!("not decided: {}", e.message),
        Ok(uar) => DoorbellPath::from_mapping(map_uar(&uar).map(|_| ())).describe(),
    }
}
