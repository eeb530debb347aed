//! IBGDA over DC (dynamically connected) transport: the device posting path compiled as host C++17
//! (ctest/ibgda/harness.cpp over device/ibgda/ibgda_pe.h) against the software HCA model. PEs
//! reach each other through DC initiators that carry an address vector per WQE (DCT number, DC
//! access key, LID); every operation is verified byte for byte, from many threads on tiny queues
//! with every NVSHMEM_IBGDA_DCI_MAP_BY choice; fence and quiet ordering on a reordering and slow
//! NIC; quiet visits only the DCIs used; a wrong DC key or an unknown DCT is an error CQE that
//! names the operation and the PE. Also the warp-coalesced p's WQEs, written lane by lane.
//! Everything here ran on the model only; none of it has met a ConnectX.

#[macro_use]
mod ibgda_common;

use std::sync::atomic::Ordering;

use ibgda_common::amo::{FETCH_ADD, XOR};
use ibgda_common::{amo_fetches, amo_model, assert_clean, assert_fenced, fence_sources, pattern, watchdog, Net, World, HEAP_KEY};
use rshmem::ibgda::abi::{PeState, QpState, MAP_BY_CTA, MAP_BY_DCT, MAP_BY_SM, MAP_BY_WARP};
use rshmem::ibgda::model::host::{snapshot, QpParams};
use rshmem::ibgda::model::ModelConfig;

type St = *mut PeState;
type Qp = *mut QpState;

fn snap(qp: Qp) -> QpState {
    // SAFETY: every descriptor passed here belongs to a World that is still alive.
    unsafe { snapshot(qp) }
}

fn params() -> QpParams {
    QpParams { log_nwqes: 6, signal_every: 8, batch: 4, inline_max: 28, ..QpParams::default() }
}

fn dc(num_dci: usize, num_dct: usize, map_by: u32, av_bytes: u32) -> Net {
    Net::Dc { num_dci, num_dct, map_by, av_bytes }
}

