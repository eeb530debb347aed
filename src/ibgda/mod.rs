//! IBGDA: GPU-initiated InfiniBand. The device posts mlx5 WQEs itself (device/ibgda/); this module
//! owns the shared descriptors ([`abi`]), the mlx5 formats' Rust mirror ([`mlx5`]), the GPU
//! runtime's set-up ([`gpu`], [`warmup`]), the DC transport's shared pieces ([`dc`]) and the
//! `rshmem-info` section ([`info`]); then the two NICs: [`model`], the software HCA model
//! (`RSHMEM_IBGDA_NIC=model`, with its host-memory queues in [`model::host`]) that plays the
//! NIC for those WQEs, and [`hw`], a ConnectX through rdma-core/DevX (`crate::ib`).
//!
//! Transports: RC (`NVSHMEM_IBGDA_NUM_RC_PER_PE` QPs per remote PE, the default) or DC
//! (`NVSHMEM_IBGDA_NUM_RC_PER_PE=0`: DC initiators shared by all targets, DC targets per PE,
//! every WQE carrying the target's address vector). Lanes of a warp calling `p` on consecutive
//! words share inline WQEs (device/ibgda/ibgda_coalesce.h).
//!
//! What has run where: all of it on the software HCA model only. CI runs the device posting
//! code compiled for the host against the model (tests/ibgda_model.rs, tests/ibgda_dc.rs) and
//! checks every segment and whole DC WQEs against rdma-core's `<infiniband/mlx5dv.h>`
//! (tests/ibgda_layout.rs); the GPU tests (ctest/ibgda/run_gpu.sh) run the same code on GPUs
//! against the model. Nothing here has met a ConnectX NIC: the model's answers to a wrong DC key
//! or an unknown DCT, for one, are our reading of how a ConnectX behaves, not an observation.

pub use crate::abi::ibgda as abi;
pub mod cuda;
pub mod dc;
pub mod gpu;
pub mod host_rma;
pub mod hw;
pub mod info;
pub mod mlx5;
pub mod model;
pub mod regs;
pub mod warmup;

use crate::env;
use crate::error::{Error, ErrorKind, Result};
use gpu::{GpuIbgda, Setup};
use hw::{choose_remote_path, pair_lines, HwIbgda, RemotePath};

/// Turns the first error CQE recorded on a QP into an error naming the operation and the PE.
/// `my_pe` is the PE that posted; `routine` the call that surfaced it (e.g. `nvshmem_quiet`).
/// On a DCI the target comes from the failed WQE's address vector (`err_rlid`, `err_dct`);
/// `dct_owner` maps that to the PE whose DCT it is (see [`qp_error_dc`]).
pub fn qp_error(qp: &abi::QpState, my_pe: u32) -> Option<Error> {
    qp_error_dc(qp, my_pe, &|_, _| None)
}

/// [`qp_error`] for QPs that may be DCIs: `dct_owner(lid, dct)` is the PE owning that DC target.
pub fn qp_error_dc(qp: &abi::QpState, my_pe: u32, dct_owner: &dyn Fn(u16, u32) -> Option<u32>) -> Option<Error> {
    if qp.err_count == 0 {
        return None;
    }
    let target = if qp.kind != abi::QP_DCI {
        format!("PE {}", qp.peer_pe)
    } else if qp.err_dct == 0 {
        "a PE over DC".to_string()
    } else {
        match dct_owner(qp.err_rlid, qp.err_dct) {
            Some(pe) => format!("PE {pe} over DC (DCT 0x{:06x} at LID {})", qp.err_dct, qp.err_rlid),
            None => format!("DCT 0x{:06x} at LID {}, which no PE owns,", qp.err_dct, qp.err_rlid),
        }
    };
    Some(Error::of(
        ErrorKind::System,
        format!(
            "IBGDA {} from PE {my_pe} to {target} failed: {}{} (CQE syndrome 0x{:02x}, vendor syndrome 0x{:02x}, \
             QP 0x{:06x}, WQE index {}{})",
            mlx5::opcode_name(qp.err_opcode),
            mlx5::syndrome_name(qp.err_syndrome),
            abi::model_vendor_note(qp.err_vendor).map(|n| format!(": {n}")).unwrap_or_default(),
            qp.err_syndrome,
            qp.err_vendor,
            qp.qpn,
            qp.err_wqe_index,
            if qp.err_count > 1 { format!("; {} error CQEs in all", qp.err_count) } else { String::new() },
        ),
    ))
}

