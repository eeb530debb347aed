//! Raw libfabric 1.x interface, loaded at run time from `libfabric.so.1`.
//!
//! The shared library exports only a handful of functions (`fi_getinfo`, `fi_fabric`, …);
//! everything else in libfabric's headers (`fi_write`, `fi_atomic`, `fi_mr_reg`, …) is a
//! `static inline` call through the ops tables every object (fid) carries. This module declares
//! those tables and re-implements the inline dispatch as small `unsafe fn`s of the same names
//! without the `fi_` prefix. Declarations are our own, written from libfabric 1.17's
//! <rdma/fabric.h>, fi_domain.h, fi_endpoint.h, fi_eq.h, fi_rma.h, fi_atomic.h and fi_cm.h
//! (Debian libfabric-dev); struct sizes are asserted below. Objects and their attribute
//! structs are always allocated by the library (hints come from `fi_dupinfo(NULL)`), so fields
//! a newer library appends are never cut off.
//!
//! Table slots we never call are declared as `Slot` (an untyped pointer of the same size).

#![allow(non_camel_case_types)]
// The ops-table wrappers below share one safety contract, written once above them.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::ib::sys::Lib;

pub type Ptr = *mut c_void;
pub type fi_addr_t = u64;
/// An ops-table entry we never call.
type Slot = *const c_void;

pub const fn version(major: u32, minor: u32) -> u32 {
    (major << 16) | minor
}

// ---- capabilities and flags (fabric.h) ----
pub const FI_RMA: u64 = 1 << 2;
pub const FI_ATOMIC: u64 = 1 << 4;
pub const FI_READ: u64 = 1 << 8;
pub const FI_WRITE: u64 = 1 << 9;
pub const FI_REMOTE_READ: u64 = 1 << 12;
pub const FI_REMOTE_WRITE: u64 = 1 << 13;
pub const FI_RECV: u64 = 1 << 10;
pub const FI_TRANSMIT: u64 = 1 << 11;
pub const FI_COMPLETION: u64 = 1 << 24;
pub const FI_TRANSMIT_COMPLETE: u64 = 1 << 27;
pub const FI_DELIVERY_COMPLETE: u64 = 1 << 28;
pub const FI_SELECTIVE_COMPLETION: u64 = 1 << 59;
pub const FI_FETCH_ATOMIC: u64 = 1 << 58;
pub const FI_COMPARE_ATOMIC: u64 = 1 << 59;
// mode bits we accept: we never ask for completions with a context (selective completion).
pub const FI_CONTEXT: u64 = 1 << 59;
pub const FI_CONTEXT2: u64 = 1 << 52;

// mr_mode bits
pub const FI_MR_LOCAL: c_int = 1 << 2;
pub const FI_MR_RAW: c_int = 1 << 3;
pub const FI_MR_VIRT_ADDR: c_int = 1 << 4;
pub const FI_MR_ALLOCATED: c_int = 1 << 5;
pub const FI_MR_PROV_KEY: c_int = 1 << 6;
pub const FI_MR_ENDPOINT: c_int = 1 << 9;

// message ordering (tx_attr.msg_order)
pub const FI_ORDER_RAW: u64 = 1 << 1;
pub const FI_ORDER_WAW: u64 = 1 << 4;
pub const FI_ORDER_RMA_RAW: u64 = 1 << 33;
pub const FI_ORDER_RMA_WAW: u64 = 1 << 35;
pub const FI_ORDER_ATOMIC_WAW: u64 = 1 << 39;

// enums
pub const FI_EP_RDM: u32 = 3;
pub const FI_AV_TABLE: u32 = 2;
pub const FI_PROGRESS_AUTO: u32 = 1;
pub const FI_PROGRESS_MANUAL: u32 = 2;
pub const FI_THREAD_SAFE: u32 = 1;
pub const FI_CQ_FORMAT_CONTEXT: u32 = 1;
pub const FI_WAIT_NONE: u32 = 0;
pub const FI_WAIT_FD: u32 = 3;
pub const FI_CNTR_EVENTS_COMP: u32 = 0;
// fi_control commands
pub const FI_GETWAIT: c_int = 5;
pub const FI_ENABLE: c_int = 6;

