//! Initialization, finalization and queries.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{NVSHMEM_API_MAJOR, NVSHMEM_API_MINOR, NVSHMEM_API_PATCH};
use crate::abi::{
    RshmemInitAttr, RshmemUniqueId, RSHMEM_INIT_WITH_MPI_COMM, RSHMEM_INIT_WITH_SHMEM, RSHMEM_INIT_WITH_UNIQUEID, RSHMEM_UNIQUEID_BYTES,
};
use crate::bootstrap::uid::{self, UidStar};
use crate::capi::{ffi_boundary, Status, ValueOnError};
use crate::error::{Error, Result};
use crate::runtime::{self, InitOptions, THREAD_MULTIPLE};

/// nvshmemx_init_status values (NVSHMEM's also has 1, bootstrapped but not initialised, which
/// rshmem never is: its init does both at once).
const STATUS_NOT_INITIALIZED: c_int = 0;
const STATUS_IS_INITIALIZED: c_int = 2;

fn version_word<T>() -> i32 {
    (1 << 16) + std::mem::size_of::<T>() as i32
}

fn init_gpu(routine: &'static str, requested: i32, boot: Option<Box<dyn crate::bootstrap::Bootstrap>>) -> Result<()> {
    // Errors named below the boundary (the bootstrap's `shmem_init`) are this routine's.
    runtime::init_with(requested, InitOptions { gpu: true, boot }).map(|_| ()).map_err(|e| e.in_routine(routine))
}

#[no_mangle]
pub extern "C" fn nvshmem_init() {
    ffi_boundary!(nvshmem_init, || init_gpu(ROUTINE, THREAD_MULTIPLE, None))
}

#[no_mangle]
pub extern "C" fn nvshmem_init_thread(requested: c_int, provided: Option<&mut c_int>) -> c_int {
    ffi_boundary!(nvshmem_init_thread => Status, || {
        init_gpu("nvshmem_init_thread", requested, None)?;
        if let Some(provided) = provided {
            *provided = runtime::state()?.thread_level;
        }
        Ok(())
    })
}

/// How long a unique-id start waits for every rank (NVSHMEM_BOOTSTRAP_TIMEOUT, seconds).
fn bootstrap_timeout() -> Duration {
    let timeout = crate::env::current(crate::env::BOOTSTRAP_TIMEOUT).1.trim().parse::<f64>().unwrap_or(60.0);
    Duration::from_secs_f64(timeout.max(0.1))
}

fn init_attr(flags: c_uint, attr: *mut RshmemInitAttr) -> Result<()> {
    init_attr_as("nvshmemx_init_attr", THREAD_MULTIPLE, flags, attr)
}

/// nvshmemx_init_attr's work, reported as `routine`, at thread level `requested`.
fn init_attr_as(routine: &'static str, requested: i32, flags: c_uint, attr: *mut RshmemInitAttr) -> Result<()> {
    if flags & RSHMEM_INIT_WITH_UNIQUEID != 0 {
        if attr.is_null() {
            return Err(Error::invalid_value("NVSHMEMX_INIT_WITH_UNIQUEID needs attributes: call nvshmemx_set_attr_uniqueid_args first"));
        }
        // SAFETY: non-NULL attributes point at an nvshmemx_init_attr_t the caller filled in.
        let args = unsafe { (*attr).args.uid_args };
        if args.id.is_null() || args.nranks <= 0 || args.myrank < 0 {
            return Err(Error::invalid_value(format!(
                "unique-id arguments are not set (rank {}, nranks {}, id {:p}); call nvshmemx_set_attr_uniqueid_args",
                args.myrank, args.nranks, args.id
            )));
        }
        if runtime::is_initialized() {
            return init_gpu(routine, requested, None);
        }
        // SAFETY: the id pointer was set by nvshmemx_set_attr_uniqueid_args to a live id.
        let id = unsafe { (*args.id).internal };
        let boot = UidStar::join(&id, args.myrank as usize, args.nranks as usize, bootstrap_timeout())?;
        return init_gpu(routine, requested, Some(boot));
    }
    if flags & RSHMEM_INIT_WITH_MPI_COMM != 0 {
        if attr.is_null() {
            return Err(Error::invalid_value("NVSHMEMX_INIT_WITH_MPI_COMM needs attributes with attr.mpi_comm = &comm"));
        }
        if runtime::is_initialized() {
            return init_gpu(routine, requested, None);
        }
        // SAFETY: non-NULL attributes point at an nvshmemx_init_attr_t the caller filled in.
        let comm = unsafe { (*attr).mpi_comm };
        let (rank, nranks, id) = crate::runtime::gpu::mpi::uniqueid_over(comm)?;
        let boot = UidStar::join(&id, rank, nranks, bootstrap_timeout())?;
        return init_gpu(routine, requested, Some(boot));
    }
    if flags & RSHMEM_INIT_WITH_SHMEM != 0 {
        // The launcher's bootstrap is the one an OpenSHMEM program would use.
        return init_gpu(routine, requested, None);
    }
    init_gpu(routine, requested, None)
}

