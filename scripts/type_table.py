"""The element types of rshmem's typed routines: the one table every type list is made from.

scripts/gen_headers.py reads it and writes, from the same lists:
    include/shmem.h, shmemx.h, pshmem.h  the OpenSHMEM declarations and C11/C++ generics
    src/capi/type_tables.rs              the Rust macros the C entry points are expanded over
    device/rshmem_common.h               the RSHMEMI_REPT_* X-macros of nvshmem.h and the device
                                         library (the region between its GENERATED markers)
Add a type or move one between tables here, run `python3 scripts/gen_headers.py`, and every
layer follows; `make lint` fails while a generated file is stale.
"""

# TYPENAME: (C type, Rust type, NVSHMEM reduction kind). The kind names a variant of
# src/cuda/coll.rs `Kind` (the GPU reduction kernels); None: no GPU reduction of that type.
TYPES = {
    "half": ("half", "u16", "F16"),  # NVSHMEM only; moved as 16-bit words on the host
    "bfloat16": ("__nv_bfloat16", "u16", "Bf16"),  # NVSHMEM only
    "float": ("float", "f32", "F32"),
    "double": ("double", "f64", "F64"),
    "longdouble": ("long double", "$crate::abi::LongDouble", None),
    "char": ("char", "std::ffi::c_char", "I8"),  # reduced as signed, as on x86-64
    "schar": ("signed char", "i8", "I8"),
    "short": ("short", "i16", "I16"),
    "int": ("int", "i32", "I32"),
    "long": ("long", "i64", "I64"),
    "longlong": ("long long", "i64", "I64"),
    "uchar": ("unsigned char", "u8", "U8"),
    "ushort": ("unsigned short", "u16", "U16"),
    "uint": ("unsigned int", "u32", "U32"),
    "ulong": ("unsigned long", "u64", "U64"),
    "ulonglong": ("unsigned long long", "u64", "U64"),
    "int8": ("int8_t", "i8", "I8"),
    "int16": ("int16_t", "i16", "I16"),
    "int32": ("int32_t", "i32", "I32"),
    "int64": ("int64_t", "i64", "I64"),
    "uint8": ("uint8_t", "u8", "U8"),
    "uint16": ("uint16_t", "u16", "U16"),
    "uint32": ("uint32_t", "u32", "U32"),
    "uint64": ("uint64_t", "u64", "U64"),
    "size": ("size_t", "usize", "U64"),
    "ptrdiff": ("ptrdiff_t", "isize", "I64"),
    # C: float _Complex / double _Complex; C++: std::complex<> (see shmem.h's prelude).
    "complexf": ("RSHMEM_COMPLEXF", "$crate::capi::types::ComplexF", None),
    "complexd": ("RSHMEM_COMPLEXD", "$crate::capi::types::ComplexD", None),
}

# Types that exist in device code only where the CUDA fp16/bf16 headers do (RSHMEMI_HAVE_FP16).
FP16 = {"half", "bfloat16"}


def names(s):
    return s.split()


# ---- OpenSHMEM 1.5 (Tables 5-10; the deprecated tables of its Annex) ------------------------
RMA = names("float double longdouble char schar short int long longlong uchar ushort uint ulong"
            " ulonglong int8 int16 int32 int64 uint8 uint16 uint32 uint64 size ptrdiff")
AMO_STANDARD = names("int long longlong uint ulong ulonglong int32 int64 uint32 uint64 size ptrdiff")
AMO_EXTENDED = names("float double") + AMO_STANDARD
AMO_BITWISE = names("uint ulong ulonglong int32 int64 uint32 uint64")
SYNC = names("short int long longlong ushort uint ulong ulonglong int32 int64 uint32 uint64"
             " size ptrdiff")
REDUCE_BITWISE = names("uchar ushort uint ulong ulonglong int8 int16 int32 int64 uint8 uint16"
                       " uint32 uint64 size")
REDUCE_COMPARE = names("char schar short int long longlong ptrdiff uchar ushort uint ulong"
                       " ulonglong int8 int16 int32 int64 uint8 uint16 uint32 uint64 size"
                       " float double longdouble")
COMPLEX = names("complexf complexd")
REDUCE_ARITH = REDUCE_COMPARE + COMPLEX
# Open MPI's OSHMEM also exports the bitwise AMOs for these (not in the specification, not
# declared in our headers; src/capi/amo.rs `oshmem_bitwise` defines them for the LD_PRELOAD swap-in).
OSHMEM_AMO_BITWISE = names("int long longlong")
DEPR_AMO_STANDARD = names("int long longlong")  # cswap, finc, inc, fadd, add
DEPR_AMO_EXTENDED = names("int long longlong float double")  # swap, fetch, set
DEPR_WAIT = names("short int long longlong")  # shmem_TYPENAME_wait
TO_ALL_BITWISE = names("short int long longlong")
TO_ALL_COMPARE = names("short int long longlong float double longdouble")
TO_ALL_ARITH = TO_ALL_COMPARE + COMPLEX

