//! rdma-core objects with owners: an open device ([`Context`]), protection domain ([`Pd`]),
//! memory registration ([`Mr`]), completion queue ([`Cq`]), shared receive queue ([`Srq`]), a
//! verbs RC queue pair ([`RcQp`], host-memory queues, for a CPU-driven transport) and a doorbell
//! page ([`Uar`]). Children hold an `Arc` of their parent, so a parent is released only after
//! its last child; every object releases itself in `Drop`.
//!
//! NEVER MET HARDWARE: every function here needs an RDMA device; only [`Context::open`]'s
//! "no device" answer has run (CI, and every machine of this project).

use std::ffi::{c_int, CStr};
use std::sync::Arc;

use super::sys::*;
use super::{failed, mlx5, unsupported, verbs, QpAddress, QpState, HEAP_ACCESS};
use crate::error::{Error, ErrorKind, Result};

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
        // SAFETY: ctx is open; no completion channel.
        let cq = unsafe { (self.v.ibv_create_cq)(self.ctx, entries, std::ptr::null_mut(), std::ptr::null_mut(), 0) };
        if cq.is_null() {
            return Err(failed("ibv_create_cq"));
        }
        Ok(Cq { ctx: self.clone(), cq })
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

/// A protection domain.
pub struct Pd {
    ctx: Arc<Context>,
    pd: Ptr,
}

// SAFETY: an ibv_pd may be used from any thread.
unsafe impl Send for Pd {}
// SAFETY: as above.
unsafe impl Sync for Pd {}

impl Pd {
    pub fn alloc(ctx: &Arc<Context>) -> Result<Arc<Pd>> {
        // SAFETY: ctx is open.
        let pd = unsafe { (ctx.v.ibv_alloc_pd)(ctx.ctx) };
        if pd.is_null() {
            return Err(failed("ibv_alloc_pd"));
        }
        Ok(Arc::new(Pd { ctx: ctx.clone(), pd }))
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The PD's number, which DevX commands name.
    pub fn pdn(&self) -> Result<u32> {
        let mut out = Mlx5dvPd::default();
        let mut obj = Mlx5dvObj { pd: [self.pd, (&mut out as *mut Mlx5dvPd).cast()], ..Default::default() };
        init_obj(&mut obj, MLX5DV_OBJ_PD, "PD")?;
        Ok(out.pdn)
    }

    /// Registers `[addr, addr+len)`: through its dma-buf file descriptor first when one is given
    /// (`dmabuf` = (fd, offset of addr in it)), else or on failure through `ibv_reg_mr`.
    pub fn register(self: &Arc<Self>, addr: u64, len: usize, dmabuf: Option<(i32, u64)>) -> Result<Mr> {
        let v = self.ctx.v;
        let access = HEAP_ACCESS | IBV_ACCESS_RELAXED_ORDERING;
        let mut why = String::from("no dma-buf handle for this memory");
        if let Some((fd, offset)) = dmabuf {
            // SAFETY: pd is live; fd is a dma-buf covering [offset, offset+len).
            let mr = unsafe { (v.ibv_reg_dmabuf_mr)(self.pd, offset, len, addr, fd, access) };
            if !mr.is_null() {
                // SAFETY: mr is a valid ibv_mr.
                let m = unsafe { *mr };
                return Ok(Mr { pd: self.clone(), mr, lkey: m.lkey, rkey: m.rkey, how: "dma-buf".into() });
            }
            why = format!("ibv_reg_dmabuf_mr failed: {}", std::io::Error::last_os_error());
        }
        // SAFETY: pd is live; the caller keeps the range allocated while registered.
        let mr = unsafe { (v.ibv_reg_mr)(self.pd, addr as Ptr, len, access) };
        if mr.is_null() {
            return Err(Error::new(
                ErrorKind::System,
                super::ROUTINE,
                format!("registering {len} bytes at {addr:#x} with the NIC failed ({why}; then ibv_reg_mr: {}); for GPU memory load nvidia-peermem or use a kernel with dma-buf support",
                    std::io::Error::last_os_error()),
            ));
        }
        // SAFETY: mr is a valid ibv_mr.
        let m = unsafe { *mr };
        Ok(Mr { pd: self.clone(), mr, lkey: m.lkey, rkey: m.rkey, how: format!("ibv_reg_mr ({why})") })
    }

    /// A verbs RC QP on `cq` (send and receive, host-memory queues).
    pub fn create_rc_qp(self: &Arc<Self>, cq: &Cq, depth: u32, max_inline: u32) -> Result<RcQp> {
        let mut init = IbvQpInitAttr {
            qp_context: std::ptr::null_mut(),
            send_cq: cq.cq,
            recv_cq: cq.cq,
            srq: std::ptr::null_mut(),
            cap: IbvQpCap { max_send_wr: depth, max_recv_wr: 1, max_send_sge: 1, max_recv_sge: 1, max_inline_data: max_inline },
            qp_type: IBV_QPT_RC,
            sq_sig_all: 0,
        };
        // SAFETY: pd and cq are live; init is fully initialised.
        let qp = unsafe { (self.ctx.v.ibv_create_qp)(self.pd, &mut init) };
        if qp.is_null() {
            return Err(failed("ibv_create_qp(RC)"));
        }
        // SAFETY: qp is a valid ibv_qp.
        let qpn = unsafe { (*qp).qp_num };
        Ok(RcQp { pd: self.clone(), qp, qpn, state: QpState::Reset })
    }

    /// A shared receive queue (a DC target needs one, though it never receives).
    pub fn create_srq(self: &Arc<Self>, max_wr: u32) -> Result<Srq> {
        let mut init = IbvSrqInitAttr { srq_context: std::ptr::null_mut(), max_wr, max_sge: 1, srq_limit: 0 };
        // SAFETY: pd is live; init is fully initialised.
        let srq = unsafe { (self.ctx.v.ibv_create_srq)(self.pd, &mut init) };
        if srq.is_null() {
            return Err(failed("ibv_create_srq"));
        }
        Ok(Srq { pd: self.clone(), srq })
    }

    /// The 48-byte mlx5 address vector toward `remote` through `port`, as the provider builds it
    /// for an address handle (on RoCE it resolves the next hop's MAC): what a DCI's WQEs carry,
    /// and where an RC QP on RoCE finds its `rmac`.
    /// `sgid_index` is our GID's index (the route's source).
    pub fn address_vector(&self, port: u8, sgid_index: u8, remote: &QpAddress, traffic_class: u8, sl: u8) -> Result<[u8; 48]> {
        let (mut attr, _) = super::rtr_attr(port, remote, traffic_class, sl);
        attr.ah_attr.grh.sgid_index = sgid_index;
        // SAFETY: pd is live; the ah_attr is fully initialised.
        let ah = unsafe { (self.ctx.v.ibv_create_ah)(self.pd, &mut attr.ah_attr) };
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
        unsafe { (self.ctx.v.ibv_destroy_ah)(ah) };
        r
    }
}

impl Drop for Pd {
    fn drop(&mut self) {
        // SAFETY: pd came from ibv_alloc_pd; children hold an Arc, so none is left.
        unsafe { (self.ctx.v.ibv_dealloc_pd)(self.pd) };
    }
}

/// A memory registration.
pub struct Mr {
    pd: Arc<Pd>,
    mr: *mut IbvMr,
    pub lkey: u32,
    pub rkey: u32,
    /// "dma-buf" or "ibv_reg_mr" (and why the first was not used).
    pub how: String,
}

// SAFETY: an ibv_mr is a plain registration handle.
unsafe impl Send for Mr {}
// SAFETY: as above.
unsafe impl Sync for Mr {}

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: mr came from ibv_reg_(dmabuf_)mr.
        unsafe { (self.pd.ctx.v.ibv_dereg_mr)(self.mr) };
    }
}

