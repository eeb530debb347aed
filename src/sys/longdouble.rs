//! x86-64 80-bit long double support (to be written).