// errors (fi_errno.h: errno values, plus libfabric's own from 256)
pub const FI_SUCCESS: isize = 0;
pub const FI_EAGAIN: isize = libc::EAGAIN as isize;
pub const FI_ENOSYS: isize = libc::ENOSYS as isize;
pub const FI_ENODATA: isize = libc::ENODATA as isize;
pub const FI_ENOKEY: isize = libc::ENOKEY as isize;
pub const FI_ETOOSMALL: isize = 257;
pub const FI_EAVAIL: isize = 259;

// fi_datatype, fi_op (fi_domain.h)
pub const FI_INT32: u32 = 4;
pub const FI_UINT32: u32 = 5;
pub const FI_INT64: u32 = 6;
pub const FI_UINT64: u32 = 7;
pub const FI_FLOAT: u32 = 8;
pub const FI_DOUBLE: u32 = 9;
pub const FI_SUM: u32 = 2;
pub const FI_BOR: u32 = 6;
pub const FI_BAND: u32 = 7;
pub const FI_BXOR: u32 = 9;
pub const FI_ATOMIC_READ: u32 = 10;
pub const FI_ATOMIC_WRITE: u32 = 11;
pub const FI_CSWAP: u32 = 12;

// ---- attribute structs (fabric.h) ----
#[repr(C)]
pub struct fi_tx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub inject_size: usize,
    pub size: usize,
    pub iov_limit: usize,
    pub rma_iov_limit: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_ep_attr {
    pub type_: u32,
    pub protocol: u32,
    pub protocol_version: u32,
    pub max_msg_size: usize,
    pub msg_prefix_size: usize,
    pub max_order_raw_size: usize,
    pub max_order_war_size: usize,
    pub max_order_waw_size: usize,
    pub mem_tag_format: u64,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub auth_key_size: usize,
    pub auth_key: *mut u8,
}

