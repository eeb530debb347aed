//! The IBGDA section of `rshmem-info`: which NIC, RC or DC with their counts and QP mapping, the
//! queue settings, and in plain words what has run where.

use super::abi::{MAP_BY_CTA, MAP_BY_DCT, MAP_BY_SM, MAP_BY_WARP};
use super::gpu::QueueConfig;
use super::{dc, IbgdaConfig, NicKind};

fn map_name(m: u32) -> &'static str {
    match m {
        MAP_BY_CTA => "CTA",
        MAP_BY_SM => "SM",
        MAP_BY_WARP => "warp",
        MAP_BY_DCT => "target DCT",
        _ => "?",
    }
}

/// The lines, from the settings `f(short name) -> (variable, value)` (`crate::env::current`).
pub fn lines_from(f: impl Fn(crate::env::Setting) -> (String, String) + Copy) -> Vec<String> {
    let mut v = vec!["IBGDA (GPU-initiated InfiniBand; the route to peers without P2P, e.g. with NVSHMEM_DISABLE_P2P=1):".to_string()];
    let (c, q) = match (IbgdaConfig::parse(f), QueueConfig::parse(f)) {
        (Ok(c), Ok(q)) => (c, q),
        (Err(e), _) | (_, Err(e)) => {
            v.push(format!("  settings are not valid, nvshmem_init would stop: {e}"));
            return v;
        }
    };
    v.push(match (c.nic, c.nic_explicit) {
        (NicKind::Model, _) => "  NIC: the software HCA model (RSHMEM_IBGDA_NIC=model): host threads play the ConnectX".to_string(),
        (NicKind::Hardware, false) => "  NIC: auto (RSHMEM_IBGDA_NIC=auto, the default): a ConnectX through rdma-core when its set-up and every PE's init self-test pass; otherwise device operations to PEs on other hosts take the proxy transport, and the reason is logged at WARN".to_string(),
        (NicKind::Hardware, true) => "  NIC: a ConnectX through rdma-core (RSHMEM_IBGDA_NIC=hw): a failed set-up or self-test stops nvshmem_init with the reason (auto would fall back to the proxy transport)".to_string(),
    });
    v.push(format!(
        "  self-test at init: each PE, on its first QP toward the next remote PE, does an RDMA READ, WRITE, READ back, fetch-add and READ of its own word in that PE's heap, then restores it, within {} s; a lost completion, an error completion or a wrong value is the reason",
        crate::ibgda::hw::SELF_TEST_TIMEOUT.as_secs()
    ));
    v.push("  route per PE pair: same host with peer access: loads and stores; across the network: IBGDA if the self-test passed on every PE, else the proxy transport (nvshmem_init logs every pair as \"PE a -> PE b: <route>[, because <reason>]\" with NVSHMEM_DEBUG=INFO)".to_string());
    if c.num_rc_per_pe > 0 {
        v.push(format!(
            "  transport: RC, {} QP(s) per remote PE (NVSHMEM_IBGDA_NUM_RC_PER_PE), a thread's QP chosen by its {} (NVSHMEM_IBGDA_RC_MAP_BY: cta, sm or warp); NVSHMEM_IBGDA_NUM_RC_PER_PE=0 selects DC",
            c.num_rc_per_pe,
            map_name(c.rc_map_by)
        ));
    } else {
        let dcis = match c.num_dci {
            Some(n) => format!("{n} DC initiator(s) per PE"),
            None => format!("one DC initiator per SM of the GPU, at most {},", dc::AUTO_DCI_CAP),
        };
        v.push(format!(
            "  transport: DC (NVSHMEM_IBGDA_NUM_RC_PER_PE=0): {dcis} shared by every target (NVSHMEM_IBGDA_NUM_DCI; 0 or less: one per SM); a thread's DCI chosen by its {} (NVSHMEM_IBGDA_DCI_MAP_BY: cta, sm, warp or dct); {} DC target(s) per PE (NVSHMEM_IBGDA_NUM_DCT), whose numbers and DC key every PE learns at init",
            map_name(c.dci_map_by),
            c.num_dct
        ));
    }
    v.push(format!(
        "  queues: {} WQE blocks per QP (NVSHMEM_QP_DEPTH), a doorbell at least every {} blocks (NVSHMEM_IBGDA_NUM_REQUESTS_IN_BATCH); lanes of a warp calling p on consecutive words share one inline WQE per 192 bytes",
        1u32 << q.log_nwqes,
        q.batch
    ));
    if c.nic == NicKind::Model {
        v.push(format!(
            "  model: {} NIC thread(s) per PE (RSHMEM_IBGDA_MODEL_THREADS), send queues in {} memory (RSHMEM_IBGDA_MODEL_SQ){}",
            q.model_threads,
            if q.sq_host { "pinned host" } else { "GPU" },
            if q.sink { ", sink mode: no data moves (RSHMEM_IBGDA_MODEL_SINK=1)" } else { "" }
        ));
    }
    v.push("  tested: RC and DC on the software HCA model only (CI: the device code built for the host; GPU machine: ctest/ibgda/run_gpu.sh), the self-test and the set-up sequence on the model and a recording fake; nothing has met a ConnectX NIC".to_string());
    v
}

/// The lines for the current environment.
pub fn lines() -> Vec<String> {
    lines_from(crate::env::current)
}

#[cfg(test)]
mod tests {
    use super::super::table;
    use super::*;

    #[test]
    fn info_says_rc_or_dc_with_counts_and_mapping() {
        let rc = lines_from(table(&[])).join("\n");
        assert!(rc.contains("transport: RC, 2 QP(s) per remote PE") && rc.contains("by its CTA"), "{rc}");
        assert!(rc.contains("nothing has met a ConnectX NIC"), "{rc}");
        assert!(rc.contains("NIC: auto (RSHMEM_IBGDA_NIC=auto, the default)") && rc.contains("take the proxy transport"), "{rc}");
        assert!(rc.contains("self-test at init") && rc.contains("route per PE pair"), "{rc}");
        let hw = lines_from(table(&[(crate::env::IBGDA_NIC, "hw")])).join("\n");
        assert!(hw.contains("(RSHMEM_IBGDA_NIC=hw): a failed set-up or self-test stops nvshmem_init"), "{hw}");
        let dc = lines_from(table(&[
            (crate::env::IBGDA_NUM_RC_PER_PE, "0"),
            (crate::env::IBGDA_NUM_DCI, "0"),
            (crate::env::IBGDA_DCI_MAP_BY, "dct"),
            (crate::env::IBGDA_NIC, "model"),
        ]))
        .join("\n");
        assert!(dc.contains("transport: DC") && dc.contains("one DC initiator per SM") && dc.contains("by its target DCT"), "{dc}");
        assert!(dc.contains("2 DC target(s) per PE") && dc.contains("model: 1 NIC thread(s)"), "{dc}");
        let bad = lines_from(table(&[(crate::env::IBGDA_DCI_MAP_BY, "lane")])).join("\n");
        assert!(bad.contains("not valid") && bad.contains("NVSHMEM_IBGDA_DCI_MAP_BY"), "{bad}");
    }
}