/// A verbs completion queue.
pub struct Cq {
    ctx: Arc<Context>,
    cq: Ptr,
}

// SAFETY: an ibv_cq may be used from any thread.
unsafe impl Send for Cq {}
// SAFETY: as above.
unsafe impl Sync for Cq {}

impl Cq {
    /// The CQ's number (a DC target names its CQ by it).
    pub fn cqn(&self) -> Result<u32> {
        // SAFETY: all-zero is valid for this plain C struct (null pointers, zero counts).
        let mut out: Mlx5dvCq = unsafe { std::mem::zeroed() };
        let mut obj = Mlx5dvObj { cq: [self.cq, (&mut out as *mut Mlx5dvCq).cast()], ..Default::default() };
        init_obj(&mut obj, MLX5DV_OBJ_CQ, "CQ")?;
        Ok(out.cqn)
    }
}

impl Drop for Cq {
    fn drop(&mut self) {
        // SAFETY: cq came from ibv_create_cq; QPs using it are gone (declared before it).
        unsafe { (self.ctx.v.ibv_destroy_cq)(self.cq) };
    }
}

/// A shared receive queue.
pub struct Srq {
    pd: Arc<Pd>,
    srq: Ptr,
}

// SAFETY: an ibv_srq may be used from any thread.
unsafe impl Send for Srq {}
// SAFETY: as above.
unsafe impl Sync for Srq {}

impl Srq {
    /// The SRQ's number (a DC target names its SRQ by it).
    pub fn srqn(&self) -> Result<u32> {
        // SAFETY: all-zero is valid for this plain C struct.
        let mut out: Mlx5dvSrq = unsafe { std::mem::zeroed() };
        let mut obj = Mlx5dvObj { srq: [self.srq, (&mut out as *mut Mlx5dvSrq).cast()], ..Default::default() };
        init_obj(&mut obj, MLX5DV_OBJ_SRQ, "SRQ")?;
        Ok(out.srqn)
    }
}

impl Drop for Srq {
    fn drop(&mut self) {
        // SAFETY: srq came from ibv_create_srq; the DCT using it is destroyed first.
        unsafe { (self.pd.ctx.v.ibv_destroy_srq)(self.srq) };
    }
}

/// A verbs RC queue pair and the state we drove it to.
pub struct RcQp {
    pd: Arc<Pd>,
    qp: *mut IbvQpHead,
    pub qpn: u32,
    pub state: QpState,
}

impl RcQp {
    fn modify(&mut self, to: QpState, (mut attr, mask): (IbvQpAttr, c_int)) -> Result<()> {
        let next = self.state.step(to)?;
        // SAFETY: qp is live; attr and mask are consistent (built by the *_attr functions).
        if unsafe { (self.pd.ctx.v.ibv_modify_qp)(self.qp, &mut attr, mask) } != 0 {
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

impl Drop for RcQp {
    fn drop(&mut self) {
        // SAFETY: qp came from ibv_create_qp.
        unsafe { (self.pd.ctx.v.ibv_destroy_qp)(self.qp) };
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
