//! The element types of the typed routines that are not Rust primitives. Which routine takes
//! which type is scripts/type_table.py, from which scripts/gen_headers.py writes the macros of
//! `type_tables.rs` (one per table of OpenSHMEM 1.5, Tables 5–10, and of NVSHMEM) that every
//! capi file expands its typed routines over.
//!
//! `longdouble` is x86-64's 80-bit extended type, stored in 16 bytes; see `crate::abi::LongDouble`.

pub use crate::abi::LongDouble;

/// C `float _Complex` and `double _Complex`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ComplexF(pub f32, pub f32);
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ComplexD(pub f64, pub f64);
