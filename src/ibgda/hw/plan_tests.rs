//! The hardware set-up's command sequence against the recording DevX call table: which
//! commands, in which order, with which fields (read back from the recorded bytes at the PRM
//! offsets), and the descriptors, peer table and bootstrap encoding that follow.

use super::*;
use crate::ib::devx::fake::{Call, Recorder};
use crate::ib::prm::{ads, cqc, dctc, get, qpc, Field};
use crate::ib::sys::{IBV_LINK_LAYER_ETHERNET, IBV_LINK_LAYER_INFINIBAND};
use crate::ibgda::abi::QP_CPU_DOORBELL;

/// A field of a context at `base` in a recorded command (64-bit fields: their low word).
fn fld(cmd: &[u8], base: u32, f: Field) -> u32 {
    if f.width == 64 {
        get(cmd, Field { bit: base + f.bit + 32, width: 32 })
    } else {
        get(cmd, Field { bit: base + f.bit, width: f.width })
    }
}

fn plan() -> Plan {
    Plan { me: 1, npes: 3, num_rc: 2, num_dci: 1, num_dct: 2, log_nwqes: 6, remote: vec![true, false, true] }
}

fn res() -> Resources {
    Resources { pdn: 0x77, uar_page: 0x5, eqn: 0x9, dct_cqn: 0x444, srqn: 0x555, dc_key: 0xdc }
}

fn local(link_layer: u8) -> Local {
    let addr = QpAddress { lid: 0x11, port: 1, mtu: 5, link_layer, gid_index: 3, gid: [0xfe; 16], ..Default::default() };
    Local { port: 1, addr, traffic_class: 106, sl: 2 }
}

fn peers() -> Vec<PeInfo> {
    (0..3)
        .map(|pe| PeInfo {
            heap_base: 0x7000_0000_0000 + pe as u64 * 0x1_0000_0000,
            rkey: 0x100 + pe as u32,
            addr: QpAddress {
                lid: 0x20 + pe as u16,
                port: 1,
                mtu: if pe == 2 { 4 } else { 5 },
                link_layer: 2,
                gid: [pe as u8 + 1; 16],
                ..Default::default()
            },
            // PE pe's QP i toward PE q is 0x100 * (pe + 5) + 0x10 * q + i.
            rc: (0..3).flat_map(|q| (0..2).map(move |i| 0x100 * (pe as u32 + 5) + 0x10 * q + i)).collect(),
            dct: vec![0x900 + pe as u32, 0x980 + pe as u32],
        })
        .collect()
}

fn build(rec: &mut Recorder, link_layer: u8) -> Result<(Layout, Built)> {
    let p = plan();
    let layout = Layout::new(p.roles().len(), p.log_nwqes);
    let umems = register_umems(rec, &layout, [0xa000_0000, 0xb000_0000, 0xc000_0000], [Some((7, 0)), Some((8, 0)), None])?;
    let built = create_objects(rec, &p, &layout, umems, &res(), &local(link_layer))?;
    Ok((layout, built))
}

#[test]
fn roles_and_layout() {
    let p = plan();
    assert_eq!(
        p.roles(),
        vec![
            Role::Rc { peer: 0, index: 0 },
            Role::Rc { peer: 0, index: 1 },
            Role::Rc { peer: 2, index: 0 },
            Role::Rc { peer: 2, index: 1 },
            Role::Dci { index: 0 },
        ]
    );
    // 64 blocks of 64 bytes: one 4 KiB page per queue; 16-deep queues still start on pages.
    let l = Layout::new(5, 6);
    assert_eq!((l.sq_stride, l.cq_stride, l.sq_bytes(), l.dbr_bytes()), (4096, 4096, 5 * 4096, 4096));
    assert_eq!((l.sq(3), l.cq(3), l.sq_dbr(3), l.cq_dbr(3)), (3 * 4096, 3 * 4096, 192, 224));
    assert_eq!(Layout::new(2, 4).sq_stride, 4096);
    assert_eq!(Layout::new(2, 10).cq_stride, 65536);
}

