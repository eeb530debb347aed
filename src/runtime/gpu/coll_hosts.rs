//! On-stream and blocking host collectives of GPU teams with members on other hosts. The
//! library's collective kernels reach members only through the mapped heap window, so these
//! run on the host, in stream order by waiting for the stream first: a team barrier (with
//! quiet: every member's sources are written, including what its kernels posted to the proxy,
//! and its dest is free), then the data moves with the host RMA routines (members on other
//! hosts through the proxy's mailboxes, the others through the window), then another barrier.
//! Reductions read every member's source into host memory and reduce there.
//!
//! Simple and slow (every byte crosses the host); the hierarchical form (NVLink inside a host,
//! the network once between hosts) is future work.

use super::coll::{Gather, GatherCall, ReduceCall};
use super::cu;
use super::host_rma::{HostOp, When};
use crate::cuda::coll::{Kind, RedOp};
use crate::cuda::{self, StreamHandle};
use crate::error::Result;
use crate::runtime::team::Team;
use crate::runtime::State;

impl State {
    /// Whether a member of `t` is on another host.
    pub(super) fn team_spans_hosts(&self, t: &Team) -> bool {
        self.gpu.is_some() && t.set.members().any(|pe| self.routes.gpu_route(pe) == crate::transport::Route::Proxy)
    }

    /// The host team barrier after everything queued on `stream` has run.
    pub(super) fn barrier_across_hosts(&self, team: i32, stream: StreamHandle, routine: &'static str) -> Result<()> {
        cu(cuda::stream_synchronize(stream.raw()))?;
        self.gpu_team_barrier_host(team, true, routine)
    }

    /// broadcast / fcollect / alltoall of `nbytes` per member (dest and source checked by the
    /// caller), each member pushing its part.
    pub(super) fn gather_across_hosts(
        &self,
        team: i32,
        t: &Team,
        call: GatherCall,
        stream: StreamHandle,
        routine: &'static str,
    ) -> Result<()> {
        let GatherCall { what, dest, src, nbytes, .. } = call;
        self.barrier_across_hosts(team, stream, routine)?;
        let me = t.my_index;
        for k in 0..t.set.size {
            let pe = t.set.pe(k) as i32;
            // (dest offset, source offset) of what this member sends member k.
            let (to, from) = match what {
                Gather::Broadcast { root } if root as usize == me => (0, 0),
                Gather::Broadcast { .. } => continue,
                Gather::Fcollect => (me * nbytes, 0),
                Gather::Alltoall => (me * nbytes, k * nbytes),
            };
            let (d, s) = (dest.wrapping_add(to), src.wrapping_add(from));
            if pe as usize != self.me || !std::ptr::eq(d, s) {
                self.gpu_op(HostOp::Put { dest: d, src: s, bytes: nbytes }, pe, When::Now)?;
            }
        }
        self.gpu_team_barrier_host(team, true, routine)
    }

    /// OP reduction (`scatter`: reduce-scatter) of `n` elements of `kind` (arguments checked by
    /// the caller).
    pub(super) fn reduce_across_hosts(
        &self,
        team: i32,
        t: &Team,
        call: ReduceCall,
        stream: StreamHandle,
        routine: &'static str,
    ) -> Result<()> {
        let ReduceCall { op, kind, dest, src, n, scatter } = call;
        self.barrier_across_hosts(team, stream, routine)?;
        let bytes = n * kind.size();
        let from = src.wrapping_add(if scatter { t.my_index * bytes } else { 0 });
        let mut acc = vec![0u8; bytes];
        let mut theirs = vec![0u8; bytes];
        for k in 0..t.set.size {
            let buf = if k == 0 { &mut acc } else { &mut theirs };
            self.gpu_op(HostOp::Get { dest: buf.as_mut_ptr(), src: from, bytes }, t.set.pe(k) as i32, When::Now)?;
            if k > 0 {
                reduce_into(kind, op, &mut acc, &theirs);
            }
        }
        // Every member has read every source before any dest (maybe a source) is written.
        self.gpu_team_barrier_host(team, false, routine)?;
        self.gpu_op(HostOp::Put { dest, src: acc.as_ptr(), bytes }, self.me as i32, When::Now).map(drop)
    }
}

/// `acc[i] = acc[i] OP x[i]` for the elements of `kind` (little-endian bytes; the caller
/// checked that `op` is defined for `kind`). Integers wrap; half types compute in f32 and
/// round to nearest even, as the device does.
pub fn reduce_into(kind: Kind, op: RedOp, acc: &mut [u8], x: &[u8]) {
    macro_rules! int {
        ($t:ty) => {
            each::<$t, { size_of::<$t>() }>(acc, x, <$t>::from_le_bytes, <$t>::to_le_bytes, |a, b| match op {
                RedOp::And => a & b,
                RedOp::Or => a | b,
                RedOp::Xor => a ^ b,
                RedOp::Max => a.max(b),
                RedOp::Min => a.min(b),
                RedOp::Sum => a.wrapping_add(b),
                RedOp::Prod => a.wrapping_mul(b),
            })
        };
    }
    let float = |a: f64, b: f64| match op {
        RedOp::Max => a.max(b),
        RedOp::Min => a.min(b),
        RedOp::Prod => a * b,
        _ => a + b,
    };
    match kind {
        Kind::U8 => int!(u8),
        Kind::U16 => int!(u16),
        Kind::U32 => int!(u32),
        Kind::U64 => int!(u64),
        Kind::I8 => int!(i8),
        Kind::I16 => int!(i16),
        Kind::I32 => int!(i32),
        Kind::I64 => int!(i64),
        Kind::F64 => each::<f64, 8>(acc, x, f64::from_le_bytes, f64::to_le_bytes, float),
        Kind::F32 => each::<f32, 4>(acc, x, f32::from_le_bytes, f32::to_le_bytes, |a, b| float(a as f64, b as f64) as f32),
        Kind::F16 => each::<u16, 2>(acc, x, u16::from_le_bytes, u16::to_le_bytes, |a, b| {
            f32_to_f16(float(f16_to_f32(a) as f64, f16_to_f32(b) as f64) as f32)
        }),
        Kind::Bf16 => each::<u16, 2>(acc, x, u16::from_le_bytes, u16::to_le_bytes, |a, b| {
            f32_to_bf16(float(bf16_to_f32(a) as f64, bf16_to_f32(b) as f64) as f32)
        }),
    }
}