# ---- NVSHMEM 3.x (its host and device API; same TYPENAMEs, plus half and bfloat16) ----------
NV_RMA = names("half bfloat16 float double char short schar int long longlong uchar ushort uint"
               " ulong ulonglong int8 int16 int32 int64 uint8 uint16 uint32 uint64 size ptrdiff")
NV_AMO_STANDARD = AMO_STANDARD
NV_AMO_EXTENDED = AMO_STANDARD + names("float double")
NV_AMO_BITWISE = AMO_BITWISE
NV_WAIT = SYNC
NV_REDUCE_BITWISE = REDUCE_BITWISE
NV_REDUCE_STANDARD = REDUCE_BITWISE + names("char schar short int long longlong bfloat16 half"
                                            " float double")

# Rust macros (src/capi/type_tables.rs): name -> (table, what it is). Each is called as
# `name!(m)` and calls back `m! { TYPENAME => RustType, ... }`.
RUST_TABLES = {
    "rma_types": (RMA, "Standard RMA types (Table 5): put, get, p, g, iput, iget, nbi, put_signal,"
                       " broadcast, collect..."),
    "amo_standard_types": (AMO_STANDARD, "Standard AMO types (Table 6): inc, add, fetch_inc,"
                                         " fetch_add, compare_swap."),
    "amo_extended_types": (AMO_EXTENDED, "Extended AMO types (Table 7): fetch, set, swap."),
    "amo_bitwise_types": (AMO_BITWISE, "Bitwise AMO types (Table 8): and, or, xor and their"
                                       " fetching forms."),
    "sync_types": (SYNC, "Point-to-point synchronization types (Table 9): wait_until, test and"
                         " their families."),
    "reduce_bitwise_types": (REDUCE_BITWISE, "Reduction types for AND, OR, XOR (Table 10)."),
    "reduce_compare_types": (REDUCE_COMPARE, "Reduction types for MAX, MIN (Table 10); SUM and"
                                             " PROD take these plus `complex_types`."),
    "complex_types": (COMPLEX, "The complex types SUM and PROD reductions take besides"
                               " `reduce_compare_types`."),
    "to_all_bitwise_types": (TO_ALL_BITWISE, "Deprecated AND, OR, XOR _to_all reductions"
                                             " (OpenSHMEM 1.4 9.9.10)."),
    "to_all_compare_types": (TO_ALL_COMPARE, "Deprecated MAX, MIN _to_all reductions; SUM and"
                                             " PROD take these plus `complex_types`."),
    "nvshmem_rma_types": (NV_RMA, "NVSHMEM's standard RMA types (its table adds half and"
                                  " bfloat16, moved as 16-bit words)."),
    "nvshmem_wait_types": (NV_WAIT, "NVSHMEM's point-to-point wait types (wait_until and"
                                    " friends)."),
}

# Rust macros that pair each TYPENAME with its GPU reduction kind:
# `name!(m, ARGS...)` calls back `m! { ARGS...; TYPENAME => Kind, ... }`.
RUST_KIND_TABLES = {
    "nvshmem_bitwise_reduce_types": (NV_REDUCE_BITWISE, "NVSHMEM's bitwise reduction types (and,"
                                                        " or, xor)."),
    "nvshmem_standard_reduce_types": (NV_REDUCE_STANDARD, "NVSHMEM's standard (max, min) and"
                                                          " arithmetic (sum, prod) reduction"
                                                          " types."),
}

# Device X-macros (device/rshmem_common.h): name -> (table, comment, extra macro argument).
# Each expands X(TYPENAME, TYPE) (X(TYPENAME, TYPE, OP) with an extra argument) per type.
DEVICE_TABLES = {
    "RSHMEMI_REPT_RMA_TYPES": (NV_RMA, "NVSHMEM's standard RMA types.", None),
    "RSHMEMI_REPT_AMO_STANDARD_TYPES": (NV_AMO_STANDARD, "Standard AMO types: inc, fetch_inc,"
                                                         " add, fetch_add, compare_swap.", None),
    "RSHMEMI_REPT_AMO_EXTENDED_TYPES": (NV_AMO_EXTENDED, "Extended AMO types: fetch, set,"
                                                         " swap.", None),
    "RSHMEMI_REPT_AMO_BITWISE_TYPES": (NV_AMO_BITWISE, "Bitwise AMO types: and, or, xor and"
                                                       " their fetching forms.", None),
    "RSHMEMI_REPT_WAIT_TYPES": (NV_WAIT, "Point-to-point synchronization types: wait_until,"
                                         " test.", None),
    "RSHMEMI_REPT_BITWISE_REDUCE_TYPES": (NV_REDUCE_BITWISE, "Bitwise reductions (and, or, xor)"
                                                             " on unsigned and fixed-width"
                                                             " integers.", "OP"),
    "RSHMEMI_REPT_STANDARD_REDUCE_TYPES": (NV_REDUCE_STANDARD, "max, min, sum and prod on every"
                                                               " standard type.", "OP"),
}