#[test]
fn objects_are_created_cq_then_qp_per_queue_then_dc_targets() {
    let mut rec = Recorder::default();
    let (layout, built) = build(&mut rec, IBV_LINK_LAYER_INFINIBAND).unwrap();
    // Three umems first, with their sizes; dma-buf offered for the first two.
    assert_eq!(
        rec.calls[..3].to_vec(),
        vec![
            Call::Umem { what: "send queues".into(), addr: 0xa000_0000, len: 5 * 4096, dmabuf: true, id: 0x10 },
            Call::Umem { what: "completion queues".into(), addr: 0xb000_0000, len: 5 * 4096, dmabuf: true, id: 0x11 },
            Call::Umem { what: "doorbell records".into(), addr: 0xc000_0000, len: 4096, dmabuf: false, id: 0x12 },
        ]
    );
    // Then CREATE_CQ, CREATE_QP for each of the five queues, then two CREATE_DCT.
    let ops: Vec<u16> = rec.calls[3..].iter().map(|c| if let Call::Create { opcode, .. } = c { *opcode } else { 0 }).collect();
    assert_eq!(ops, [[prm::CREATE_CQ, prm::CREATE_QP]; 5].concat().into_iter().chain([prm::CREATE_DCT; 2]).collect::<Vec<_>>());
    for k in 0..5 {
        let (Call::Create { cmd: cq, number: cqn, what: cq_what, .. }, Call::Create { cmd: qp, what, .. }) =
            (&rec.calls[3 + 2 * k], &rec.calls[4 + 2 * k])
        else {
            panic!("not a create")
        };
        let c = prm::CREATE_CQ_CQC;
        assert_eq!(fld(cq, c, cqc::LOG_CQ_SIZE), 6);
        assert_eq!((fld(cq, c, cqc::UAR_PAGE), fld(cq, c, cqc::C_EQN)), (0x5, 0x9));
        assert_eq!(
            (fld(cq, 0, prm::CQ_UMEM_ID), fld(cq, 0, prm::CQ_UMEM_OFFSET), fld(cq, 0, prm::CQ_UMEM_VALID)),
            (0x11, layout.cq(k) as u32, 1)
        );
        assert_eq!(
            (fld(cq, c, cqc::DBR_UMEM_ID), fld(cq, c, cqc::DBR_ADDR), fld(cq, c, cqc::DBR_UMEM_VALID)),
            (0x12, 64 * k as u32 + 32, 1)
        );
        let q = prm::QP_CMD_QPC;
        assert_eq!(fld(qp, q, qpc::ST), if k < 4 { 0 } else { 5 }, "{what}: RC for the first four, DCI last");
        assert_eq!((fld(qp, q, qpc::CQN_SND), fld(qp, q, qpc::CQN_RCV)), (*cqn, *cqn), "{what} completes to the CQ made just before it");
        assert_eq!((fld(qp, q, qpc::PD), fld(qp, q, qpc::UAR_PAGE), fld(qp, q, qpc::LOG_SQ_SIZE)), (0x77, 0x5, 6));
        assert_eq!(
            (fld(qp, 0, prm::WQ_UMEM_ID), fld(qp, 0, prm::WQ_UMEM_OFFSET), fld(qp, 0, prm::WQ_UMEM_VALID)),
            (0x10, layout.sq(k) as u32, 1)
        );
        assert_eq!((fld(qp, q, qpc::DBR_UMEM_ID), fld(qp, q, qpc::DBR_ADDR)), (0x12, 64 * k as u32));
        assert_eq!(fld(qp, q, qpc::RQ_TYPE), 3);
        assert_eq!(cq_what, &format!("the CQ of {what}"));
    }
    for (d, call) in rec.calls[13..].iter().enumerate() {
        let Call::Create { cmd, what, .. } = call else { panic!() };
        let b = prm::CREATE_DCT_DCTC;
        assert_eq!(what, &format!("DC target {d}"));
        assert_eq!((fld(cmd, b, dctc::CQN), fld(cmd, b, dctc::SRQN), fld(cmd, b, dctc::PD)), (0x444, 0x555, 0x77));
        assert_eq!((fld(cmd, b, dctc::DC_ACCESS_KEY), fld(cmd, b, dctc::MY_ADDR_INDEX), fld(cmd, b, dctc::MTU)), (0xdc, 3, 5));
    }
    assert_eq!(built.qps.iter().map(|q| (q.qpn, q.cqn)).collect::<Vec<_>>(), (0..5).map(|k| (0x2000 + k, 0x1000 + k)).collect::<Vec<_>>());
    assert_eq!(built.dcts, vec![0x3000, 0x3001]);
}

