//! Collective routines (OpenSHMEM 1.5 §9.9): barrier and sync, broadcast, collect, fcollect,
//! alltoall(s) and reductions on teams, plus the deprecated active-set forms (PE_start,
//! logPE_stride, PE_size, pSync) that old programs still call. The work is in
//! runtime/coll.rs; pSync and pWrk are accepted and never touched (our synchronisation lives
//! in the runtime header), so they keep whatever values the program gave them.

use std::ffi::{c_int, c_long, c_void};
use std::mem::size_of;

use super::ffi_boundary;
use super::team::{team_of, ShmemTeam};
use crate::error::{Error, Result};
use crate::runtime::barrier::{Caller, PeSet};
use crate::runtime::reduce_ops::{Arith, Bits, Order};
use crate::runtime::rma::{bytes, Strided};
use crate::runtime::State;

fn team_set(st: &State, team: ShmemTeam) -> Result<PeSet> {
    Ok(team_of(st, team)?.1.set)
}

/// The active set of a deprecated collective; the whole job (the usual case) without a call.
#[inline(always)]
fn active_set(st: &State, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int) -> Result<PeSet> {
    if pe_start == 0 && log_pe_stride == 0 && pe_size as usize == st.npes {
        return Ok(PeSet::world(st.npes));
    }
    st.active_set(pe_start, log_pe_stride, pe_size)
}

// ---- barrier and sync ------------------------------------------------------------------

#[no_mangle]
pub extern "C" fn shmem_barrier_all() {
    ffi_boundary!(shmem_barrier_all, |st| st.coll_barrier(PeSet::world(st.npes), &const { Caller::sync(ROUTINE) }))
}

#[no_mangle]
pub extern "C" fn shmem_sync_all() {
    ffi_boundary!(shmem_sync_all, |st| st.coll_sync(PeSet::world(st.npes), &const { Caller::sync(ROUTINE) }))
}

#[no_mangle]
pub extern "C" fn shmem_team_sync(team: ShmemTeam) -> c_int {
    ffi_boundary!(shmem_team_sync, |st| st.coll_sync(team_set(st, team)?, &const { Caller::sync(ROUTINE) }).map(|_| 0))
}

/// Deprecated: barrier over an active set.
#[no_mangle]
pub extern "C" fn shmem_barrier(pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long) {
    ffi_boundary!(shmem_barrier, |st| st.coll_barrier(active_set(st, pe_start, log_pe_stride, pe_size)?, &const { Caller::sync(ROUTINE) }))
}

/// Deprecated: sync over an active set (C11 programs reach the team form as shmem_team_sync).
#[no_mangle]
pub extern "C" fn shmem_sync(pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long) {
    ffi_boundary!(shmem_sync, |st| st.coll_sync(active_set(st, pe_start, log_pe_stride, pe_size)?, &const { Caller::sync(ROUTINE) }))
}

// ---- data movement on teams ------------------------------------------------------------

// Each entry point passes its `Caller` (routine, tag, name) as a compile-time constant.

// broadcast, collect, fcollect and alltoall take the same arguments (set, dest, source, bytes
// per PE, caller; broadcast's root rides in its `run`): `run` is the State's collective, a type
// parameter, so each entry point calls it directly.

/// shmem_TYPENAME_broadcast's `run` for `team_gather`: team broadcasts update dest on every PE,
/// the root included (OpenSHMEM 1.5).
fn broadcast_from(root: c_int) -> impl Fn(&State, PeSet, *mut u8, *const u8, usize, &Caller) -> Result<()> {
    move |st, set, dest, source, nbytes, c| st.broadcast(set, dest, source, nbytes, root, true, c)
}

/// shmem_TYPENAME_{broadcast,collect,fcollect,alltoall} on a team.
#[allow(clippy::too_many_arguments)]
fn team_gather(
    st: &State,
    run: impl Fn(&State, PeSet, *mut u8, *const u8, usize, &Caller) -> Result<()>,
    c: &Caller,
    team: ShmemTeam,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
) -> Result<c_int> {
    run(st, team_set(st, team)?, dest.cast(), source.cast(), bytes(nelems, size)?, c).map(|_| 0)
}

/// The deprecated active-set forms of the same.
#[allow(clippy::too_many_arguments)]
fn active_gather(
    st: &State,
    run: impl Fn(&State, PeSet, *mut u8, *const u8, usize, &Caller) -> Result<()>,
    c: &Caller,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    start: c_int,
    log_stride: c_int,
    n: c_int,
) -> Result<()> {
    run(st, active_set(st, start, log_stride, n)?, dest.cast(), source.cast(), bytes(nelems, size)?, c)
}

