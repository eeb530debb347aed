//! The OpenSHMEM type tables (specification 1.5, Tables 5–10), one macro per table. Each calls
//! back `$m!` with `TYPENAME => RustType` pairs; the C names of the typed routines are built
//! from TYPENAME (`shmem_<TYPENAME>_put`). All capi files take their types from here.
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

/// Standard RMA types (Table 5): put, get, p, g, iput, iget, nbi, put_signal, broadcast, collect...
#[macro_export]
macro_rules! rma_types {
    ($m:ident) => {
        $m! {
            float => f32, double => f64, longdouble => $crate::abi::LongDouble,
            char => std::ffi::c_char, schar => i8, short => i16, int => i32, long => i64, longlong => i64,
            uchar => u8, ushort => u16, uint => u32, ulong => u64, ulonglong => u64,
            int8 => i8, int16 => i16, int32 => i32, int64 => i64,
            uint8 => u8, uint16 => u16, uint32 => u32, uint64 => u64,
            size => usize, ptrdiff => isize
        }
    };
}

/// Standard AMO types (Table 6): inc, add, fetch_inc, fetch_add, compare_swap.
#[macro_export]
macro_rules! amo_standard_types {
    ($m:ident) => {
        $m! {
            int => i32, long => i64, longlong => i64, uint => u32, ulong => u64, ulonglong => u64,
            int32 => i32, int64 => i64, uint32 => u32, uint64 => u64, size => usize, ptrdiff => isize
        }
    };
}

/// Extended AMO types (Table 7): fetch, set, swap.
#[macro_export]
macro_rules! amo_extended_types {
    ($m:ident) => {
        $m! {
            float => f32, double => f64,
            int => i32, long => i64, longlong => i64, uint => u32, ulong => u64, ulonglong => u64,
            int32 => i32, int64 => i64, uint32 => u32, uint64 => u64, size => usize, ptrdiff => isize
        }
    };
}

/// Bitwise AMO types (Table 8): and, or, xor and their fetching forms.
#[macro_export]
macro_rules! amo_bitwise_types {
    ($m:ident) => {
        $m! {
            uint => u32, ulong => u64, ulonglong => u64, int32 => i32, int64 => i64, uint32 => u32, uint64 => u64
        }
    };
}

/// Point-to-point synchronization types (Table 9): wait_until, test and their families.
#[macro_export]
macro_rules! sync_types {
    ($m:ident) => {
        $m! {
            short => i16, int => i32, long => i64, longlong => i64,
            ushort => u16, uint => u32, ulong => u64, ulonglong => u64,
            int32 => i32, int64 => i64, uint32 => u32, uint64 => u64, size => usize, ptrdiff => isize
        }
    };
}

/// Reduction types for AND, OR, XOR (Table 10).
#[macro_export]
macro_rules! reduce_bitwise_types {
    ($m:ident) => {
        $m! {
            uchar => u8, ushort => u16, uint => u32, ulong => u64, ulonglong => u64,
            int8 => i8, int16 => i16, int32 => i32, int64 => i64,
            uint8 => u8, uint16 => u16, uint32 => u32, uint64 => u64, size => usize
        }
    };
}

/// Reduction types for MAX, MIN (Table 10); SUM and PROD take these plus complexf/complexd.
#[macro_export]
macro_rules! reduce_compare_types {
    ($m:ident) => {
        $m! {
            char => std::ffi::c_char, schar => i8, short => i16, int => i32, long => i64, longlong => i64, ptrdiff => isize,
            uchar => u8, ushort => u16, uint => u32, ulong => u64, ulonglong => u64,
            int8 => i8, int16 => i16, int32 => i32, int64 => i64,
            uint8 => u8, uint16 => u16, uint32 => u32, uint64 => u64, size => usize,
            float => f32, double => f64, longdouble => $crate::abi::LongDouble
        }
    };
}
