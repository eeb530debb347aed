//! QUERY_HCA_CAP: the device's general capabilities, read before the hardware set-up sizes its
//! queues. [`query_hca_cap`] encodes the command (`query_hca_cap_in`), [`HcaCaps::decode`] reads
//! the fields we depend on from its output (`query_hca_cap_out`: the usual 0x80-bit output
//! header, then the capability layout, `cmd_hca_cap` for the general device type).
//!
//! Offsets are those of the PRM's `cmd_hca_cap` layout (as the public `mlx5_ifc.h` of Linux and
//! of rdma-core give it), relative to the start of that layout; [`CAP_AT`] places it in the
//! output. NEVER MET HARDWARE: no firmware has answered this command to us.

use super::{f, get, out_status, Cmd, Field, HDR_OPCODE, HDR_OP_MOD};

pub const QUERY_HCA_CAP: u16 = 0x100;
/// op_mod = (capability type << 1) | mode: type 0 is the general device capabilities, mode 1 the
/// current values (0 would be the maximum the device could be set to).
pub const CAP_TYPE_GENERAL_DEVICE: u16 = 0;
pub const CAP_MODE_CURRENT: u16 = 1;
/// query_hca_cap_in: opcode, op_mod, then other_function / function_id (0: ourselves).
pub const QUERY_HCA_CAP_IN_BITS: u32 = 0x80;
/// query_hca_cap_out: 0x80 bits of header, then the capability union (0x8000 bits).
pub const CAP_AT: u32 = 0x80;
pub const QUERY_HCA_CAP_OUT_BYTES: usize = (CAP_AT as usize + 0x8000) / 8;

/// Fields of `cmd_hca_cap` (general device capabilities), bit offset from its start.
pub mod hca_cap {
    use super::{f, Field};
    /// log2 of the largest send/receive queue, in WQE basic blocks.
    pub const LOG_MAX_QP_SZ: Field = f(0x88, 8);
    /// log2 of the largest CQ, in CQEs.
    pub const LOG_MAX_CQ_SZ: Field = f(0xc8, 8);
    /// log2 of the RDMA READ / atomic requests a QP may have outstanding, and may answer.
    pub const LOG_MAX_RA_REQ_QP: Field = f(0x14a, 6);
    pub const LOG_MAX_RA_RES_QP: Field = f(0x15a, 6);
    /// log2 of the largest message.
    pub const LOG_MAX_MSG: Field = f(0x1c3, 5);
    /// DC targets (and so DC) supported.
    pub const DCT: Field = f(0x21a, 1);
    /// RDMA atomics supported.
    pub const ATOMIC: Field = f(0x21e, 1);
    /// Reliable connected transport supported.
    pub const RC: Field = f(0x23f, 1);
    /// log2 of the BlueFlame register's size (half the doorbell stride of a UAR).
    pub const LOG_BF_REG_SIZE: Field = f(0x26b, 5);
}

/// QUERY_HCA_CAP for the current general device capabilities of our own function.
pub fn query_hca_cap() -> Cmd {
    let mut c = Cmd::new(QUERY_HCA_CAP_IN_BITS);
    c.set(HDR_OPCODE, QUERY_HCA_CAP as u64);
    c.set(HDR_OP_MOD, ((CAP_TYPE_GENERAL_DEVICE << 1) | CAP_MODE_CURRENT) as u64);
    c
}

/// The capabilities the hardware IBGDA set-up depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HcaCaps {
    pub log_max_qp_sz: u8,
    pub log_max_cq_sz: u8,
    pub log_max_ra_req_qp: u8,
    pub log_max_ra_res_qp: u8,
    pub log_max_msg: u8,
    pub dct: bool,
    pub atomic: bool,
    pub rc: bool,
    pub log_bf_reg_size: u8,
}

/// Bytes of output [`HcaCaps::decode`] reads: the header and the first 0x280 bits of the caps.
const DECODED_BYTES: usize = (CAP_AT as usize + 0x280) / 8;

impl HcaCaps {
    /// Reads a QUERY_HCA_CAP output. `Err` in words: a short output, or a failed status.
    pub fn decode(out: &[u8]) -> Result<HcaCaps, String> {
        if out.len() < DECODED_BYTES {
            return Err(format!(
                "the QUERY_HCA_CAP output is {} bytes, shorter than the {DECODED_BYTES} bytes of capabilities read",
                out.len()
            ));
        }
        if let Err((status, syndrome)) = out_status(out) {
            return Err(format!("QUERY_HCA_CAP failed: firmware status {status:#x}, syndrome {syndrome:#010x}"));
        }
        let cap = |fld: Field| get(out, Field { bit: CAP_AT + fld.bit, width: fld.width });
        Ok(HcaCaps {
            log_max_qp_sz: cap(hca_cap::LOG_MAX_QP_SZ) as u8,
            log_max_cq_sz: cap(hca_cap::LOG_MAX_CQ_SZ) as u8,
            log_max_ra_req_qp: cap(hca_cap::LOG_MAX_RA_REQ_QP) as u8,
            log_max_ra_res_qp: cap(hca_cap::LOG_MAX_RA_RES_QP) as u8,
            log_max_msg: cap(hca_cap::LOG_MAX_MSG) as u8,
            dct: cap(hca_cap::DCT) == 1,
            atomic: cap(hca_cap::ATOMIC) == 1,
            rc: cap(hca_cap::RC) == 1,
            log_bf_reg_size: cap(hca_cap::LOG_BF_REG_SIZE) as u8,
        })
    }

