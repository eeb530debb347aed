//! Collective routines (OpenSHMEM 1.5 §9.9): barrier and sync, broadcast, collect, fcollect,
//! alltoall(s) and reductions on teams, plus the deprecated active-set forms (PE_start,
//! logPE_stride, PE_size, pSync) that old programs still call. The work is in
//! runtime/coll.rs; pSync and pWrk are accepted and never touched (our synchronisation lives
//! in the runtime header), so they keep whatever values the program gave them.

use std::ffi::{c_int, c_long, c_void};
use std::mem::size_of;

use super::team::{team_of, ShmemTeam};
use super::with_state;
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
    const R: &str = "shmem_barrier_all";
    with_state(R, |st| st.coll_barrier(PeSet::world(st.npes), &const { Caller::sync(R) }))
}

#[no_mangle]
pub extern "C" fn shmem_sync_all() {
    const R: &str = "shmem_sync_all";
    with_state(R, |st| st.coll_sync(PeSet::world(st.npes), &const { Caller::sync(R) }))
}

#[no_mangle]
pub extern "C" fn shmem_team_sync(team: ShmemTeam) -> c_int {
    const R: &str = "shmem_team_sync";
    with_state(R, |st| st.coll_sync(team_set(st, team)?, &const { Caller::sync(R) }).map(|_| 0))
}

/// Deprecated: barrier over an active set.
#[no_mangle]
pub extern "C" fn shmem_barrier(pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long) {
    const R: &str = "shmem_barrier";
    with_state(R, |st| st.coll_barrier(active_set(st, pe_start, log_pe_stride, pe_size)?, &const { Caller::sync(R) }))
}

/// Deprecated: sync over an active set (C11 programs reach the team form as shmem_team_sync).
#[no_mangle]
pub extern "C" fn shmem_sync(pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long) {
    const R: &str = "shmem_sync";
    with_state(R, |st| st.coll_sync(active_set(st, pe_start, log_pe_stride, pe_size)?, &const { Caller::sync(R) }))
}

// ---- data movement on teams ------------------------------------------------------------

// Each entry point passes its `Caller` (routine, tag, name) as a compile-time constant.

fn team_broadcast(c: &Caller, team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize, size: usize, root: c_int) -> c_int {
    let r = c.routine;
    with_state(r, |st| {
        // Team broadcasts update dest on every PE, the root included (OpenSHMEM 1.5).
        st.broadcast(team_set(st, team)?, dest.cast(), source.cast(), bytes(nelems, size)?, root, true, c).map(|_| 0)
    })
}

// collect, fcollect and alltoall take the same arguments (set, dest, source, bytes per PE,
// caller): `run` is the State's collective, a type parameter, so each entry point calls it
// directly.

/// shmem_TYPENAME_{collect,fcollect,alltoall} on a team.
fn team_gather(
    run: impl Fn(&State, PeSet, *mut u8, *const u8, usize, &Caller) -> Result<()>,
    c: &Caller,
    team: ShmemTeam,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
) -> c_int {
    let r = c.routine;
    with_state(r, |st| run(st, team_set(st, team)?, dest.cast(), source.cast(), bytes(nelems, size)?, c).map(|_| 0))
}

/// The deprecated active-set forms of the same.
#[allow(clippy::too_many_arguments)]
fn active_gather(
    run: impl Fn(&State, PeSet, *mut u8, *const u8, usize, &Caller) -> Result<()>,
    c: &Caller,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    start: c_int,
    log_stride: c_int,
    n: c_int,
) {
    with_state(c.routine, |st| run(st, active_set(st, start, log_stride, n)?, dest.cast(), source.cast(), bytes(nelems, size)?, c))
}

fn team_alltoalls(c: &Caller, team: ShmemTeam, dest: *mut c_void, source: *const c_void, s: Strided) -> c_int {
    with_state(c.routine, |st| st.alltoalls(team_set(st, team)?, dest.cast(), source.cast(), s, c).map(|_| 0))
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
                team_broadcast(caller!(concat!("shmem_", stringify!($n), "_broadcast")), team, dest.cast(), source.cast(), nelems, size_of::<$t>(), pe_root)
            }
            #[export_name = concat!("shmem_", stringify!($n), "_collect")]
            pub extern "C" fn collect(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                team_gather(State::collect, caller!(concat!("shmem_", stringify!($n), "_collect")), team, dest.cast(), source.cast(), nelems, size_of::<$t>())
            }
            #[export_name = concat!("shmem_", stringify!($n), "_fcollect")]
            pub extern "C" fn fcollect(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                team_gather(State::fcollect, caller!(concat!("shmem_", stringify!($n), "_fcollect")), team, dest.cast(), source.cast(), nelems, size_of::<$t>())
            }
            #[export_name = concat!("shmem_", stringify!($n), "_alltoall")]
            pub extern "C" fn alltoall(team: ShmemTeam, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
                team_gather(State::alltoall, caller!(concat!("shmem_", stringify!($n), "_alltoall")), team, dest.cast(), source.cast(), nelems, size_of::<$t>())
            }
            #[export_name = concat!("shmem_", stringify!($n), "_alltoalls")]
            pub extern "C" fn alltoalls(team: ShmemTeam, dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize) -> c_int {
                let s = Strided { dst, sst, nelems, size: size_of::<$t>() };
                team_alltoalls(caller!(concat!("shmem_", stringify!($n), "_alltoalls")), team, dest.cast(), source.cast(), s)
            }
        };
    )*};
}
crate::rma_types!(team_data_colls);