fn team_alltoalls(st: &State, c: &Caller, team: ShmemTeam, dest: *mut c_void, source: *const c_void, s: Strided) -> Result<c_int> {
    st.alltoalls(team_set(st, team)?, dest.cast(), source.cast(), s, c).map(|_| 0)
}

/// The `Caller` of a data collective named `$name`, built at compile time.
macro_rules! caller {
    ($name:expr) => {
        &const { Caller::collective($name) }
    };
}

macro_rules! team_data_colls {
    ($($n:ident => $t:ty),* $(,)?) => {$(
        const _: () = {
            #[export_name = concat!("shmem_", stringify!($n), "_broadcast")]
            pub extern "C" fn broadcast(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize, pe_root: c_int) -> c_int {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_broadcast"), |st| team_gather(st, broadcast_from(pe_root), caller!(ROUTINE), team, dest.cast(), source.cast(), nelems, size_of::<$t>()))
            }
            #[export_name = concat!("shmem_", stringify!($n), "_collect")]
            pub extern "C" fn collect(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_collect"), |st| team_gather(st, State::collect, caller!(ROUTINE), team, dest.cast(), source.cast(), nelems, size_of::<$t>()))
            }
            #[export_name = concat!("shmem_", stringify!($n), "_fcollect")]
            pub extern "C" fn fcollect(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_fcollect"), |st| team_gather(st, State::fcollect, caller!(ROUTINE), team, dest.cast(), source.cast(), nelems, size_of::<$t>()))
            }
            #[export_name = concat!("shmem_", stringify!($n), "_alltoall")]
            pub extern "C" fn alltoall(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_alltoall"), |st| team_gather(st, State::alltoall, caller!(ROUTINE), team, dest.cast(), source.cast(), nelems, size_of::<$t>()))
            }
            #[export_name = concat!("shmem_", stringify!($n), "_alltoalls")]
            pub extern "C" fn alltoalls(team: ShmemTeam, dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize) -> c_int {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_alltoalls"), |st| {
                    let s = Strided { dst, sst, nelems, size: size_of::<$t>() };
                    team_alltoalls(st, caller!(ROUTINE), team, dest.cast(), source.cast(), s)
                })
            }
        };
    )*};
}
crate::rma_types!(team_data_colls);

#[no_mangle]
pub extern "C" fn shmem_broadcastmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int) -> c_int {
    ffi_boundary!(shmem_broadcastmem, |st| team_gather(st, broadcast_from(pe_root), caller!(ROUTINE), team, dest, source, nelems, 1))
}

#[no_mangle]
pub extern "C" fn shmem_collectmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
    ffi_boundary!(shmem_collectmem, |st| team_gather(st, State::collect, caller!(ROUTINE), team, dest, source, nelems, 1))
}

#[no_mangle]
pub extern "C" fn shmem_fcollectmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
    ffi_boundary!(shmem_fcollectmem, |st| team_gather(st, State::fcollect, caller!(ROUTINE), team, dest, source, nelems, 1))
}

#[no_mangle]
pub extern "C" fn shmem_alltoallmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
    ffi_boundary!(shmem_alltoallmem, |st| team_gather(st, State::alltoall, caller!(ROUTINE), team, dest, source, nelems, 1))
}

#[no_mangle]
pub extern "C" fn shmem_alltoallsmem(
    team: ShmemTeam,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
) -> c_int {
    ffi_boundary!(shmem_alltoallsmem, |st| team_alltoalls(st, caller!(ROUTINE), team, dest, source, Strided { dst, sst, nelems, size: 1 }))
}

// ---- deprecated active-set data movement (32- and 64-bit elements) ----------------------

