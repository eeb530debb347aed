//! IBGDA: GPU-initiated InfiniBand. The device posts mlx5 WQEs itself (device/ibgda/); this module
//! owns the shared descriptors ([`abi`]), the mlx5 formats' Rust mirror ([`mlx5`]), host-memory
//! queues ([`host`]) and the software HCA model ([`model`], `RSHMEM_IBGDA_NIC=model`) that plays
//! the NIC for those WQEs. The rdma-core path that creates real QPs is `crate::ib`.

pub mod abi;
pub mod host;
pub mod mlx5;
pub mod model;

use crate::error::{Error, ErrorKind};

/// Turns the first error CQE recorded on a QP into an error naming the operation and the PE.
/// `my_pe` is the PE that posted; `routine` the call that surfaced it (e.g. `nvshmem_quiet`).
pub fn qp_error(qp: &abi::QpState, my_pe: u32, routine: &'static str) -> Option<Error> {
    if qp.err_count == 0 {
        return None;
    }
    let target = if qp.kind == abi::QP_DCI { "a PE over DC".to_string() } else { format!("PE {}", qp.peer_pe) };
    Some(Error::new(
        ErrorKind::System,
        routine,
        format!(
            "IBGDA {} from PE {my_pe} to {target} failed: {} (CQE syndrome 0x{:02x}, vendor syndrome 0x{:02x}, \
             QP 0x{:06x}, WQE index {}{})",
            mlx5::opcode_name(qp.err_opcode),
            mlx5::syndrome_name(qp.err_syndrome),
            qp.err_syndrome,
            qp.err_vendor,
            qp.qpn,
            qp.err_wqe_index,
            if qp.err_count > 1 { format!("; {} error CQEs in all", qp.err_count) } else { String::new() },
        ),
    ))
}