#[no_mangle]
pub extern "C" fn shmem_broadcastmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int) -> c_int {
    team_broadcast(caller!("shmem_broadcastmem"), team, dest, source, nelems, 1, pe_root)
}

#[no_mangle]
pub extern "C" fn shmem_collectmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
    team_gather(State::collect, caller!("shmem_collectmem"), team, dest, source, nelems, 1)
}

#[no_mangle]
pub extern "C" fn shmem_fcollectmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
    team_gather(State::fcollect, caller!("shmem_fcollectmem"), team, dest, source, nelems, 1)
}

#[no_mangle]
pub extern "C" fn shmem_alltoallmem(team: ShmemTeam, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int {
    team_gather(State::alltoall, caller!("shmem_alltoallmem"), team, dest, source, nelems, 1)
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
    team_alltoalls(caller!("shmem_alltoallsmem"), team, dest, source, Strided { dst, sst, nelems, size: 1 })
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
                const R: &str = concat!("shmem_broadcast", $bits);
                with_state(R, |st| {
                    let set = active_set(st, pe_start, log_pe_stride, pe_size)?;
                    st.broadcast(set, dest.cast(), source.cast(), bytes(nelems, $size)?, pe_root, false, caller!(R))
                })
            }
            #[export_name = concat!("shmem_collect", $bits)]
            pub extern "C" fn collect(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long,
            ) {
                active_gather(State::collect, caller!(concat!("shmem_collect", $bits)), dest, source, nelems, $size, pe_start, log_pe_stride, pe_size)
            }
            #[export_name = concat!("shmem_fcollect", $bits)]
            pub extern "C" fn fcollect(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long,
            ) {
                active_gather(State::fcollect, caller!(concat!("shmem_fcollect", $bits)), dest, source, nelems, $size, pe_start, log_pe_stride, pe_size)
            }
            #[export_name = concat!("shmem_alltoall", $bits)]
            pub extern "C" fn alltoall(
                dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, _psync: *mut c_long,
            ) {
                active_gather(State::alltoall, caller!(concat!("shmem_alltoall", $bits)), dest, source, nelems, $size, pe_start, log_pe_stride, pe_size)
            }
            #[export_name = concat!("shmem_alltoalls", $bits)]
            #[allow(clippy::too_many_arguments)]
            pub extern "C" fn alltoalls(
                dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe_start: c_int, log_pe_stride: c_int,
                pe_size: c_int, _psync: *mut c_long,
            ) {
                const R: &str = concat!("shmem_alltoalls", $bits);
                with_state(R, |st| {
                    let set = active_set(st, pe_start, log_pe_stride, pe_size)?;
                    st.alltoalls(set, dest.cast(), source.cast(), Strided { dst, sst, nelems, size: $size }, caller!(R))
                })
            }
        };
    )*};
}
active_set_colls!("32" => 4, "64" => 8);

// ---- reductions ------------------------------------------------------------------------

// The operation (runtime::reduce_ops) is a type parameter (each `Arith::sum` etc. is its own
// function item), so it inlines into the reduction loops, which then vectorize.
fn team_reduce<T: Copy>(c: &Caller, team: ShmemTeam, dest: *mut T, source: *const T, nreduce: usize, op: impl Fn(T, T) -> T) -> c_int {
    let r = c.routine;
    with_state(r, |st| {
        let n = i64::try_from(nreduce).map_err(|_| Error::invalid_value(format!("nreduce = {nreduce} is too large")))?;
        st.reduce(team_set(st, team)?, dest, source, n, op, c).map(|_| 0)
    })
}

#[allow(clippy::too_many_arguments)]
fn active_reduce<T: Copy>(
    c: &Caller,
    dest: *mut T,
    source: *const T,
    nreduce: c_int,
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    op: impl Fn(T, T) -> T,
) {
    let r = c.routine;
    with_state(r, |st| st.reduce(active_set(st, pe_start, log_pe_stride, pe_size)?, dest, source, nreduce as i64, op, c))
}

/// shmem_TYPENAME_OP_reduce(team, dest, source, nreduce) for each `TYPENAME => type`.
macro_rules! team_reduce_op {
    ($op:literal, $f:path; $($n:ident => $t:ty),* $(,)?) => {$(
        const _: () = {
            #[export_name = concat!("shmem_", stringify!($n), "_", $op, "_reduce")]
            pub extern "C" fn reduce(team: ShmemTeam, dest: *mut $t, source: *const $t, nreduce: usize) -> c_int {
                team_reduce(caller!(concat!("shmem_", stringify!($n), "_", $op, "_reduce")), team, dest, source, nreduce, $f)
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
                active_reduce(caller!(concat!("shmem_", stringify!($n), "_", $op, "_to_all")), dest, source, nreduce, pe_start, log_pe_stride, pe_size, $f)
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
