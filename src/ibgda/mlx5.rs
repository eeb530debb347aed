//! Rust mirror of device/ibgda/mlx5_layout.h: the mlx5 WQE segments and CQEs the device writes
//! and reads, for the software HCA model. Multi-byte fields hold big-endian values (as on the
//! wire); use `u32::from_be`/`to_be` on them.
//!
//! The C header is checked against rdma-core's `<infiniband/mlx5dv.h>` by
//! ctest/ibgda/mlx5_layout_check.cpp, and this mirror against the same program's printed table
//! (tests/ibgda_layout.rs), so the three agree.

use std::mem::{offset_of, size_of};

pub const OPCODE_NOP: u8 = 0x00;
pub const OPCODE_RDMA_WRITE: u8 = 0x08;
pub const OPCODE_RDMA_WRITE_IMM: u8 = 0x09;
pub const OPCODE_RDMA_READ: u8 = 0x10;
pub const OPCODE_ATOMIC_CS: u8 = 0x11;
pub const OPCODE_ATOMIC_FA: u8 = 0x12;
pub const OPCODE_ATOMIC_MASKED_CS: u8 = 0x14;
pub const OPCODE_ATOMIC_MASKED_FA: u8 = 0x15;
pub const OPMOD_EXT_AMO_4B: u8 = 0x08;
pub const OPMOD_EXT_AMO_8B: u8 = 0x09;

pub const CTRL_SOLICITED: u8 = 0x02;
pub const CTRL_CQ_UPDATE: u8 = 0x08;
pub const CTRL_CE_MASK: u8 = 0x0c;
pub const CTRL_FENCE: u8 = 0x80;
pub const CTRL_FM_MASK: u8 = 0xe0;

pub const SEND_WQE_BB: usize = 64;
pub const SEND_WQE_SHIFT: u32 = 6;
pub const DS_BYTES: usize = 16;
pub const INLINE_SEG: u32 = 0x8000_0000;
pub const SND_DBR: usize = 1;
pub const EXTENDED_UD_AV: u32 = 0x8000_0000;
pub const AV_HALF_BYTES: usize = 16;

pub const CQE_SIZE: usize = 64;
pub const CQE_REQ: u8 = 0x0;
pub const CQE_REQ_ERR: u8 = 0xd;
pub const CQE_RESP_ERR: u8 = 0xe;
pub const CQE_INVALID: u8 = 0xf;

pub const SYND_LOCAL_LENGTH_ERR: u8 = 0x01;
pub const SYND_LOCAL_QP_OP_ERR: u8 = 0x02;
pub const SYND_LOCAL_PROT_ERR: u8 = 0x04;
pub const SYND_WR_FLUSH_ERR: u8 = 0x05;
pub const SYND_REMOTE_INVAL_REQ_ERR: u8 = 0x12;
pub const SYND_REMOTE_ACCESS_ERR: u8 = 0x13;
pub const SYND_REMOTE_OP_ERR: u8 = 0x14;
pub const SYND_TRANSPORT_RETRY_EXC_ERR: u8 = 0x15;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtrlSeg {
    pub opmod_idx_opcode: u32,
    pub qpn_ds: u32,
    pub signature: u8,
    pub dci_stream_channel_id: [u8; 2],
    pub fm_ce_se: u8,
    pub imm: u32,
}

