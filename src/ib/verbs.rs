//! rdma-core objects with owners: an open device ([`Context`]), protection domain ([`Pd`]),
//! memory registration ([`Mr`]), completion queue ([`Cq`]), shared receive queue ([`Srq`]), a
//! verbs RC queue pair ([`RcQp`], host-memory queues, for a CPU-driven transport) and a doorbell
//! page ([`Uar`]). Children hold an `Arc` of their parent, so a parent is released only after
//! its last child; every object releases itself in `Drop` (PD, CQ, SRQ, MR and QP through one
//! type, `Owned`: the handle, its parent and the entry point that releases it).
//!
//! NEVER MET HARDWARE: every function here needs an RDMA device; only [`Context::open`]'s
//! "no device" answer has run (CI, and every machine of this project).

use std::ffi::{c_int, c_void, CStr};
use std::sync::Arc;

use super::sys::*;
use super::{failed, mlx5, unsupported, verbs, QpAddress, QpState, HEAP_ACCESS};
use crate::error::{Error, Result};

/// An open device.
pub struct Context {
    v: &'static Verbs,
    ctx: Ptr,
    pub name: String,
}

// SAFETY: an ibv_context may be used from any thread (rdma-core serialises what needs it).
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

impl Context {
    /// Opens the device called `name`.
    pub fn open(name: &str) -> Result<Arc<Context>> {
        let v = verbs()?;
        let mut n: c_int = 0;
        // SAFETY: n is a valid out-pointer; the list is freed below.
        let list = unsafe { (v.ibv_get_device_list)(&mut n) };
        if list.is_null() {
            return Err(unsupported(format!("RDMA device {name} not found: this machine has no RDMA device")));
        }
        let mut found = None;
        for i in 0..n.max(0) as usize {
            // SAFETY: the list holds n valid device pointers; names are NUL-terminated.
            let dev = unsafe { *list.add(i) };
            // SAFETY: as above.
            let dname = unsafe { CStr::from_ptr((v.ibv_get_device_name)(dev)) };
            if dname.to_bytes() == name.as_bytes() {
                found = Some(open_devx(dev, name));
                break;
            }
        }
        // SAFETY: list came from ibv_get_device_list.
        unsafe { (v.ibv_free_device_list)(list) };
        let ctx = match found {
            None => return Err(unsupported(format!("RDMA device {name} not found"))),
            Some(r) => r?,
        };
        Ok(Arc::new(Context { v, ctx, name: name.into() }))
    }

    /// The `struct ibv_context *` (for DevX calls).
    pub(crate) fn raw(&self) -> Ptr {
        self.ctx
    }

    pub fn query_port(&self, port: u8) -> Result<IbvPortAttr> {
        let mut a = IbvPortAttr::default();
        // SAFETY: ctx is open; `a` is a full, zeroed ibv_port_attr.
        if unsafe { (self.v.ibv_query_port)(self.ctx, port, &mut a) } != 0 {
            return Err(failed(&format!("ibv_query_port({}, {port})", self.name)));
        }
        Ok(a)
    }

    pub fn query_gid(&self, port: u8, index: u8) -> Result<[u8; 16]> {
        let mut g = [0u8; 16];
        // SAFETY: ctx is open; g has 16 bytes (union ibv_gid).
        if unsafe { (self.v.ibv_query_gid)(self.ctx, port, index as c_int, &mut g) } != 0 {
            return Err(failed(&format!("ibv_query_gid({}, {port}, {index})", self.name)));
        }
        Ok(g)
    }

    /// The event queue number completion vector `vector` maps to (CREATE_CQ needs one).
    pub fn query_eqn(&self, vector: u32) -> Result<u32> {
        let m = mlx5()?;
        let mut eqn = 0u32;
        // SAFETY: ctx is open; eqn is a valid out-pointer.
        if unsafe { (m.mlx5dv_devx_query_eqn)(self.ctx, vector, &mut eqn) } != 0 {
            return Err(failed("mlx5dv_devx_query_eqn"));
        }
        Ok(eqn)
    }