#[repr(C)]
pub struct fi_domain_attr {
    pub domain: Ptr,
    pub name: *mut c_char,
    pub threading: u32,
    pub control_progress: u32,
    pub data_progress: u32,
    pub resource_mgmt: u32,
    pub av_type: u32,
    pub mr_mode: c_int,
    pub mr_key_size: usize,
    pub cq_data_size: usize,
    pub cq_cnt: usize,
    pub ep_cnt: usize,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub max_ep_tx_ctx: usize,
    pub max_ep_rx_ctx: usize,
    pub max_ep_stx_ctx: usize,
    pub max_ep_srx_ctx: usize,
    pub cntr_cnt: usize,
    pub mr_iov_limit: usize,
    pub caps: u64,
    pub mode: u64,
    pub auth_key: *mut u8,
    pub auth_key_size: usize,
    pub max_err_data: usize,
    pub mr_cnt: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_fabric_attr {
    pub fabric: Ptr,
    pub name: *mut c_char,
    pub prov_name: *mut c_char,
    pub prov_version: u32,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_info {
    pub next: *mut fi_info,
    pub caps: u64,
    pub mode: u64,
    pub addr_format: u32,
    pub src_addrlen: usize,
    pub dest_addrlen: usize,
    pub src_addr: Ptr,
    pub dest_addr: Ptr,
    pub handle: Ptr,
    pub tx_attr: *mut fi_tx_attr,
    pub rx_attr: Ptr,
    pub ep_attr: *mut fi_ep_attr,
    pub domain_attr: *mut fi_domain_attr,
    pub fabric_attr: *mut fi_fabric_attr,
    pub nic: Ptr,
}

// ---- objects and their ops tables ----
#[repr(C)]
pub struct fi_ops {
    pub size: usize,
    pub close: Option<unsafe extern "C" fn(*mut fid) -> c_int>,
    pub bind: Option<unsafe extern "C" fn(*mut fid, *mut fid, u64) -> c_int>,
    pub control: Option<unsafe extern "C" fn(*mut fid, c_int, Ptr) -> c_int>,
    ops_open: Slot,
    tostr: Slot,
    ops_set: Slot,
}

/// Every libfabric object starts with this header.
#[repr(C)]
pub struct fid {
    pub fclass: usize,
    pub context: Ptr,
    pub ops: *mut fi_ops,
}

#[repr(C)]
pub struct fi_ops_fabric {
    pub size: usize,
    pub domain: Option<unsafe extern "C" fn(*mut fid_fabric, *mut fi_info, *mut *mut fid_domain, Ptr) -> c_int>,
    passive_ep: Slot,
    eq_open: Slot,
    wait_open: Slot,
    pub trywait: Option<unsafe extern "C" fn(*mut fid_fabric, *mut *mut fid, c_int) -> c_int>,
}

#[repr(C)]
pub struct fid_fabric {
    pub fid: fid,
    pub ops: *mut fi_ops_fabric,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_atomic_attr {
    pub count: usize,
    pub size: usize,
}

#[repr(C)]
pub struct fi_ops_domain {
    pub size: usize,
    pub av_open: Option<unsafe extern "C" fn(*mut fid_domain, *mut fi_av_attr, *mut *mut fid_av, Ptr) -> c_int>,
    pub cq_open: Option<unsafe extern "C" fn(*mut fid_domain, *mut fi_cq_attr, *mut *mut fid_cq, Ptr) -> c_int>,
    pub endpoint: Option<unsafe extern "C" fn(*mut fid_domain, *mut fi_info, *mut *mut fid_ep, Ptr) -> c_int>,
    scalable_ep: Slot,
    pub cntr_open: Option<unsafe extern "C" fn(*mut fid_domain, *mut fi_cntr_attr, *mut *mut fid_cntr, Ptr) -> c_int>,
    poll_open: Slot,
    stx_ctx: Slot,
    srx_ctx: Slot,
    pub query_atomic: Option<unsafe extern "C" fn(*mut fid_domain, u32, u32, *mut fi_atomic_attr, u64) -> c_int>,
}

#[repr(C)]
pub struct fi_ops_mr {
    pub size: usize,
    #[allow(clippy::type_complexity)]
    pub reg: Option<unsafe extern "C" fn(*mut fid, *const c_void, usize, u64, u64, u64, u64, *mut *mut fid_mr, Ptr) -> c_int>,
    regv: Slot,
    regattr: Slot,
}

#[repr(C)]
pub struct fid_domain {
    pub fid: fid,
    pub ops: *mut fi_ops_domain,
    pub mr: *mut fi_ops_mr,
}

#[repr(C)]
pub struct fid_mr {
    pub fid: fid,
    pub mem_desc: Ptr,
    pub key: u64,
}

#[repr(C)]
pub struct fi_av_attr {
    pub type_: u32,
    pub rx_ctx_bits: c_int,
    pub count: usize,
    pub ep_per_node: usize,
    pub name: *const c_char,
    pub map_addr: Ptr,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_ops_av {
    pub size: usize,
    pub insert: Option<unsafe extern "C" fn(*mut fid_av, *const c_void, usize, *mut fi_addr_t, u64, Ptr) -> c_int>,
}

#[repr(C)]
pub struct fid_av {
    pub fid: fid,
    pub ops: *mut fi_ops_av,
}

#[repr(C)]
pub struct fi_cq_attr {
    pub size: usize,
    pub flags: u64,
    pub format: u32,
    pub wait_obj: u32,
    pub signaling_vector: c_int,
    pub wait_cond: u32,
    pub wait_set: Ptr,
}

#[repr(C)]
pub struct fi_cq_err_entry {
    pub op_context: Ptr,
    pub flags: u64,
    pub len: usize,
    pub buf: Ptr,
    pub data: u64,
    pub tag: u64,
    pub olen: usize,
    pub err: c_int,
    pub prov_errno: c_int,
    pub err_data: Ptr,
    pub err_data_size: usize,
}

#[repr(C)]
pub struct fi_ops_cq {
    pub size: usize,
    pub read: Option<unsafe extern "C" fn(*mut fid_cq, Ptr, usize) -> isize>,
    readfrom: Slot,
    pub readerr: Option<unsafe extern "C" fn(*mut fid_cq, *mut fi_cq_err_entry, u64) -> isize>,
    sread: Slot,
    sreadfrom: Slot,
    pub signal: Option<unsafe extern "C" fn(*mut fid_cq) -> c_int>,
    pub strerror: Option<unsafe extern "C" fn(*mut fid_cq, c_int, *const c_void, *mut c_char, usize) -> *const c_char>,
}

#[repr(C)]
pub struct fid_cq {
    pub fid: fid,
    pub ops: *mut fi_ops_cq,
}

#[repr(C)]
pub struct fi_cntr_attr {
    pub events: u32,
    pub wait_obj: u32,
    pub wait_set: Ptr,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_ops_cntr {
    pub size: usize,
    pub read: Option<unsafe extern "C" fn(*mut fid_cntr) -> u64>,
    pub readerr: Option<unsafe extern "C" fn(*mut fid_cntr) -> u64>,
}

#[repr(C)]
pub struct fid_cntr {
    pub fid: fid,
    pub ops: *mut fi_ops_cntr,
}

#[repr(C)]
pub struct fi_ops_cm {
    pub size: usize,
    setname: Slot,
    pub getname: Option<unsafe extern "C" fn(*mut fid, Ptr, *mut usize) -> c_int>,
}

/// One remote buffer of an RMA message.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct fi_rma_iov {
    pub addr: u64,
    pub len: usize,
    pub key: u64,
}

/// An RMA message (fi_writemsg).
#[repr(C)]
pub struct fi_msg_rma {
    pub msg_iov: *const libc::iovec,
    pub desc: *mut Ptr,
    pub iov_count: usize,
    pub addr: fi_addr_t,
    pub rma_iov: *const fi_rma_iov,
    pub rma_iov_count: usize,
    pub context: Ptr,
    pub data: u64,
}

#[repr(C)]
pub struct fi_ops_rma {
    pub size: usize,
    pub read: Option<unsafe extern "C" fn(*mut fid_ep, Ptr, usize, Ptr, fi_addr_t, u64, u64, Ptr) -> isize>,
    readv: Slot,
    readmsg: Slot,
    pub write: Option<unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, Ptr, fi_addr_t, u64, u64, Ptr) -> isize>,
    writev: Slot,
    pub writemsg: Option<unsafe extern "C" fn(*mut fid_ep, *const fi_msg_rma, u64) -> isize>,
    pub inject: Option<unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, fi_addr_t, u64, u64) -> isize>,
}

type AtomicWrite = unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, Ptr, fi_addr_t, u64, u64, u32, u32, Ptr) -> isize;
type AtomicInject = unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, fi_addr_t, u64, u64, u32, u32) -> isize;
type AtomicFetch = unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, Ptr, Ptr, Ptr, fi_addr_t, u64, u64, u32, u32, Ptr) -> isize;
type AtomicCompare =
    unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, Ptr, *const c_void, Ptr, Ptr, Ptr, fi_addr_t, u64, u64, u32, u32, Ptr) -> isize;
