//! Raw rdma-core interface, loaded at run time with dlopen: libibverbs.so.1 (verbs) and
//! libmlx5.so.1 (mlx5dv / DevX). A program on a machine without rdma-core still loads librshmem;
//! it only gets an error when it asks for RDMA.
//!
//! The declarations are our own, written from rdma-core 44's <infiniband/verbs.h> and
//! <infiniband/mlx5dv.h> (Debian libibverbs-dev); tests/ibgda_layout.rs and tests/ib_devx.rs check
//! every struct's size and field offsets, and every constant's value, against those headers
//! (ctest/ibgda/verbs_layout.cpp, ctest/ib/devx_layout.cpp). Only what we use is declared; opaque
//! objects are `c_void`.
//!
//! NEVER MET HARDWARE: no machine here has an RDMA device. Loading, symbol lookup and the
//! "no device" answer run in CI; every call past `ibv_get_device_list` is untested.

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::abi::rows::{const_rows, layout_rows};

pub type Ptr = *mut c_void;

// ---- enums and flags (values from verbs.h / mlx5dv.h) ----
pub const IBV_QPS_RESET: u32 = 0;
pub const IBV_QPS_INIT: u32 = 1;
pub const IBV_QPS_RTR: u32 = 2;
pub const IBV_QPS_RTS: u32 = 3;
pub const IBV_QPS_ERR: u32 = 6;

pub const IBV_QP_STATE: c_int = 1 << 0;
pub const IBV_QP_ACCESS_FLAGS: c_int = 1 << 3;
pub const IBV_QP_PKEY_INDEX: c_int = 1 << 4;
pub const IBV_QP_PORT: c_int = 1 << 5;
pub const IBV_QP_AV: c_int = 1 << 7;
pub const IBV_QP_PATH_MTU: c_int = 1 << 8;
pub const IBV_QP_TIMEOUT: c_int = 1 << 9;
pub const IBV_QP_RETRY_CNT: c_int = 1 << 10;
pub const IBV_QP_RNR_RETRY: c_int = 1 << 11;
pub const IBV_QP_RQ_PSN: c_int = 1 << 12;
pub const IBV_QP_MAX_QP_RD_ATOMIC: c_int = 1 << 13;
pub const IBV_QP_MIN_RNR_TIMER: c_int = 1 << 15;
pub const IBV_QP_SQ_PSN: c_int = 1 << 16;
pub const IBV_QP_MAX_DEST_RD_ATOMIC: c_int = 1 << 17;
pub const IBV_QP_DEST_QPN: c_int = 1 << 20;

pub const IBV_ACCESS_LOCAL_WRITE: c_int = 1;
pub const IBV_ACCESS_REMOTE_WRITE: c_int = 1 << 1;
pub const IBV_ACCESS_REMOTE_READ: c_int = 1 << 2;
pub const IBV_ACCESS_REMOTE_ATOMIC: c_int = 1 << 3;
pub const IBV_ACCESS_RELAXED_ORDERING: c_int = 1 << 20;

pub const IBV_PORT_DOWN: u32 = 1;
pub const IBV_PORT_INIT: u32 = 2;
pub const IBV_PORT_ARMED: u32 = 3;
pub const IBV_PORT_ACTIVE: u32 = 4;
pub const IBV_PORT_ACTIVE_DEFER: u32 = 5;

pub const IBV_QPT_RC: u32 = 2;
pub const IBV_LINK_LAYER_INFINIBAND: u8 = 1;
pub const IBV_LINK_LAYER_ETHERNET: u8 = 2;

pub const MLX5DV_UAR_ALLOC_TYPE_BF: u32 = 0;
pub const MLX5DV_UAR_ALLOC_TYPE_NC: u32 = 1;
pub const MLX5DV_OBJ_CQ: u64 = 1 << 1;
pub const MLX5DV_OBJ_SRQ: u64 = 1 << 2;
pub const MLX5DV_OBJ_AH: u64 = 1 << 5;
pub const MLX5DV_OBJ_PD: u64 = 1 << 6;
pub const MLX5DV_UMEM_MASK_DMABUF: u64 = 1 << 0;
pub const MLX5DV_CONTEXT_FLAGS_DEVX: u32 = 1 << 0;