#[test]
fn connection_drives_each_queue_through_three_modifies_toward_the_right_peer_qp() {
    let mut rec = Recorder::default();
    let (_, built) = build(&mut rec, IBV_LINK_LAYER_ETHERNET).unwrap();
    let before = rec.calls.len();
    let mac = |peer: usize| Some([0x02, 0, 0, 0, 0, peer as u8]);
    connect(&mut rec, &plan(), &built, &local(IBV_LINK_LAYER_ETHERNET), &peers(), &mac).unwrap();
    let mods: Vec<_> = rec.calls[before..]
        .iter()
        .map(|c| match c {
            Call::Modify { obj, opcode, cmd, what } => (*obj, *opcode, cmd.clone(), what.clone()),
            _ => panic!("only modifies after creation"),
        })
        .collect();
    assert_eq!(mods.len(), 15);
    for (k, q) in built.qps.iter().enumerate() {
        let three = &mods[3 * k..3 * k + 3];
        assert_eq!(three.iter().map(|m| m.1).collect::<Vec<_>>(), [prm::RST2INIT_QP, prm::INIT2RTR_QP, prm::RTR2RTS_QP]);
        assert!(three.iter().all(|m| m.0 == q.obj.0 && get(&m.2, prm::QP_CMD_QPN) == q.qpn), "{k}: commands act on the QP made for it");
        let (b, path) = (prm::QP_CMD_QPC, prm::QP_CMD_QPC + qpc::PRIMARY_PATH);
        let (init, rtr, rts) = (&three[0].2, &three[1].2, &three[2].2);
        assert_eq!(fld(init, path, ads::VHCA_PORT_NUM), 1);
        assert_eq!(fld(rts, path, ads::ACK_TIMEOUT), 20);
        assert_eq!((fld(rts, b, qpc::RETRY_COUNT), fld(rts, b, qpc::RNR_RETRY), fld(rts, b, qpc::LOG_SRA_MAX)), (7, 7, 4));
        match q.role {
            Role::Rc { peer, index } => {
                assert_eq!(fld(init, b, qpc::RAE), 1, "peers' atomics arrive on RC QPs");
                // PE `peer`'s QP `index` toward us (PE 1).
                assert_eq!(fld(rtr, b, qpc::REMOTE_QPN), 0x100 * (peer as u32 + 5) + 0x10 + index as u32);
                assert_eq!(fld(rtr, b, qpc::MTU), if peer == 2 { 4 } else { 5 }, "the smaller MTU of the two ends");
                assert_eq!((fld(rtr, path, ads::GRH), fld(rtr, path, ads::SRC_ADDR_INDEX), fld(rtr, path, ads::TCLASS)), (1, 3, 106));
                assert_eq!(get(rtr, Field { bit: path + ads::RGID, width: 8 }), peer as u32 + 1, "the peer's GID");
                assert_eq!(fld(rtr, path, ads::RMAC_31_0), peer as u32, "the next hop's MAC on RoCE");
                assert_eq!(fld(rtr, path, ads::RLID), 0x20 + peer as u32);
            }
            Role::Dci { .. } => {
                assert_eq!(fld(init, b, qpc::RAE), 0, "a DCI is only an initiator");
                assert_eq!((fld(rtr, b, qpc::REMOTE_QPN), fld(rtr, path, ads::GRH), fld(rtr, b, qpc::MTU)), (0, 0, 5));
            }
        }
    }
}

#[test]
fn infiniband_without_gids_uses_no_global_route() {
    let mut rec = Recorder::default();
    let (_, built) = build(&mut rec, IBV_LINK_LAYER_INFINIBAND).unwrap();
    let mut ps = peers();
    for p in &mut ps {
        p.addr.link_layer = IBV_LINK_LAYER_INFINIBAND;
        p.addr.gid = [0; 16];
    }
    let before = rec.calls.len();
    connect(&mut rec, &plan(), &built, &local(IBV_LINK_LAYER_INFINIBAND), &ps, &|_| None).unwrap();
    let Call::Modify { cmd, .. } = &rec.calls[before + 1] else { panic!() };
    let path = prm::QP_CMD_QPC + qpc::PRIMARY_PATH;
    assert_eq!((fld(cmd, path, ads::GRH), fld(cmd, path, ads::RLID), fld(cmd, path, ads::SL)), (0, 0x20, 2));
}

#[test]
fn a_failed_command_names_the_queue_and_the_firmware_answer() {
    let mut rec = Recorder::failing_at(4);
    let e = build(&mut rec, IBV_LINK_LAYER_INFINIBAND).unwrap_err().to_string();
    assert!(e.contains("DevX CREATE_QP for RC QP 0 toward PE 0 failed") && e.contains("status 0x3") && e.contains("0x12345678"), "{e}");
    let mut rec = Recorder::failing_at(1);
    assert!(build(&mut rec, IBV_LINK_LAYER_INFINIBAND).unwrap_err().to_string().contains("completion queues"));
}