type AtomicValid = unsafe extern "C" fn(*mut fid_ep, u32, u32, *mut usize) -> c_int;

#[repr(C)]
pub struct fi_ops_atomic {
    pub size: usize,
    pub write: Option<AtomicWrite>,
    writev: Slot,
    writemsg: Slot,
    pub inject: Option<AtomicInject>,
    pub readwrite: Option<AtomicFetch>,
    readwritev: Slot,
    readwritemsg: Slot,
    pub compwrite: Option<AtomicCompare>,
    compwritev: Slot,
    compwritemsg: Slot,
    pub writevalid: Option<AtomicValid>,
    pub readwritevalid: Option<AtomicValid>,
    pub compwritevalid: Option<AtomicValid>,
}

#[repr(C)]
pub struct fid_ep {
    pub fid: fid,
    ops: Slot,
    pub cm: *mut fi_ops_cm,
    msg: Slot,
    pub rma: *mut fi_ops_rma,
    tagged: Slot,
    pub atomic: *mut fi_ops_atomic,
    collective: Slot,
}

/// Each struct's size in the libfabric 1.x ABI, checked at compile time.
macro_rules! sizes {
    ($($t:ty => $n:expr,)*) => {$(
        const _: () = assert!(std::mem::size_of::<$t>() == $n);
    )*};
}
sizes! {
    fi_tx_attr => 80,
    fi_ep_attr => 96,
    fi_domain_attr => 192,
    fi_fabric_attr => 32,
    fi_info => 120,
    fi_ops => 56,
    fid => 24,
    fi_av_attr => 48,
    fi_cq_attr => 40,
    fi_cq_err_entry => 80,
    fi_cntr_attr => 24,
    fi_msg_rma => 64,
    fi_rma_iov => 24,
    fi_ops_atomic => 14 * 8,
    fid_ep => 24 + 7 * 8,
}

// ---- the exported functions ----
type GetInfo = unsafe extern "C" fn(u32, *const c_char, *const c_char, u64, *const fi_info, *mut *mut fi_info) -> c_int;