macro_rules! active_set_colls {
    ($($bits:literal => $size:literal),* $(,)?) => {$(
        const _: () = {
            /// Active-set broadcasts leave the root's dest alone (unlike team broadcasts).
            #[export_name = concat!("shmem_broadcast", $bits)]
            #[allow(clippy::too_many_arguments)]
            pub extern "C" fn broadcast(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int, pe_start: c_int, log_pe_stride: c_int,
                pe_size: c_int, _psync: *mut c_long,
            ) {
                ffi_boundary!(concat!("shmem_broadcast", $bits), |st| {
                    let set = active_set(st, pe_start, log_pe_stride, pe_size)?;
                    st.broadcast(set, dest.cast(), source.cast(), bytes(nelems, $size)?, pe_root, false, caller!(ROUTINE))
                })
            }
            #[export_name = concat!("shmem_collect", $bits)]
            pub extern "C" fn collect(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long,
            ) {
                ffi_boundary!(concat!("shmem_collect", $bits), |st| active_gather(st, State::collect, caller!(ROUTINE), dest, source, nelems, $size, pe_start, log_pe_stride, pe_size))
            }
            #[export_name = concat!("shmem_fcollect", $bits)]
            pub extern "C" fn fcollect(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long,
            ) {
                ffi_boundary!(concat!("shmem_fcollect", $bits), |st| active_gather(st, State::fcollect, caller!(ROUTINE), dest, source, nelems, $size, pe_start, log_pe_stride, pe_size))
            }
            #[export_name = concat!("shmem_alltoall", $bits)]
            pub extern "C" fn alltoall(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long,
            ) {
                ffi_boundary!(concat!("shmem_alltoall", $bits), |st| active_gather(st, State::alltoall, caller!(ROUTINE), dest, source, nelems, $size, pe_start, log_pe_stride, pe_size))
            }
            #[export_name = concat!("shmem_alltoalls", $bits)]
            #[allow(clippy::too_many_arguments)]
            pub extern "C" fn alltoalls(
                dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe_start: c_int, log_pe_stride: c_int,
                pe_size: c_int, _psync: *mut c_long,
            ) {
                ffi_boundary!(concat!("shmem_alltoalls", $bits), |st| {
                    let set = active_set(st, pe_start, log_pe_stride, pe_size)?;
                    st.alltoalls(set, dest.cast(), source.cast(), Strided { dst, sst, nelems, size: $size }, caller!(ROUTINE))
                })
            }
        };
    )*};
}
active_set_colls!("32" => 4, "64" => 8);

// ---- reductions ------------------------------------------------------------------------

// The operation (runtime::reduce_ops) is a type parameter (each `Arith::sum` etc. is its own
// function item), so it inlines into the reduction loops, which then vectorize.
fn team_reduce<T: Copy>(
    st: &State,
    c: &Caller,
    team: ShmemTeam,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
    op: impl Fn(T, T) -> T,
) -> Result<c_int> {
    let n = i64::try_from(nreduce).map_err(|_| Error::invalid_value(format!("nreduce = {nreduce} is too large")))?;
    st.reduce(team_set(st, team)?, dest, source, n, op, c).map(|_| 0)
}

#[allow(clippy::too_many_arguments)]
fn active_reduce<T: Copy>(
    st: &State,
    c: &Caller,
    dest: *mut T,
    source: *const T,
    nreduce: c_int,
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    op: impl Fn(T, T) -> T,
) -> Result<()> {
    st.reduce(active_set(st, pe_start, log_pe_stride, pe_size)?, dest, source, nreduce as i64, op, c)
}

/// shmem_TYPENAME_OP_reduce(team, dest, source, nreduce) for each `TYPENAME => type`.
macro_rules! team_reduce_op {
    ($op:literal, $f:path; $($n:ident => $t:ty),* $(,)?) => {$(
        const _: () = {
            #[export_name = concat!("shmem_", stringify!($n), "_", $op, "_reduce")]
            pub extern "C" fn reduce(team: ShmemTeam, dest: *mut $t, source: *const $t, nreduce: usize) -> c_int {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_", $op, "_reduce"), |st| team_reduce(st, caller!(ROUTINE), team, dest, source, nreduce, $f))
            }
        };
    )*};
}

/// Deprecated shmem_TYPENAME_OP_to_all(dest, source, nreduce, PE_start, logPE_stride, PE_size, pWrk, pSync).
macro_rules! to_all_op {
    ($op:literal, $f:path; $($n:ident => $t:ty),* $(,)?) => {$(
        const _: () = {
            #[export_name = concat!("shmem_", stringify!($n), "_", $op, "_to_all")]
            #[allow(clippy::too_many_arguments)]
            pub extern "C" fn to_all(
                dest: *mut $t, source: *const $t, nreduce: c_int, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int,
                _pwrk: *mut $t, _psync: *mut c_long,
            ) {
                ffi_boundary!(concat!("shmem_", stringify!($n), "_", $op, "_to_all"), |st| active_reduce(st, caller!(ROUTINE), dest, source, nreduce, pe_start, log_pe_stride, pe_size, $f))
            }
        };
    )*};
}

// Every reduction over its types (Table 10), as team routines and as the deprecated _to_all.
macro_rules! reductions {
    ($gen:ident, $bitwise:ident, $compare:ident) => {
        crate::$bitwise!($gen, "and", Bits::and);
        crate::$bitwise!($gen, "or", Bits::or);
        crate::$bitwise!($gen, "xor", Bits::xor);
        crate::$compare!($gen, "max", Order::max);
        crate::$compare!($gen, "min", Order::min);
        crate::$compare!($gen, "sum", Arith::sum);
        crate::$compare!($gen, "prod", Arith::prod);
        crate::complex_types!($gen, "sum", Arith::sum);
        crate::complex_types!($gen, "prod", Arith::prod);
    };
}

reductions!(team_reduce_op, reduce_bitwise_types, reduce_compare_types);
reductions!(to_all_op, to_all_bitwise_types, to_all_compare_types);
