//! Field-by-field checks of the PRM encoders. Each expectation is a big-endian 32-bit word
//! worked out by hand from the public field tables (bit offset, width → word index and shift),
//! written as a literal: none is computed with the encoder or the field constants. Every word
//! not listed must be zero, so a field written to the wrong place is caught as well.

use super::*;

/// Checks that `cmd` is `words` 32-bit words long and equals `expected` (word index, value),
/// zero elsewhere.
fn expect(cmd: &Cmd, words: usize, expected: &[(usize, u32)]) {
    assert_eq!(cmd.bytes.len(), words * 4, "command length in bytes");
    for i in 0..words {
        let got = u32::from_be_bytes(cmd.bytes[4 * i..4 * i + 4].try_into().unwrap());
        let want = expected.iter().find(|(w, _)| *w == i).map_or(0, |(_, v)| *v);
        assert_eq!(got, want, "word {i} (bits {:#x}..{:#x}): got {got:#010x}, want {want:#010x}", 32 * i, 32 * i + 32);
    }
}

#[test]
fn bit_writer_places_fields_msb_first_in_big_endian_words() {
    let mut c = Cmd::new(96);
    c.set(Field { bit: 0, width: 4 }, 0xa); // top nibble of word 0
    c.set(Field { bit: 0x1c, width: 4 }, 0x5); // bottom nibble of word 0
    c.set(Field { bit: 0x28, width: 24 }, 0x123456); // low 24 bits of word 1
    c.set(Field { bit: 0x40, width: 32 }, 0xcafe_f00d);
    assert_eq!(c.bytes, [0xa0, 0, 0, 0x05, 0, 0x12, 0x34, 0x56, 0xca, 0xfe, 0xf0, 0x0d]);
    // Rewriting a field clears its old bits and leaves neighbours alone.
    c.set(Field { bit: 0x28, width: 24 }, 0x000001);
    assert_eq!(&c.bytes[4..8], &[0, 0, 0, 1]);
    c.set_in(0x20, Field { bit: 0, width: 8 }, 0xff);
    assert_eq!(&c.bytes[4..8], &[0xff, 0, 0, 1]);
    let mut d = Cmd::new(128);
    d.set(Field { bit: 0x40, width: 64 }, 0x0102_0304_0506_0708);
    assert_eq!(&d.bytes[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(get(&c.bytes, Field { bit: 0, width: 4 }), 0xa);
    assert_eq!(get(&c.bytes, Field { bit: 0x1c, width: 4 }), 0x5);
    assert_eq!(get(&c.bytes, Field { bit: 0x40, width: 32 }), 0xcafe_f00d);
}

#[test]
fn command_outputs_give_status_syndrome_and_object_number() {
    let mut out = [0u8; 16];
    out[9..12].copy_from_slice(&[0x12, 0x34, 0x56]);
    assert_eq!(out_status(&out), Ok(()));
    assert_eq!(out_obj(&out), 0x12_3456);
    out[0] = 0x03;
    out[4..8].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(out_status(&out), Err((3, 0xdead_beef)));
}

#[test]
fn create_cq() {
    let c = super::create_cq(&CqParams {
        log_size: 10,
        uar_page: 0xa_bcde,
        eqn: 0x17,
        buf: UmemRef { id: 0x1122_3344, offset: 0x1000 },
        dbr: UmemRef { id: 0x5566_7788, offset: 0x40 },
    });
    expect(
        &c,
        68,
        &[
            (0, 0x0400_0000),  // opcode 0x400
            (4, 0x0202_0000),  // cqc+0x00: dbr_umem_valid (bit 6), oi (bit 0xe); cqe_sz 0
            (5, 0x5566_7788),  // cqc+0x20: dbr_umem_id
            (7, 0x0a0a_bcde),  // cqc+0x60: log_cq_size 10 (bits 3..8), uar_page
            (9, 0x0000_0017),  // cqc+0xa0: c_eqn (low byte)
            (19, 0x0000_0040), // cqc+0x1c0: dbr_addr (64 bits; high word 18 is 0)
            (21, 0x0000_1000), // 0x280: cq_umem_offset (64 bits)
            (22, 0x1122_3344), // 0x2c0: cq_umem_id
            (23, 0x8000_0000), // 0x2e0: cq_umem_valid
        ],
    );
}

fn qp(kind: QpKind) -> QpParams {
    QpParams {
        kind,
        pdn: 0x1_2345,
        uar_page: 0xa_bcde,
        cqn: 0x777,
        log_sq_size: 10,
        sq: UmemRef { id: 0x1111, offset: 0x2000 },
        dbr: UmemRef { id: 0x2222, offset: 0x80 },
    }
}

#[test]
fn create_qp_rc_and_dci() {
    let rc = [
        (0, 0x0500_0000),  // opcode 0x500
        (6, 0x0000_1800),  // qpc+0x00: st RC (0), pm_state 3 at bit 0x13
        (7, 0x0001_2345),  // qpc+0x20: pd
        (8, 0x1e00_5040),  // qpc+0x40: log_msg_max 30, log_sq_size 10 at 0x51, ts_format 1 at 0x58
        (9, 0x000a_bcde),  // qpc+0x60: uar_page
        (37, 0x0000_0777), // qpc+0x3e0: cqn_snd
        (45, 0x0000_0777), // qpc+0x4e0: cqn_rcv
        (47, 0x0000_0080), // qpc+0x500: dbr_addr (64 bits)
        (49, 0x0300_0000), // qpc+0x560: rq_type 3 (zero-size RQ) at 0x565
        (58, 0x1000_0000), // qpc+0x680: dbr_umem_valid at 0x683
        (63, 0x0000_2222), // qpc+0x720: dbr_umem_id
        (65, 0x0000_2000), // 0x800: wq_umem_offset (64 bits)
        (66, 0x0000_1111), // 0x840: wq_umem_id
        (67, 0x8000_0000), // 0x860: wq_umem_valid
    ];
    expect(&create_qp(&qp(QpKind::Rc)), 68, &rc);
    let mut dci = rc;
    dci[1] = (6, 0x0005_1800); // st DCI (5) at 0x08
    expect(&create_qp(&qp(QpKind::Dci)), 68, &dci);
}

#[test]
fn rst2init_qp_rc_and_dci() {
    expect(
        &rst2init_qp(0x1234, QpKind::Rc, 1),
        68,
        &[
            (0, 0x0502_0000),  // opcode 0x502
            (2, 0x0000_1234),  // 0x40: qpn
            (6, 0x0000_1800),  // qpc+0x00: pm_state migrated
            (21, 0x0001_0000), // qpc+0xc0 path, +0x120: vhca_port_num 1 at 0x128
            (42, 0x0003_e000), // qpc+0x480: atomic_mode 3 at 0x48c, rre, rwe, rae at 0x490..0x492
        ],
    );
    expect(&rst2init_qp(0x1234, QpKind::Dci, 2), 68, &[(0, 0x0502_0000), (2, 0x0000_1234), (6, 0x0000_1800), (21, 0x0002_0000)]);
}

fn rtr(grh: Option<Grh>) -> RtrParams {
    RtrParams { mtu: 5, remote_qpn: 0xab_cdef, next_rcv_psn: 0x12_3456, log_rra_max: 4, min_rnr_nak: 12, port: 1, rlid: 0x42, sl: 3, grh }
}

#[test]
fn init2rtr_qp_infiniband_roce_and_dci() {
    let ib = [
        (0, 0x0503_0000),  // opcode 0x503
        (2, 0x0000_1234),  // qpn
        (8, 0xa000_0000),  // qpc+0x40: mtu 5 (4096) in the top 3 bits
        (11, 0x00ab_cdef), // qpc+0xa0: remote_qpn
        (13, 0x0000_0042), // path+0x20: rlid (grh 0)
        (21, 0x0301_0000), // path+0x120: sl 3 at 0x124, vhca_port_num 1
        (42, 0x0080_0000), // qpc+0x480: log_rra_max 4 at 0x488
        (43, 0x0c12_3456), // qpc+0x4a0: min_rnr_nak 12 at 0x4a3, next_rcv_psn
    ];
    expect(&init2rtr_qp(0x1234, QpKind::Rc, &rtr(None)), 68, &ib);

    let mut rgid = [0u8; 16];
    rgid[0] = 0xfe;
    rgid[1] = 0x80;
    rgid[15] = 0x01;
    let g = Grh { rgid, sgid_index: 3, hop_limit: 255, tclass: 106, rmac: Some([0x02, 0x11, 0x22, 0x33, 0x44, 0x55]) };
    expect(
        &init2rtr_qp(0x1234, QpKind::Rc, &rtr(Some(g))),
        68,
        &[
            (0, 0x0503_0000),
            (2, 0x0000_1234),
            (8, 0xa000_0000),
            (11, 0x00ab_cdef),
            (13, 0x0080_0042), // path+0x20: grh at 0x28, rlid
            (14, 0x0003_00ff), // path+0x40: src_addr_index 3 at 0x48, hop_limit 255 at 0x58
            (15, 0x06a0_0000), // path+0x60: tclass 106 at 0x64
            (16, 0xfe80_0000), // path+0x80: rgid, byte for byte
            (19, 0x0000_0001),
            (21, 0x0301_0211), // path+0x120: sl, port, rmac[0..2] at 0x130
            (22, 0x2233_4455), // path+0x140: rmac[2..6]
            (42, 0x0080_0000),
            (43, 0x0c12_3456),
        ],
    );
    // A DCI: mtu and port only.
    expect(&init2rtr_qp(0x99, QpKind::Dci, &rtr(Some(g))), 68, &[(0, 0x0503_0000), (2, 0x99), (8, 0xa000_0000), (21, 0x0001_0000)]);
}

#[test]
fn rtr2rts_qp() {
    let c =
        super::rtr2rts_qp(0x1234, &RtsParams { next_send_psn: 0x65_4321, ack_timeout: 20, retry_count: 7, rnr_retry: 7, log_sra_max: 4 });
    expect(
        &c,
        68,
        &[
            (0, 0x0504_0000), // opcode 0x504
            (2, 0x0000_1234),
            (14, 0xa000_0000), // path+0x40: ack_timeout 20 in the top 5 bits
            (34, 0x0087_e000), // qpc+0x380: log_sra_max 4 at 0x388, retry_count 7 at 0x38d, rnr_retry 7 at 0x390
            (36, 0x0065_4321), // qpc+0x3c0: next_send_psn
        ],
    );
}

#[test]
fn create_dct() {
    let c = super::create_dct(&DctParams {
        pdn: 0x1_2345,
        cqn: 0x777,
        srqn: 0x888,
        access_key: 0x1122_3344_5566_7788,
        mtu: 5,
        port: 1,
        gid_index: 3,
        hop_limit: 64,
        tclass: 106,
        min_rnr_nak: 12,
    });
    expect(
        &c,
        32,
        &[
            (0, 0x0710_0000),  // opcode 0x710
            (6, 0x0000_0777),  // dctc+0x40: cqn
            (7, 0x003e_0000),  // dctc+0x60: atomic_mode 3 at 0x68, rre/rwe/rae at 0x6c..0x6e
            (8, 0x0000_0c00),  // dctc+0x80: min_rnr_nak 12 at 0x93 (cs_res 0)
            (9, 0x0000_0888),  // dctc+0xa0: srqn
            (10, 0x0001_2345), // dctc+0xc0: pd
            (11, 0x6a00_0000), // dctc+0xe0: tclass
            (12, 0x1122_3344), // dctc+0x100: dc_access_key, high word
            (13, 0x5566_7788), //   low word
            (14, 0x0501_0000), // dctc+0x140: mtu 5 at 0x145, port 1 at 0x148 (pkey_index 0)
            (15, 0x0003_0040), // dctc+0x160: my_addr_index 3 at 0x168, hop_limit 64 at 0x178
        ],
    );
}

#[test]
fn opcodes_have_names() {
    assert_eq!(opcode_name(0x400), "CREATE_CQ");
    assert_eq!(opcode_name(0x503), "INIT2RTR_QP");
    assert_eq!(opcode_name(0x710), "CREATE_DCT");
    assert_eq!(opcode_name(0x1), "unknown command");
}
