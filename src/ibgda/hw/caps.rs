//! The plan against what the NIC can do: QUERY_HCA_CAP ([`query`]) is read before anything is
//! sized, and [`fit`] clamps the queue depth to the device's limits (saying so), drops DC on a
//! NIC without it when RC carries the traffic, and refuses what cannot work, naming the setting.
//!
//! Runs in CI against the recording call table with canned outputs; NEVER MET HARDWARE.

use crate::error::{Error, ErrorKind, Result};
use crate::ib::devx::DevxOps;
use crate::ib::prm::{self, HcaCaps};

use super::plan::Plan;
use crate::ib::LOG_RD_ATOMIC;

const ROUTINE: &str = "nvshmem_init";
/// The device splits larger transfers into WQEs of 2^30 bytes (MAX_WQE_BYTES, ibgda_post.h),
/// which is also the message limit the QPs are created with (`prm::LOG_MSG_MAX`).
const LOG_WQE_BYTES: u8 = prm::LOG_MSG_MAX as u8;
/// NVSHMEM_QP_DEPTH's smallest accepted value, 16.
const MIN_LOG_DEPTH: u16 = 4;

/// Reads the current general device capabilities.
pub fn query(ops: &mut dyn DevxOps) -> Result<HcaCaps> {
    let out = ops.query("the device capabilities", &prm::query_hca_cap(), prm::caps::QUERY_HCA_CAP_OUT_BYTES)?;
    HcaCaps::decode(&out)
        .map_err(|why| Error::new(ErrorKind::System, ROUTINE, format!("IBGDA set-up: reading the NIC's capabilities: {why}")))
}

fn unsupported(what: String) -> Error {
    Error::new(ErrorKind::Unsupported, ROUTINE, what)
}

