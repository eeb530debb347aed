//! The element operations of reductions (OpenSHMEM 1.5 §9.9.7, Table 10): what `reduce` in
//! coll.rs applies, element by element, to the PEs' contributions. The C entry points pick the
//! operation per routine; the operation is a type parameter there (each `Arith::sum` etc. is
//! its own function item), so it inlines into the reduction loops, which then vectorize.

use crate::abi::{ComplexD, ComplexF, LongDouble};
use crate::sys::longdouble as ld;

/// AND, OR, XOR.
pub trait Bits: Copy {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

/// MAX, MIN.
pub trait Order: Copy {
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
}

/// SUM, PROD (integers wrap, as two's-complement hardware does).
pub trait Arith: Copy {
    fn sum(self, o: Self) -> Self;
    fn prod(self, o: Self) -> Self;
}
macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl Bits for $t {
            fn and(self, o: Self) -> Self { self & o }
            fn or(self, o: Self) -> Self { self | o }
            fn xor(self, o: Self) -> Self { self ^ o }
        }
        impl Order for $t {
            fn max(self, o: Self) -> Self { Ord::max(self, o) }
            fn min(self, o: Self) -> Self { Ord::min(self, o) }
        }
        impl Arith for $t {
            fn sum(self, o: Self) -> Self { self.wrapping_add(o) }
            fn prod(self, o: Self) -> Self { self.wrapping_mul(o) }
        }
    )*};
}
int_ops!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl Order for $t {
            fn max(self, o: Self) -> Self { if o > self { o } else { self } }
            fn min(self, o: Self) -> Self { if o < self { o } else { self } }
        }
        impl Arith for $t {
            fn sum(self, o: Self) -> Self { self + o }
            fn prod(self, o: Self) -> Self { self * o }
        }
    )*};
}
float_ops!(f32, f64);

macro_rules! complex_ops {
    ($($t:ident),*) => {$(
        impl Arith for $t {
            fn sum(self, o: Self) -> Self { $t(self.0 + o.0, self.1 + o.1) }
            fn prod(self, o: Self) -> Self { $t(self.0 * o.0 - self.1 * o.1, self.0 * o.1 + self.1 * o.0) }
        }
    )*};
}
complex_ops!(ComplexF, ComplexD);

impl Order for LongDouble {
    fn max(self, o: Self) -> Self {
        ld::max(&self, &o)
    }
    fn min(self, o: Self) -> Self {
        ld::min(&self, &o)
    }
}

impl Arith for LongDouble {
    fn sum(self, o: Self) -> Self {
        ld::add(&self, &o)
    }
    fn prod(self, o: Self) -> Self {
        ld::mul(&self, &o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops() {
        assert_eq!(Arith::sum(i8::MAX, 1), i8::MIN);
        assert_eq!(Arith::prod(3u16, 5), 15);
        assert_eq!(Order::max(-2.5f64, 1.0), 1.0);
        assert_eq!(Order::min(-2i64, 1), -2);
        assert_eq!(Bits::xor(0b1100u8, 0b1010), 0b0110);
        let p = Arith::prod(ComplexD(1.0, 2.0), ComplexD(3.0, -1.0));
        assert_eq!(p, ComplexD(5.0, 5.0));
    }
}
