//! IBGDA: GPU-initiated InfiniBand. The device posts mlx5 WQEs itself (device/ibgda/); this module
//! owns the shared descriptors ([`abi`]), the mlx5 formats' Rust mirror ([`mlx5`]), host-memory
//! queues ([`host`]) and the software HCA model ([`model`], `RSHMEM_IBGDA_NIC=model`) that plays
//! the NIC for those WQEs. The rdma-core path that creates real QPs is `crate::ib`.

pub mod abi;
pub mod cuda;
pub mod gpu;
pub mod host;
pub mod mlx5;
pub mod model;
pub mod nic;

use crate::env;
use crate::error::{Error, ErrorKind, Result};

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
    pub fn parse(f: impl Fn(&str) -> (String, String)) -> Result<IbgdaConfig> {
        let (var, v) = f("IBGDA_NIC");
        let nic = match v.trim().to_ascii_lowercase().as_str() {
            "hw" | "hardware" => NicKind::Hardware,
            "model" => NicKind::Model,
            _ => return Err(bad(&var, &v, "hw or model")),
        };
        let count = |name: &str| -> Result<i64> {
            let (var, v) = f(name);
            v.trim().parse::<i64>().map_err(|_| bad(&var, &v, "a whole number"))
        };
        let num_rc = count("IBGDA_NUM_RC_PER_PE")?;
        if !(0..=1024).contains(&num_rc) {
            let (var, v) = f("IBGDA_NUM_RC_PER_PE");
            return Err(bad(&var, &v, "0 to 1024"));
        }
        let num_dci = count("IBGDA_NUM_DCI")?;
        let num_dct = count("IBGDA_NUM_DCT")?;
        if num_dct < 1 {
            let (var, v) = f("IBGDA_NUM_DCT");
            return Err(bad(&var, &v, "at least 1"));
        }
        let (var, v) = f("IBGDA_DCI_MAP_BY");
        let dci_map_by = map_by(&var, &v, true)?;
        let (var, v) = f("IBGDA_RC_MAP_BY");
        let rc_map_by = map_by(&var, &v, false)?;
        Ok(IbgdaConfig {
            nic,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn table<'a>(over: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> (String, String) + 'a {
        move |name| {
            over.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (format!("NVSHMEM_{name}"), v.to_string()))
                .unwrap_or_else(|| ("default".into(), env::SETTINGS.iter().find(|s| s.name == name).unwrap().default.into()))
        }
    }

    #[test]
    fn defaults_follow_nvshmem() {
        let c = IbgdaConfig::parse(table(&[])).unwrap();
        assert_eq!(c, IbgdaConfig { nic: NicKind::Hardware, num_rc_per_pe: 2, num_dci: Some(1), num_dct: 2,
            dci_map_by: abi::MAP_BY_CTA, rc_map_by: abi::MAP_BY_CTA });
    }

    #[test]
    fn values_parse_and_bad_ones_name_the_variable() {
        let c = IbgdaConfig::parse(table(&[("IBGDA_NIC", "model"), ("IBGDA_NUM_DCI", "0"), ("IBGDA_DCI_MAP_BY", "DCT"),
            ("IBGDA_RC_MAP_BY", "warp"), ("IBGDA_NUM_RC_PER_PE", "0")])).unwrap();
        assert_eq!((c.nic, c.num_dci, c.dci_map_by, c.rc_map_by, c.num_rc_per_pe), (NicKind::Model, None, abi::MAP_BY_DCT, abi::MAP_BY_WARP, 0));
        let e = IbgdaConfig::parse(table(&[("IBGDA_RC_MAP_BY", "dct")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_RC_MAP_BY") && e.contains("cta, sm or warp"), "{e}");
        let e = IbgdaConfig::parse(table(&[("IBGDA_NIC", "gpu")])).unwrap_err().to_string();
        assert!(e.contains("NVSHMEM_IBGDA_NIC") && e.contains("hw or model"), "{e}");
        assert!(IbgdaConfig::parse(table(&[("IBGDA_NUM_DCT", "0")])).is_err());
        assert!(IbgdaConfig::parse(table(&[("IBGDA_NUM_RC_PER_PE", "two")])).is_err());
    }

    #[test]
    fn qp_error_is_none_until_an_error_cqe() {
        let mut q = abi::QpState::zeroed();
        assert!(qp_error(&q, 0, "nvshmem_quiet").is_none());
        q.err_count = 1;
        q.err_opcode = mlx5::OPCODE_RDMA_READ;
        q.err_syndrome = mlx5::SYND_REMOTE_ACCESS_ERR;
        q.peer_pe = 3;
        let m = qp_error(&q, 2, "nvshmem_getmem").unwrap().to_string();
        assert!(m.starts_with("nvshmem_getmem: IBGDA RDMA READ (get) from PE 2 to PE 3 failed: remote access error"), "{m}");
    }
}