/// The library's exported entry points (the rest is reached through ops tables).
pub struct Api {
    _lib: Lib,
    pub getinfo: GetInfo,
    pub freeinfo: unsafe extern "C" fn(*mut fi_info),
    pub dupinfo: unsafe extern "C" fn(*const fi_info) -> *mut fi_info,
    pub fabric: unsafe extern "C" fn(*mut fi_fabric_attr, *mut *mut fid_fabric, Ptr) -> c_int,
    pub strerror: unsafe extern "C" fn(c_int) -> *const c_char,
    pub version: unsafe extern "C" fn() -> u32,
}

impl Api {
    /// dlopen `name` and resolve the entry points; the error says what was missing.
    pub fn load(name: &CStr) -> Result<Api, String> {
        let lib = Lib::open(name)?;
        let sym = |s: &CStr| lib.sym(s).ok_or_else(|| format!("it has no symbol {}", s.to_string_lossy()));
        let (getinfo, freeinfo, dupinfo) = (sym(c"fi_getinfo")?, sym(c"fi_freeinfo")?, sym(c"fi_dupinfo")?);
        let (fabric, strerror, version) = (sym(c"fi_fabric")?, sym(c"fi_strerror")?, sym(c"fi_version")?);
        // SAFETY: each symbol is the libfabric function of that name, whose C prototype
        // (fabric.h; default symbol version) is the type it is converted to.
        unsafe {
            Ok(Api {
                getinfo: std::mem::transmute::<Ptr, GetInfo>(getinfo),
                freeinfo: std::mem::transmute::<Ptr, unsafe extern "C" fn(*mut fi_info)>(freeinfo),
                dupinfo: std::mem::transmute::<Ptr, unsafe extern "C" fn(*const fi_info) -> *mut fi_info>(dupinfo),
                fabric: std::mem::transmute::<Ptr, unsafe extern "C" fn(*mut fi_fabric_attr, *mut *mut fid_fabric, Ptr) -> c_int>(fabric),
                strerror: std::mem::transmute::<Ptr, unsafe extern "C" fn(c_int) -> *const c_char>(strerror),
                version: std::mem::transmute::<Ptr, unsafe extern "C" fn() -> u32>(version),
                _lib: lib,
            })
        }
    }

    /// fi_strerror of a (positive or negative) libfabric return code.
    pub fn describe(&self, rc: isize) -> String {
        let code = rc.unsigned_abs().min(c_int::MAX as usize) as c_int;
        // SAFETY: fi_strerror returns a static NUL-terminated string for any code.
        let s = unsafe { (self.strerror)(code) };
        if s.is_null() {
            return format!("error {code}");
        }
        // SAFETY: non-null static string (above).
        format!("{} ({code})", unsafe { CStr::from_ptr(s) }.to_string_lossy())
    }
}

// ---- the inline dispatch of the headers, re-implemented ----
//
// # Safety (all functions below; hence no per-function section)
// Every object pointer must be a live object of that class opened from this library and not yet
// closed; buffers must be valid for the lengths given (and, for non-blocking operations, stay
// valid until the operation completes). An empty table slot returns -FI_ENOSYS, as the headers'
// FI_CHECK_OP does.

macro_rules! call {
    ($table:expr, $slot:ident ( $($arg:expr),* )) => {
        match (*$table).$slot {
            Some(f) => f($($arg),*) as isize,
            None => -FI_ENOSYS,
        }
    };
}