/// Who plays the NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NicKind {
    /// A ConnectX through rdma-core (`crate::ib`).
    Hardware,
    /// The software HCA model ([`model`]).
    Model,
}

/// The NVSHMEM_IBGDA_* settings, parsed and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IbgdaConfig {
    pub nic: NicKind,
    /// `RSHMEM_IBGDA_NIC=hw` (or `model`) was asked for: a failed self-test is an error, not a
    /// fall-back to the proxy transport (`auto`, the default).
    pub nic_explicit: bool,
    pub num_rc_per_pe: u32,
    /// `None`: automatic (one per SM), from a value <= 0.
    pub num_dci: Option<u32>,
    pub num_dct: u32,
    pub dci_map_by: u32,
    pub rc_map_by: u32,
}

fn bad(var: &str, value: &str, expected: &str) -> Error {
    Error::invalid("nvshmem_init", format!("environment variable {var}={value:?} is not valid: expected {expected}"))
}

fn map_by(var: &str, v: &str, allow_dct: bool) -> Result<u32> {
    match v.trim().to_ascii_lowercase().as_str() {
        "cta" => Ok(abi::MAP_BY_CTA),
        "sm" => Ok(abi::MAP_BY_SM),
        "warp" => Ok(abi::MAP_BY_WARP),
        "dct" if allow_dct => Ok(abi::MAP_BY_DCT),
        _ => Err(bad(var, v, if allow_dct { "cta, sm, warp or dct" } else { "cta, sm or warp" })),
    }
}

impl IbgdaConfig {
    /// Reads the settings through `f(short name) -> (variable, value)` (env::current in the
    /// runtime; a table in tests).
    pub fn parse(f: impl Fn(env::Setting) -> (String, String)) -> Result<IbgdaConfig> {
        let (var, v) = f(env::IBGDA_NIC);
        let (nic, nic_explicit) = match v.trim().to_ascii_lowercase().as_str() {
            "auto" => (NicKind::Hardware, false),
            "hw" | "hardware" => (NicKind::Hardware, true),
            "model" => (NicKind::Model, true),
            _ => return Err(bad(&var, &v, "auto, hw or model")),
        };
        let count = |name: env::Setting| -> Result<i64> {
            let (var, v) = f(name);
            v.trim().parse::<i64>().map_err(|_| bad(&var, &v, "a whole number"))
        };
        let num_rc = count(env::IBGDA_NUM_RC_PER_PE)?;
        if !(0..=1024).contains(&num_rc) {
            let (var, v) = f(env::IBGDA_NUM_RC_PER_PE);
            return Err(bad(&var, &v, "0 to 1024"));
        }
        let num_dci = count(env::IBGDA_NUM_DCI)?;
        if num_dci > dc::MAX_DCI as i64 {
            let (var, v) = f(env::IBGDA_NUM_DCI);
            return Err(bad(&var, &v, &format!("at most {} (or 0 or less: one per SM, at most {})", dc::MAX_DCI, dc::AUTO_DCI_CAP)));
        }
        let num_dct = count(env::IBGDA_NUM_DCT)?;
        if !(1..=dc::MAX_DCT as i64).contains(&num_dct) {
            let (var, v) = f(env::IBGDA_NUM_DCT);
            return Err(bad(&var, &v, &format!("1 to {}", dc::MAX_DCT)));
        }
        let (var, v) = f(env::IBGDA_DCI_MAP_BY);
        let dci_map_by = map_by(&var, &v, true)?;
        let (var, v) = f(env::IBGDA_RC_MAP_BY);
        let rc_map_by = map_by(&var, &v, false)?;
        Ok(IbgdaConfig {
            nic,
            nic_explicit,
            num_rc_per_pe: num_rc as u32,
            num_dci: (num_dci > 0).then_some(num_dci as u32),
            num_dct: num_dct as u32,
            dci_map_by,
            rc_map_by,
        })
    }

