//! Collectives of GPU PEs from the host: team barriers, and broadcast / fcollect / alltoall /
//! reduce / reducescatter, each on a CUDA stream (`nvshmemx_*_on_stream`: enqueued, returns at
//! once) and blocking (`nvshmem_*`: the same on the library's stream, waited for). The kernels
//! are the library's own (runtime/gpu/coll.rs). Every routine returns NVSHMEMX_SUCCESS or an
//! NVSHMEMX_ERROR_* code.

use std::ffi::{c_int, c_void};

use super::TEAM_WORLD;
use crate::capi::{ffi_boundary, Status};
use crate::cuda::coll::{Kind, RedOp};
use crate::cuda::{CUstream, StreamHandle};
use crate::runtime::gpu::{Gather, GatherCall, ReduceCall};
use crate::runtime::State;

/// The stream a C caller passed to an `_on_stream` routine.
pub(crate) fn user_stream(stream: CUstream) -> StreamHandle {
    // SAFETY: NVSHMEM's contract for _on_stream routines: the caller passes NULL or a stream of
    // the current context that outlives the work queued on it.
    unsafe { StreamHandle::new(stream) }
}

// ---- barriers --------------------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn nvshmem_barrier(team: c_int) -> c_int {
    ffi_boundary!(nvshmem_barrier => Status, |st| st.gpu_team_barrier_host(team, true, ROUTINE))
}

#[no_mangle]
pub extern "C" fn nvshmem_team_sync(team: c_int) -> c_int {
    ffi_boundary!(nvshmem_team_sync => Status, |st| st.gpu_team_barrier_host(team, false, ROUTINE))
}

#[no_mangle]
pub extern "C" fn nvshmemx_barrier_on_stream(team: c_int, stream: CUstream) -> c_int {
    ffi_boundary!(nvshmemx_barrier_on_stream => Status, |st| st.gpu_barrier_on_stream(team, user_stream(stream), ROUTINE))
}

#[no_mangle]
pub extern "C" fn nvshmemx_team_sync_on_stream(team: c_int, stream: CUstream) -> c_int {
    ffi_boundary!(nvshmemx_team_sync_on_stream => Status, |st| st.gpu_barrier_on_stream(team, user_stream(stream), ROUTINE))
}

#[no_mangle]
pub extern "C" fn nvshmemx_barrier_all_on_stream(stream: CUstream) {
    ffi_boundary!(nvshmemx_barrier_all_on_stream, |st| st.gpu_barrier_on_stream(TEAM_WORLD, user_stream(stream), ROUTINE))
}

#[no_mangle]
pub extern "C" fn nvshmemx_sync_all_on_stream(stream: CUstream) {
    ffi_boundary!(nvshmemx_sync_all_on_stream, |st| st.gpu_barrier_on_stream(TEAM_WORLD, user_stream(stream), ROUTINE))
}

// ---- broadcast, fcollect, alltoall -------------------------------------------------------------

/// One data collective of `nelem` elements of `elem` bytes, on `stream` or blocking.
#[allow(clippy::too_many_arguments)]
fn gather(
    routine: &'static str,
    team: c_int,
    what: Gather,
    dest: *mut c_void,
    src: *const c_void,
    nelem: usize,
    elem: usize,
    stream: Option<CUstream>,
) -> crate::error::Result<()> {
    let st = crate::runtime::state()?;
    let bytes = crate::runtime::rma::bytes(nelem, elem)?;
    on_stream_or_blocking(st, stream, |s| {
        st.gpu_gather_on_stream(team, GatherCall { what, dest: dest.cast(), src: src.cast(), nbytes: bytes, elem }, s, routine)
    })
}

/// Runs `call` on the caller's `stream` (an `_on_stream` routine: enqueued, returns at once),
/// or, with None, on the library's stream and waits for it (the blocking form).
fn on_stream_or_blocking(
    st: &State,
    stream: Option<CUstream>,
    call: impl FnOnce(StreamHandle) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    match stream {
        Some(s) => call(user_stream(s)),
        None => st.gpu_blocking(call),
    }
}