/// fi_close
pub unsafe fn close(f: *mut fid) -> isize {
    call!((*f).ops, close(f))
}
/// fi_ep_bind / fi_mr_bind / fi_domain_bind (the fid's bind op)
pub unsafe fn bind(f: *mut fid, to: *mut fid, flags: u64) -> isize {
    call!((*f).ops, bind(f, to, flags))
}
/// fi_control
pub unsafe fn control(f: *mut fid, command: c_int, arg: Ptr) -> isize {
    call!((*f).ops, control(f, command, arg))
}
/// fi_domain
pub unsafe fn domain(fab: *mut fid_fabric, info: *mut fi_info, out: *mut *mut fid_domain) -> isize {
    call!((*fab).ops, domain(fab, info, out, std::ptr::null_mut()))
}
/// fi_trywait
pub unsafe fn trywait(fab: *mut fid_fabric, fids: *mut *mut fid, count: c_int) -> isize {
    call!((*fab).ops, trywait(fab, fids, count))
}
/// fi_av_open
pub unsafe fn av_open(d: *mut fid_domain, attr: *mut fi_av_attr, out: *mut *mut fid_av) -> isize {
    call!((*d).ops, av_open(d, attr, out, std::ptr::null_mut()))
}
/// fi_cq_open
pub unsafe fn cq_open(d: *mut fid_domain, attr: *mut fi_cq_attr, out: *mut *mut fid_cq) -> isize {
    call!((*d).ops, cq_open(d, attr, out, std::ptr::null_mut()))
}
/// fi_cntr_open
pub unsafe fn cntr_open(d: *mut fid_domain, attr: *mut fi_cntr_attr, out: *mut *mut fid_cntr) -> isize {
    call!((*d).ops, cntr_open(d, attr, out, std::ptr::null_mut()))
}
/// fi_endpoint
pub unsafe fn endpoint(d: *mut fid_domain, info: *mut fi_info, out: *mut *mut fid_ep) -> isize {
    call!((*d).ops, endpoint(d, info, out, std::ptr::null_mut()))
}
/// fi_query_atomic
pub unsafe fn query_atomic(d: *mut fid_domain, datatype: u32, op: u32, attr: *mut fi_atomic_attr, flags: u64) -> isize {
    if (*(*d).ops).size <= std::mem::offset_of!(fi_ops_domain, query_atomic) {
        return -FI_ENOSYS;
    }
    call!((*d).ops, query_atomic(d, datatype, op, attr, flags))
}
/// fi_mr_reg
#[allow(clippy::too_many_arguments)]
pub unsafe fn mr_reg(d: *mut fid_domain, buf: *const c_void, len: usize, access: u64, key: u64, out: *mut *mut fid_mr) -> isize {
    call!((*d).mr, reg(&mut (*d).fid, buf, len, access, 0, key, 0, out, std::ptr::null_mut()))
}
/// fi_av_insert
pub unsafe fn av_insert(av: *mut fid_av, addrs: *const c_void, count: usize, out: *mut fi_addr_t) -> isize {
    call!((*av).ops, insert(av, addrs, count, out, 0, std::ptr::null_mut()))
}
/// fi_getname
pub unsafe fn getname(ep: *mut fid_ep, addr: Ptr, len: *mut usize) -> isize {
    call!((*ep).cm, getname(&mut (*ep).fid, addr, len))
}
/// fi_cq_read
pub unsafe fn cq_read(cq: *mut fid_cq, buf: Ptr, count: usize) -> isize {
    call!((*cq).ops, read(cq, buf, count))
}
/// fi_cq_readerr
pub unsafe fn cq_readerr(cq: *mut fid_cq, entry: *mut fi_cq_err_entry) -> isize {
    call!((*cq).ops, readerr(cq, entry, 0))
}
/// fi_cq_signal
pub unsafe fn cq_signal(cq: *mut fid_cq) -> isize {
    call!((*cq).ops, signal(cq))
}
/// fi_cq_strerror: the provider's text for a provider error, if it has one.
pub unsafe fn cq_strerror(cq: *mut fid_cq, prov_errno: c_int, err_data: *const c_void) -> Option<String> {
    let f = (*(*cq).ops).strerror?;
    let mut buf = [0 as c_char; 256];
    let s = f(cq, prov_errno, err_data, buf.as_mut_ptr(), buf.len());
    (!s.is_null()).then(|| CStr::from_ptr(s).to_string_lossy().into_owned())
}
/// fi_cntr_read (0 where the table has no entry)
pub unsafe fn cntr_read(c: *mut fid_cntr) -> u64 {
    (*(*c).ops).read.map_or(0, |f| f(c))
}
/// fi_cntr_readerr
pub unsafe fn cntr_readerr(c: *mut fid_cntr) -> u64 {
    (*(*c).ops).readerr.map_or(0, |f| f(c))
}
/// fi_write
#[allow(clippy::too_many_arguments)]
pub unsafe fn write(ep: *mut fid_ep, buf: *const c_void, len: usize, desc: Ptr, dest: fi_addr_t, addr: u64, key: u64) -> isize {
    call!((*ep).rma, write(ep, buf, len, desc, dest, addr, key, std::ptr::null_mut()))
}
/// fi_writemsg of one contiguous local buffer to the remote pieces `rma` (their lengths add up
/// to `len`), with `context` reported in its completion.
#[allow(clippy::too_many_arguments)]
pub unsafe fn writemsg(
    ep: *mut fid_ep,
    buf: *const c_void,
    len: usize,
    desc: Ptr,
    dest: fi_addr_t,
    rma: &[fi_rma_iov],
    context: Ptr,
    flags: u64,
) -> isize {
    let iov = libc::iovec { iov_base: buf.cast_mut(), iov_len: len };
    let mut desc = desc;
    let msg = fi_msg_rma {
        msg_iov: &iov,
        desc: &mut desc,
        iov_count: 1,
        addr: dest,
        rma_iov: rma.as_ptr(),
        rma_iov_count: rma.len(),
        context,
        data: 0,
    };
    call!((*ep).rma, writemsg(ep, &msg, flags))
}
/// fi_inject_write
pub unsafe fn inject_write(ep: *mut fid_ep, buf: *const c_void, len: usize, dest: fi_addr_t, addr: u64, key: u64) -> isize {
    call!((*ep).rma, inject(ep, buf, len, dest, addr, key))
}
/// fi_read
#[allow(clippy::too_many_arguments)]
pub unsafe fn read(ep: *mut fid_ep, buf: Ptr, len: usize, desc: Ptr, src: fi_addr_t, addr: u64, key: u64) -> isize {
    call!((*ep).rma, read(ep, buf, len, desc, src, addr, key, std::ptr::null_mut()))
}

