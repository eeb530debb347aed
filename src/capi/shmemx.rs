//! rshmem's shmemx_ routines that are more than another name of a standard one (those are
//! aliases: src/capi/aliases.ld, generated with shmemx.h by scripts/gen_headers.py).

use std::ffi::{c_long, c_void};

use super::ffi_boundary;
use crate::runtime::rma::bytes;

/// Open MPI OSHMEM's `shmemx_alltoall_global_nb`: block j of `source` (`size` bytes) goes to
/// block `my_pe` of `dest` on PE j, then `counter` on PE j is incremented atomically (after the
/// data, so a PE that sees its counter reach n_pes has every block). Complete on return, which
/// is a correct implementation of OSHMEM's "non-blocking".
#[no_mangle]
pub extern "C" fn shmemx_alltoall_global_nb(dest: *mut c_void, source: *const c_void, size: usize, counter: *mut c_long) {
    ffi_boundary!(shmemx_alltoall_global_nb, |st| {
        bytes(st.npes, size)?; // n_pes blocks of size bytes must be addressable
        for pe in 0..st.npes {
            let block = size * pe;
            let to = dest.cast::<u8>().wrapping_add(size * st.me);
            st.put_bytes(to, source.cast::<u8>().wrapping_add(block), size, pe as i32)?;
        }
        st.quiet();
        for pe in 0..st.npes {
            st.word(counter.cast_const(), pe as i32)?.fetch_add(1);
        }
        Ok(())
    })
}
