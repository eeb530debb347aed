//! The element types of the typed routines that are not Rust primitives. Which routine takes
//! which type is scripts/type_table.py, from which scripts/gen_headers.py writes the macros of
//! `type_tables.rs` (one per table of OpenSHMEM 1.5, Tables 5–10, and of NVSHMEM) that every
//! capi file expands its typed routines over.
//!
//! `longdouble` is x86-64's 80-bit extended type, stored in 16 bytes; it and the complex types
//! live in `crate::abi` (the reductions' arithmetic on them: `runtime::reduce_ops`).

pub use crate::abi::{ComplexD, ComplexF, LongDouble};
