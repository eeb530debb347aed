//! PMI-1 wire protocol client (MPICH hydra, Slurm): not yet implemented.

use crate::error::{Error, ErrorKind, Result};

pub fn detected() -> bool {
    std::env::var_os("PMI_FD").is_some()
}

pub fn bootstrap(_timeout: std::time::Duration) -> Result<Box<dyn super::Bootstrap>> {
    Err(Error::new(ErrorKind::Unsupported, "shmem_init", "PMI-1 bootstrap is not implemented yet"))
}