/// One atomic element on a remote PE: where it is and what it is.
#[derive(Clone, Copy)]
pub struct AtomicTarget {
    pub peer: fi_addr_t,
    pub addr: u64,
    pub key: u64,
    pub datatype: u32,
    pub op: u32,
}

/// fi_atomic (count 1)
pub unsafe fn atomic(ep: *mut fid_ep, buf: *const c_void, desc: Ptr, t: AtomicTarget) -> isize {
    call!((*ep).atomic, write(ep, buf, 1, desc, t.peer, t.addr, t.key, t.datatype, t.op, std::ptr::null_mut()))
}
/// fi_inject_atomic (count 1)
pub unsafe fn inject_atomic(ep: *mut fid_ep, buf: *const c_void, t: AtomicTarget) -> isize {
    call!((*ep).atomic, inject(ep, buf, 1, t.peer, t.addr, t.key, t.datatype, t.op))
}
/// fi_fetch_atomic (count 1)
pub unsafe fn fetch_atomic(ep: *mut fid_ep, buf: *const c_void, desc: Ptr, result: Ptr, result_desc: Ptr, t: AtomicTarget) -> isize {
    call!((*ep).atomic, readwrite(ep, buf, 1, desc, result, result_desc, t.peer, t.addr, t.key, t.datatype, t.op, std::ptr::null_mut()))
}
/// fi_compare_atomic (count 1); descriptors: [buf, compare, result]
pub unsafe fn compare_atomic(
    ep: *mut fid_ep,
    buf: *const c_void,
    compare: *const c_void,
    result: Ptr,
    desc: [Ptr; 3],
    t: AtomicTarget,
) -> isize {
    call!(
        (*ep).atomic,
        compwrite(ep, buf, 1, desc[0], compare, desc[1], result, desc[2], t.peer, t.addr, t.key, t.datatype, t.op, std::ptr::null_mut())
    )
}
/// fi_atomicvalid / fi_fetch_atomicvalid / fi_compare_atomicvalid, by `flags` (0,
/// FI_FETCH_ATOMIC, FI_COMPARE_ATOMIC): the element count supported, or the error.
pub unsafe fn atomic_valid(ep: *mut fid_ep, datatype: u32, op: u32, flags: u64) -> isize {
    let mut count = 0usize;
    let table = (*ep).atomic;
    let rc = if flags == FI_FETCH_ATOMIC {
        call!(table, readwritevalid(ep, datatype, op, &mut count))
    } else if flags == FI_COMPARE_ATOMIC {
        call!(table, compwritevalid(ep, datatype, op, &mut count))
    } else {
        call!(table, writevalid(ep, datatype, op, &mut count))
    };
    if rc < 0 {
        rc
    } else {
        count as isize
    }
}
