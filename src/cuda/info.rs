//! What rshmem-info says about GPUs, without starting a job: the devices (name, memory, PCI
//! bus id, NUMA node, compute capability), the peer-access matrix the GPU runtime checks at
//! nvshmem_init, the heap settings, and the transport a job of one PE per GPU would use
//! between every pair of PEs. Works (and says so) where there is no driver or no GPU.

use super::{device_count, driver, granularity, sys, Device};

/// The NUMA node of the PCI device `bus_id` (as cuDeviceGetPCIBusId writes it), from sysfs.
fn numa_node(bus_id: &str) -> String {
    let path = format!("/sys/bus/pci/devices/{}/numa_node", bus_id.to_ascii_lowercase());
    match std::fs::read_to_string(&path) {
        Ok(s) if s.trim() == "-1" => "none (single node)".into(),
        Ok(s) => s.trim().to_string(),
        Err(_) => "unknown".into(),
    }
}

fn gib(bytes: usize) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The GPU section of rshmem-info, as lines of text.
pub fn report() -> Vec<String> {
    let mut out = Vec::new();
    let d = match driver() {
        Ok(d) => d,
        Err(e) => {
            out.push(format!("GPUs: none ({}); nvshmem_* routines will report NVSHMEMX_ERROR_GPU_NOT_SELECTED", e.text));
            return out;
        }
    };
    let n = match device_count() {
        Ok(0) | Err(_) => {
            out.push(format!(
                "GPUs: none (CUDA driver {}.{} sees no device; CUDA_VISIBLE_DEVICES={:?})",
                d.version / 1000,
                d.version % 1000 / 10,
                std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_default()
            ));
            return out;
        }
        Ok(n) => n,
    };
    out.push(format!("GPUs: {n} (CUDA driver {}.{})", d.version / 1000, d.version % 1000 / 10));
    let devs: Vec<Device> = (0..n).filter_map(|i| Device::get(i).ok()).collect();
    for (i, dev) in devs.iter().enumerate() {
        let attr = |a| dev.attribute(a).unwrap_or(-1);
        let pci = dev.pci_bus_id().unwrap_or_else(|_| "?".into());
        let vmm = attr(sys::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 1
            && attr(sys::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) == 1;
        out.push(format!(
            "  GPU {i}: {}, {}, PCI {pci}, NUMA node {}, compute capability {}.{}, {} SMs, VMM heap {}, heap granularity {}",
            dev.name().unwrap_or_else(|_| "?".into()),
            dev.total_memory().map(gib).unwrap_or_else(|_| "?".into()),
            numa_node(&pci),
            attr(sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            attr(sys::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
            attr(sys::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            if vmm { "supported" } else { "NOT supported (cuMem* with POSIX fd handles needed)" },
            granularity(*dev).map(|g| format!("{} KiB", g >> 10)).unwrap_or_else(|_| "?".into()),
        ));
    }
    out.push("  peer access (cuDeviceCanAccessPeer / native atomics / performance rank; row = from, column = to):".into());
    let mut header = "          ".to_string();
    for j in 0..devs.len() {
        header += &format!("{:>12}", format!("GPU {j}"));
    }
    out.push(header);
    for (i, a) in devs.iter().enumerate() {
        let mut row = format!("    GPU {i:<2}");
        for (j, b) in devs.iter().enumerate() {
            let cell = if i == j {
                "self".to_string()
            } else {
                match (a.can_access_peer(*b), a.p2p(*b), a.p2p_rank(*b)) {
                    (Ok(true), Ok((_, atomics)), rank) => {
                        format!(
                            "yes/{}/{}",
                            if atomics { "atom" } else { "no-atom" },
                            rank.map(|r| r.to_string()).unwrap_or_else(|_| "?".into())
                        )
                    }
                    (Ok(false), _, _) => "no".into(),
                    _ => "?".into(),
                }
            };
            row += &format!("{cell:>12}");
        }
        out.push(row);
    }
    out.push(format!("  transports of a job with one PE per GPU (PE i on GPU i; rshmemrun -n {n}):"));
    for i in 0..devs.len() {
        for j in i + 1..devs.len() {
            let ok = devs[i].can_access_peer(devs[j]).unwrap_or(false) && devs[j].can_access_peer(devs[i]).unwrap_or(false);
            out.push(format!(
                "    PE {i} <-> PE {j}: {}",
                if ok {
                    "p2p (loads, stores and atomics through the mapped peer heap)"
                } else {
                    "none: no peer access, and this build has no network/proxy transport for GPU PEs (nvshmem_init fails)"
                }
            ));
        }
    }
    if devs.len() == 1 {
        out.push("    one GPU: several PEs on it share it (p2p to themselves), which works but competes for the GPU".into());
    }
    out
}
