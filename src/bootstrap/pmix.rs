//! PMIx client through libpmix loaded at run time (Open MPI mpirun/oshrun): not yet implemented.

use crate::error::{Error, ErrorKind, Result};

pub fn detected() -> bool {
    std::env::var_os("PMIX_RANK").is_some()
}

pub fn bootstrap(_timeout: std::time::Duration) -> Result<Box<dyn super::Bootstrap>> {
    Err(Error::new(ErrorKind::Unsupported, "shmem_init", "PMIx bootstrap is not implemented yet"))
}