// ---- structs ----
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IbvPortAttr {
    pub state: u32,
    pub max_mtu: u32,
    pub active_mtu: u32,
    pub gid_tbl_len: c_int,
    pub port_cap_flags: u32,
    pub max_msg_sz: u32,
    pub bad_pkey_cntr: u32,
    pub qkey_viol_cntr: u32,
    pub pkey_tbl_len: u16,
    pub lid: u16,
    pub sm_lid: u16,
    pub lmc: u8,
    pub max_vl_num: u8,
    pub sm_sl: u8,
    pub subnet_timeout: u8,
    pub init_type_reply: u8,
    pub active_width: u8,
    pub active_speed: u8,
    pub phys_state: u8,
    pub link_layer: u8,
    pub flags: u8,
    pub port_cap_flags2: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IbvMr {
    pub context: Ptr,
    pub pd: Ptr,
    pub addr: Ptr,
    pub length: usize,
    pub handle: u32,
    pub lkey: u32,
    pub rkey: u32,
}

/// `dgid` is `union ibv_gid`, whose `__be64` members make the struct 8-byte aligned.
#[repr(C, align(8))]
#[derive(Clone, Copy, Debug, Default)]
pub struct IbvGlobalRoute {
    pub dgid: [u8; 16],
    pub flow_label: u32,
    pub sgid_index: u8,
    pub hop_limit: u8,
    pub traffic_class: u8,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IbvAhAttr {
    pub grh: IbvGlobalRoute,
    pub dlid: u16,
    pub sl: u8,
    pub src_path_bits: u8,
    pub static_rate: u8,
    pub is_global: u8,
    pub port_num: u8,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IbvQpCap {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_inline_data: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IbvQpAttr {
    pub qp_state: u32,
    pub cur_qp_state: u32,
    pub path_mtu: u32,
    pub path_mig_state: u32,
    pub qkey: u32,
    pub rq_psn: u32,
    pub sq_psn: u32,
    pub dest_qp_num: u32,
    pub qp_access_flags: u32,
    pub cap: IbvQpCap,
    pub ah_attr: IbvAhAttr,
    pub alt_ah_attr: IbvAhAttr,
    pub pkey_index: u16,
    pub alt_pkey_index: u16,
    pub en_sqd_async_notify: u8,
    pub sq_draining: u8,
    pub max_rd_atomic: u8,
    pub max_dest_rd_atomic: u8,
    pub min_rnr_timer: u8,
    pub port_num: u8,
    pub timeout: u8,
    pub retry_cnt: u8,
    pub rnr_retry: u8,
    pub alt_port_num: u8,
    pub alt_timeout: u8,
    pub rate_limit: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IbvQpInitAttr {
    pub qp_context: Ptr,
    pub send_cq: Ptr,
    pub recv_cq: Ptr,
    pub srq: Ptr,
    pub cap: IbvQpCap,
    pub qp_type: u32,
    pub sq_sig_all: c_int,
}

/// The leading fields of `struct ibv_qp` (we only read qp_num and state).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IbvQpHead {
    pub context: Ptr,
    pub qp_context: Ptr,
    pub pd: Ptr,
    pub send_cq: Ptr,
    pub recv_cq: Ptr,
    pub srq: Ptr,
    pub handle: u32,
    pub qp_num: u32,
    pub state: u32,
    pub qp_type: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct IbvSrqInitAttr {
    pub srq_context: Ptr,
    pub max_wr: u32,
    pub max_sge: u32,
    pub srq_limit: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvDevxUar {
    pub reg_addr: Ptr,
    pub base_addr: Ptr,
    pub page_id: u32,
    pub mmap_off: i64,
    pub comp_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvDevxUmem {
    pub umem_id: u32,
}

/// `struct mlx5dv_obj`: in/out pointer pairs for mlx5dv_init_obj, in the header's order
/// (qp, cq, srq, rwq, dm, ah, pd); we fill only the pairs we ask for.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvObj {
    pub qp: [Ptr; 2],
    pub cq: [Ptr; 2],
    pub srq: [Ptr; 2],
    pub rwq: [Ptr; 2],
    pub dm: [Ptr; 2],
    pub ah: [Ptr; 2],
    pub pd: [Ptr; 2],
}

impl Default for Mlx5dvObj {
    fn default() -> Mlx5dvObj {
        let n = [std::ptr::null_mut(); 2];
        Mlx5dvObj { qp: n, cq: n, srq: n, rwq: n, dm: n, ah: n, pd: n }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Mlx5dvPd {
    pub pdn: u32,
    pub comp_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvCq {
    pub buf: Ptr,
    pub dbrec: Ptr,
    pub cqe_cnt: u32,
    pub cqe_size: u32,
    pub cq_uar: Ptr,
    pub cqn: u32,
    pub comp_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvSrq {
    pub buf: Ptr,
    pub dbrec: Ptr,
    pub stride: u32,
    pub head: u32,
    pub tail: u32,
    pub comp_mask: u64,
    pub srqn: u32,
}

/// `struct mlx5dv_ah`: `av` points at the provider's 48-byte `struct mlx5_wqe_av`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvAh {
    pub av: *mut [u8; 48],
    pub comp_mask: u64,
}

/// `struct mlx5dv_context_attr` up to `comp_mask` (later fields are read only when a
/// comp_mask bit asks for them; we set none).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Mlx5dvContextAttr {
    pub flags: u32,
    pub comp_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Mlx5dvDevxUmemIn {
    pub addr: Ptr,
    pub size: usize,
    pub access: u32,
    pub pgsz_bitmap: u64,
    pub comp_mask: u64,
    pub dmabuf_fd: c_int,
}

/// The DevX-path declarations' rows (same form as [`layout_table`]), checked against the real
/// headers by ctest/ib/devx_layout.cpp in tests/ib_devx.rs.
pub fn devx_layout_table() -> Vec<String> {
    let mut v = Vec::new();
    layout_rows!(v, Mlx5dvObj, "mlx5dv_obj", [qp, cq, srq, rwq, dm, ah, pd]);
    layout_rows!(v, Mlx5dvPd, "mlx5dv_pd", [pdn, comp_mask]);
    layout_rows!(v, Mlx5dvCq, "mlx5dv_cq", [buf, dbrec, cqe_cnt, cqe_size, cq_uar, cqn, comp_mask]);
    layout_rows!(v, Mlx5dvSrq, "mlx5dv_srq", [buf, dbrec, stride, head, tail, comp_mask, srqn]);
    layout_rows!(v, Mlx5dvAh, "mlx5dv_ah", [av, comp_mask]);
    layout_rows!(v, Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", [addr, size, access, pgsz_bitmap, comp_mask, dmabuf_fd]);
    v.push(format!("field mlx5dv_context_attr.flags {}", std::mem::offset_of!(Mlx5dvContextAttr, flags)));
    v.push(format!("field mlx5dv_context_attr.comp_mask {}", std::mem::offset_of!(Mlx5dvContextAttr, comp_mask)));
    push_consts(
        &mut v,
        &const_rows!("", [MLX5DV_OBJ_CQ, MLX5DV_OBJ_SRQ, MLX5DV_OBJ_AH, MLX5DV_OBJ_PD, MLX5DV_UMEM_MASK_DMABUF, MLX5DV_CONTEXT_FLAGS_DEVX]),
    );
    v
}

/// Appends a `const <NAME> <value>` row per constant.
fn push_consts(v: &mut Vec<String>, rows: &[(&str, u64)]) {
    v.extend(rows.iter().map(|(name, value)| format!("const {name} {value}")));
}

/// `(struct, field, offset)` and `(struct, size)` rows for the layout test, and a `const` row
/// per verbs constant (and the UAR allocation types), in the form ctest/ibgda/verbs_layout.cpp
/// prints.
pub fn layout_table() -> Vec<String> {
    let mut v = Vec::new();
    layout_rows!(v, IbvPortAttr, "ibv_port_attr", [state, active_mtu, gid_tbl_len, lid, link_layer, flags, port_cap_flags2]);
    layout_rows!(v, IbvMr, "ibv_mr", [addr, length, handle, lkey, rkey]);
    layout_rows!(v, IbvGlobalRoute, "ibv_global_route", [dgid, flow_label, sgid_index, hop_limit, traffic_class]);
    layout_rows!(v, IbvAhAttr, "ibv_ah_attr", [grh, dlid, sl, src_path_bits, static_rate, is_global, port_num]);
    layout_rows!(v, IbvQpCap, "ibv_qp_cap", [max_send_wr, max_inline_data]);
    layout_rows!(
        v,
        IbvQpAttr,
        "ibv_qp_attr",
        [
            qp_state,
            path_mtu,
            qkey,
            rq_psn,
            sq_psn,
            dest_qp_num,
            qp_access_flags,
            cap,
            ah_attr,
            alt_ah_attr,
            pkey_index,
            max_rd_atomic,
            max_dest_rd_atomic,
            min_rnr_timer,
            port_num,
            timeout,
            retry_cnt,
            rnr_retry,
            alt_timeout,
            rate_limit
        ]
    );
    layout_rows!(v, IbvQpInitAttr, "ibv_qp_init_attr", [send_cq, recv_cq, srq, cap, qp_type, sq_sig_all]);
    layout_rows!(v, IbvQpHead, "ibv_qp", [handle, qp_num, state, qp_type]);
    layout_rows!(v, IbvSrqInitAttr, "ibv_srq_init_attr", [max_wr, max_sge, srq_limit]);
    layout_rows!(v, Mlx5dvDevxUar, "mlx5dv_devx_uar", [reg_addr, base_addr, page_id, mmap_off, comp_mask]);
    layout_rows!(v, Mlx5dvDevxUmem, "mlx5dv_devx_umem", [umem_id]);
    push_consts(&mut v, &const_rows!("", [IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_ERR]));
    push_consts(&mut v, &const_rows!("", [IBV_PORT_DOWN, IBV_PORT_INIT, IBV_PORT_ARMED, IBV_PORT_ACTIVE, IBV_PORT_ACTIVE_DEFER]));
    push_consts(
        &mut v,
        &const_rows!(
            "",
            [
                IBV_QP_STATE,
                IBV_QP_ACCESS_FLAGS,
                IBV_QP_PKEY_INDEX,
                IBV_QP_PORT,
                IBV_QP_AV,
                IBV_QP_PATH_MTU,
                IBV_QP_TIMEOUT,
                IBV_QP_RETRY_CNT,
                IBV_QP_RNR_RETRY,
                IBV_QP_RQ_PSN,
                IBV_QP_MAX_QP_RD_ATOMIC,
                IBV_QP_MIN_RNR_TIMER,
                IBV_QP_SQ_PSN,
                IBV_QP_MAX_DEST_RD_ATOMIC,
                IBV_QP_DEST_QPN
            ]
        ),
    );
    push_consts(
        &mut v,
        &const_rows!(
            "",
            [
                IBV_ACCESS_LOCAL_WRITE,
                IBV_ACCESS_REMOTE_WRITE,
                IBV_ACCESS_REMOTE_READ,
                IBV_ACCESS_REMOTE_ATOMIC,
                IBV_ACCESS_RELAXED_ORDERING
            ]
        ),
    );
    push_consts(
        &mut v,
        &const_rows!(
            "",
            [IBV_QPT_RC, IBV_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_ETHERNET, MLX5DV_UAR_ALLOC_TYPE_BF, MLX5DV_UAR_ALLOC_TYPE_NC]
        ),
    );
    v
}

// ---- the loaded libraries ----

/// A dlopen handle.
pub struct Lib(Ptr);
// SAFETY: a dlopen handle may be used from any thread (dlsym is thread-safe).
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

impl Lib {
    /// dlopen with RTLD_NOW | RTLD_LOCAL; the error text of dlerror on failure.
    pub fn open(name: &CStr) -> Result<Lib, String> {
        // SAFETY: name is NUL-terminated; rdma-core's libraries run only their own constructors.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            return Err(dlerror());
        }
        Ok(Lib(h))
    }
    /// The address of `name`, or None.
    pub fn sym(&self, name: &CStr) -> Option<Ptr> {
        // SAFETY: the handle is live (never closed); name is NUL-terminated.
        let p = unsafe { libc::dlsym(self.0, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl* call.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

macro_rules! fn_table {
    ($table:ident from $lib:literal { $($name:ident : fn($($arg:ty),*) -> $ret:ty;)* }) => {
        /// Function pointers resolved from the library.
        #[allow(non_snake_case)]
        pub struct $table {
            pub lib: Lib,
            $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }
        impl $table {
            pub fn load() -> Result<$table, String> {
                let lib = Lib::open(CStr::from_bytes_with_nul(concat!($lib, "\0").as_bytes()).unwrap())
                    .map_err(|e| format!("{} could not be loaded ({e})", $lib))?;
                $(
                    let p = lib.sym(CStr::from_bytes_with_nul(concat!(stringify!($name), "\0").as_bytes()).unwrap())
                        .ok_or_else(|| format!("{} has no symbol {}", $lib, stringify!($name)))?;
                    // SAFETY: the symbol is the rdma-core function of this name, whose C
                    // signature (verbs.h / mlx5dv.h) is the one declared here.
                    let $name = unsafe { std::mem::transmute::<Ptr, unsafe extern "C" fn($($arg),*) -> $ret>(p) };
                )*
                Ok($table { lib, $($name,)* })
            }
        }
    };
}

fn_table!(Verbs from "libibverbs.so.1" {
    ibv_get_device_list: fn(*mut c_int) -> *mut Ptr;
    ibv_free_device_list: fn(*mut Ptr) -> ();
    ibv_get_device_name: fn(Ptr) -> *const c_char;
    ibv_open_device: fn(Ptr) -> Ptr;
    ibv_close_device: fn(Ptr) -> c_int;
    ibv_query_port: fn(Ptr, u8, *mut IbvPortAttr) -> c_int;
    ibv_query_gid: fn(Ptr, u8, c_int, *mut [u8; 16]) -> c_int;
    ibv_alloc_pd: fn(Ptr) -> Ptr;
    ibv_dealloc_pd: fn(Ptr) -> c_int;
    ibv_reg_mr: fn(Ptr, Ptr, usize, c_int) -> *mut IbvMr;
    ibv_reg_dmabuf_mr: fn(Ptr, u64, usize, u64, c_int, c_int) -> *mut IbvMr;
    ibv_dereg_mr: fn(*mut IbvMr) -> c_int;
    ibv_create_cq: fn(Ptr, c_int, Ptr, Ptr, c_int) -> Ptr;
    ibv_destroy_cq: fn(Ptr) -> c_int;
    ibv_create_srq: fn(Ptr, *mut IbvSrqInitAttr) -> Ptr;
    ibv_destroy_srq: fn(Ptr) -> c_int;
    ibv_create_qp: fn(Ptr, *mut IbvQpInitAttr) -> *mut IbvQpHead;
    ibv_modify_qp: fn(*mut IbvQpHead, *mut IbvQpAttr, c_int) -> c_int;
    ibv_destroy_qp: fn(*mut IbvQpHead) -> c_int;
    ibv_create_ah: fn(Ptr, *mut IbvAhAttr) -> Ptr;
    ibv_destroy_ah: fn(Ptr) -> c_int;
});

fn_table!(Mlx5 from "libmlx5.so.1" {
    mlx5dv_is_supported: fn(Ptr) -> bool;
    mlx5dv_open_device: fn(Ptr, *mut Mlx5dvContextAttr) -> Ptr;
    mlx5dv_devx_umem_reg: fn(Ptr, Ptr, usize, u32) -> *mut Mlx5dvDevxUmem;
    mlx5dv_devx_umem_dereg: fn(*mut Mlx5dvDevxUmem) -> c_int;
    mlx5dv_devx_alloc_uar: fn(Ptr, u32) -> *mut Mlx5dvDevxUar;
    mlx5dv_devx_free_uar: fn(*mut Mlx5dvDevxUar) -> ();
    mlx5dv_init_obj: fn(*mut Mlx5dvObj, u64) -> c_int;
    mlx5dv_devx_query_eqn: fn(Ptr, u32, *mut u32) -> c_int;
    mlx5dv_devx_umem_reg_ex: fn(Ptr, *mut Mlx5dvDevxUmemIn) -> *mut Mlx5dvDevxUmem;
    mlx5dv_devx_obj_create: fn(Ptr, *const c_void, usize, *mut c_void, usize) -> Ptr;
    mlx5dv_devx_obj_modify: fn(Ptr, *const c_void, usize, *mut c_void, usize) -> c_int;
    mlx5dv_devx_obj_destroy: fn(Ptr) -> c_int;
    mlx5dv_devx_general_cmd: fn(Ptr, *const c_void, usize, *mut c_void, usize) -> c_int;
});