/// The six routines of one element type (`$name`: "int_", or "" with `$mem` "mem" for the
/// byte forms) of `$elem` bytes.
macro_rules! gather_routines {
    ($name:expr, $mem:expr, $elem:expr) => {
        #[export_name = concat!("nvshmemx_", $name, "broadcast", $mem, "_on_stream")]
        pub extern "C" fn broadcast_on_stream(
            team: c_int,
            dest: *mut c_void,
            src: *const c_void,
            nelem: usize,
            root: c_int,
            stream: CUstream,
        ) -> c_int {
            ffi_boundary!(concat!("nvshmemx_", $name, "broadcast", $mem, "_on_stream") => Status, || gather(ROUTINE, team, Gather::Broadcast { root }, dest, src, nelem, $elem, Some(stream)))
        }
        #[export_name = concat!("nvshmemx_", $name, "fcollect", $mem, "_on_stream")]
        pub extern "C" fn fcollect_on_stream(team: c_int, dest: *mut c_void, src: *const c_void, nelem: usize, stream: CUstream) -> c_int {
            ffi_boundary!(concat!("nvshmemx_", $name, "fcollect", $mem, "_on_stream") => Status, || gather(ROUTINE, team, Gather::Fcollect, dest, src, nelem, $elem, Some(stream)))
        }
        #[export_name = concat!("nvshmemx_", $name, "alltoall", $mem, "_on_stream")]
        pub extern "C" fn alltoall_on_stream(team: c_int, dest: *mut c_void, src: *const c_void, nelem: usize, stream: CUstream) -> c_int {
            ffi_boundary!(concat!("nvshmemx_", $name, "alltoall", $mem, "_on_stream") => Status, || gather(ROUTINE, team, Gather::Alltoall, dest, src, nelem, $elem, Some(stream)))
        }
        #[export_name = concat!("nvshmem_", $name, "broadcast", $mem)]
        pub extern "C" fn broadcast(team: c_int, dest: *mut c_void, src: *const c_void, nelem: usize, root: c_int) -> c_int {
            ffi_boundary!(concat!("nvshmem_", $name, "broadcast", $mem) => Status, || gather(ROUTINE, team, Gather::Broadcast { root }, dest, src, nelem, $elem, None))
        }
        #[export_name = concat!("nvshmem_", $name, "fcollect", $mem)]
        pub extern "C" fn fcollect(team: c_int, dest: *mut c_void, src: *const c_void, nelem: usize) -> c_int {
            ffi_boundary!(concat!("nvshmem_", $name, "fcollect", $mem) => Status, || gather(ROUTINE, team, Gather::Fcollect, dest, src, nelem, $elem, None))
        }
        #[export_name = concat!("nvshmem_", $name, "alltoall", $mem)]
        pub extern "C" fn alltoall(team: c_int, dest: *mut c_void, src: *const c_void, nelem: usize) -> c_int {
            ffi_boundary!(concat!("nvshmem_", $name, "alltoall", $mem) => Status, || gather(ROUTINE, team, Gather::Alltoall, dest, src, nelem, $elem, None))
        }
    };
}

pub mod mem {
    use super::*;
    gather_routines!("", "mem", 1);
}

/// NVSHMEM's standard RMA types (half and bfloat16 move as 16-bit words).
macro_rules! typed_gather {
    ($($name:ident => $t:ty),* $(,)?) => {
        $( pub mod $name {
            use super::*;
            gather_routines!(concat!(stringify!($name), "_"), "", std::mem::size_of::<$t>());
        } )*
    };
}
crate::nvshmem_rma_types!(typed_gather);

// ---- reductions ----------------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
fn reduce(
    routine: &'static str,
    team: c_int,
    op: RedOp,
    kind: Kind,
    dest: *mut c_void,
    src: *const c_void,
    n: usize,
    scatter: bool,
    stream: Option<CUstream>,
) -> crate::error::Result<()> {
    let st = crate::runtime::state()?;
    on_stream_or_blocking(st, stream, |s| {
        st.gpu_reduce_on_stream(team, ReduceCall { op, kind, dest: dest.cast(), src: src.cast(), n, scatter }, s, routine)
    })
}

/// reduce and reducescatter, on a stream and blocking, for one operator over a type table.
macro_rules! reduce_op {
    ($op:ident, $opv:expr; $($name:ident => $kind:ident),* $(,)?) => {
        pub mod $op {
            use super::*;
            $( pub mod $name {
                use super::*;
                #[export_name = concat!("nvshmemx_", stringify!($name), "_", stringify!($op), "_reduce_on_stream")]
                pub extern "C" fn reduce_on_stream(team: c_int, dest: *mut c_void, src: *const c_void, n: usize, stream: CUstream) -> c_int {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_", stringify!($op), "_reduce_on_stream") => Status, || reduce(ROUTINE, team, $opv, Kind::$kind, dest, src, n, false, Some(stream)))
                }
                #[export_name = concat!("nvshmemx_", stringify!($name), "_", stringify!($op), "_reducescatter_on_stream")]
                pub extern "C" fn reducescatter_on_stream(team: c_int, dest: *mut c_void, src: *const c_void, n: usize, stream: CUstream) -> c_int {
                    ffi_boundary!(concat!("nvshmemx_", stringify!($name), "_", stringify!($op), "_reducescatter_on_stream") => Status, || reduce(ROUTINE, team, $opv, Kind::$kind, dest, src, n, true, Some(stream)))
                }
                #[export_name = concat!("nvshmem_", stringify!($name), "_", stringify!($op), "_reduce")]
                pub extern "C" fn reduce_blocking(team: c_int, dest: *mut c_void, src: *const c_void, n: usize) -> c_int {
                    ffi_boundary!(concat!("nvshmem_", stringify!($name), "_", stringify!($op), "_reduce") => Status, || reduce(ROUTINE, team, $opv, Kind::$kind, dest, src, n, false, None))
                }
                #[export_name = concat!("nvshmem_", stringify!($name), "_", stringify!($op), "_reducescatter")]
                pub extern "C" fn reducescatter_blocking(team: c_int, dest: *mut c_void, src: *const c_void, n: usize) -> c_int {
                    ffi_boundary!(concat!("nvshmem_", stringify!($name), "_", stringify!($op), "_reducescatter") => Status, || reduce(ROUTINE, team, $opv, Kind::$kind, dest, src, n, true, None))
                }
            } )*
        }
    };
}

nvshmem_bitwise_reduce_types!(reduce_op, and, RedOp::And);
nvshmem_bitwise_reduce_types!(reduce_op, or, RedOp::Or);
nvshmem_bitwise_reduce_types!(reduce_op, xor, RedOp::Xor);
nvshmem_standard_reduce_types!(reduce_op, max, RedOp::Max);
nvshmem_standard_reduce_types!(reduce_op, min, RedOp::Min);
nvshmem_standard_reduce_types!(reduce_op, sum, RedOp::Sum);
nvshmem_standard_reduce_types!(reduce_op, prod, RedOp::Prod);