fn each<T, const N: usize>(acc: &mut [u8], x: &[u8], from: fn([u8; N]) -> T, to: fn(T) -> [u8; N], f: impl Fn(T, T) -> T) {
    for (a, b) in acc.chunks_exact_mut(N).zip(x.chunks_exact(N)) {
        let v = f(from(a.try_into().expect("N bytes")), from(b.try_into().expect("N bytes")));
        a.copy_from_slice(&to(v));
    }
}

fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

fn f32_to_bf16(f: f32) -> u16 {
    let b = f.to_bits();
    if f.is_nan() {
        return ((b >> 16) | 0x40) as u16; // quiet NaN
    }
    // Round to nearest even on the 16 bits dropped.
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            let v = m as f32 * 2f32.powi(-24); // subnormal
            return if sign != 0 { -v } else { v };
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

fn f32_to_f16(f: f32) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if f.is_nan() {
        return sign | 0x7e00;
    }
    let a = f.abs();
    if a >= 65520.0 {
        return sign | 0x7c00; // rounds to infinity
    }
    if a < 2f32.powi(-14) {
        // Subnormal (or zero): a multiple of 2^-24, rounded to nearest even.
        let m = a * 2f32.powi(24);
        let r = m.round_ties_even();
        return sign | r as u16;
    }
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x7f_ffff;
    // Round the 13 dropped bits to nearest even; a carry moves into the exponent.
    let rounded = (((exp as u32) << 23) | man) + 0xfff + ((man >> 13) & 1);
    sign | (rounded >> 13) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce<T: Copy, const N: usize>(kind: Kind, op: RedOp, a: &[T], b: &[T], to: fn(T) -> [u8; N], from: fn([u8; N]) -> T) -> Vec<T> {
        let mut acc: Vec<u8> = a.iter().flat_map(|v| to(*v)).collect();
        let x: Vec<u8> = b.iter().flat_map(|v| to(*v)).collect();
        reduce_into(kind, op, &mut acc, &x);
        acc.chunks_exact(N).map(|c| from(c.try_into().unwrap())).collect()
    }

    #[test]
    fn host_reductions_match_the_device_semantics() {
        assert_eq!(reduce(Kind::I32, RedOp::Sum, &[1, -5, i32::MAX], &[2, 3, 1], i32::to_le_bytes, i32::from_le_bytes), [3, -2, i32::MIN]);
        assert_eq!(reduce(Kind::U8, RedOp::Prod, &[3, 200], &[5, 2], u8::to_le_bytes, u8::from_le_bytes), [15, 144]);
        assert_eq!(reduce(Kind::I16, RedOp::Min, &[-3, 7], &[2, 9], i16::to_le_bytes, i16::from_le_bytes), [-3, 7]);
        assert_eq!(reduce(Kind::U64, RedOp::Xor, &[0b1100], &[0b1010], u64::to_le_bytes, u64::from_le_bytes), [0b0110]);
        assert_eq!(reduce(Kind::I64, RedOp::Max, &[-1, 4], &[-2, 5], i64::to_le_bytes, i64::from_le_bytes), [-1, 5]);
        assert_eq!(reduce(Kind::F64, RedOp::Prod, &[1.5, -2.0], &[4.0, 0.25], f64::to_le_bytes, f64::from_le_bytes), [6.0, -0.5]);
        assert_eq!(reduce(Kind::F32, RedOp::Sum, &[0.5, 1e30], &[0.25, 1e30], f32::to_le_bytes, f32::from_le_bytes), [0.75, 2e30]);
        // Half types: 1.5 + 2.25 = 3.75 exactly; bf16 of 1.0 is 0x3f80, 3.0 is 0x4040.
        let f16 = |v: f32| f32_to_f16(v);
        assert_eq!(reduce(Kind::F16, RedOp::Sum, &[f16(1.5)], &[f16(2.25)], u16::to_le_bytes, u16::from_le_bytes), [f16(3.75)]);
        assert_eq!(f16(3.75), 0x4380);
        assert_eq!(reduce(Kind::Bf16, RedOp::Sum, &[0x3f80], &[0x4000], u16::to_le_bytes, u16::from_le_bytes), [0x4040]);
    }

    #[test]
    fn half_conversions_round_to_nearest_even() {
        for (f, h) in [(0.0f32, 0u16), (1.0, 0x3c00), (-2.0, 0xc000), (65504.0, 0x7bff), (65520.0, 0x7c00), (2f32.powi(-24), 1)] {
            assert_eq!(f32_to_f16(f), h, "{f}");
            if h != 0x7c00 {
                assert_eq!(f16_to_f32(h), f, "{h:#x}");
            }
        }
        // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even (1.0).
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f32_to_bf16(1.0 + 2f32.powi(-8)), 0x3f80, "a tie rounds to even");
        assert_eq!(f32_to_bf16(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        assert_eq!(bf16_to_f32(0xc040), -3.0);
    }
}