impl CtrlSeg {
    pub fn opcode(&self) -> u8 {
        (u32::from_be(self.opmod_idx_opcode) & 0xff) as u8
    }
    pub fn opmod(&self) -> u8 {
        (u32::from_be(self.opmod_idx_opcode) >> 24) as u8
    }
    pub fn wqe_index(&self) -> u16 {
        (u32::from_be(self.opmod_idx_opcode) >> 8) as u16
    }
    pub fn qpn(&self) -> u32 {
        u32::from_be(self.qpn_ds) >> 8
    }
    pub fn ds(&self) -> u8 {
        (u32::from_be(self.qpn_ds) & 0xff) as u8
    }
    /// Number of 64-byte basic blocks the WQE occupies.
    pub fn num_bb(&self) -> usize {
        (self.ds() as usize * DS_BYTES).div_ceil(SEND_WQE_BB).max(1)
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaddrSeg {
    pub raddr: u64,
    pub rkey: u32,
    pub reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataSeg {
    pub byte_count: u32,
    pub lkey: u32,
    pub addr: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InlDataSeg {
    pub byte_count: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicSeg {
    pub swap_add: u64,
    pub compare: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskedCs32Seg {
    pub swap: u32,
    pub compare: u32,
    pub swap_mask: u32,
    pub compare_mask: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskedFa32Seg {
    pub add: u32,
    pub field_boundary: u32,
    pub reserved: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskedCs64Seg {
    pub swap: u64,
    pub compare: u64,
    pub swap_mask: u64,
    pub compare_mask: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskedFa64Seg {
    pub add: u64,
    pub field_boundary: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Av {
    pub dc_key: u64,
    pub dqp_dct: u32,
    pub stat_rate_sl: u8,
    pub fl_mlid: u8,
    pub rlid: u16,
    pub reserved0: [u8; 4],
    pub rmac: [u8; 6],
    pub tclass: u8,
    pub hop_limit: u8,
    pub grh_gid_fl: u32,
    pub rgid: [u8; 16],
}

/// The datagram segment of a DCI WQE: the address vector. A WQE carries its first
/// [`AV_HALF_BYTES`] or all 48 bytes (`EXTENDED_UD_AV` in `dqp_dct`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DatagramSeg {
    pub av: Av,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cqe64 {
    pub rsvd0: [u8; 2],
    pub wqe_id: u16,
    pub rsvd4: [u8; 28],
    pub srqn_uidx: u32,
    pub imm_inval_pkey: u32,
    pub app: u8,
    pub app_op: u8,
    pub app_info: u16,
    pub byte_cnt: u32,
    pub timestamp: u64,
    pub sop_drop_qpn: u32,
    pub wqe_counter: u16,
    pub signature: u8,
    pub op_own: u8,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrCqe {
    pub rsvd0: [u8; 32],
    pub srqn: u32,
    pub rsvd1: [u8; 18],
    pub vendor_err_synd: u8,
    pub syndrome: u8,
    pub s_wqe_opcode_qpn: u32,
    pub wqe_counter: u16,
    pub signature: u8,
    pub op_own: u8,
}

const _: () = {
    assert!(size_of::<CtrlSeg>() == 16);
    assert!(size_of::<RaddrSeg>() == 16);
    assert!(size_of::<DataSeg>() == 16);
    assert!(size_of::<InlDataSeg>() == 4);
    assert!(size_of::<AtomicSeg>() == 16);
    assert!(size_of::<MaskedCs32Seg>() == 16);
    assert!(size_of::<MaskedFa32Seg>() == 16);
    assert!(size_of::<MaskedCs64Seg>() == 32);
    assert!(size_of::<MaskedFa64Seg>() == 16);
    assert!(size_of::<Av>() == 48);
    assert!(size_of::<DatagramSeg>() == 48);
    assert!(size_of::<Cqe64>() == 64);
    assert!(size_of::<ErrCqe>() == 64);
};

/// Human name of a WQE opcode (+ opmod for the masked forms), for error messages.
pub fn opcode_name(opcode: u8) -> &'static str {
    match opcode {
        OPCODE_NOP => "NOP",
        OPCODE_RDMA_WRITE => "RDMA WRITE (put)",
        OPCODE_RDMA_WRITE_IMM => "RDMA WRITE with immediate",
        OPCODE_RDMA_READ => "RDMA READ (get)",
        OPCODE_ATOMIC_CS => "atomic compare-swap",
        OPCODE_ATOMIC_FA => "atomic fetch-add",
        OPCODE_ATOMIC_MASKED_CS => "masked atomic compare-swap (swap/set/and/or)",
        OPCODE_ATOMIC_MASKED_FA => "masked atomic fetch-add (32-bit add/xor)",
        _ => "unknown WQE opcode",
    }
}

/// Plain-words name of an error CQE syndrome.
pub fn syndrome_name(syndrome: u8) -> &'static str {
    match syndrome {
        SYND_LOCAL_LENGTH_ERR => "local length error",
        SYND_LOCAL_QP_OP_ERR => "local QP operation error (malformed WQE)",
        SYND_LOCAL_PROT_ERR => "local protection error (bad lkey or local address outside its registration)",
        SYND_WR_FLUSH_ERR => "flushed: the QP was already in error",
        0x10 => "bad response",
        0x11 => "local access error",
        SYND_REMOTE_INVAL_REQ_ERR => "remote invalid request",
        SYND_REMOTE_ACCESS_ERR => "remote access error (bad rkey or remote address outside the registered heap)",
        SYND_REMOTE_OP_ERR => "remote operation error",
        SYND_TRANSPORT_RETRY_EXC_ERR => "transport retry counter exceeded (the target never answered)",
        0x16 => "RNR retry counter exceeded",
        0x22 => "remote aborted",
        _ => "unknown syndrome",
    }
}

/// `(kind, segment, field, offset, size)` rows in the same form the C check prints
/// (`field <seg>.<name> <offset> <size>` / `size <seg> <bytes>`), for the agreement test.
pub fn layout_table() -> Vec<String> {
    macro_rules! size {
        ($t:ty, $seg:literal) => {
            format!("size {} {}", $seg, size_of::<$t>())
        };
    }
    macro_rules! field {
        ($t:ty, $seg:literal, $f:ident) => {{
            // Size of the field through a zeroed value (all mirror types are plain data).
            let v: $t = unsafe_zeroed::<$t>();
            format!("field {}.{} {} {}", $seg, stringify!($f), offset_of!($t, $f), std::mem::size_of_val(&v.$f))
        }};
    }
    vec![
        size!(CtrlSeg, "ctrl"),
        field!(CtrlSeg, "ctrl", opmod_idx_opcode),
        field!(CtrlSeg, "ctrl", qpn_ds),
        field!(CtrlSeg, "ctrl", signature),
        field!(CtrlSeg, "ctrl", dci_stream_channel_id),
        field!(CtrlSeg, "ctrl", fm_ce_se),
        field!(CtrlSeg, "ctrl", imm),
        size!(RaddrSeg, "raddr"),
        field!(RaddrSeg, "raddr", raddr),
        field!(RaddrSeg, "raddr", rkey),
        field!(RaddrSeg, "raddr", reserved),
        size!(DataSeg, "data"),
        field!(DataSeg, "data", byte_count),
        field!(DataSeg, "data", lkey),
        field!(DataSeg, "data", addr),
        size!(InlDataSeg, "inl"),
        field!(InlDataSeg, "inl", byte_count),
        size!(AtomicSeg, "atomic"),
        field!(AtomicSeg, "atomic", swap_add),
        field!(AtomicSeg, "atomic", compare),
        size!(MaskedCs32Seg, "masked_cs32"),
        field!(MaskedCs32Seg, "masked_cs32", swap),
        field!(MaskedCs32Seg, "masked_cs32", compare),
        field!(MaskedCs32Seg, "masked_cs32", swap_mask),
        field!(MaskedCs32Seg, "masked_cs32", compare_mask),
        size!(MaskedFa32Seg, "masked_fa32"),
        field!(MaskedFa32Seg, "masked_fa32", add),
        field!(MaskedFa32Seg, "masked_fa32", field_boundary),
        size!(MaskedCs64Seg, "masked_cs64"),
        field!(MaskedCs64Seg, "masked_cs64", swap),
        field!(MaskedCs64Seg, "masked_cs64", compare),
        field!(MaskedCs64Seg, "masked_cs64", swap_mask),
        field!(MaskedCs64Seg, "masked_cs64", compare_mask),
        size!(MaskedFa64Seg, "masked_fa64"),
        field!(MaskedFa64Seg, "masked_fa64", add),
        field!(MaskedFa64Seg, "masked_fa64", field_boundary),
        size!(Av, "av"),
        field!(Av, "av", dc_key),
        field!(Av, "av", dqp_dct),
        field!(Av, "av", stat_rate_sl),
        field!(Av, "av", fl_mlid),
        field!(Av, "av", rlid),
        field!(Av, "av", rmac),
        field!(Av, "av", tclass),
        field!(Av, "av", hop_limit),
        field!(Av, "av", grh_gid_fl),
        field!(Av, "av", rgid),
        size!(DatagramSeg, "dgram"),
        field!(DatagramSeg, "dgram", av),
        size!(Cqe64, "cqe"),
        field!(Cqe64, "cqe", srqn_uidx),
        field!(Cqe64, "cqe", byte_cnt),
        field!(Cqe64, "cqe", timestamp),
        field!(Cqe64, "cqe", sop_drop_qpn),
        field!(Cqe64, "cqe", wqe_counter),
        field!(Cqe64, "cqe", signature),
        field!(Cqe64, "cqe", op_own),
        size!(ErrCqe, "err_cqe"),
        field!(ErrCqe, "err_cqe", vendor_err_synd),
        field!(ErrCqe, "err_cqe", syndrome),
        field!(ErrCqe, "err_cqe", s_wqe_opcode_qpn),
        field!(ErrCqe, "err_cqe", wqe_counter),
        field!(ErrCqe, "err_cqe", op_own),
    ]
}

/// `(name, value)` of the constants the C check prints (`const <NAME> <value>`).
pub fn constant_table() -> Vec<(&'static str, u64)> {
    vec![
        ("RSHMEM_MLX5_OPCODE_NOP", OPCODE_NOP as u64),
        ("RSHMEM_MLX5_OPCODE_RDMA_WRITE", OPCODE_RDMA_WRITE as u64),
        ("RSHMEM_MLX5_OPCODE_RDMA_WRITE_IMM", OPCODE_RDMA_WRITE_IMM as u64),
        ("RSHMEM_MLX5_OPCODE_RDMA_READ", OPCODE_RDMA_READ as u64),
        ("RSHMEM_MLX5_OPCODE_ATOMIC_CS", OPCODE_ATOMIC_CS as u64),
        ("RSHMEM_MLX5_OPCODE_ATOMIC_FA", OPCODE_ATOMIC_FA as u64),
        ("RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_CS", OPCODE_ATOMIC_MASKED_CS as u64),
        ("RSHMEM_MLX5_OPCODE_ATOMIC_MASKED_FA", OPCODE_ATOMIC_MASKED_FA as u64),
        ("RSHMEM_MLX5_OPMOD_EXT_AMO_4B", OPMOD_EXT_AMO_4B as u64),
        ("RSHMEM_MLX5_OPMOD_EXT_AMO_8B", OPMOD_EXT_AMO_8B as u64),
        ("RSHMEM_MLX5_CTRL_CQ_UPDATE", CTRL_CQ_UPDATE as u64),
        ("RSHMEM_MLX5_CTRL_FENCE", CTRL_FENCE as u64),
        ("RSHMEM_MLX5_CTRL_SOLICITED", CTRL_SOLICITED as u64),
        ("RSHMEM_MLX5_SEND_WQE_BB", SEND_WQE_BB as u64),
        ("RSHMEM_MLX5_INLINE_SEG", INLINE_SEG as u64),
        ("RSHMEM_MLX5_SND_DBR", SND_DBR as u64),
        ("RSHMEM_MLX5_EXTENDED_UD_AV", EXTENDED_UD_AV as u64),
        ("RSHMEM_MLX5_AV_HALF_BYTES", AV_HALF_BYTES as u64),
        ("RSHMEM_MLX5_CQE_REQ", CQE_REQ as u64),
        ("RSHMEM_MLX5_CQE_REQ_ERR", CQE_REQ_ERR as u64),
        ("RSHMEM_MLX5_CQE_INVALID", CQE_INVALID as u64),
        ("RSHMEM_MLX5_SYND_LOCAL_PROT_ERR", SYND_LOCAL_PROT_ERR as u64),
        ("RSHMEM_MLX5_SYND_WR_FLUSH_ERR", SYND_WR_FLUSH_ERR as u64),
        ("RSHMEM_MLX5_SYND_REMOTE_ACCESS_ERR", SYND_REMOTE_ACCESS_ERR as u64),
        ("RSHMEM_MLX5_SYND_REMOTE_OP_ERR", SYND_REMOTE_OP_ERR as u64),
        ("RSHMEM_MLX5_SYND_TRANSPORT_RETRY_EXC_ERR", SYND_TRANSPORT_RETRY_EXC_ERR as u64),
    ]
}

/// An all-zero value of a plain-data mirror type (every field is an integer or integer array).
fn unsafe_zeroed<T: Copy>() -> T {
    // SAFETY: only called on the #[repr(C)] mirror structs above, whose fields are all integers
    // or integer arrays, for which the all-zero bit pattern is a valid value.
    unsafe { std::mem::zeroed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_accessors_decode_big_endian_words() {
        let c = CtrlSeg {
            opmod_idx_opcode: ((OPMOD_EXT_AMO_8B as u32) << 24 | 0xbeef << 8 | OPCODE_ATOMIC_MASKED_FA as u32).to_be(),
            qpn_ds: (0x123456u32 << 8 | 5).to_be(),
            ..Default::default()
        };
        assert_eq!(c.opcode(), OPCODE_ATOMIC_MASKED_FA);
        assert_eq!(c.opmod(), OPMOD_EXT_AMO_8B);
        assert_eq!(c.wqe_index(), 0xbeef);
        assert_eq!(c.qpn(), 0x123456);
        assert_eq!(c.ds(), 5);
        assert_eq!(c.num_bb(), 2, "80 bytes take two 64-byte blocks");
    }
}