    /// A verbs completion queue with `entries` host-memory CQEs.
    pub fn create_cq(self: &Arc<Self>, entries: i32) -> Result<Cq> {
        let null = std::ptr::null_mut();
        // SAFETY: ctx is open; no completion channel. ibv_destroy_cq releases what
        // ibv_create_cq made.
        unsafe { Owned::new(self, (self.v.ibv_create_cq)(self.ctx, entries, null, null, 0), self.v.ibv_destroy_cq, "ibv_create_cq") }
            .map(Cq)
    }

    /// A UAR page for doorbells, mapped non-cached (as a GPU mapping of it needs).
    pub fn alloc_uar(self: &Arc<Self>) -> Result<Uar> {
        let m = mlx5()?;
        // SAFETY: ctx is open.
        let u = unsafe { (m.mlx5dv_devx_alloc_uar)(self.ctx, MLX5DV_UAR_ALLOC_TYPE_NC) };
        if u.is_null() {
            return Err(failed("mlx5dv_devx_alloc_uar"));
        }
        Ok(Uar { _ctx: self.clone(), m, u })
    }
}

/// Opens `dev` as a DevX context (`mlx5dv_open_device` with MLX5DV_CONTEXT_FLAGS_DEVX: the
/// DevX object and umem calls need one). Errors name what is missing and the fix.
fn open_devx(dev: Ptr, name: &str) -> Result<Ptr> {
    let m = super::mlx5()?;
    // SAFETY: dev is a live ibv_device from the caller's device list.
    if !unsafe { (m.mlx5dv_is_supported)(dev) } {
        return Err(unsupported(format!(
            "RDMA device {name} is not an mlx5 (ConnectX) device: IBGDA posts mlx5 work requests; pick a ConnectX with NVSHMEM_HCA_LIST"
        )));
    }
    let mut attr = Mlx5dvContextAttr { flags: MLX5DV_CONTEXT_FLAGS_DEVX, comp_mask: 0 };
    // SAFETY: dev is live; attr is a valid mlx5dv_context_attr with no comp_mask extensions.
    let ctx = unsafe { (m.mlx5dv_open_device)(dev, &mut attr) };
    if ctx.is_null() {
        return Err(devx_open_error(name, std::io::Error::last_os_error()));
    }
    Ok(ctx)
}

/// Why a DevX context could not be opened, with the fix for the usual causes.
pub fn devx_open_error(name: &str, errno: std::io::Error) -> Error {
    let fix = match errno.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            "permission denied: give the process access to /dev/infiniband/uverbs* and run it as root or with CAP_NET_RAW \
             (containers: --cap-add=NET_RAW and the uverbs devices)"
        }
        Some(libc::EOPNOTSUPP) | Some(libc::EPROTONOSUPPORT) => {
            "the driver or firmware has no DevX: use the mlx5_ib kernel driver of a recent kernel or MLNX_OFED on a ConnectX-5 or newer, \
             with rdma-core 24 or newer"
        }
        Some(libc::ENOENT) | Some(libc::ENODEV) => {
            "the device went away or its uverbs device is missing: check `ibv_devices` and /dev/infiniband/"
        }
        _ => "check `ibv_devinfo` and the kernel log (dmesg) for mlx5 errors",
    };
    unsupported(format!("opening RDMA device {name} for DevX (mlx5dv_open_device) failed: {errno}; {fix}"))
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: ctx came from ibv_open_device; every child holds an Arc, so none is left.
        unsafe { (self.v.ibv_close_device)(self.ctx) };
    }
}

/// Runs mlx5dv_init_obj for the pairs `obj` names.
fn init_obj(obj: &mut Mlx5dvObj, kind: u64, what: &str) -> Result<()> {
    let m = mlx5()?;
    // SAFETY: every in/out pair named by `kind` points at a live object and a matching struct.
    if unsafe { (m.mlx5dv_init_obj)(obj, kind) } != 0 {
        return Err(failed(&format!("mlx5dv_init_obj({what})")));
    }
    Ok(())
}

/// A verbs object made from `P`: its handle, its parent (kept alive until the object is
/// released) and the entry point that releases it, called once, in `Drop`.
struct Owned<P, T = c_void> {
    parent: Arc<P>,
    raw: *mut T,
    release: unsafe extern "C" fn(*mut T) -> c_int,
}

