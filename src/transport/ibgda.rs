//! The IBGDA transport, host side. GPU threads post RDMA work requests on the NIC's queues
//! themselves (the queues, the NIC model and the hardware set-up are `src/ibgda`; the posting
//! is in `device/`). Here: the choice at init between IBGDA and the proxy transport for the
//! PEs that loads and stores cannot reach, and the GPU route of every PE that follows from it.

use super::Route;
use crate::error::{Error, ErrorKind, Result};
use crate::ibgda::gpu::Setup;
use crate::ibgda::Ibgda;

/// Sets IBGDA up toward the PEs `s.remote` names and runs its self-test (collective): IBGDA,
/// or None and why it is not used (then the proxy carries what goes to other hosts).
pub fn choose(s: &Setup) -> Result<(Option<Ibgda>, Option<String>)> {
    Ok(match Ibgda::choose(s)? {
        crate::ibgda::Route::Ibgda(i) => (Some(i), None),
        crate::ibgda::Route::Proxy(why) => (None, Some(why)),
    })
}

/// Each PE's GPU route: P2P on this host; IBGDA toward the PEs `no_p2p` names and those on
/// other hosts, unless `ibgda_why_not` says why IBGDA is not used: then the proxy carries what
/// goes to other hosts, and PEs on this host without P2P are an error (the proxy reaches other
/// hosts only).
pub fn plan_routes(me: usize, local: &[bool], no_p2p: &[bool], ibgda_why_not: Option<&str>) -> Result<Vec<Route>> {
    if let (Some(why), Some(peer)) = (ibgda_why_not, no_p2p.iter().position(|n| *n)) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "nvshmem_init",
            format!(
                "PE {me} reaches PE {peer} on its own host only through the network (NVSHMEM_DISABLE_P2P=1), IBGDA is not usable ({why}), and the \
                 proxy transport reaches PEs on other hosts only; fix the cause, unset NVSHMEM_DISABLE_P2P, or set RSHMEM_IBGDA_NIC=model"
            ),
        ));
    }
    Ok((0..local.len())
        .map(|p| match (local[p] && !no_p2p[p], ibgda_why_not) {
            (true, _) => Route::P2p,
            (false, None) => Route::Ibgda,
            (false, Some(_)) => Route::Proxy,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The choice between IBGDA and the proxy (Ibgda::choose's outcome) becomes the routes.
    #[test]
    fn routes_follow_the_ibgda_choice() {
        let (p2p, ib, px) = (Route::P2p, Route::Ibgda, Route::Proxy);
        let local = [true, true, false, false];
        let none = [false; 4];
        // auto without a usable NIC: PEs on other hosts through the proxy.
        assert_eq!(plan_routes(0, &local, &none, Some("PE 0: the NIC set-up failed: no RDMA device")).unwrap(), vec![p2p, p2p, px, px]);
        // A passed self-test: IBGDA to them.
        assert_eq!(plan_routes(0, &local, &none, None).unwrap(), vec![p2p, p2p, ib, ib]);
        // NVSHMEM_DISABLE_P2P on one host: IBGDA, or a named error when it is not usable.
        let no_p2p = [false, true, false, false];
        assert_eq!(plan_routes(0, &[true; 4], &no_p2p, None).unwrap(), vec![p2p, ib, p2p, p2p]);
        let e = plan_routes(0, &local, &no_p2p, Some("no RDMA device")).unwrap_err().to_string();
        assert!(
            e.contains("PE 0 reaches PE 1 on its own host only through the network") && e.contains("IBGDA is not usable (no RDMA device)"),
            "{e}"
        );
    }
}