#[test]
fn connection_data_round_trips_and_a_mismatch_is_refused_in_words() {
    let p = &peers()[2];
    let b = p.encode(3, 2);
    assert_eq!(b.len(), 64 + 4 * (6 + 2));
    assert_eq!(&PeInfo::decode(&b, 2, 3, 2, 2).unwrap(), p);
    let e = PeInfo::decode(&b, 2, 3, 1, 2).unwrap_err().to_string();
    assert!(e.contains("PE 2") && e.contains("same NVSHMEM_IBGDA_* settings"), "{e}");
    assert!(PeInfo::decode(&b[..60], 2, 3, 2, 2).is_err());
}

#[test]
fn descriptors_point_at_each_queue_and_sit_where_the_device_looks() {
    let mut rec = Recorder::default();
    let (layout, built) = build(&mut rec, IBV_LINK_LAYER_INFINIBAND).unwrap();
    let a = QueueAddrs { sq: 0xa000_0000, cq: 0xb000_0000, dbr: 0xc000_0000, bf_reg: 0xd000_0800, cpu_doorbell: false };
    let (rc, dci) = descriptors(&plan(), &layout, &built, &a, &Posting { signal_every: 16, batch: 32, inline_max: 28 });
    assert_eq!((rc.len(), dci.len()), (6, 1));
    // PE 1 (us) has no QPs: its slots stay zero apart from the version.
    assert!(rc[2].qpn == 0 && rc[3].qpn == 0 && rc[2].sq_buf == 0);
    // Slot peer 2, index 1 is the fourth queue created.
    let d = &rc[2 * 2 + 1];
    assert_eq!((d.qpn, d.cqn, d.peer_pe, d.kind), (0x2003, 0x1003, 2, QP_RC));
    assert_eq!((d.sq_buf, d.cq_buf, d.sq_dbrec, d.cq_dbrec, d.bf_reg), (0xa000_3000, 0xb000_3000, 0xc000_00c0, 0xc000_00e0, 0xd000_0800));
    assert_eq!((d.log_nwqes, d.log_ncqes, d.signal_every, d.batch, d.inline_max, d.flags), (6, 6, 16, 32, 28, 0));
    assert_eq!((dci[0].qpn, dci[0].kind, dci[0].peer_pe, dci[0].sq_buf), (0x2004, QP_DCI, u32::MAX, 0xa000_4000));
    let (rc, _) = descriptors(
        &plan(),
        &layout,
        &built,
        &QueueAddrs { cpu_doorbell: true, bf_reg: 0, ..a },
        &Posting { signal_every: 16, batch: 32, inline_max: 28 },
    );
    assert_eq!((rc[0].flags, rc[0].bf_reg), (QP_CPU_DOORBELL, 0));
}

#[test]
fn peer_table_carries_heaps_keys_and_patched_address_vectors() {
    let ps = peers();
    let t = peer_table(&ps, &[Some([0xaa; 48]), None, Some([0xbb; 48])], 1 << 30, 0x1122_3344_5566_7788);
    assert_eq!((t[0].heap_base, t[0].rkey, t[0].heap_size, t[0].av_size), (0x7000_0000_0000, 0x100, 1 << 30, 48));
    assert_eq!(&t[0].av[0..8], &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88], "DC key, big-endian");
    assert_eq!(&t[0].av[8..12], &[0x80, 0x00, 0x09, 0x00], "first DCT 0x900 with the extended-AV flag");
    assert_eq!(&t[0].av[12..], &[0xaa; 36][..], "the rest as the provider built it");
    assert_eq!((t[1].av_size, t[1].av), (0, [0; 48]), "no AV where none was made");
    assert_eq!(&t[2].av[8..12], &[0x80, 0x00, 0x09, 0x02]);
}

#[test]
fn dct_table_is_pe_major_with_every_pes_targets_in_order() {
    let ps = peers();
    let t = dct_table(&ps, 2);
    // PE 1 is local (reached by loads and stores) and still has its own targets' numbers.
    assert_eq!(t, vec![0x900, 0x980, 0x901, 0x981, 0x902, 0x982]);
    for (pe, p) in ps.iter().enumerate() {
        for d in 0..2 {
            assert_eq!(t[pe * 2 + d], p.dct[d], "PE {pe}'s target {d} at pe * num_dct + d");
        }
    }
    let one: Vec<PeInfo> = ps
        .iter()
        .cloned()
        .map(|mut p| {
            p.dct.truncate(1);
            p
        })
        .collect();
    assert_eq!(dct_table(&one, 1), vec![0x900, 0x901, 0x902]);
}