// SAFETY: a verbs object (PD, CQ, SRQ, MR, QP) may be used and released from any thread:
// rdma-core serialises what needs it. The parent is shared, so it must be Send and Sync itself.
unsafe impl<P: Send + Sync, T> Send for Owned<P, T> {}
// SAFETY: as above.
unsafe impl<P: Send + Sync, T> Sync for Owned<P, T> {}

impl<P, T> Owned<P, T> {
    /// Takes the handle a create call of `parent` just returned; null is that call's failure
    /// (`what`, with errno).
    ///
    /// # Safety
    /// `raw`, when not null, is a live object that `release` releases and nothing else will.
    unsafe fn new(parent: &Arc<P>, raw: *mut T, release: unsafe extern "C" fn(*mut T) -> c_int, what: &str) -> Result<Self> {
        if raw.is_null() {
            return Err(failed(what));
        }
        Ok(Owned { parent: parent.clone(), raw, release })
    }
}

impl<P> Owned<P> {
    /// The object's number, which DevX commands name it by (pdn, cqn, srqn): mlx5dv_init_obj
    /// of `kind` (`what` in errors) fills `out` through the pair `slot` picks in Mlx5dvObj, and
    /// `number` reads it.
    fn number<O>(
        &self,
        kind: u64,
        what: &str,
        mut out: O,
        slot: fn(&mut Mlx5dvObj) -> &mut [Ptr; 2],
        number: fn(&O) -> u32,
    ) -> Result<u32> {
        let mut obj = Mlx5dvObj::default();
        *slot(&mut obj) = [self.raw, (&mut out as *mut O).cast()];
        init_obj(&mut obj, kind, what)?;
        Ok(number(&out))
    }
}

impl<P, T> Drop for Owned<P, T> {
    fn drop(&mut self) {
        // SAFETY: `new`'s contract: `release` is raw's own release entry, called only here. Its
        // parent is still alive (we hold an Arc), and so are its children (they hold an Arc of
        // it); objects that use each other without an Arc are declared in release order by
        // their owner (QPs before their CQ, the DCT before its SRQ; see ibgda::hw).
        unsafe { (self.release)(self.raw) };
    }
}

/// A protection domain.
pub struct Pd(Owned<Context>);

impl Pd {
    pub fn alloc(ctx: &Arc<Context>) -> Result<Arc<Pd>> {
        // SAFETY: ctx is open; ibv_dealloc_pd releases what ibv_alloc_pd made.
        unsafe { Owned::new(ctx, (ctx.v.ibv_alloc_pd)(ctx.ctx), ctx.v.ibv_dealloc_pd, "ibv_alloc_pd") }.map(|o| Arc::new(Pd(o)))
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.0.parent
    }

