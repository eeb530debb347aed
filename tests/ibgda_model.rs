//! The IBGDA device posting path (device/ibgda/ibgda_post.h, compiled as host C++17 in
//! ctest/ibgda/harness.cpp) against the software HCA model (src/ibgda/model/): every
//! operation verified byte for byte, many threads on a tiny queue, fence and quiet ordering,
//! error CQEs, DC address vectors, CPU doorbells, and the sink-mode post rate.
//! Everything here runs on the model only; none of it has met a real NIC.

#[macro_use]
mod ibgda_common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use ibgda_common::amo::{FETCH_ADD, XOR};
use ibgda_common::{amo_fetches, amo_model, assert_clean, assert_fenced, fence_sources, pattern, watchdog, World, HEAP_KEY};
use rshmem::ibgda::abi::{PeState, QpState};
use rshmem::ibgda::model::host::{snapshot, HostQp, QpParams};

/// A copy of a live descriptor of this test's world.
fn snap(qp: Qp) -> QpState {
    // SAFETY: every descriptor passed here belongs to a World or HostQp that is still alive.
    unsafe { snapshot(qp) }
}
use rshmem::ibgda::model::{HostMemory, ModelConfig, Nic};

type St = *mut PeState;
type Qp = *mut QpState;

fn params() -> QpParams {
    QpParams { log_nwqes: 6, signal_every: 8, batch: 4, inline_max: 28, ..QpParams::default() }
}