    pub fn from_env() -> Result<IbgdaConfig> {
        IbgdaConfig::parse(env::current)
    }
}

/// IBGDA as the GPU runtime holds it: on the software HCA model or on a ConnectX.
pub enum Ibgda {
    Model(Box<GpuIbgda>),
    Hardware(Box<HwIbgda>),
}

/// The route to the PEs across the network, as [`Ibgda::choose`] decided it.
pub enum Route {
    Ibgda(Ibgda),
    /// The proxy transport carries device operations to those PEs; why IBGDA is not used.
    Proxy(String),
}

impl Ibgda {
    /// Sets IBGDA up toward the PEs `s.remote` names on the NIC `RSHMEM_IBGDA_NIC` chooses,
    /// runs the self-test on every PE together, and decides ([`choose_remote_path`]): IBGDA, or
    /// the proxy transport with the reason (`auto` only), or a named error (`hw`, `model`).
    /// Collective.
    pub fn choose(s: &Setup) -> Result<Route> {
        let config = IbgdaConfig::from_env()?;
        let (outcome, built) = match config.nic {
            NicKind::Model => return GpuIbgda::create(s).map(|m| Route::Ibgda(Ibgda::Model(Box::new(m)))),
            NicKind::Hardware => match HwIbgda::create(s) {
                Ok(h) => (h.self_test.clone(), Some(h)),
                Err(e) if config.nic_explicit => return Err(e),
                Err(e) => (Err(format!("PE {}: the NIC set-up failed: {}", s.me, e.message)), None),
            },
        };
        let path = choose_remote_path(&config, &outcome)?;
        for line in pair_lines(s.me, &s.remote, &path) {
            crate::log::info(&line);
        }
        Ok(match path {
            // A passed self-test comes only from a NIC that was set up.
            RemotePath::Ibgda => Route::Ibgda(Ibgda::Hardware(Box::new(built.expect("a NIC that passed its self-test")))),
            // A NIC that failed its self-test is torn down here.
            RemotePath::Proxy(why) => Route::Proxy(why),
        })
    }

    /// Device address of the `rshmem_ibgda_state` for the device state.
    pub fn state_addr(&self) -> u64 {
        match self {
            Ibgda::Model(m) => m.state_addr(),
            Ibgda::Hardware(h) => h.state_addr(),
        }
    }
    /// The heaps grew to `mapped` bytes each: the registrations follow. Collective (the
    /// hardware NIC swaps the new keys through `boot`); a failure names nvshmem_malloc.
    pub fn heap_grew(&self, boot: &dyn crate::bootstrap::Bootstrap, mapped: usize) -> Result<()> {
        match self {
            Ibgda::Model(m) => {
                m.heap_grew(mapped);
                Ok(())
            }
            Ibgda::Hardware(h) => h.heap_grew(boot, mapped),
        }
    }
    /// nvshmemx_buffer_register: the NIC may read and write `[addr, addr+len)`, and device puts
    /// from it and gets into it name it in one WQE.
    pub fn register_buffer(&self, addr: u64, len: usize) -> Result<()> {
        match self {
            Ibgda::Model(m) => m.register_buffer(addr, len),
            Ibgda::Hardware(h) => h.register_buffer(addr, len),
        }
    }
    /// nvshmemx_buffer_unregister (`Some(addr)`) or _unregister_all (`None`).
    pub fn unregister_buffer(&self, addr: Option<u64>) -> Result<()> {
        match self {
            Ibgda::Model(m) => m.unregister_buffer(addr),
            Ibgda::Hardware(h) => h.unregister_buffer(addr),
        }
    }
    /// The host's own queues for host-initiated RMA and AMOs toward IBGDA peers: on the model
    /// NIC; None on a ConnectX, where host QPs are not created yet.
    pub fn host(&self) -> Option<&host_rma::HostQueues> {
        match self {
            Ibgda::Model(m) => m.host.as_ref(),
            Ibgda::Hardware(_) => None,
        }
    }
    /// Host quiet: everything the device posted has completed; the first error, in words.
    pub fn drain(&self) -> Result<()> {
        match self {
            Ibgda::Model(m) => m.drain(),
            Ibgda::Hardware(h) => h.drain(),
        }
    }
}

