//! NVSHMEMX_INIT_WITH_MPI_COMM: start a GPU job over the program's own MPI communicator.
//!
//! libmpi is reached at run time (no link dependency): the program already loaded it, so its
//! symbols are found with dlsym (or by dlopen of the usual sonames when the program loaded it
//! privately, as Python does). The two ABIs in use differ in what an MPI_Comm is: Open MPI's is
//! a pointer (it exports `ompi_mpi_comm_world`), MPICH's (and its derivatives') an int. Rank 0
//! of the communicator makes a unique id, MPI_Bcast's it over the communicator, and every rank
//! joins with the unique-id bootstrap: MPI is only the courier.

use std::ffi::{c_int, c_void, CStr};

use crate::bootstrap::uid;
use crate::error::{Error, ErrorKind, Result};

/// MPICH's MPI_BYTE (its mpi.h: `((MPI_Datatype)0x4c00010d)`).
const MPICH_MPI_BYTE: c_int = 0x4c00010d;

type InitializedFn = unsafe extern "C" fn(*mut c_int) -> c_int;

enum Flavour {
    /// Open MPI: handles are pointers; MPI_BYTE is &ompi_mpi_byte, MPI_COMM_WORLD
    /// &ompi_mpi_comm_world.
    Ompi { byte: *mut c_void, world: *mut c_void },
    /// MPICH ABI: handles are ints.
    Mpich,
}

struct Mpi {
    flavour: Flavour,
    initialized: InitializedFn,
    rank: *mut c_void,
    size: *mut c_void,
    bcast: *mut c_void,
}

fn sym(lib: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with a valid handle (or RTLD_DEFAULT) and a NUL-terminated name.
    unsafe { libc::dlsym(lib, name.as_ptr()) }
}

/// libmpi as the program loaded it: global symbols first, then the usual sonames.
fn find() -> Result<Mpi> {
    let mut lib = libc::RTLD_DEFAULT;
    if sym(lib, c"MPI_Bcast").is_null() {
        lib = std::ptr::null_mut();
        for name in [c"libmpi.so.40", c"libmpi.so.12", c"libmpich.so.12", c"libmpi.so"] {
            // SAFETY: dlopen of a library name; the handle is kept for the life of the process.
            let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
            if !h.is_null() {
                lib = h;
                break;
            }
        }
        if lib.is_null() {
            return Err(Error::of(
                ErrorKind::Unsupported, "NVSHMEMX_INIT_WITH_MPI_COMM: no MPI library is loaded in this process (looked for MPI_Bcast, libmpi.so.40, libmpi.so.12, libmpich.so.12); link the program with MPI and call MPI_Init first",
            ));
        }
    }
    let need = |name: &'static CStr| {
        let p = sym(lib, name);
        if p.is_null() {
            Err(Error::of(
                ErrorKind::Unsupported,
                format!("NVSHMEMX_INIT_WITH_MPI_COMM: the MPI library has no {}", name.to_string_lossy()),
            ))
        } else {
            Ok(p)
        }
    };
    let world = sym(lib, c"ompi_mpi_comm_world");
    let flavour = if world.is_null() { Flavour::Mpich } else { Flavour::Ompi { byte: need(c"ompi_mpi_byte")?, world } };
    let initialized = need(c"MPI_Initialized")?;
    Ok(Mpi {
        flavour,
        // SAFETY: MPI_Initialized has this signature in every MPI ABI.
        initialized: unsafe { std::mem::transmute::<*mut c_void, InitializedFn>(initialized) },
        rank: need(c"MPI_Comm_rank")?,
        size: need(c"MPI_Comm_size")?,
        bcast: need(c"MPI_Bcast")?,
    })
}

fn check(rc: c_int, call: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::of(ErrorKind::Bootstrap, format!("NVSHMEMX_INIT_WITH_MPI_COMM: {call} returned MPI error {rc}")))
    }
}

/// MPICH's MPI_COMM_WORLD (its mpi.h: `((MPI_Comm)0x44000000)`).
const MPICH_COMM_WORLD: c_int = 0x44000000;