    fn v(&self) -> &'static Verbs {
        self.0.parent.v
    }

    /// The PD's number, which DevX commands name.
    pub fn pdn(&self) -> Result<u32> {
        self.0.number(MLX5DV_OBJ_PD, "PD", Mlx5dvPd::default(), |o| &mut o.pd, |p| p.pdn)
    }

    /// Registers `[addr, addr+len)`: through its dma-buf file descriptor first when one is given
    /// (`dmabuf` = (fd, offset of addr in it)), else or on failure through `ibv_reg_mr`.
    pub fn register(self: &Arc<Self>, addr: u64, len: usize, dmabuf: Option<(i32, u64)>) -> Result<Mr> {
        let (v, pd) = (self.v(), self.0.raw);
        let access = HEAP_ACCESS | IBV_ACCESS_RELAXED_ORDERING;
        let (mr, why) = super::register_dmabuf_first(
            &format!("{len} bytes at {addr:#x} with the NIC"),
            dmabuf,
            "ibv_reg_dmabuf_mr",
            // SAFETY: pd is live; fd is a dma-buf covering [offset, offset+len).
            |fd, offset| unsafe { (v.ibv_reg_dmabuf_mr)(pd, offset, len, addr, fd, access) },
            "ibv_reg_mr",
            // SAFETY: pd is live; the caller keeps the range allocated while registered.
            || unsafe { (v.ibv_reg_mr)(pd, addr as Ptr, len, access) },
        )?;
        self.mr(mr, why.map_or_else(|| "dma-buf".into(), |why| format!("ibv_reg_mr ({why})")))
    }

    /// Owns `mr`, the registration ibv_reg_(dmabuf_)mr just returned.
    fn mr(self: &Arc<Self>, mr: *mut IbvMr, how: String) -> Result<Mr> {
        // SAFETY: ibv_dereg_mr releases what ibv_reg_(dmabuf_)mr made.
        let mr = unsafe { Owned::new(self, mr, self.v().ibv_dereg_mr, "ibv_reg_mr") }?;
        // SAFETY: mr.raw is a valid ibv_mr (not null: `new` checked).
        let m = unsafe { *mr.raw };
        Ok(Mr { lkey: m.lkey, rkey: m.rkey, how, _mr: mr })
    }

    /// A verbs RC QP on `cq` (send and receive, host-memory queues).
    pub fn create_rc_qp(self: &Arc<Self>, cq: &Cq, depth: u32, max_inline: u32) -> Result<RcQp> {
        let mut init = IbvQpInitAttr {
            qp_context: std::ptr::null_mut(),
            send_cq: cq.0.raw,
            recv_cq: cq.0.raw,
            srq: std::ptr::null_mut(),
            cap: IbvQpCap { max_send_wr: depth, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: max_inline },
            qp_type: IBV_QPT_RC,
            sq_sig_all: 0,
        };
        // SAFETY: pd and cq are live; init is fully initialised. ibv_destroy_qp releases what
        // ibv_create_qp made.
        let qp =
            unsafe { Owned::new(self, (self.v().ibv_create_qp)(self.0.raw, &mut init), self.v().ibv_destroy_qp, "ibv_create_qp(RC)") }?;
        // SAFETY: qp.raw is a valid ibv_qp.
        let qpn = unsafe { (*qp.raw).qp_num };
        Ok(RcQp { qp, qpn, state: QpState::Reset })
    }

    /// A shared receive queue (a DC target needs one, though it never receives).
    pub fn create_srq(self: &Arc<Self>, max_wr: u32) -> Result<Srq> {
        let mut init = IbvSrqInitAttr { srq_context: std::ptr::null_mut(), max_wr, max_sge: 1, srq_limit: 0 };
        // SAFETY: pd is live; init is fully initialised. ibv_destroy_srq releases what
        // ibv_create_srq made.
        unsafe { Owned::new(self, (self.v().ibv_create_srq)(self.0.raw, &mut init), self.v().ibv_destroy_srq, "ibv_create_srq") }.map(Srq)
    }

    /// The 48-byte mlx5 address vector toward `remote` through `port`, as the provider builds it
    /// for an address handle (on RoCE it resolves the next hop's MAC): what a DCI's WQEs carry,
    /// and where an RC QP on RoCE finds its `rmac`.
    /// `sgid_index` is our GID's index (the route's source).
    pub fn address_vector(&self, port: u8, sgid_index: u8, remote: &QpAddress, traffic_class: u8, sl: u8) -> Result<[u8; 48]> {
        let (mut attr, _) = super::rtr_attr(port, remote, traffic_class, sl);
        attr.ah_attr.grh.sgid_index = sgid_index;
        // SAFETY: pd is live; the ah_attr is fully initialised.
        let ah = unsafe { (self.v().ibv_create_ah)(self.0.raw, &mut attr.ah_attr) };
        if ah.is_null() {
            return Err(failed(&format!("ibv_create_ah toward LID {:#x} / QP {:#x}", remote.lid, remote.qpn)));
        }
        let mut out = Mlx5dvAh { av: std::ptr::null_mut(), comp_mask: 0 };
        let mut obj = Mlx5dvObj { ah: [ah, (&mut out as *mut Mlx5dvAh).cast()], ..Default::default() };
        let r = init_obj(&mut obj, MLX5DV_OBJ_AH, "AH").and_then(|()| {
            if out.av.is_null() {
                Err(unsupported("mlx5dv_init_obj(AH) returned no address vector"))
            } else {
                // SAFETY: av points at the AH's 48-byte mlx5_wqe_av, alive until destroy below.
                Ok(unsafe { *out.av })
            }
        });
        // SAFETY: ah came from ibv_create_ah; the AV was copied out.
        unsafe { (self.v().ibv_destroy_ah)(ah) };
        r
    }
}