/// Settings for tests: `over`'s values as `NVSHMEM_<name>`, the defaults otherwise.
#[cfg(test)]
pub(crate) fn table<'a>(over: &'a [(env::Setting, &'a str)]) -> impl Fn(env::Setting) -> (String, String) + Copy + 'a {
    move |setting| {
        over.iter()
            .find(|(s, _)| s.name == setting.name)
            .map(|(_, v)| (format!("NVSHMEM_{}", setting.name), v.to_string()))
            .unwrap_or_else(|| ("default".into(), setting.default.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_nvshmem() {
        let c = IbgdaConfig::parse(table(&[])).unwrap();
        assert_eq!(
            c,
            IbgdaConfig {
                nic: NicKind::Hardware,
                nic_explicit: false,
                num_rc_per_pe: 2,
                num_dci: Some(1),
                num_dct: 2,
                dci_map_by: abi::MAP_BY_CTA,
                rc_map_by: abi::MAP_BY_CTA
            }
        );
    }

    #[test]
    fn values_parse_and_bad_ones_name_the_variable() {
        let c = IbgdaConfig::parse(table(&[
            (env::IBGDA_NIC, "model"),
            (env::IBGDA_NUM_DCI, "0"),
            (env::IBGDA_DCI_MAP_BY, "DCT"),
            (env::IBGDA_RC_MAP_BY, "warp"),
            (env::IBGDA_NUM_RC_PER_PE, "0"),
        ]))
        .unwrap();
        assert_eq!(
            (c.nic, c.num_dci, c.dci_map_by, c.rc_map_by, c.num_rc_per_pe),
            (NicKind::Model, None, abi::MAP_BY_DCT, abi::MAP_BY_WARP, 0)
        );
        let e = IbgdaConfig::parse(table(&[(env::IBGDA_RC_MAP_BY, "dct")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_RC_MAP_BY") && e.contains("cta, sm or warp"), "{e}");
        let e = IbgdaConfig::parse(table(&[(env::IBGDA_NIC, "gpu")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_NIC") && e.contains("auto, hw or model"), "{e}");
        assert!(IbgdaConfig::parse(table(&[(env::IBGDA_NUM_DCT, "0")])).is_err());
        assert!(IbgdaConfig::parse(table(&[(env::IBGDA_NUM_DCT, "65")])).is_err());
        let e = IbgdaConfig::parse(table(&[(env::IBGDA_NUM_DCI, "5000")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_NUM_DCI") && e.contains("at most 4096"), "{e}");
        assert_eq!(IbgdaConfig::parse(table(&[(env::IBGDA_NUM_DCI, "-1")])).unwrap().num_dci, None);
        assert!(IbgdaConfig::parse(table(&[(env::IBGDA_NUM_RC_PER_PE, "two")])).is_err());
    }

    #[test]
    fn qp_error_is_none_until_an_error_cqe() {
        let mut q = abi::QpState::zeroed();
        assert!(qp_error(&q, 0).is_none());
        q.err_count = 1;
        q.err_opcode = mlx5::OPCODE_RDMA_READ;
        q.err_syndrome = mlx5::SYND_REMOTE_ACCESS_ERR;
        q.peer_pe = 3;
        let m = qp_error(&q, 2).unwrap().to_string();
        assert!(m.starts_with("IBGDA RDMA READ (get) from PE 2 to PE 3 failed: remote access error"), "{m}");
    }
}