/// (this rank, ranks, the job's unique id) over MPI_COMM_WORLD: NVSHMEM_BOOTSTRAP=MPI. Called
/// by the bootstrap, below the C boundary, which names the routine.
pub fn uniqueid_over_world() -> Result<(usize, usize, [u8; uid::ID_BYTES])> {
    match find()?.flavour {
        Flavour::Ompi { world, .. } => uniqueid_over((&world as *const *mut c_void).cast()),
        Flavour::Mpich => uniqueid_over((&MPICH_COMM_WORLD as *const c_int).cast()),
    }
}

/// (this rank, ranks, the job's unique id) over the communicator `*comm` (attr.mpi_comm points
/// at the program's MPI_Comm): rank 0's fresh id, broadcast over it.
pub fn uniqueid_over(comm: *const c_void) -> Result<(usize, usize, [u8; uid::ID_BYTES])> {
    if comm.is_null() {
        return Err(Error::invalid_value("NVSHMEMX_INIT_WITH_MPI_COMM needs attr.mpi_comm = &comm (the address of an MPI_Comm)"));
    }
    let mpi = find()?;
    let mut flag: c_int = 0;
    // SAFETY: MPI_Initialized writes one int.
    check(unsafe { (mpi.initialized)(&mut flag) }, "MPI_Initialized")?;
    if flag == 0 {
        return Err(Error::invalid_value("NVSHMEMX_INIT_WITH_MPI_COMM: MPI is not initialized; call MPI_Init before nvshmemx_init_attr"));
    }
    // SAFETY: the entry points were resolved from the MPI library the program uses and are
    // called with that ABI's handle type (a pointer for Open MPI, an int for MPICH), the
    // communicator read from the caller's MPI_Comm (attr.mpi_comm points at one).
    let (rank, size, id) = unsafe {
        match mpi.flavour {
            Flavour::Ompi { byte, .. } => rank_size_id(&mpi, *(comm as *const *mut c_void), byte)?,
            Flavour::Mpich => rank_size_id(&mpi, *(comm as *const c_int), MPICH_MPI_BYTE)?,
        }
    };
    if rank < 0 || size <= 0 || rank >= size {
        return Err(Error::of(ErrorKind::Bootstrap, format!("NVSHMEMX_INIT_WITH_MPI_COMM: MPI says rank {rank} of {size}")));
    }
    Ok((rank as usize, size as usize, id))
}

/// (rank, size, rank 0's fresh id broadcast to all) over the communicator `comm`, through
/// entry points whose handles (communicator, datatype) have type `H`: a pointer in Open MPI's
/// ABI, an int in MPICH's.
///
/// # Safety
/// `mpi.rank`, `mpi.size` and `mpi.bcast` are MPI_Comm_rank, MPI_Comm_size and MPI_Bcast of an
/// ABI whose handles have type `H`; `comm` is a communicator and `byte` is MPI_BYTE of that ABI.
unsafe fn rank_size_id<H: Copy>(mpi: &Mpi, comm: H, byte: H) -> Result<(c_int, c_int, [u8; uid::ID_BYTES])> {
    // SAFETY: every call below keeps the caller's contract above; the out-parameters and the id
    // buffer live across the (blocking) calls.
    unsafe {
        let rank_fn = std::mem::transmute::<*mut c_void, unsafe extern "C" fn(H, *mut c_int) -> c_int>(mpi.rank);
        let size_fn = std::mem::transmute::<*mut c_void, unsafe extern "C" fn(H, *mut c_int) -> c_int>(mpi.size);
        let bcast = std::mem::transmute::<*mut c_void, unsafe extern "C" fn(*mut c_void, c_int, H, c_int, H) -> c_int>(mpi.bcast);
        let (mut rank, mut size) = (0, 0);
        check(rank_fn(comm, &mut rank), "MPI_Comm_rank")?;
        check(size_fn(comm, &mut size), "MPI_Comm_size")?;
        let mut id = [0u8; uid::ID_BYTES];
        if rank == 0 {
            id = uid::new_id()?;
        }
        check(bcast(id.as_mut_ptr().cast(), id.len() as c_int, byte, 0, comm), "MPI_Bcast")?;
        Ok((rank, size, id))
    }
}