    /// One line for logs and rshmem-info.
    pub fn describe(&self) -> String {
        let yes = |b: bool| if b { "yes" } else { "no" };
        format!(
            "queues up to 2^{} WQE blocks, CQs up to 2^{} CQEs, messages up to 2^{} bytes, 2^{}/2^{} reads+atomics out/in per QP, RC {}, DC {}, atomics {}, BlueFlame register 2^{} bytes",
            self.log_max_qp_sz,
            self.log_max_cq_sz,
            self.log_max_msg,
            self.log_max_ra_req_qp,
            self.log_max_ra_res_qp,
            yes(self.rc),
            yes(self.dct),
            yes(self.atomic),
            self.log_bf_reg_size
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_hca_cap_asks_for_the_current_general_device_caps() {
        let c = query_hca_cap();
        assert_eq!(c.bytes.len(), 16);
        // opcode 0x100 in the first half-word, op_mod (0 << 1) | 1 in the second word's low half.
        assert_eq!(&c.bytes[..8], &[0x01, 0x00, 0, 0, 0, 0, 0x00, 0x01]);
        assert!(c.bytes[8..].iter().all(|b| *b == 0), "other_function 0: our own function");
        assert_eq!(super::super::opcode_name(QUERY_HCA_CAP), "QUERY_HCA_CAP");
    }

    /// A QUERY_HCA_CAP output with the given bytes of `cmd_hca_cap` set, worked out by hand
    /// from the offsets (big-endian words; bit 0 is the top bit of byte 0).
    fn output(set: &[(usize, u8)]) -> Vec<u8> {
        let mut out = vec![0u8; QUERY_HCA_CAP_OUT_BYTES];
        for &(at, v) in set {
            out[16 + at] = v;
        }
        out
    }

    #[test]
    fn caps_are_read_at_their_offsets_after_the_output_header() {
        let out = output(&[
            (0x11, 17),   // log_max_qp_sz: bits 0x88..0x90 = byte 0x11
            (0x19, 22),   // log_max_cq_sz: bits 0xc8..0xd0 = byte 0x19
            (0x29, 0x10), // log_max_ra_req_qp: bits 0x14a..0x150 = low 6 bits of byte 0x29 -> 16
            (0x2b, 0x05), // log_max_ra_res_qp: bits 0x15a..0x160 = low 6 bits of byte 0x2b
            (0x38, 0x1e), // log_max_msg: bits 0x1c3..0x1c8 = low 5 bits of byte 0x38 -> 30
            (0x43, 0x22), // byte 0x43 = bits 0x218..0x220: dct is 0x21a (0x20), atomic 0x21e (0x02)
            (0x47, 0x01), // rc: bit 0x23f, lowest bit of byte 0x47
            (0x4d, 0x09), // log_bf_reg_size: bits 0x26b..0x270 = low 5 bits of byte 0x4d
        ]);
        let c = HcaCaps::decode(&out).unwrap();
        assert_eq!(
            c,
            HcaCaps {
                log_max_qp_sz: 17,
                log_max_cq_sz: 22,
                log_max_ra_req_qp: 16,
                log_max_ra_res_qp: 5,
                log_max_msg: 30,
                dct: true,
                atomic: true,
                rc: true,
                log_bf_reg_size: 9
            }
        );
        // Neighbouring bits do not leak in: tph/rf (0x218, 0x219) and qos/roce (0x21b, 0x21d) set alone.
        let c = HcaCaps::decode(&output(&[(0x43, 0xd4)])).unwrap();
        assert!(!c.dct && !c.atomic, "{c:?}");
        // The caps start after the 16-byte header: a layout placed 8 bytes early would read these.
        let mut out = output(&[]);
        out[8..16].fill(0xff);
        assert_eq!(HcaCaps::decode(&out).unwrap().log_max_qp_sz, 0);
        assert!(c.describe().contains("DC no"));
    }

    #[test]
    fn a_short_or_failed_output_is_refused_in_words() {
        let e = HcaCaps::decode(&[0u8; 40]).unwrap_err();
        assert!(e.contains("40 bytes") && e.contains("shorter"), "{e}");
        let mut out = output(&[]);
        out[0] = 0x5;
        out[4..8].copy_from_slice(&0xabcd_0123u32.to_be_bytes());
        let e = HcaCaps::decode(&out).unwrap_err();
        assert!(e.contains("status 0x5") && e.contains("0xabcd0123"), "{e}");
    }
}