/// Fits `plan` to `caps`. `depth` is the queue-depth setting as `crate::env::current` gives it
/// (`("default", value)` when unset). Returns what it changed or warns about, in words.
pub fn fit(plan: &mut Plan, caps: &HcaCaps, nic: &str, depth: (String, String)) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let dc = plan.num_rc == 0;
    if dc && !caps.dct {
        return Err(unsupported(format!(
            "NVSHMEM_IBGDA_NUM_RC_PER_PE=0 asks for the DC transport (DC initiators and targets: NVSHMEM_IBGDA_NUM_DCI, NVSHMEM_IBGDA_NUM_DCT, \
             NVSHMEM_IBGDA_DCI_MAP_BY), but NIC {nic} reports no DC target support (QUERY_HCA_CAP dct = 0); set NVSHMEM_IBGDA_NUM_RC_PER_PE=1 or more to use RC"
        )));
    }
    if !dc && !caps.rc {
        return Err(unsupported(format!(
            "NVSHMEM_IBGDA_NUM_RC_PER_PE={} asks for RC QPs, but NIC {nic} reports no RC support (QUERY_HCA_CAP rc = 0); set NVSHMEM_IBGDA_NUM_RC_PER_PE=0 to use DC",
            plan.num_rc
        )));
    }
    if !dc && !caps.dct && (plan.num_dci > 0 || plan.num_dct > 0) {
        notes.push(format!(
            "NIC {nic} has no DC support (QUERY_HCA_CAP dct = 0): no DC initiators or targets are created; RC carries everything"
        ));
        (plan.num_dci, plan.num_dct) = (0, 0);
    }
    if caps.log_max_msg < LOG_WQE_BYTES {
        return Err(unsupported(format!(
            "NIC {nic} takes messages of at most 2^{} bytes (QUERY_HCA_CAP log_max_msg), but IBGDA posts transfers in pieces of up to 2^{LOG_WQE_BYTES} bytes; this NIC cannot be used for IBGDA (set RSHMEM_IBGDA_NIC=model to run on the software HCA model)",
            caps.log_max_msg
        )));
    }
    let ra = caps.log_max_ra_req_qp.min(caps.log_max_ra_res_qp);
    if ra < LOG_RD_ATOMIC {
        return Err(unsupported(format!(
            "NIC {nic} allows 2^{} RDMA READs/atomics outstanding and 2^{} answered per QP (QUERY_HCA_CAP log_max_ra_req_qp / log_max_ra_res_qp), fewer than the 2^{LOG_RD_ATOMIC} IBGDA's QPs are set up with; this NIC cannot be used for IBGDA (set RSHMEM_IBGDA_NIC=model to run on the software HCA model)",
            caps.log_max_ra_req_qp, caps.log_max_ra_res_qp
        )));
    }
    let most = caps.log_max_qp_sz.min(caps.log_max_cq_sz) as u16;
    if plan.log_nwqes > most {
        let (var, v) = depth;
        let setting = if var == "default" { format!("NVSHMEM_QP_DEPTH (default {v})") } else { format!("{var}={v}") };
        if most < MIN_LOG_DEPTH {
            return Err(unsupported(format!(
                "NIC {nic} allows queues of at most 2^{} WQE blocks and CQs of 2^{} CQEs (QUERY_HCA_CAP log_max_qp_sz / log_max_cq_sz), fewer than the smallest {setting} accepts (16)",
                caps.log_max_qp_sz, caps.log_max_cq_sz
            )));
        }
        notes.push(format!(
            "{setting} asks for {} WQEs per queue, but NIC {nic} allows queues of 2^{} WQE blocks and CQs of 2^{} CQEs: using {} (set {} or less to silence this)",
            1u64 << plan.log_nwqes,
            caps.log_max_qp_sz,
            caps.log_max_cq_sz,
            1u64 << most,
            1u64 << most
        ));
        plan.log_nwqes = most;
    }
    if !caps.atomic {
        notes.push(format!(
            "NIC {nic} reports no RDMA atomics (QUERY_HCA_CAP atomic = 0): IBGDA atomic operations toward other nodes will fail"
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ib::devx::fake::{Call, Recorder};

    fn caps() -> HcaCaps {
        HcaCaps {
            log_max_qp_sz: 15,
            log_max_cq_sz: 22,
            log_max_ra_req_qp: 5,
            log_max_ra_res_qp: 5,
            log_max_msg: 30,
            dct: true,
            atomic: true,
            rc: true,
            log_bf_reg_size: 9,
        }
    }

    fn plan(num_rc: usize, log_nwqes: u16) -> Plan {
        Plan { me: 0, npes: 2, num_rc, num_dci: 4, num_dct: 2, log_nwqes, remote: vec![false, true] }
    }

    fn set(var: &str, v: &str) -> (String, String) {
        (var.to_string(), v.to_string())
    }

    #[test]
    fn the_query_is_issued_and_its_answer_decoded() {
        let mut rec = Recorder::default();
        rec.answer = vec![0u8; prm::caps::QUERY_HCA_CAP_OUT_BYTES];
        rec.answer[16 + 0x11] = 12; // log_max_qp_sz
        rec.answer[16 + 0x43] = 0x20; // dct
        let c = query(&mut rec).unwrap();
        assert_eq!((c.log_max_qp_sz, c.dct, c.atomic), (12, true, false));
        let Call::Query { opcode, cmd, .. } = &rec.calls[0] else { panic!("{:?}", rec.calls) };
        assert_eq!((*opcode, prm::get(cmd, prm::HDR_OP_MOD)), (0x100, 1));
        rec.answer[0] = 0x4;
        let e = query(&mut rec).unwrap_err().to_string();
        assert!(e.starts_with("nvshmem_init: ") && e.contains("capabilities") && e.contains("status 0x4"), "{e}");
        let e = query(&mut Recorder::failing_at(0)).unwrap_err().to_string();
        assert!(e.contains("DevX QUERY_HCA_CAP for the device capabilities failed"), "{e}");
    }

    #[test]
    fn a_deep_queue_is_clamped_to_the_nic_and_the_setting_named() {
        let mut p = plan(2, 15);
        let small = HcaCaps { log_max_qp_sz: 12, log_max_cq_sz: 13, ..caps() };
        let notes = fit(&mut p, &small, "mlx5_0", set("NVSHMEM_QP_DEPTH", "32768")).unwrap();
        assert_eq!(p.log_nwqes, 12);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("NVSHMEM_QP_DEPTH=32768 asks for 32768") && notes[0].contains("using 4096"), "{}", notes[0]);
        // The CQ limit counts too.
        let mut p = plan(2, 14);
        fit(&mut p, &HcaCaps { log_max_cq_sz: 11, ..caps() }, "mlx5_0", set("default", "16384")).unwrap();
        assert_eq!(p.log_nwqes, 11);
        // Within the limits nothing changes and nothing is said.
        let mut p = plan(2, 10);
        assert!(fit(&mut p, &caps(), "mlx5_0", set("default", "1024")).unwrap().is_empty());
        assert_eq!(p, plan(2, 10));
        let e = fit(&mut plan(2, 10), &HcaCaps { log_max_qp_sz: 3, ..caps() }, "mlx5_0", set("default", "1024")).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_QP_DEPTH (default 1024)") && e.contains("16"), "{e}");
    }

    #[test]
    fn dc_is_refused_on_a_nic_without_dc_targets_and_dropped_under_rc() {
        let no_dc = HcaCaps { dct: false, ..caps() };
        let e = fit(&mut plan(0, 10), &no_dc, "mlx5_1", set("default", "1024")).unwrap_err().to_string();
        assert!(e.starts_with("nvshmem_init: NVSHMEM_IBGDA_NUM_RC_PER_PE=0") && e.contains("NVSHMEM_IBGDA_DCI_MAP_BY"), "{e}");
        assert!(e.contains("mlx5_1") && e.contains("set NVSHMEM_IBGDA_NUM_RC_PER_PE=1 or more"), "{e}");
        let mut p = plan(2, 10);
        let notes = fit(&mut p, &no_dc, "mlx5_1", set("default", "1024")).unwrap();
        assert_eq!((p.num_dci, p.num_dct, p.num_rc), (0, 0, 2));
        assert!(notes[0].contains("no DC"), "{notes:?}");
        // With DC support, a DC plan keeps its initiators and targets.
        let mut p = plan(0, 10);
        fit(&mut p, &caps(), "mlx5_1", set("default", "1024")).unwrap();
        assert_eq!((p.num_dci, p.num_dct), (4, 2));
    }

    #[test]
    fn what_cannot_work_is_refused_and_missing_atomics_warned() {
        let d = || set("default", "1024");
        let e = fit(&mut plan(2, 10), &HcaCaps { rc: false, ..caps() }, "m", d()).unwrap_err().to_string();
        assert!(e.contains("no RC support") && e.contains("NVSHMEM_IBGDA_NUM_RC_PER_PE=0"), "{e}");
        let e = fit(&mut plan(2, 10), &HcaCaps { log_max_msg: 29, ..caps() }, "m", d()).unwrap_err().to_string();
        assert!(e.contains("2^29") && e.contains("log_max_msg"), "{e}");
        let e = fit(&mut plan(2, 10), &HcaCaps { log_max_ra_res_qp: 3, ..caps() }, "m", d()).unwrap_err().to_string();
        assert!(e.contains("log_max_ra_res_qp"), "{e}");
        let notes = fit(&mut plan(2, 10), &HcaCaps { atomic: false, ..caps() }, "m", d()).unwrap();
        assert!(notes.len() == 1 && notes[0].contains("no RDMA atomics"), "{notes:?}");
    }
}
