//! The IBGDA transport, host side. GPU threads post RDMA work requests on the NIC's queues
//! themselves (the queues, the NIC model and the hardware set-up are `src/ibgda`; the posting
//! is in `device/`). Here: the choice at init between IBGDA and the proxy transport for the
//! PEs that loads and stores cannot reach, the GPU route of every PE that follows from it, and
//! host-initiated operations toward those PEs (`IbgdaHost`): on the host's own QPs
//! (`ibgda/host_rma.rs`), blocking, never through the P2P mapping.

use super::{wait_for_stream, GpuAddr, GpuTransport, LocalGpu, Route, When};
use crate::cuda::kernels::AmoOp;
use crate::error::{Error, ErrorKind, Result};
use crate::ibgda::gpu::Setup;
use crate::ibgda::host_rma::HostQueues;
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

/// Host-side operations on the GPU memory of a PE reached through IBGDA.
pub struct IbgdaHost;

/// The host's queues toward PE `pe`; None where there are none but the heap is mapped here
/// (a ConnectX with NVSHMEM_DISABLE_P2P=1 on one host: then the P2P mapping, as before).
fn queues(gpu: &dyn LocalGpu, pe: usize) -> Result<Option<&HostQueues>> {
    match gpu.ibgda_host() {
        Some(q) => Ok(Some(q)),
        None if gpu.heap_mapped(pe) => Ok(None),
        None => Err(Error::of(
            ErrorKind::Unsupported,
            format!(
                "PE {pe} is reached through IBGDA on a ConnectX, where host-initiated RMA and atomics are not implemented yet; \
                 reach it from device code, or run with RSHMEM_IBGDA_NIC=auto on a NIC that fails the self-test to use the proxy"
            ),
        )),
    }
}

impl GpuTransport for IbgdaHost {
    fn put(&self, gpu: &dyn LocalGpu, to: GpuAddr, src: *const u8, bytes: usize, when: When) -> Result<()> {
        let Some(q) = queues(gpu, to.pe)? else { return super::p2p::P2p.put(gpu, to, src, bytes, when) };
        wait_for_stream(when)?;
        q.put(to.pe, to.off, src as u64, bytes, &|d, s, n| gpu.copy_now(d, s, n))
    }

    fn get(&self, gpu: &dyn LocalGpu, from: GpuAddr, dst: *mut u8, bytes: usize, when: When) -> Result<()> {
        let Some(q) = queues(gpu, from.pe)? else { return super::p2p::P2p.get(gpu, from, dst, bytes, when) };
        wait_for_stream(when)?;
        q.get(from.pe, from.off, dst as u64, bytes, &|d, s, n| gpu.copy_now(d, s, n))
    }

    fn p(&self, gpu: &dyn LocalGpu, to: GpuAddr, value: u64, size: usize, when: When) -> Result<()> {
        self.put(gpu, to, (&value as *const u64).cast(), size, when)
    }

    fn amo(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        match queues(gpu, at.pe)? {
            Some(q) => q.amo(at.pe, at.off, op, size, a, b),
            None => super::p2p::P2p.amo(gpu, at, op, size, a, b),
        }
    }

    /// A signal is an atomic executed by the NIC, atomic with the GPU threads' own.
    fn signal(&self, gpu: &dyn LocalGpu, at: GpuAddr, op: AmoOp, value: u64, when: When) -> Result<()> {
        if queues(gpu, at.pe)?.is_none() {
            return super::p2p::P2p.signal(gpu, at, op, value, when);
        }
        wait_for_stream(when)?;
        self.amo(gpu, at, op, 8, value, 0).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::kernels::Kernels;
    use crate::cuda::sys::CUstream;
    use crate::ibgda::host_rma::testing::{memcpy, Pair};

    /// A GPU whose P2P means (stream, kernels, mapped atomics) must not be used: host
    /// operations toward an IBGDA peer go through the NIC (the pair's host queues, if any),
    /// even where its heap is mapped (the second field).
    struct NoP2p<'a>(Option<&'a Pair>, bool);