#[no_mangle]
pub extern "C" fn nvshmemx_init_attr(flags: c_uint, attr: *mut RshmemInitAttr) -> c_int {
    ffi_boundary!(nvshmemx_init_attr => Status, || init_attr(flags, attr))
}

/// nvshmem4py's host-library entry point: the same as nvshmemx_init_attr.
#[no_mangle]
pub extern "C" fn nvshmemx_hostlib_init_attr(flags: c_uint, attr: *mut RshmemInitAttr) -> c_int {
    ffi_boundary!(nvshmemx_hostlib_init_attr => Status, || init_attr(flags, attr))
}

#[no_mangle]
pub extern "C" fn nvshmemx_get_uniqueid(id: Option<&mut RshmemUniqueId>) -> c_int {
    ffi_boundary!(nvshmemx_get_uniqueid => Status, || {
        let Some(id) = id else {
            return Err(Error::invalid_value("the id pointer is NULL"));
        };
        let fresh = RshmemUniqueId {
            version: version_word::<RshmemUniqueId>(),
            internal: uid::new_id().map_err(|e| e.in_routine("nvshmemx_get_uniqueid"))?,
        };
        const _: () = assert!(uid::ID_BYTES == RSHMEM_UNIQUEID_BYTES);
        *id = fresh;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn nvshmemx_set_attr_uniqueid_args(
    myrank: c_int,
    nranks: c_int,
    id: *const RshmemUniqueId,
    attr: Option<&mut RshmemInitAttr>,
) -> c_int {
    ffi_boundary!(nvshmemx_set_attr_uniqueid_args => Status, || {
        let (false, Some(a)) = (id.is_null(), attr) else {
            return Err(Error::invalid_value("the id and attribute pointers must not be NULL"));
        };
        if nranks <= 0 || myrank < 0 || myrank >= nranks {
            return Err(Error::invalid_value(format!("rank {myrank} of {nranks}: need 0 <= rank < nranks")));
        }
        a.version = version_word::<RshmemInitAttr>();
        a.args.version = version_word::<crate::abi::RshmemInitArgs>();
        a.args.uid_args.version = version_word::<crate::abi::RshmemUniqueIdArgs>();
        a.args.uid_args.id = id as *mut RshmemUniqueId;
        a.args.uid_args.myrank = myrank;
        a.args.uid_args.nranks = nranks;
        Ok(())
    })
}

/// Points the attributes at the program's MPI communicator (for NVSHMEMX_INIT_WITH_MPI_COMM).
#[no_mangle]
pub extern "C" fn nvshmemx_set_attr_mpi_comm_args(mpi_comm: *mut std::ffi::c_void, attr: Option<&mut RshmemInitAttr>) -> c_int {
    ffi_boundary!(nvshmemx_set_attr_mpi_comm_args => Status, || {
        let (false, Some(attr)) = (mpi_comm.is_null(), attr) else {
            return Err(Error::invalid_value("the communicator and attribute pointers must not be NULL (pass &comm)"));
        };
        attr.version = version_word::<RshmemInitAttr>();
        attr.mpi_comm = mpi_comm;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn nvshmemx_init_status() -> c_int {
    if runtime::is_initialized() {
        STATUS_IS_INITIALIZED
    } else {
        STATUS_NOT_INITIALIZED
    }
}

#[no_mangle]
pub extern "C" fn nvshmem_finalize() {
    ffi_boundary!(nvshmem_finalize, || runtime::finalize().map_err(|e| e.in_routine(ROUTINE)))
}

#[no_mangle]
pub extern "C" fn nvshmemx_hostlib_finalize() {
    nvshmem_finalize()
}

/// NVSHMEM 3.x's version triple, passed by value by its device library (nvshmemi_version_t).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct NvshmemiVersion {
    major: c_int,
    minor: c_int,
    patch: c_int,
}

/// nvshmemx_device_lib_init_cb: NVSHMEM's device library asks through it where its device state
/// lives, for the host library to fill in. rshmem's device code keeps its own state, so the
/// callback is never called.
type DeviceLibInitCb = Option<extern "C" fn(*mut *mut c_void, *mut *mut c_void)>;

/// How many nvshmemid_hostlib_init_attr calls have no nvshmemid_hostlib_finalize yet: NVSHMEM's
/// device library pairs them (its state check starts and stops the host library once more), and
/// only the last finalize ends the job's runtime.
static HOSTLIB_STARTS: AtomicUsize = AtomicUsize::new(0);

/// What NVSHMEM's device library (libnvshmem_device.a, linked into e.g. torch's
/// libtorch_nvshmem.so, whose inline nvshmem_init/nvshmemx_init_attr call it) starts the host
/// library with: the thread level `requested` (the one granted goes to `provided`), the
/// nvshmemx_init_attr flags and attributes, and the device library's version, whose major must
/// be the one rshmem implements.
#[no_mangle]
pub extern "C" fn nvshmemid_hostlib_init_attr(
    requested: c_int,
    provided: Option<&mut c_int>,
    flags: c_uint,
    attr: *mut RshmemInitAttr,
    device_lib: NvshmemiVersion,
    cb: DeviceLibInitCb,
) -> c_int {
    ffi_boundary!(nvshmemid_hostlib_init_attr => Status, || {
        if device_lib.major != NVSHMEM_API_MAJOR {
            return Err(Error::invalid_value(format!(
                    "the caller was built with NVSHMEM {}.{}.{}'s device library; rshmem implements the NVSHMEM {NVSHMEM_API_MAJOR}.x API: rebuild it against NVSHMEM {NVSHMEM_API_MAJOR}.x or rshmem's headers",
                    device_lib.major, device_lib.minor, device_lib.patch
                ),
            ));
        }
        init_attr_as(ROUTINE, requested, flags, attr)?;
        HOSTLIB_STARTS.fetch_add(1, Ordering::AcqRel);
        if cb.is_some() {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                crate::log::warn(&format!(
                    "{ROUTINE}: started by NVSHMEM's own device library (libnvshmem_device): its host calls run on rshmem, but its device-side calls find no state; build device code with rshmem's device/ headers"
                ))
            });
        }
        if let Some(provided) = provided {
            *provided = runtime::state()?.thread_level;
        }
        Ok(())
    })
}

/// Ends one nvshmemid_hostlib_init_attr start; the last one finalizes the runtime. The device
/// library's two context pointers are rshmem-unused.
#[no_mangle]
pub extern "C" fn nvshmemid_hostlib_finalize(_device_ctx: *mut c_void, _transport_device_ctx: *mut c_void) {
    ffi_boundary!(nvshmemid_hostlib_finalize, || {
        let before = HOSTLIB_STARTS.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| Some(n.saturating_sub(1))).unwrap_or(0);
        if before <= 1 {
            nvshmem_finalize() // names its own errors
        }
        Ok(())
    })
}

/// The device library's status query: nvshmemx_init_status's values.
#[no_mangle]
pub extern "C" fn nvshmemid_init_status() -> c_int {
    nvshmemx_init_status()
}

#[no_mangle]
pub extern "C" fn nvshmem_query_thread(provided: Option<&mut c_int>) {
    ffi_boundary!(nvshmem_query_thread, |st| {
        if let Some(provided) = provided {
            *provided = st.thread_level;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn nvshmem_global_exit(code: c_int) {
    crate::capi::setup::shmem_global_exit(code)
}

crate::capi::pe_queries!(nvshmem_my_pe, nvshmem_n_pes);

#[no_mangle]
pub extern "C" fn nvshmem_info_get_version(major: Option<&mut c_int>, minor: Option<&mut c_int>) {
    ffi_boundary!(nvshmem_info_get_version, || {
        // NVSHMEM reports the OpenSHMEM specification it follows (1.3).
        if let (Some(major), Some(minor)) = (major, minor) {
            (*major, *minor) = (1, 3);
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn nvshmemx_vendor_get_version_info(major: Option<&mut c_int>, minor: Option<&mut c_int>, patch: Option<&mut c_int>) {
    ffi_boundary!(nvshmemx_vendor_get_version_info, || {
        for (p, v) in [(major, NVSHMEM_API_MAJOR), (minor, NVSHMEM_API_MINOR), (patch, NVSHMEM_API_PATCH)] {
            if let Some(p) = p {
                *p = v;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn nvshmem_info_get_name(name: *mut c_char) {
    ffi_boundary!(nvshmem_info_get_name, || {
        // NVSHMEM_VENDOR_STRING of device/rshmem_common.h (ctest/cmake/nvshmem_app compares).
        let v = format!("{} (NVSHMEM {NVSHMEM_API_MAJOR}.{NVSHMEM_API_MINOR} API)", crate::capi::setup::VENDOR);
        crate::capi::write_name(name, &v);
        Ok(())
    })
}

/// GPU memory the library holds on this PE (what nvshmem_init logs at NVSHMEM_DEBUG=INFO):
/// bytes of heap backed now, of which the runtime area, and the driver-measured drop in free
/// memory across init. Returns 0, or an error code before nvshmem_init.
#[no_mangle]
pub extern "C" fn rshmem_gpu_memory_usage(
    heap_mapped: Option<&mut usize>,
    runtime_area: Option<&mut usize>,
    measured: Option<&mut usize>,
) -> c_int {
    ffi_boundary!(rshmem_gpu_memory_usage => Status, || {
        let st = runtime::state()?;
        let g = st.gpu()?;
        for (p, v) in [(heap_mapped, g.mapped()), (runtime_area, g.memory.runtime_area), (measured, g.memory.measured)] {
            if let Some(p) = p {
                *p = v;
            }
        }
        Ok(())
    })
}

/// How many PEs of the job run on this PE's GPU (1 before nvshmem_init): the collective-launch
/// grid-size query shares the GPU's resident blocks among them.
#[no_mangle]
pub extern "C" fn rshmem_pes_on_my_gpu() -> c_int {
    // Before init the answer is 1, silently (the body keeps that error); a panic warns and
    // gives the same documented 1 instead of ending the job.
    ffi_boundary!(rshmem_pes_on_my_gpu => ValueOnError<1>, || {
        let share = runtime::state().and_then(|st| st.gpu().map(|g| g.gpu_share));
        Ok(share.map_or(1, |n| n.max(1) as c_int))
    })
}

/// Called at program load by every translation unit compiled with `-DRSHMEM_PROXY_ROUTE` (a
/// static initialiser in the device headers' host pass): init then does not warn that kernels
/// toward PEs on other hosts might lack the flag. Only sets a flag; safe before init.
#[no_mangle]
pub extern "C" fn rshmem_proxy_route_compiled() {
    crate::proxy::note_route_compiled();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_queries_fill_the_out_parameters_given_and_skip_null_ones() {
        let (mut major, mut minor, mut patch) = (-1, -1, -1);
        nvshmemx_vendor_get_version_info(Some(&mut major), None, Some(&mut patch));
        assert_eq!((major, minor, patch), (NVSHMEM_API_MAJOR, -1, NVSHMEM_API_PATCH));
        nvshmem_info_get_version(Some(&mut major), Some(&mut minor));
        assert_eq!((major, minor), (1, 3), "NVSHMEM reports OpenSHMEM 1.3");
        minor = -1;
        nvshmem_info_get_version(None, Some(&mut minor));
        assert_eq!(minor, -1, "with one pointer NULL nothing is written");
    }

    #[test]
    fn the_headers_route_marker_sets_the_route_compiled_flag() {
        rshmem_proxy_route_compiled();
        assert!(crate::proxy::route_compiled());
    }

    #[test]
    fn pes_on_my_gpu_is_one_before_init() {
        assert_eq!(rshmem_pes_on_my_gpu(), 1);
    }

    #[test]
    fn null_required_pointers_are_refused() {
        assert_ne!(nvshmemx_get_uniqueid(None), 0);
        assert_ne!(nvshmemx_set_attr_mpi_comm_args(std::ptr::null_mut(), None), 0);
    }
}