#[test]
fn every_operation_arrives_byte_for_byte() {
    let _w = watchdog(60, "every_operation_arrives_byte_for_byte");
    let w = World::new(2, 1 << 20, 1, params(), ModelConfig::default());
    let (pe0, pe1) = (&w.pes[0], &w.pes[1]);
    let st = pe0.st();
    let putmem = hfn!(h_putmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let putmem_nbi = hfn!(h_putmem_nbi: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let getmem = hfn!(h_getmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let quiet_all = hfn!(h_quiet_all: fn(St) -> i32);
    let p64 = hfn!(h_p64: fn(St, *mut u64, u64, u32) -> i32);
    let p32 = hfn!(h_p32: fn(St, *mut u32, u32, u32) -> i32);
    let p8 = hfn!(h_p8: fn(St, *mut u8, u8, u32) -> i32);
    let g64 = hfn!(h_g64: fn(St, *const u64, u32, *mut u64) -> i32);
    let g32 = hfn!(h_g32: fn(St, *const u32, u32, *mut u32) -> i32);
    let amo64 = hfn!(h_amo64: fn(St, u32, *mut u64, u64, u64, u32, *mut u64) -> i32);
    let amo32 = hfn!(h_amo32: fn(St, u32, *mut u32, u32, u32, u32, *mut u32) -> i32);

    // put (RDMA WRITE from the heap) of several sizes, blocking and non-blocking.
    let mut off = 0usize;
    for (i, len) in [29usize, 64, 1000, 4096, 65536 + 7].into_iter().enumerate() {
        let data = pattern(i as u64, len);
        pe0.write_heap(off, &data);
        let f = if i % 2 == 0 { putmem } else { putmem_nbi };
        assert_eq!(f(st, pe0.heap_ptr(off + 200_000), pe0.heap_ptr(off), len as u64, 1), 0);
        assert_eq!(quiet_all(st), 0);
        assert_eq!(pe1.heap_bytes(off + 200_000, len), data, "put of {len} bytes");
        off += len.next_multiple_of(64);
    }
    // inline put: the payload may be anywhere (here: a Rust stack array), up to inline_max.
    for len in [1usize, 7, 12, 16, 28] {
        let data = pattern(100 + len as u64, len);
        assert_eq!(putmem_nbi(st, pe0.heap_ptr(300_000 + len * 64), data.as_ptr(), len as u64, 1), 0);
        assert_eq!(quiet_all(st), 0);
        assert_eq!(pe1.heap_bytes(300_000 + len * 64, len), data, "inline put of {len} bytes");
    }
    assert!(w.nics[0].stats().inline_wqes.load(Ordering::Relaxed) >= 5);
    // p of 8, 4 and 1 bytes.
    assert_eq!(p64(st, pe0.heap_ptr(400_000) as *mut u64, 0x0123_4567_89ab_cdef, 1), 0);
    assert_eq!(p32(st, pe0.heap_ptr(400_008) as *mut u32, 0xdead_beef, 1), 0);
    assert_eq!(p8(st, pe0.heap_ptr(400_012), 0x5a, 1), 0);
    assert_eq!(quiet_all(st), 0);
    assert_eq!(pe1.heap_bytes(400_000, 13), [&0x0123_4567_89ab_cdefu64.to_le_bytes()[..], &0xdead_beefu32.to_le_bytes(), &[0x5a]].concat());
    // get (RDMA READ) into my heap, and g.
    let remote = pattern(7, 5000);
    pe1.write_heap(500_000, &remote);
    assert_eq!(getmem(st, pe0.heap_ptr(600_000), pe0.heap_ptr(500_000), 5000, 1), 0);
    assert_eq!(pe0.heap_bytes(600_000, 5000), remote, "get of 5000 bytes");
    let (mut v64, mut v32) = (0u64, 0u32);
    assert_eq!(g64(st, pe0.heap_ptr(500_000) as *const u64, 1, &mut v64), 0);
    assert_eq!(v64, u64::from_le_bytes(remote[..8].try_into().unwrap()));
    assert_eq!(g32(st, pe0.heap_ptr(500_008) as *const u32, 1, &mut v32), 0);
    assert_eq!(v32, u32::from_le_bytes(remote[8..12].try_into().unwrap()));

    // Every AMO, 8 and 4 bytes, fetching forms checked for the old value, all for the new one.
    let a64 = 700_000usize;
    let a32 = 700_064usize;
    let cases: [(u64, u64, u64); 3] = [(0xf0f0_1234_5678_9abc, 0x0ff0_0000_ffff_0001, 0xf0f0_1234_5678_9abc), (5, 3, 6), (u64::MAX, 1, 0)];
    for op in FETCH_ADD..=XOR {
        for &(init, v, c) in &cases {
            pe1.write_heap(a64, &init.to_le_bytes());
            let mut old = 0u64;
            assert_eq!(amo64(st, op, pe0.heap_ptr(a64) as *mut u64, v, c, 1, &mut old), 0);
            assert_eq!(quiet_all(st), 0);
            let (want_old, want_new) = amo_model(op, init, v, c, u64::MAX);
            let got = u64::from_le_bytes(pe1.heap_bytes(a64, 8).try_into().unwrap());
            assert_eq!(got, want_new, "64-bit op {op} on {init:#x} with {v:#x}/{c:#x}");
            if amo_fetches(op) {
                assert_eq!(old, want_old, "64-bit op {op}: returned old value");
            }
            let (i32_, v32_, c32_) = (init as u32, v as u32, c as u32);
            pe1.write_heap(a32, &i32_.to_le_bytes());
            pe1.write_heap(a32 + 4, &[0xee; 4]); // the neighbour must not change
            let mut old32 = 0u32;
            assert_eq!(amo32(st, op, pe0.heap_ptr(a32) as *mut u32, v32_, c32_, 1, &mut old32), 0);
            assert_eq!(quiet_all(st), 0);
            let (wo, wn) = amo_model(op, i32_ as u64, v32_ as u64, c32_ as u64, 0xffff_ffff);
            let got = pe1.heap_bytes(a32, 8);
            assert_eq!(u32::from_le_bytes(got[..4].try_into().unwrap()) as u64, wn, "32-bit op {op} on {i32_:#x}");
            assert_eq!(&got[4..], &[0xee; 4], "32-bit op {op} touched the next word");
            if amo_fetches(op) {
                assert_eq!(old32 as u64, wo, "32-bit op {op}: returned old value");
            }
        }
    }
    assert_clean(&w);
}

#[test]
fn registered_local_buffers_move_in_one_wqe_and_others_inline() {
    use rshmem::ibgda::model::host::AlignedBuf;
    use rshmem::ibgda::regs::Registrations;
    let _w = watchdog(60, "registered_local_buffers_move_in_one_wqe_and_others_inline");
    let w = World::new(2, 1 << 20, 1, params(), ModelConfig::default());
    let (pe0, pe1) = (&w.pes[0], &w.pes[1]);
    let st = pe0.st();
    let putmem = hfn!(h_putmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let getmem = hfn!(h_getmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let put_signal = hfn!(h_put_signal: fn(St, *mut u8, *const u8, u64, *mut u64, u64, i32, u32, i32) -> i32);
    let quiet_all = hfn!(h_quiet_all: fn(St) -> i32);
    let stats = w.nics[0].stats();
    let count = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    // A buffer of PE 0 outside its heap (as cudaMalloc memory would be).
    let local = AlignedBuf::new(1 << 16);
    let at = |off: usize| (local.addr() as usize + off) as *mut u8;
    let data = pattern(11, 5000);
    // SAFETY: the first 5000 bytes of our own buffer.
    unsafe { std::ptr::copy(data.as_ptr(), at(0), data.len()) };

    // Not registered: the bytes travel inline, 192 per WQE.
    let (wqes0, inline0) = (count(&stats.wqes), count(&stats.inline_wqes));
    assert_eq!(putmem(st, pe0.heap_ptr(0), at(0), 5000, 1), 0);
    assert_eq!(quiet_all(st), 0); // an inline put returns once posted, not once delivered
    assert_eq!(pe1.heap_bytes(0, 5000), data, "inline put from an unregistered buffer");
    assert!(count(&stats.inline_wqes) - inline0 >= 5000 / 192, "expected inline chunks");

    // Registered (the NIC knows the key; the table tells the device): one RDMA WRITE, one READ.
    const KEY: u32 = 0x3000;
    w.fabric.register(0, KEY, local.addr(), local.len() as u64);
    let mut regs = Registrations::default();
    regs.add(local.addr(), local.len() as u64, KEY, ());
    let table = Box::new(regs.image());
    // SAFETY: st is PE 0's live state; no posting is in flight.
    unsafe { (*st).regs = &*table as *const _ as u64 };
    let (wqes1, inline1) = (count(&stats.wqes), count(&stats.inline_wqes));
    assert!(wqes1 - wqes0 >= 5000 / 192);
    assert_eq!(putmem(st, pe0.heap_ptr(8192), at(0), 5000, 1), 0);
    assert_eq!(pe1.heap_bytes(8192, 5000), data, "RDMA WRITE from a registered buffer");
    assert_eq!(count(&stats.inline_wqes), inline1, "a registered source went inline");
    assert_eq!(count(&stats.wqes) - wqes1, 1, "one WQE for the whole put");
    let remote = pattern(12, 3000);
    pe1.write_heap(16384, &remote);
    assert_eq!(getmem(st, at(20000), pe0.heap_ptr(16384), 3000, 1), 0);
    // SAFETY: 3000 bytes of our own buffer, written by the model before getmem returned.
    let got = unsafe { std::slice::from_raw_parts(at(20000), 3000) }.to_vec();
    assert_eq!(got, remote, "RDMA READ into a registered buffer");
    assert_eq!(count(&stats.wqes) - wqes1, 2, "one WQE for the whole get");
    // put_signal from it: the data as one WRITE, then the signal.
    assert_eq!(put_signal(st, pe0.heap_ptr(32768), at(0), 5000, pe0.heap_ptr(65536) as *mut u64, 9, 0, 1, 1), 0);
    assert_eq!(quiet_all(st), 0);
    assert_eq!(pe1.heap_bytes(32768, 5000), data);
    assert_eq!(pe1.heap_u64(65536), 9);
    assert_eq!(count(&stats.inline_wqes), inline1);

    // The table names a key the NIC no longer has: a local protection error, not silent data.
    w.fabric.unregister(0, KEY);
    assert_ne!(putmem(st, pe0.heap_ptr(40960), at(0), 5000, 1), 0, "a put under a dropped key succeeded");
    assert!(count(&stats.error_cqes) >= 1);
    // SAFETY: as above; the table outlives every posting that read it.
    unsafe { (*st).regs = 0 };
}

#[test]
fn long_inline_wqes_and_reads_wrap_around_the_ring() {
    let _w = watchdog(60, "long_inline_wqes_and_reads_wrap_around_the_ring");
    // 8 blocks of 64 bytes: a 100-byte inline write takes 3 blocks and must wrap.
    let p = QpParams { log_nwqes: 3, signal_every: 2, batch: 1, inline_max: 200, ..QpParams::default() };
    let w = World::new(2, 1 << 16, 1, p, ModelConfig::default());
    let (pe0, pe1) = (&w.pes[0], &w.pes[1]);
    let qp = pe0.qp(1, 0);
    let write_inline = hfn!(h_write_inline: fn(Qp, u64, u32, *const u8, u32) -> u64);
    let read = hfn!(h_read: fn(Qp, u64, u32, u64, u32, u64) -> u64);
    let quiet = hfn!(h_quiet: fn(Qp) -> i32);
    let wait = hfn!(h_wait: fn(Qp, u64) -> i32);
    for i in 0..40usize {
        let len = [100usize, 5, 150, 33][i % 4];
        let data = pattern(i as u64, len);
        let raddr = pe1.heap.addr() + (i * 256) as u64;
        write_inline(qp, raddr, HEAP_KEY + 1, data.as_ptr(), len as u32);
        let end = read(qp, raddr, HEAP_KEY + 1, pe0.heap.addr() + (i * 256) as u64, HEAP_KEY, len as u64);
        assert_eq!(wait(qp, end), 0);
        assert_eq!(pe0.heap_bytes(i * 256, len), data, "inline write + read back, round {i}");
    }
    assert_eq!(quiet(qp), 0);
    let s = snap(qp);
    assert!(s.resv_head > 8 * 4, "the ring wrapped several times (resv_head {})", s.resv_head);
    assert_eq!(s.completed_head, s.ready_head);
    assert_clean(&w);
}

fn stress(num_rc: usize, threads: u32, ops: u32, msg: u32, cfg: ModelConfig) {
    let _w = watchdog(60, "stress");
    // Tiny queue: 8 blocks, completion every 2, doorbell batch of 2: constant back-pressure.
    let p = QpParams { log_nwqes: 3, signal_every: 2, batch: 2, inline_max: 28, ..QpParams::default() };
    let total = (threads * ops * msg) as usize;
    let w = World::new(2, 2 * total + 4096, num_rc, p, cfg);
    let (pe0, pe1) = (&w.pes[0], &w.pes[1]);
    let src = pattern(msg as u64, total);
    pe0.write_heap(0, &src);
    let counters = 2 * total + 64;
    let run = hfn!(h_stress: fn(St, u32, u32, u32, u32, *mut u8, *const u8, *mut u64) -> i32);
    // Message k goes from my heap offset k*msg to PE 1's heap offset total + k*msg.
    let fails = run(pe0.st(), 1, threads, ops, msg, pe0.heap_ptr(total), pe0.heap_ptr(0), pe0.heap_ptr(counters) as *mut u64);
    assert_eq!(fails, 0, "posting calls failed");
    assert_eq!(pe1.heap_bytes(total, total), src, "some byte of {threads}x{ops} puts of {msg} bytes is wrong");
    for t in 0..threads as usize {
        let c = u64::from_le_bytes(pe1.heap_bytes(counters + 8 * t, 8).try_into().unwrap());
        assert_eq!(c, (ops / 16) as u64, "fetch-add counter of thread {t}");
    }
    for i in 0..num_rc {
        let s = snap(pe0.qp(1, i));
        assert_eq!(s.completed_head, s.ready_head, "QP {i} not quiet after quiet");
        assert_eq!(s.err_count, 0);
    }
    assert_clean(&w);
}

#[test]
fn many_threads_on_a_tiny_queue_inline() {
    let _w = watchdog(60, "many_threads_on_a_tiny_queue_inline");
    stress(1, 8, 192, 24, ModelConfig::default());
}

#[test]
fn many_threads_on_a_tiny_queue_from_the_heap_reordering_nic() {
    let _w = watchdog(60, "many_threads_on_a_tiny_queue_from_the_heap_reordering_nic");
    stress(1, 6, 160, 200, ModelConfig { reorder: true, seed: 7, ..Default::default() });
}

#[test]
fn many_threads_spread_over_two_qps_per_pe() {
    let _w = watchdog(60, "many_threads_spread_over_two_qps_per_pe");
    stress(2, 8, 128, 64, ModelConfig { reorder: true, seed: 3, ..Default::default() });
}

#[test]
fn fence_orders_writes_on_a_reordering_nic_and_quiet_waits_for_a_slow_one() {
    let _w = watchdog(60, "fence_orders_writes_on_a_reordering_nic_and_quiet_waits_for_a_slow_one");
    let p = QpParams { log_nwqes: 6, signal_every: 16, batch: 64, inline_max: 28, ..QpParams::default() };
    let cfg = ModelConfig { reorder: true, seed: 11, delay_us: 300, sink: false, ..Default::default() };
    let w = World::new(2, 1 << 16, 1, p, cfg);
    let (pe0, pe1) = (&w.pes[0], &w.pes[1]);
    let qp = pe0.qp(1, 0);
    let write = hfn!(h_write: fn(Qp, u64, u32, u64, u32, u64, i32) -> u64);
    let fence = hfn!(h_fence: fn(Qp) -> ());
    let quiet = hfn!(h_quiet: fn(Qp) -> i32);
    let rounds = 40usize;
    // Sources: A_i at 0.., B_i at 8192..; target x_i on PE 1 at 32768 + 64 i.
    fence_sources(pe0, rounds);
    let l = pe0.heap.addr();
    let r = pe1.heap.addr() + 32768;
    for i in 0..rounds {
        // Several writes per doorbell batch (batch=64): the NIC sees them together.
        write(qp, r + (i * 64) as u64, HEAP_KEY + 1, l + (i * 64) as u64, HEAP_KEY, 64, 0);
        fence(qp);
        write(qp, r + (i * 64) as u64, HEAP_KEY + 1, l + 8192 + (i * 64) as u64, HEAP_KEY, 64, 0);
    }
    assert_eq!(quiet(qp), 0);
    // quiet returned: everything has landed although the NIC was slow, the fenced write last.
    assert_fenced(&w, rounds, |_| 1);
    assert_clean(&w);
}

#[test]
fn the_reordering_nic_does_overtake_unfenced_writes() {
    let _w = watchdog(60, "the_reordering_nic_does_overtake_unfenced_writes");
    // The control experiment for the fence test: without fences the same NIC does reorder, so
    // the fence test would catch a fence that does nothing.
    let p = QpParams { log_nwqes: 7, signal_every: 32, batch: 128, inline_max: 28, ..QpParams::default() };
    let w = World::new(2, 1 << 16, 1, p, ModelConfig { reorder: true, seed: 5, delay_us: 2000, sink: false, ..Default::default() });
    let (pe0, pe1) = (&w.pes[0], &w.pes[1]);
    let qp = pe0.qp(1, 0);
    let write = hfn!(h_write: fn(Qp, u64, u32, u64, u32, u64, i32) -> u64);
    let quiet = hfn!(h_quiet: fn(Qp) -> i32);
    pe0.write_heap(0, &[0xaa; 64]);
    pe0.write_heap(64, &[0xbb; 64]);
    let (l, r) = (pe0.heap.addr(), pe1.heap.addr() + 32768);
    for i in 0..40u64 {
        write(qp, r + i * 64, HEAP_KEY + 1, l, HEAP_KEY, 64, 0);
        write(qp, r + i * 64, HEAP_KEY + 1, l + 64, HEAP_KEY, 64, 0);
    }
    assert_eq!(quiet(qp), 0);
    let overtaken = (0..40).filter(|i| pe1.heap_bytes(32768 + i * 64, 1)[0] == 0xaa).count();
    assert!(overtaken > 0, "the model never reordered 40 unfenced pairs: the fence test proves nothing");
}

#[test]
fn error_cqes_name_the_operation_and_the_pe() {
    let _w = watchdog(60, "error_cqes_name_the_operation_and_the_pe");
    let w = World::new(2, 1 << 16, 1, params(), ModelConfig::default());
    let pe0 = &w.pes[0];
    let write = hfn!(h_write: fn(Qp, u64, u32, u64, u32, u64, i32) -> u64);
    let amo = hfn!(h_amo: fn(Qp, u64, u32, u32, u32, u64, u64, u64, u32, i32) -> u64);
    let quiet = hfn!(h_quiet: fn(Qp) -> i32);
    let l = pe0.heap.addr();
    let r = w.pes[1].heap.addr();

    // Bad rkey on a put.
    let qp = pe0.qp(1, 0);
    write(qp, r, 0xdead, l, HEAP_KEY, 64, 0);
    assert_eq!(quiet(qp), 1, "quiet reports the error");
    let e = rshmem::ibgda::qp_error(&snap(qp), 0).expect("an error is recorded").named("nvshmem_quiet");
    let msg = e.to_string();
    assert!(msg.starts_with("nvshmem_quiet: "), "{msg}");
    assert!(msg.contains("RDMA WRITE (put)") && msg.contains("from PE 0 to PE 1") && msg.contains("remote access error"), "{msg}");
    assert!(msg.contains("syndrome 0x13"), "{msg}");
    // The QP is in error now: later operations are flushed and quiet still returns.
    write(qp, r, HEAP_KEY + 1, l, HEAP_KEY, 64, 1);
    assert_eq!(quiet(qp), 1);

    // Address outside the remote heap on a fetch-add (a separate world: fresh QPs).
    let w2 = World::new(2, 1 << 16, 1, params(), ModelConfig::default());
    let qp2 = w2.pes[0].qp(1, 0);
    let (l2, r2) = (w2.pes[0].heap.addr(), w2.pes[1].heap.addr());
    amo(qp2, r2 + (1 << 16), HEAP_KEY + 1, FETCH_ADD, 8, 1, 0, l2, HEAP_KEY, 1);
    assert_eq!(quiet(qp2), 1);
    let msg = rshmem::ibgda::qp_error(&snap(qp2), 0).unwrap().named("nvshmem_long_atomic_fetch_add").to_string();
    assert!(msg.contains("atomic fetch-add") && msg.contains("PE 1") && msg.contains("outside the registered heap"), "{msg}");

    // Bad lkey on the local side.
    let qp3 = w2.pes[1].qp(0, 0);
    write(qp3, l2, HEAP_KEY, r2, 0x7777, 8, 0);
    assert_eq!(quiet(qp3), 1);
    let msg = rshmem::ibgda::qp_error(&snap(qp3), 1).unwrap().named("nvshmem_putmem").to_string();
    assert!(msg.contains("from PE 1 to PE 0") && msg.contains("local protection error"), "{msg}");
}

#[test]
fn dc_initiator_reaches_a_target_through_its_address_vector() {
    let _w = watchdog(60, "dc_initiator_reaches_a_target_through_its_address_vector");
    let w = World::new(2, 1 << 16, 1, params(), ModelConfig::default());
    let dci = HostQp::new(QpParams { qpn: 0x777, dci: true, ..params() });
    let nic = Nic::start(0, w.fabric.clone(), Arc::new(HostMemory), ModelConfig::default());
    // SAFETY: `dci` outlives `nic` (declared earlier, dropped later).
    unsafe { nic.attach(dci.state_ptr()) };
    w.fabric.add_dct(0, 0x4242, 1, 0x1234_5678);
    // Half-size (16-byte) address vector: dc_key, dqp_dct, then stat_rate_sl, fl_mlid, rlid.
    let mut av = [0u8; 16];
    av[..8].copy_from_slice(&0x1234_5678u64.to_be_bytes());
    av[8..12].copy_from_slice(&0x4242u32.to_be_bytes());
    let write_dc = hfn!(h_write_dc: fn(Qp, *const u8, u32, u64, u32, u64, u32, u64) -> u64);
    let quiet = hfn!(h_quiet: fn(Qp) -> i32);
    let data = pattern(42, 300);
    w.pes[0].write_heap(0, &data);
    write_dc(dci.state_ptr(), av.as_ptr(), 16, w.pes[1].heap.addr() + 1024, HEAP_KEY + 1, w.pes[0].heap.addr(), HEAP_KEY, 300);
    assert_eq!(quiet(dci.state_ptr()), 0);
    assert_eq!(w.pes[1].heap_bytes(1024, 300), data);
    // An unknown DCT is an error CQE.
    av[8..12].copy_from_slice(&0x9999u32.to_be_bytes());
    write_dc(dci.state_ptr(), av.as_ptr(), 16, w.pes[1].heap.addr(), HEAP_KEY + 1, w.pes[0].heap.addr(), HEAP_KEY, 8);
    assert_eq!(quiet(dci.state_ptr()), 1);
    drop(nic);
}

#[test]
fn cpu_doorbell_mode_moves_data_without_device_doorbells() {
    let _w = watchdog(60, "cpu_doorbell_mode_moves_data_without_device_doorbells");
    let p = QpParams { cpu_doorbell: true, ..params() };
    let w = World::new(2, 1 << 16, 1, p, ModelConfig::default());
    let putmem = hfn!(h_putmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let data = pattern(9, 4096);
    w.pes[0].write_heap(0, &data);
    assert_eq!(putmem(w.pes[0].st(), w.pes[0].heap_ptr(8192), w.pes[0].heap_ptr(0), 4096, 1), 0);
    assert_eq!(w.pes[1].heap_bytes(8192, 4096), data);
    let s = snap(w.pes[0].qp(1, 0));
    // SAFETY: reading the doorbell record of a live QP; plain memory in this build.
    let dbr = unsafe { std::ptr::read_volatile((s.sq_dbrec + 4) as *const u32) };
    assert_eq!(dbr, 0, "the device must not write the doorbell record in CPU-doorbell mode");
}

#[test]
fn sink_mode_measures_the_post_rate() {
    let _w = watchdog(60, "sink_mode_measures_the_post_rate");
    let p = QpParams { log_nwqes: 10, signal_every: 64, batch: 32, inline_max: 28, ..QpParams::default() };
    let w = World::new(2, 1 << 12, 4, p, ModelConfig { sink: true, ..Default::default() });
    let qps: Vec<Qp> = (0..4).map(|i| w.pes[0].qp(1, i)).collect();
    let rate = hfn!(h_post_rate: fn(*const Qp, u32, u32, u32, u64, u32) -> u64);
    let (threads, ops) = (4u32, 20_000u32);
    let ns = rate(qps.as_ptr(), 4, threads, ops, w.pes[1].heap.addr(), HEAP_KEY + 1);
    let n = (threads * ops) as f64;
    let wqes = w.nics[0].stats().wqes.load(Ordering::Relaxed);
    assert!(wqes >= n as u64, "the sink consumed {wqes} of {n} WQEs");
    assert_eq!(w.pes[1].heap_bytes(0, 64), vec![0; 64], "sink mode moved data");
    eprintln!(
        "host build, model in sink mode: {threads} threads x {ops} inline puts: {:.1} M WQEs/s, {:.0} ns per post per thread (CPU only; not a GPU or NIC number)",
        n / ns as f64 * 1e3,
        ns as f64 * threads as f64 / n
    );
}