#[test]
fn every_operation_arrives_over_dc_with_half_and_full_address_vectors() {
    let _w = watchdog(60, "every_operation_arrives_over_dc_with_half_and_full_address_vectors");
    let putmem = hfn!(h_putmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let putmem_nbi = hfn!(h_putmem_nbi: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let getmem = hfn!(h_getmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let quiet_all = hfn!(h_quiet_all: fn(St) -> i32);
    let p64 = hfn!(h_p64: fn(St, *mut u64, u64, u32) -> i32);
    let p8 = hfn!(h_p8: fn(St, *mut u8, u8, u32) -> i32);
    let g32 = hfn!(h_g32: fn(St, *const u32, u32, *mut u32) -> i32);
    let amo64 = hfn!(h_amo64: fn(St, u32, *mut u64, u64, u64, u32, *mut u64) -> i32);
    let amo32 = hfn!(h_amo32: fn(St, u32, *mut u32, u32, u32, u32, *mut u32) -> i32);
    let put_signal = hfn!(h_put_signal: fn(St, *mut u8, *const u8, u64, *mut u64, u64, i32, u32, i32) -> i32);
    for av_bytes in [16, 48] {
        // 3 PEs, one DCI shared by both targets, 2 DCTs each.
        let w = World::build(3, 1 << 20, dc(1, 2, MAP_BY_CTA, av_bytes), params(), ModelConfig::default());
        let pe0 = &w.pes[0];
        let st = pe0.st();
        for target in [1u32, 2] {
            let tp = &w.pes[target as usize];
            let tag = target as u64 * 100 + av_bytes as u64;
            // put from the heap (RDMA WRITE), blocking and not, and inline from a stack array.
            for (i, len) in [29usize, 1000, 65536 + 7].into_iter().enumerate() {
                let data = pattern(tag + i as u64, len);
                pe0.write_heap(0, &data);
                let f = if i % 2 == 0 { putmem } else { putmem_nbi };
                assert_eq!(f(st, pe0.heap_ptr(200_000), pe0.heap_ptr(0), len as u64, target), 0);
                assert_eq!(quiet_all(st), 0);
                assert_eq!(tp.heap_bytes(200_000, len), data, "put of {len} bytes to PE {target} ({av_bytes}-byte AV)");
            }
            let small = pattern(tag + 9, 28);
            assert_eq!(putmem_nbi(st, pe0.heap_ptr(300_000), small.as_ptr(), 28, target), 0);
            assert_eq!(p64(st, pe0.heap_ptr(300_032) as *mut u64, 0x0123_4567_89ab_cdef ^ tag, target), 0);
            assert_eq!(p8(st, pe0.heap_ptr(300_040), 0x5a, target), 0);
            assert_eq!(quiet_all(st), 0);
            assert_eq!(tp.heap_bytes(300_000, 28), small, "inline put to PE {target}");
            assert_eq!(tp.heap_u64(300_032), 0x0123_4567_89ab_cdef ^ tag);
            assert_eq!(tp.heap_bytes(300_040, 1), [0x5a]);
            // get (RDMA READ) into the heap and g through the landing slot.
            let remote = pattern(tag + 7, 5000);
            tp.write_heap(500_000, &remote);
            assert_eq!(getmem(st, pe0.heap_ptr(600_000), pe0.heap_ptr(500_000), 5000, target), 0);
            assert_eq!(pe0.heap_bytes(600_000, 5000), remote, "get of 5000 bytes from PE {target}");
            let mut v32 = 0u32;
            assert_eq!(g32(st, pe0.heap_ptr(500_008) as *const u32, target, &mut v32), 0);
            assert_eq!(v32, u32::from_le_bytes(remote[8..12].try_into().unwrap()));
            // Every AMO, 8 and 4 bytes.
            for op in FETCH_ADD..=XOR {
                let (init, v, c) = (0xf0f0_1234_5678_9abc ^ tag, 0x0ff0_0000_ffff_0001u64, 0xf0f0_1234_5678_9abc ^ tag);
                tp.write_heap(700_000, &init.to_le_bytes());
                let mut old = 0u64;
                assert_eq!(amo64(st, op, pe0.heap_ptr(700_000) as *mut u64, v, c, target, &mut old), 0);
                assert_eq!(quiet_all(st), 0);
                let (want_old, want_new) = amo_model(op, init, v, c, u64::MAX);
                assert_eq!(tp.heap_u64(700_000), want_new, "64-bit op {op} at PE {target}");
                if amo_fetches(op) {
                    assert_eq!(old, want_old, "64-bit op {op}: old value");
                }
                tp.write_heap(700_064, &(init as u32).to_le_bytes());
                let mut old32 = 0u32;
                assert_eq!(amo32(st, op, pe0.heap_ptr(700_064) as *mut u32, v as u32, c as u32, target, &mut old32), 0);
                assert_eq!(quiet_all(st), 0);
                let (wo, wn) = amo_model(op, init as u32 as u64, v as u32 as u64, c as u32 as u64, 0xffff_ffff);
                assert_eq!(u32::from_le_bytes(tp.heap_bytes(700_064, 4).try_into().unwrap()) as u64, wn, "32-bit op {op}");
                if amo_fetches(op) {
                    assert_eq!(old32 as u64, wo, "32-bit op {op}: old value");
                }
            }
            // put_signal: the data from the heap, then the signal add, blocking.
            let data = pattern(tag + 11, 4096);
            pe0.write_heap(0, &data);
            tp.write_heap(800_000, &5u64.to_le_bytes());
            let sig = pe0.heap_ptr(800_000) as *mut u64;
            assert_eq!(put_signal(st, pe0.heap_ptr(810_000), pe0.heap_ptr(0), 4096, sig, 3, 1, target, 1), 0);
            assert_eq!(tp.heap_bytes(810_000, 4096), data);
            assert_eq!(tp.heap_u64(800_000), 8, "signal added");
        }
        let used = pe0.used_bits();
        assert_eq!(used[0], 1, "the one DCI is marked used");
        assert!(w.nics[0].stats().inline_wqes.load(Ordering::Relaxed) >= 6);
        assert_clean(&w);
    }
}

/// PE 0 runs h_stress_dc toward PEs 1..npes with `threads` threads; every byte, counter and
/// signal is then checked on every target.
fn stress(npes: usize, num_dci: usize, map_by: u32, threads: u32, ops: u32, msg: u32, cfg: ModelConfig) {
    // Tiny queues: 8 blocks, a completion every 2, doorbells every 2: constant back-pressure.
    let p = QpParams { log_nwqes: 3, signal_every: 2, batch: 2, inline_max: 28, ..QpParams::default() };
    let total = (threads * ops * msg) as usize;
    let heap = 2 * total + 8192;
    let w = World::build(npes, heap, dc(num_dci, 2, map_by, 16), p, cfg);
    let pe0 = &w.pes[0];
    let src = pattern(msg as u64 + map_by as u64, total);
    pe0.write_heap(0, &src);
    let (dest, counters, sigs, probe) = (total, 2 * total, 2 * total + 2048, 2 * total + 4096);
    for (j, pe) in w.pes.iter().enumerate() {
        pe.write_heap(probe, &(0xabc000 + j as u64).to_le_bytes());
    }
    let targets: Vec<u32> = (1..npes as u32).collect();
    let run = hfn!(h_stress_dc: fn(St, *const u32, u32, u32, u32, u32, *mut u8, *const u8, *mut u64, *mut u64, *mut u64, u64) -> i32);
    let fails = run(
        pe0.st(),
        targets.as_ptr(),
        targets.len() as u32,
        threads,
        ops,
        msg,
        pe0.heap_ptr(dest),
        pe0.heap_ptr(0),
        pe0.heap_ptr(counters) as *mut u64,
        pe0.heap_ptr(sigs) as *mut u64,
        pe0.heap_ptr(probe) as *mut u64,
        0xabc000,
    );
    assert_eq!(fails, 0, "posting calls failed or returned wrong values (map_by {map_by})");
    for (j, tp) in w.pes.iter().enumerate().skip(1) {
        let got = tp.heap_bytes(dest, total);
        let (mut adds, mut signals) = (vec![0u64; threads as usize], vec![0u64; threads as usize]);
        for t in 0..threads {
            for i in 0..ops {
                let k = (t * ops + i) as usize;
                let to = targets[((t + i) as usize) % targets.len()] as usize;
                let want = if to == j { &src[k * msg as usize..(k + 1) * msg as usize] } else { &vec![0; msg as usize][..] };
                assert_eq!(
                    &got[k * msg as usize..(k + 1) * msg as usize],
                    want,
                    "PE {j}: message {k} (thread {t}, op {i}, map_by {map_by})"
                );
                if to == j {
                    adds[t as usize] += (i % 16 == 15) as u64;
                    signals[t as usize] += (i % 8 == 7) as u64;
                }
            }
        }
        for t in 0..threads as usize {
            assert_eq!(tp.heap_u64(counters + 8 * t), adds[t], "PE {j}: fetch-add counter of thread {t}");
            assert_eq!(tp.heap_u64(sigs + 8 * t), signals[t], "PE {j}: put_signal count of thread {t}");
        }
    }
    for i in 0..num_dci {
        let s = snap(pe0.dci(i));
        assert_eq!((s.completed_head, s.err_count), (s.ready_head, 0), "DCI {i} not quiet after quiet (map_by {map_by})");
    }
    let used = pe0.used_bits()[0];
    assert_ne!(used, 0);
    for i in 0..num_dci {
        assert_eq!(used >> i & 1 == 1, snap(pe0.dci(i)).resv_head > 0, "DCI {i}: marked used iff it carried work");
    }
    assert_clean(&w);
}

#[test]
fn many_threads_on_tiny_dc_queues_every_map_by() {
    let _w = watchdog(120, "many_threads_on_tiny_dc_queues_every_map_by");
    for (k, map_by) in [MAP_BY_CTA, MAP_BY_SM, MAP_BY_WARP, MAP_BY_DCT].into_iter().enumerate() {
        // 3 DCIs for 6 threads and 3 targets: DCIs are shared by threads and by targets.
        stress(4, 3, map_by, 6, 96, 24, ModelConfig { reorder: true, seed: 17 + k as u64, ..Default::default() });
    }
}

#[test]
fn many_outstanding_puts_from_the_heap_over_one_dci() {
    let _w = watchdog(60, "many_outstanding_puts_from_the_heap_over_one_dci");
    // Larger messages (RDMA WRITEs from the heap, not inline) all through a single DCI.
    stress(3, 1, MAP_BY_CTA, 6, 128, 100, ModelConfig { reorder: true, seed: 5, ..Default::default() });
}

#[test]
fn dci_choice_follows_map_by_and_quiet_visits_only_dcis_used() {
    let _w = watchdog(60, "dci_choice_follows_map_by_and_quiet_visits_only_dcis_used");
    let qp_index = hfn!(h_qp_index: fn(St, u32) -> u32);
    let set_ids = hfn!(h_set_ids: fn(u32, u32, u32) -> ());
    let p64 = hfn!(h_p64: fn(St, *mut u64, u64, u32) -> i32);
    let quiet_all = hfn!(h_quiet_all: fn(St) -> i32);
    // (cta, sm, warp) of this thread -> DCI, for 5 DCIs and 2 DCTs per PE.
    let cases = [(MAP_BY_CTA, 7u32), (MAP_BY_SM, 9), (MAP_BY_WARP, 13)];
    for (map_by, key) in cases {
        let w = World::build(3, 1 << 16, dc(5, 2, map_by, 16), params(), ModelConfig::default());
        set_ids(
            if map_by == MAP_BY_CTA { key } else { 1 },
            if map_by == MAP_BY_SM { key } else { 1 },
            if map_by == MAP_BY_WARP { key } else { 1 },
        );
        for pe in 0..3 {
            assert_eq!(qp_index(w.pes[0].st(), pe), key % 5, "map_by {map_by}: every target on the thread's DCI");
        }
    }
    // By DCT: target PE p, DCT d = warp % 2 -> DCI (p * 2 + d) % 5.
    let w = World::build(4, 1 << 16, dc(5, 2, MAP_BY_DCT, 16), params(), ModelConfig::default());
    set_ids(0, 0, 3);
    for pe in 0..4 {
        assert_eq!(qp_index(w.pes[0].st(), pe), (pe * 2 + 1) % 5, "map_by dct, PE {pe}");
    }
    // p toward PEs 1 and 3 uses DCIs 3 and 2 (7 % 5): only those are marked, and quiet posts
    // nothing on the others.
    let pe0 = &w.pes[0];
    assert_eq!(p64(pe0.st(), pe0.heap_ptr(64) as *mut u64, 11, 1), 0);
    assert_eq!(p64(pe0.st(), pe0.heap_ptr(64) as *mut u64, 33, 3), 0);
    assert_eq!(quiet_all(pe0.st()), 0);
    assert_eq!(pe0.used_bits()[0], 0b01100);
    for i in [0, 1, 4] {
        assert_eq!(snap(pe0.dci(i)).resv_head, 0, "quiet touched unused DCI {i}");
    }
    assert_eq!((w.pes[1].heap_u64(64), w.pes[3].heap_u64(64)), (11, 33));
    set_ids(0, 0, 0);
}

#[test]
fn fence_orders_dc_writes_to_alternating_targets_and_quiet_waits_for_a_slow_nic() {
    let _w = watchdog(60, "fence_orders_dc_writes_to_alternating_targets_and_quiet_waits_for_a_slow_nic");
    // One DCI for both targets, a doorbell batch of 64 (the NIC sees many WQEs at once), a NIC
    // that shuffles unfenced WQEs and is slow to answer.
    let p = QpParams { log_nwqes: 7, signal_every: 32, batch: 64, inline_max: 28, ..QpParams::default() };
    let cfg = ModelConfig { reorder: true, seed: 23, delay_us: 300, sink: false, ..Default::default() };
    let w = World::build(3, 1 << 16, dc(1, 2, MAP_BY_CTA, 16), p, cfg);
    let pe0 = &w.pes[0];
    let putmem_nbi = hfn!(h_putmem_nbi: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let fence = hfn!(h_fence_thread: fn(St) -> ());
    let quiet_all = hfn!(h_quiet_all: fn(St) -> i32);
    let rounds = 30usize;
    fence_sources(pe0, rounds);
    for i in 0..rounds {
        let target = 1 + (i % 2) as u32;
        let dst = pe0.heap_ptr(32768 + i * 64);
        assert_eq!(putmem_nbi(pe0.st(), dst, pe0.heap_ptr(i * 64), 64, target), 0);
        fence(pe0.st());
        assert_eq!(putmem_nbi(pe0.st(), dst, pe0.heap_ptr(8192 + i * 64), 64, target), 0);
    }
    assert_eq!(quiet_all(pe0.st()), 0);
    assert_fenced(&w, rounds, |i| 1 + i % 2);
    assert_clean(&w);
}

#[test]
fn wrong_dc_key_and_unknown_dct_are_error_cqes_naming_the_operation_and_the_pe() {
    let _w = watchdog(60, "wrong_dc_key_and_unknown_dct_are_error_cqes_naming_the_operation_and_the_pe");
    let putmem_nbi = hfn!(h_putmem_nbi: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let getmem = hfn!(h_getmem: fn(St, *mut u8, *const u8, u64, u32) -> i32);
    let amo64 = hfn!(h_amo64: fn(St, u32, *mut u64, u64, u64, u32, *mut u64) -> i32);
    let quiet_all = hfn!(h_quiet_all: fn(St) -> i32);

    // A wrong DC key in PE 0's address vector for PE 2 (as a stale or foreign key would be).
    let mut w = World::build(3, 1 << 16, dc(2, 2, MAP_BY_CTA, 16), params(), ModelConfig::default());
    w.pes[0].peers[2].av[7] ^= 0x40;
    let st = w.pes[0].st();
    let src = w.pes[0].heap_ptr(0);
    assert_eq!(putmem_nbi(st, w.pes[0].heap_ptr(4096), src, 8, 1), 0, "PE 1's key is right");
    assert_eq!(putmem_nbi(st, w.pes[0].heap_ptr(4096), src, 8, 2), 0, "posting succeeds; the completion fails");
    assert_eq!(quiet_all(st), 1, "quiet reports the error CQE");
    let dci = w.pes[0].dci(0);
    let s = snap(dci);
    let owner = |lid: u16, dct: u32| w.dct_owner(lid, dct);
    let msg = rshmem::ibgda::qp_error_dc(&s, 0, &owner).expect("error recorded").named("nvshmem_quiet").to_string();
    assert!(msg.starts_with("nvshmem_quiet: IBGDA RDMA WRITE (put) from PE 0 to PE 2 over DC (DCT 0x002000 at LID 3) failed"), "{msg}");
    assert!(msg.contains("rejected the DC access key") && msg.contains("syndrome 0x15"), "{msg}");
    // The NIC's own record (what the host reports when no device thread polled) says the same.
    let first = w.nics[0].first_error().expect("the NIC recorded the error");
    let msg2 = rshmem::ibgda::qp_error_dc(&first, 0, &owner).unwrap().to_string();
    assert!(msg2.contains("RDMA WRITE (put) from PE 0 to PE 2 over DC"), "{msg2}");
    assert_eq!(w.pes[2].heap_bytes(4096, 8), vec![0; 8], "nothing reached PE 2");

    // A fetching atomic with the wrong key fails in the call itself.
    let mut w = World::build(3, 1 << 16, dc(1, 1, MAP_BY_CTA, 48), params(), ModelConfig::default());
    w.pes[0].peers[1].av[0] ^= 1;
    let mut old = 0;
    assert_eq!(amo64(w.pes[0].st(), FETCH_ADD, w.pes[0].heap_ptr(64) as *mut u64, 1, 0, 1, &mut old), 1);
    let msg = rshmem::ibgda::qp_error_dc(&snap(w.pes[0].dci(0)), 0, &|l, d| w.dct_owner(l, d)).unwrap().to_string();
    assert!(msg.contains("atomic fetch-add from PE 0 to PE 1 over DC"), "{msg}");

    // An unknown DCT number in PE 0's DCT table for PE 1.
    let mut w = World::build(2, 1 << 16, dc(1, 1, MAP_BY_CTA, 16), params(), ModelConfig::default());
    w.pes[0].dcts[1] = 0x777;
    assert_eq!(getmem(w.pes[0].st(), w.pes[0].heap_ptr(0), w.pes[0].heap_ptr(64), 16, 1), 1);
    let msg = rshmem::ibgda::qp_error_dc(&snap(w.pes[0].dci(0)), 0, &|l, d| w.dct_owner(l, d)).unwrap().named("nvshmem_getmem").to_string();
    assert!(
        msg.contains("RDMA READ (get) from PE 0 to DCT 0x000777 at LID 2, which no PE owns,")
            && msg.contains("no DC target with that number"),
        "{msg}"
    );
}

/// Lanes of an emulated warp group write a coalesced p (ibgda_coalesce.h) lane by lane; the
/// bytes arrive and the NIC sees one WQE per 192 bytes.
#[test]
fn coalesced_p_is_one_inline_wqe_per_192_bytes_on_rc_and_dc() {
    let _w = watchdog(60, "coalesced_p_is_one_inline_wqe_per_192_bytes_on_rc_and_dc");
    let group = hfn!(h_p_group: fn(Qp, u64, u32, *const u8, u32, u32, *const u64, u32, u32) -> u64);
    let wait = hfn!(h_wait: fn(Qp, u64) -> i32);
    let quiet = hfn!(h_quiet: fn(Qp) -> i32);
    // 32 blocks: groups of up to 8 blocks (the largest here: 32 x 8 bytes with a 48-byte AV);
    // the rounds wrap the ring.
    let p = QpParams { log_nwqes: 5, signal_every: 4, batch: 8, inline_max: 28, ..QpParams::default() };
    for net in [Net::Rc { num_rc: 1 }, dc(1, 1, MAP_BY_CTA, 16), dc(1, 1, MAP_BY_CTA, 48)] {
        let w = World::build(2, 1 << 16, net, p, ModelConfig::default());
        let pe0 = &w.pes[0];
        let (qp, av, av_size, dct) = match net {
            Net::Rc { .. } => (pe0.qp(1, 0), std::ptr::null(), 0, 0),
            Net::Dc { .. } => (pe0.dci(0), pe0.peers[1].av.as_ptr(), pe0.peers[1].av_size, pe0.dcts[1]),
        };
        let mut round = 0u64;
        for size in [1u32, 2, 4, 8, 8, 4, 2, 1] {
            for n in [32u32, 13, 2] {
                round += 1;
                let values: Vec<u64> =
                    (0..n as u64).map(|l| (0x1111_1111_1111_1111u64.wrapping_mul(round + l)) & (u64::MAX >> (64 - 8 * size))).collect();
                let off = (round as usize) * 384;
                let wqes0 = w.nics[0].stats().wqes.load(Ordering::Relaxed);
                let end = group(qp, w.pes[1].heap.addr() + off as u64, HEAP_KEY + 1, av, av_size, dct, values.as_ptr(), n, size);
                assert_ne!(end, 0, "a group of {n} x {size} bytes fits 8 blocks");
                assert_eq!(quiet(qp), 0);
                assert_eq!(wait(qp, end), 0);
                let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()[..size as usize].to_vec()).collect();
                assert_eq!(w.pes[1].heap_bytes(off, want.len()), want, "{net:?}: {n} lanes x {size} bytes");
                assert_eq!(w.pes[1].heap_bytes(off + want.len(), 8), vec![0; 8], "{net:?}: bytes after the group");
                let wqes = w.nics[0].stats().wqes.load(Ordering::Relaxed) - wqes0;
                let data_wqes = (n * size).div_ceil(192) as u64;
                // quiet may add one signaled NOP.
                assert!(
                    wqes == data_wqes || wqes == data_wqes + 1,
                    "{net:?}: {n} x {size} bytes took {wqes} WQEs, want {data_wqes} (+1 NOP)"
                );
            }
        }
        assert!(snap(qp).resv_head > 32, "the ring wrapped ({} blocks)", snap(qp).resv_head);
        assert_clean(&w);
    }
}