    impl LocalGpu for NoP2p<'_> {
        fn make_current(&self) -> Result<()> {
            panic!("the P2P path made the context current")
        }
        fn stream(&self) -> CUstream {
            panic!("the P2P path asked for the library's stream")
        }
        fn sync(&self) -> Result<()> {
            panic!("the P2P path synchronised the library's stream")
        }
        fn copy_now(&self, dst: u64, src: u64, len: usize) -> Result<()> {
            memcpy(dst, src, len)
        }
        fn kernels(&self) -> Result<&Kernels> {
            panic!("the P2P path asked for the atomic kernel")
        }
        fn amo_at(&self, _: u64, _: u64, _: u64, _: AmoOp, _: usize) -> Result<u64> {
            panic!("the P2P path ran an atomic on the mapped word")
        }
        fn mailboxes(&self) -> Option<&crate::proxy::gpu::Mailboxes> {
            None
        }
        fn ibgda_host(&self) -> Option<&HostQueues> {
            self.0.map(|p| &p.queues)
        }
        fn heap_mapped(&self, _: usize) -> bool {
            self.1
        }
    }

    /// Host put, get, p, strided put, AMO and signal to a PE whose route is `Ibgda` run on the
    /// NIC model (WQEs counted, data and values in its heap), and never touch the P2P means.
    #[test]
    fn host_operations_to_an_ibgda_peer_go_through_the_nic() {
        let pair = Pair::new(64);
        let gpu = NoP2p(Some(&pair), true);
        let path = crate::transport::gpu_path(Route::Ibgda);
        // `mapped` is a bogus address: writing through it would fault.
        let at = |off: usize| GpuAddr { pe: 1, off, mapped: 0x10 };
        let before = pair.wqes();
        let data: Vec<u8> = (0..100u8).collect();
        path.put(&gpu, at(128), data.as_ptr(), data.len(), When::Queued).unwrap();
        assert_eq!(pair.peek(128, 100), data);
        let mut back = vec![0u8; 100];
        path.get(&gpu, at(128), back.as_mut_ptr(), back.len(), When::Now).unwrap();
        assert_eq!(back, data);
        path.p(&gpu, at(8), 0x1122_3344, 4, When::Now).unwrap();
        assert_eq!(pair.peek(8, 4), 0x1122_3344u32.to_le_bytes());
        let elems = [1u16, 2, 3];
        let (dir, local) = (crate::transport::Direction::Put, elems.as_ptr().cast());
        let x = crate::transport::Strided { dir, remote: at(256), remote_stride: 4, local, local_stride: 2, nelems: 3, size: 2 };
        path.strided(&gpu, &x, When::Now).unwrap();
        assert_eq!(pair.peek(256, 10), [1, 0, 0, 0, 2, 0, 0, 0, 3, 0]);
        assert_eq!(path.amo(&gpu, at(0), AmoOp::Add, 8, 40, 0).unwrap(), 0);
        path.signal(&gpu, at(0), AmoOp::Add, 2, When::Now).unwrap();
        assert_eq!(pair.peek(0, 8), 42u64.to_le_bytes());
        path.signal(&gpu, at(0), AmoOp::Set, 7, When::Now).unwrap();
        assert_eq!(pair.peek(0, 8), 7u64.to_le_bytes());
        // put (2 WQEs of 64 bytes), get (2), p, 3 strided elements, AMO, 2 signals.
        assert_eq!(pair.wqes() - before, 11);
    }

    /// Without host queues (a ConnectX) and without a mapping (another host): a named error.
    #[test]
    fn no_host_queues_and_no_mapping_is_a_named_error() {
        let v = 1u64;
        let far = NoP2p(None, false);
        let to = GpuAddr { pe: 3, off: 0, mapped: 0 };
        let e = IbgdaHost.put(&far, to, (&v as *const u64).cast(), 8, When::Now).map_err(|e| e.named("nvshmem_putmem"));
        let e = e.unwrap_err().to_string();
        assert!(e.starts_with("nvshmem_putmem: PE 3 is reached through IBGDA on a ConnectX") && e.contains("not implemented yet"), "{e}");
    }

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
