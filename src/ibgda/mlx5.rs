//! Rust mirror of device/ibgda/mlx5_layout.h: the mlx5 WQE segments and CQEs the device writes
//! and reads, for the software HCA model. Multi-byte fields hold big-endian values (as on the
//! wire); use `u32::from_be`/`to_be` on them.
//!
//! The C header is checked against rdma-core's `<infiniband/mlx5dv.h>` by
//! ctest/ibgda/mlx5_layout_check.cpp, and this mirror against the same program's printed table
//! (tests/ibgda_layout.rs), so the three agree.

use std::mem::size_of;

use crate::abi::rows::{const_rows, layout_rows};

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

/// `size <seg> <bytes>` and `field <seg>.<name> <offset> <size>` rows in the form the C check
/// prints, for the agreement test.
pub fn layout_table() -> Vec<String> {
    let mut v = Vec::new();
    layout_rows!(sized v, CtrlSeg, "ctrl", [opmod_idx_opcode, qpn_ds, signature, dci_stream_channel_id, fm_ce_se, imm]);
    layout_rows!(sized v, RaddrSeg, "raddr", [raddr, rkey, reserved]);
    layout_rows!(sized v, DataSeg, "data", [byte_count, lkey, addr]);
    layout_rows!(sized v, InlDataSeg, "inl", [byte_count]);
    layout_rows!(sized v, AtomicSeg, "atomic", [swap_add, compare]);
    layout_rows!(sized v, MaskedCs32Seg, "masked_cs32", [swap, compare, swap_mask, compare_mask]);
    layout_rows!(sized v, MaskedFa32Seg, "masked_fa32", [add, field_boundary]);
    layout_rows!(sized v, MaskedCs64Seg, "masked_cs64", [swap, compare, swap_mask, compare_mask]);
    layout_rows!(sized v, MaskedFa64Seg, "masked_fa64", [add, field_boundary]);
    layout_rows!(sized v, Av, "av", [dc_key, dqp_dct, stat_rate_sl, fl_mlid, rlid, rmac, tclass, hop_limit, grh_gid_fl, rgid]);
    layout_rows!(sized v, DatagramSeg, "dgram", [av]);
    layout_rows!(sized v, Cqe64, "cqe", [srqn_uidx, byte_cnt, timestamp, sop_drop_qpn, wqe_counter, signature, op_own]);
    layout_rows!(sized v, ErrCqe, "err_cqe", [vendor_err_synd, syndrome, s_wqe_opcode_qpn, wqe_counter, op_own]);
    v
}

/// `(name, value)` of the constants the C check prints (`const <NAME> <value>`): the C name is
/// `RSHMEM_MLX5_` and the Rust name.
pub fn constant_table() -> Vec<(&'static str, u64)> {
    const_rows!(
        "RSHMEM_MLX5_",
        [
            OPCODE_NOP,
            OPCODE_RDMA_WRITE,
            OPCODE_RDMA_WRITE_IMM,
            OPCODE_RDMA_READ,
            OPCODE_ATOMIC_CS,
            OPCODE_ATOMIC_FA,
            OPCODE_ATOMIC_MASKED_CS,
            OPCODE_ATOMIC_MASKED_FA,
            OPMOD_EXT_AMO_4B,
            OPMOD_EXT_AMO_8B,
            CTRL_CQ_UPDATE,
            CTRL_FENCE,
            CTRL_SOLICITED,
            SEND_WQE_BB,
            INLINE_SEG,
            SND_DBR,
            EXTENDED_UD_AV,
            AV_HALF_BYTES,
            CQE_REQ,
            CQE_REQ_ERR,
            CQE_INVALID,
            SYND_LOCAL_PROT_ERR,
            SYND_WR_FLUSH_ERR,
            SYND_REMOTE_ACCESS_ERR,
            SYND_REMOTE_OP_ERR,
            SYND_TRANSPORT_RETRY_EXC_ERR,
        ]
    )
    .to_vec()
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