/// A memory registration.
pub struct Mr {
    _mr: Owned<Pd, IbvMr>,
    pub lkey: u32,
    pub rkey: u32,
    /// "dma-buf" or "ibv_reg_mr" (and why the first was not used).
    pub how: String,
}

/// A verbs completion queue.
pub struct Cq(Owned<Context>);

impl Cq {
    /// The CQ's number (a DC target names its CQ by it).
    pub fn cqn(&self) -> Result<u32> {
        // SAFETY: all-zero is valid for this plain C struct (null pointers, zero counts).
        let out: Mlx5dvCq = unsafe { std::mem::zeroed() };
        self.0.number(MLX5DV_OBJ_CQ, "CQ", out, |o| &mut o.cq, |c| c.cqn)
    }
}

/// A shared receive queue.
pub struct Srq(Owned<Pd>);

impl Srq {
    /// The SRQ's number (a DC target names its SRQ by it).
    pub fn srqn(&self) -> Result<u32> {
        // SAFETY: all-zero is valid for this plain C struct.
        let out: Mlx5dvSrq = unsafe { std::mem::zeroed() };
        self.0.number(MLX5DV_OBJ_SRQ, "SRQ", out, |o| &mut o.srq, |s| s.srqn)
    }
}

/// A verbs RC queue pair and the state we drove it to.
pub struct RcQp {
    qp: Owned<Pd, IbvQpHead>,
    pub qpn: u32,
    pub state: QpState,
}

impl RcQp {
    fn modify(&mut self, to: QpState, (mut attr, mask): (IbvQpAttr, c_int)) -> Result<()> {
        let next = self.state.step(to)?;
        // SAFETY: qp is live; attr and mask are consistent (built by the *_attr functions).
        if unsafe { (self.qp.parent.v().ibv_modify_qp)(self.qp.raw, &mut attr, mask) } != 0 {
            return Err(failed(&format!("ibv_modify_qp({:?} -> {to:?}) of QP {:#x}", self.state, self.qpn)));
        }
        self.state = next;
        Ok(())
    }

    /// RESET → INIT → RTR → RTS toward `remote`.
    pub fn connect(&mut self, port: u8, local_psn: u32, remote: &QpAddress, traffic_class: u8, sl: u8) -> Result<()> {
        self.modify(QpState::Init, super::init_attr(port))?;
        self.modify(QpState::Rtr, super::rtr_attr(port, remote, traffic_class, sl))?;
        self.modify(QpState::Rts, super::rts_attr(local_psn))
    }
}

/// A doorbell (UAR) page.
pub struct Uar {
    _ctx: Arc<Context>,
    m: &'static Mlx5,
    u: *mut Mlx5dvDevxUar,
}

// SAFETY: the UAR page is device memory mapped into the process; stores to it from any thread
// are what it is for.
unsafe impl Send for Uar {}
// SAFETY: as above.
unsafe impl Sync for Uar {}

impl Uar {
    /// The doorbell register's CPU address (8-byte stores ring a send queue).
    pub fn reg_addr(&self) -> u64 {
        // SAFETY: u is a live UAR.
        unsafe { (*self.u).reg_addr as u64 }
    }
    /// The start of the UAR page in this process (what a GPU mapping registers).
    pub fn base_addr(&self) -> u64 {
        // SAFETY: u is a live UAR.
        unsafe { (*self.u).base_addr as u64 }
    }
    /// The UAR page's index, which CREATE_CQ and CREATE_QP name.
    pub fn page_id(&self) -> u32 {
        // SAFETY: u is a live UAR.
        unsafe { (*self.u).page_id }
    }
}

impl Drop for Uar {
    fn drop(&mut self) {
        // SAFETY: u came from mlx5dv_devx_alloc_uar; QPs naming its page are destroyed first.
        unsafe { (self.m.mlx5dv_devx_free_uar)(self.u) };
    }
}
