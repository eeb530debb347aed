//! Items whose layout or values C code depends on, one file per generated header: cbindgen
//! turns `rshmem.rs` into include/rshmem/rshmem_abi.h and `ibgda.rs` into
//! device/ibgda/ibgda_state.h (both committed; `make check-header`, run by CI, fails when
//! regenerating one changes it).

pub mod ibgda;
pub(crate) mod rows;
mod rshmem;

pub use rshmem::*;

#[cfg(test)]
mod layout_tests;
