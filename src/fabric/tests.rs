//! The fabric layer on one machine: two endpoints in one process over tcp;ofi_rxm on
//! 127.0.0.1. Skipped, with the reason, where libfabric is not installed.

use std::sync::Arc;
use std::time::Duration;

use super::*;

fn loopback() -> Settings {
    Settings {
        library: "libfabric.so.1".into(),
        provider: Some("tcp;ofi_rxm".into()),
        domain: Some("lo".into()),
        timeout: Duration::from_secs(30),
        trusted_network: false,
    }
}

/// Two connected endpoints, each with a registered 4 MiB buffer, or None (skip) without
/// libfabric.
struct Pair {
    a: Fabric,
    /// The target endpoint (kept open; it is only written to).
    _b: Fabric,
    /// b as seen from a
    to_b: Peer,
    // Fields drop in order: the region before the memory it registers.
    _region_b: Region,
    remote_b: RemoteRegion,
    mem_b: Vec<u64>,
}

/// The last word of b's buffer.
const LAST_WORD: usize = (1 << 19) - 1;

fn pair() -> Option<Pair> {
    pair_with(&loopback())
}

fn pair_with(settings: &Settings) -> Option<Pair> {
    if let Err(e) = Library::load("libfabric.so.1") {
        eprintln!("SKIP: {e}");
        return None;
    }
    let a = Fabric::open(settings).expect("endpoint a over tcp;ofi_rxm on lo");
    let b = Fabric::open(settings).expect("endpoint b");
    let names = vec![a.address().unwrap(), b.address().unwrap()];
    let from_a = a.insert_peers(&names).unwrap();
    b.insert_peers(&names).unwrap();
    let mut mem_b = vec![0u64; LAST_WORD + 1];
    // SAFETY: the Vec's heap block does not move when the Vec does, and Pair drops region_b
    // before mem_b.
    let region_b = unsafe { b.register(mem_b.as_mut_ptr().cast(), mem_b.len() * 8) }.unwrap();
    let remote_b = RemoteRegion::from_bytes(&region_b.remote().to_bytes()).unwrap();
    Some(Pair { to_b: from_a[1], a, _b: b, mem_b, _region_b: region_b, remote_b })
}

fn read_b(p: &Pair, word: usize) -> u64 {
    // SAFETY: a volatile read of memory a peer writes through the provider.
    unsafe { std::ptr::read_volatile(p.mem_b.as_ptr().add(word)) }
}

#[test]
fn a_missing_library_is_a_named_error() {
    let s = Settings { library: "/nonexistent/libfabric.so.1".into(), ..loopback() };
    let e = Fabric::open(&s).err().expect("no library, no fabric");
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains("libfabric could not be loaded from \"/nonexistent/libfabric.so.1\""), "{e}");
    assert!(e.message.contains("apt-get install libfabric1") && e.message.contains("RSHMEM_FABRIC_LIBRARY"), "{e}");
}

#[test]
fn an_unknown_provider_is_a_named_error() {
    if Library::load("libfabric.so.1").is_err() {
        return eprintln!("SKIP: no libfabric");
    }
    let s = Settings { provider: Some("no_such_provider".into()), ..loopback() };
    let e = Fabric::open(&s).err().expect("no such provider");
    assert!(e.message.contains("no libfabric provider offers") && e.message.contains("\"no_such_provider\""), "{e}");
    assert!(e.message.contains("RSHMEM_FABRIC_PROVIDER"), "{e}");
}

#[test]
fn put_and_get_move_the_data() {
    let Some(p) = pair() else { return };
    println!("provider: {}", p.a.info().describe());
    assert_eq!(p.a.info().provider, "tcp;ofi_rxm");
    // A small put (injected) and a large one (fi_write), then read back with a get.
    p.a.put(p.to_b, &0x1122_3344_5566_7788u64.to_le_bytes(), None, &p.remote_b, 8).unwrap();
    let big: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    p.a.put(p.to_b, &big, None, &p.remote_b, 1024).unwrap();
    p.a.quiet().unwrap();
    assert_eq!(read_b(&p, 1), 0x1122_3344_5566_7788);
    let mut back = vec![0u8; big.len()];
    p.a.get(p.to_b, &mut back, None, &p.remote_b, 1024).unwrap();
    assert!(back == big, "get returns what put wrote");
    // Out of bounds: named, nothing sent.
    let size = (LAST_WORD + 1) * 8;
    let e = p.a.put(p.to_b, &[0u8; 16], None, &p.remote_b, size - 8).unwrap_err();
    assert!(e.message.contains(&format!("outside the peer's registered region of {size} bytes")), "{e}");
}

/// Staged puts (stage.rs; providers without a progress thread) return before their writes
/// complete: a source overwritten at once must still deliver what it held at the call, across
/// more puts than the ring has chunks (so chunks are reused), and a put too big to stage
/// (written from the caller's buffer) arrives whole.
#[test]
fn staged_puts_deliver_the_source_as_it_was_at_the_call() {
    let Some(p) = pair() else { return };
    let puts = 3 * stage::CHUNKS;
    let len = pack::PACK_MAX + 8;
    assert!(len <= stage::STAGED_MAX && puts * len <= LAST_WORD * 8, "staged, and inside b's region");
    let mut src = vec![0u8; len];
    for k in 0..puts {
        src.fill(k as u8 ^ 0x5a);
        p.a.put_staged(p.to_b, &src, &p.remote_b, k * len).unwrap();
        src.fill(0xee); // the put has returned: the source is ours again
    }
    p.a.quiet().unwrap();
    for k in 0..puts {
        let word = (k * len) / 8;
        let want = u64::from_ne_bytes([k as u8 ^ 0x5a; 8]);
        assert!((word..word + len / 8).all(|w| read_b(&p, w) == want), "put {k} delivered its source as it was at the call");
    }
    let big: Vec<u8> = (0..2 * stage::CHUNK + 100).map(|i| (i % 253) as u8).collect();
    let mut copy = big.clone();
    p.a.put(p.to_b, &copy, None, &p.remote_b, 0).unwrap();
    copy.fill(0);
    p.a.quiet().unwrap();
    let mut back = vec![0u8; big.len()];
    p.a.get(p.to_b, &mut back, None, &p.remote_b, 0).unwrap();
    assert!(back == big, "a put of several chunks' size arrives whole");
}

/// Ordering: a large put (staged, or in place), a fence, then a small (injected) flag; once
/// the peer sees the flag, the data is there (what put-with-signal relies on).
#[test]
fn a_large_put_then_fence_arrives_before_the_flag() {
    let Some(p) = pair() else { return };
    for round in 1..=20u64 {
        let data = vec![round; stage::CHUNK / 8]; // a whole chunk
        if round % 2 == 0 {
            p.a.put(p.to_b, bytes_of(&data), None, &p.remote_b, 0).unwrap(); // in place (tcp)
        } else {
            p.a.put_staged(p.to_b, bytes_of(&data), &p.remote_b, 0).unwrap();
        }
        p.a.fence().unwrap();
        p.a.put(p.to_b, &round.to_ne_bytes(), None, &p.remote_b, LAST_WORD * 8).unwrap();
        let start = std::time::Instant::now();
        while read_b(&p, LAST_WORD) != round {
            assert!(start.elapsed() < Duration::from_secs(20), "round {round}: the flag never arrived");
            std::thread::yield_now();
        }
        assert!((0..4096).all(|w| read_b(&p, w) == round), "round {round}: the flag arrived before the data");
    }
    p.a.quiet().unwrap();
}

/// Over tcp a put above the pack size is written from the caller's buffer with no completion
/// flag (no staging copy, no round trip), whatever its size: the put returns with the source
/// reusable, and quiet (which reads a byte back from the peer) returns only once every such put
/// has landed.
#[test]
fn puts_above_the_pack_size_go_in_place_and_land_by_quiet() {
    let Some(p) = pair() else { return };
    let sizes = [pack::PACK_MAX + 8, stage::CHUNK, (1 << 20) + 100, 2 << 20];
    let mut at = 0;
    for (k, &len) in sizes.iter().enumerate() {
        let mut src: Vec<u8> = (0..len).map(|i| (i % 251) as u8 ^ k as u8).collect();
        p.a.put(p.to_b, &src, None, &p.remote_b, at).unwrap();
        src.fill(0xee); // the put has returned: the source is ours again
        at += len.next_multiple_of(8);
    }
    assert!(p.a.out.stage.get().is_none(), "no put went through the staging ring");
    assert_eq!(p.a.inner.unflushed.lock().unwrap().len(), 1, "the peer is due a read-back");
    p.a.quiet().unwrap();
    assert!(p.a.inner.unflushed.lock().unwrap().is_empty(), "quiet read back from the peer");
    let mut at = 0;
    for (k, &len) in sizes.iter().enumerate() {
        // SAFETY: b's memory, written only by a's puts, which quiet completed.
        let got = unsafe { std::slice::from_raw_parts(p.mem_b.as_ptr().cast::<u8>().add(at), len) };
        assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8 ^ k as u8), "put {k} ({len} bytes) landed whole");
        at += len.next_multiple_of(8);
    }
}

/// Quiet's read-back reads one byte from each peer it was given or sent an in-place write,
/// once per peer however often it is named, all posted before one wait; it leaves nothing
/// due, so the next quiet reads nothing.
#[test]
fn quiet_reads_back_once_from_each_peer_due() {
    let Some(p) = pair() else { return };
    let c = Fabric::open(&loopback()).expect("endpoint c");
    let to_c = p.a.insert_peers(&[c.address().unwrap()]).unwrap()[0];
    let mut mem_c = vec![0u64; 16];
    // SAFETY: mem_c's heap block stays put and outlives region_c (dropped first, below).
    let region_c = unsafe { c.register(mem_c.as_mut_ptr().cast(), mem_c.len() * 8) }.unwrap();
    let remote_c = region_c.remote();
    let reads = || p.a.inner.reads_posted.load(std::sync::atomic::Ordering::Acquire);
    p.a.put(p.to_b, &vec![7u8; pack::PACK_MAX + 8], None, &p.remote_b, 0).unwrap(); // in place
    p.a.put(p.to_b, &9u64.to_le_bytes(), None, &p.remote_b, LAST_WORD * 8).unwrap(); // injected
    p.a.put(to_c, &11u64.to_le_bytes(), None, &remote_c, 8).unwrap(); // injected
    let before = reads();
    p.a.quiet_reading(&[(p.to_b, &p.remote_b), (to_c, &remote_c), (to_c, &remote_c)]).unwrap();
    assert_eq!(reads() - before, 2, "one read from b (in-place and injected writes), one from c");
    assert!(p.a.inner.unflushed.lock().unwrap().is_empty(), "nothing left due");
    assert_eq!(read_b(&p, LAST_WORD), 9);
    // SAFETY: a volatile read of c's memory, written by a's put, which quiet completed.
    assert_eq!(unsafe { std::ptr::read_volatile(mem_c.as_ptr().add(1)) }, 11);
    let before = reads();
    p.a.quiet().unwrap();
    assert_eq!(reads(), before, "a quiet with nothing due reads nothing back");
    drop(region_c);
}

fn bytes_of(words: &[u64]) -> &[u8] {
    // SAFETY: any u64 is 8 plain bytes; the slice covers exactly the words.
    unsafe { std::slice::from_raw_parts(words.as_ptr().cast(), words.len() * 8) }
}

#[test]
fn non_blocking_puts_and_gets_complete_at_quiet() {
    let Some(p) = pair() else { return };
    let mut src = vec![0u64; 1024];
    // SAFETY: src outlives the region and the quiet below.
    let region_a = unsafe { p.a.register(src.as_mut_ptr().cast(), src.len() * 8) }.unwrap();
    for (i, w) in src.iter_mut().enumerate() {
        *w = 1000 + i as u64;
    }
    for chunk in 0..4 {
        // SAFETY: src is unchanged until the quiet.
        unsafe { p.a.put_nbi(p.to_b, src.as_ptr().add(chunk * 256).cast(), 2048, Some(&region_a), &p.remote_b, 16384 + chunk * 2048) }
            .unwrap();
    }
    p.a.quiet().unwrap();
    assert!((0..1024).all(|i| read_b(&p, 2048 + i) == 1000 + i as u64));
    let mut dst = vec![0u64; 1024];
    // SAFETY: dst is registered for the get and not touched until the quiet.
    let region_d = unsafe { p.a.register(dst.as_mut_ptr().cast(), dst.len() * 8) }.unwrap();
    // SAFETY: dst (8192 bytes, registered above) stays alive and untouched until the quiet.
    unsafe { p.a.get_nbi(p.to_b, dst.as_mut_ptr().cast(), 8192, Some(&region_d), &p.remote_b, 16384) }.unwrap();
    p.a.quiet().unwrap();
    assert_eq!(dst, src);
    drop((region_a, region_d));
}

#[test]
fn every_wired_atomic_changes_the_remote_value() {
    let Some(p) = pair() else { return };
    let (a, b, r) = (&p.a, p.to_b, &p.remote_b);
    // u64 at word 10, i32 at byte 96, f64 at word 13.
    a.atomic(b, AtomicOp::Set, 5u64, r, 80).unwrap();
    a.atomic(b, AtomicOp::Add, 7u64, r, 80).unwrap();
    a.quiet().unwrap();
    assert_eq!(read_b(&p, 10), 12);
    assert_eq!(a.fetch_atomic(b, AtomicOp::Add, 3u64, r, 80).unwrap(), 12);
    assert_eq!(a.fetch_atomic(b, AtomicOp::And, 0b1010u64, r, 80).unwrap(), 15);
    assert_eq!(a.fetch_atomic(b, AtomicOp::Or, 0b0101u64, r, 80).unwrap(), 0b1010);
    assert_eq!(a.fetch_atomic(b, AtomicOp::Xor, 0b0011u64, r, 80).unwrap(), 0b1111);
    assert_eq!(a.fetch_atomic(b, AtomicOp::Set, 99u64, r, 80).unwrap(), 0b1100, "swap");
    assert_eq!(a.fetch_atomic(b, AtomicOp::Read, 0u64, r, 80).unwrap(), 99, "fetch");
    a.atomic(b, AtomicOp::And, 0xf0u64, r, 80).unwrap();
    a.atomic(b, AtomicOp::Or, 0x100u64, r, 80).unwrap();
    a.atomic(b, AtomicOp::Xor, 0x1u64, r, 80).unwrap();
    a.quiet().unwrap();
    assert_eq!(read_b(&p, 10), ((99 & 0xf0) | 0x100) ^ 1);
    // compare-swap: fails on a mismatch (returns the old value), succeeds on a match.
    assert_eq!(a.compare_swap(b, 1u64, 2u64, r, 80).unwrap(), 0x161);
    assert_eq!(read_b(&p, 10), 0x161);
    assert_eq!(a.compare_swap(b, 0x161u64, 2u64, r, 80).unwrap(), 0x161);
    assert_eq!(read_b(&p, 10), 2);
    // Other types: 32-bit signed, and doubles (set / swap / fetch only).
    a.atomic(b, AtomicOp::Set, -5i32, r, 96).unwrap();
    assert_eq!(a.fetch_atomic(b, AtomicOp::Add, 2i32, r, 96).unwrap(), -5);
    assert_eq!(a.compare_swap(b, -3i32, 40i32, r, 96).unwrap(), -3);
    assert_eq!(a.fetch_atomic(b, AtomicOp::Read, 0i32, r, 96).unwrap(), 40);
    a.atomic(b, AtomicOp::Set, 2.5f64, r, 104).unwrap();
    assert_eq!(a.fetch_atomic(b, AtomicOp::Set, -1.25f64, r, 104).unwrap(), 2.5);
    a.quiet().unwrap();
    assert_eq!(f64::from_bits(read_b(&p, 13)), -1.25);
    // Misaligned: a named error.
    let e = a.atomic(b, AtomicOp::Add, 1u64, r, 84).unwrap_err();
    assert!(e.message.contains("offset 84 is not aligned to the 8-byte u64"), "{e}");
}

#[test]
fn fetch_add_from_two_threads_loses_no_increment() {
    let Some(p) = pair() else { return };
    let p = Arc::new(p);
    let per_thread = 300u64;
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let p = p.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for _ in 0..per_thread {
                    seen.push(p.a.fetch_atomic(p.to_b, AtomicOp::Add, 1u64, &p.remote_b, 0).unwrap());
                }
                seen
            })
        })
        .collect();
    let mut all: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    all.sort_unstable();
    assert_eq!(all, (0..2 * per_thread).collect::<Vec<_>>(), "every old value seen exactly once");
    assert_eq!(read_b(&p, 0), 2 * per_thread);
}

#[test]
fn the_atomics_table_names_what_needs_a_fallback() {
    let Some(p) = pair() else { return };
    let rows = p.a.atomic_support::<u64>();
    assert_eq!(rows.len(), 12, "set, swap, fetch, 4 ops x 2 forms, compare-swap");
    for r in &rows {
        println!("{:?} {:?} {}: {}", r.op, r.kind, r.datatype, if r.native { "native" } else { "FALLBACK" });
    }
    // tcp;ofi_rxm emulates every one of them.
    assert!(rows.iter().all(|r| r.native), "{rows:?}");
    assert_eq!(p.a.atomic_support::<f64>().len(), 3);
}

#[test]
fn a_write_the_target_refuses_fails_quiet_at_once() {
    let Some(p) = pair_with(&Settings { timeout: Duration::from_secs(30), ..loopback() }) else { return };
    // A wrong key: the target refuses the write and drops the connection. tcp;ofi_rxm counts
    // the failure on no counter; its error completion (the write canceled) is all there is,
    // and quiet must report it at once instead of waiting out the 30 s timeout.
    let bad = RemoteRegion { key: p.remote_b.key ^ 0xdead_0000, ..p.remote_b };
    let big = vec![7u8; 4096];
    let start = std::time::Instant::now();
    // The put is staged and returns at once; the quiet after it reports the failure.
    let e = p.a.put(p.to_b, &big, None, &bad, 0).and_then(|()| p.a.quiet()).unwrap_err();
    let took = start.elapsed();
    println!("{e} (after {took:?})");
    assert!(took < Duration::from_secs(10), "quiet waited {took:?} for a write that had failed");
    assert_eq!(e.routine, crate::error::UNNAMED, "the C boundary names the routine");
    assert!(e.message.contains("an RMA write failed on provider tcp;ofi_rxm"), "{e}");
    assert!(e.message.contains("Fix:") && !e.message.contains("did not complete in"), "{e}");
    // Every later operation fails with it, at once.
    let e = p.a.put(p.to_b, &[1u8; 8], None, &p.remote_b, 0).and_then(|()| p.a.quiet()).unwrap_err();
    assert!(e.message.contains("an RMA write failed"), "{e}");
}

/// Packed puts (pack.rs): contiguous ones, scattered ones (more pieces than one write takes)
/// and overlapping ones (the later put's bytes must win) all arrive as at their calls.
#[test]
fn packed_puts_deliver_every_byte_in_call_order() {
    let Some(p) = pair() else { return };
    let len = 1024;
    assert!(len > p.a.info().inject_size && len <= pack::PACK_MAX, "packed");
    let mut src = vec![0u8; len];
    // 16 contiguous, then 16 at every other slot (from 32 KiB on), then slot 0 again twice.
    let offsets: Vec<usize> = (0..16).map(|k| k * len).chain((0..16).map(|k| 32768 + 2 * k * len)).chain([0, 0]).collect();
    for (k, &off) in offsets.iter().enumerate() {
        src.fill(k as u8 + 1);
        p.a.put(p.to_b, &src, None, &p.remote_b, off).unwrap();
        src.fill(0xee);
    }
    p.a.quiet().unwrap();
    let last = |off: usize| offsets.iter().rposition(|&o| o == off).unwrap() as u8 + 1;
    for &off in &offsets {
        let want = u64::from_ne_bytes([last(off); 8]);
        assert!((off / 8..(off + len) / 8).all(|w| read_b(&p, w) == want), "the last put to offset {off} is what arrived");
    }
}

/// The signal of a put-with-signal is an atomic after the data: the open pack must go first.
/// b sees the flag, then at once checks the data; were the atomic posted ahead of the pack,
/// the flag would arrive while the data still waited in a's pack.
#[test]
fn an_atomic_after_packed_puts_never_overtakes_them() {
    let Some(p) = pair() else { return };
    let len = 2048;
    let flag_word = 8000;
    for round in 1..=20u64 {
        let src = vec![round as u8; len];
        for k in 0..4 {
            p.a.put(p.to_b, &src, None, &p.remote_b, k * 3 * len).unwrap();
        }
        p.a.atomic(p.to_b, AtomicOp::Set, round, &p.remote_b, flag_word * 8).unwrap();
        let start = std::time::Instant::now();
        while read_b(&p, flag_word) != round {
            assert!(start.elapsed() < Duration::from_secs(20), "round {round}: the flag never arrived");
            std::hint::spin_loop();
        }
        let want = u64::from_ne_bytes([round as u8; 8]);
        for k in 0..4 {
            let w = k * 3 * len / 8;
            assert!((w..w + len / 8).all(|i| read_b(&p, i) == want), "round {round}: the flag arrived before put {k}'s data");
        }
    }
    p.a.quiet().unwrap();
}

/// A pack left open by a PE that posts nothing more is sent by its progress thread.
#[test]
fn an_open_pack_is_sent_without_further_calls() {
    let Some(p) = pair() else { return };
    assert!(p.a.has_progress_thread(), "tcp;ofi_rxm has manual progress");
    let src = vec![0x3cu8; 1500];
    p.a.put(p.to_b, &src, None, &p.remote_b, 4096).unwrap();
    let start = std::time::Instant::now();
    let want = u64::from_ne_bytes([0x3c; 8]);
    while !(512..512 + 1500 / 8).all(|w| read_b(&p, w) == want) {
        assert!(start.elapsed() < Duration::from_secs(20), "the open pack was never sent");
        std::thread::sleep(Duration::from_millis(1));
    }
    p.a.quiet().unwrap();
}

#[test]
fn completion_waits_nap_in_proportion_to_the_wait() {
    use super::ops::nap_after;
    use std::time::Duration;
    assert_eq!(nap_after(Duration::from_micros(60)), Duration::from_micros(15));
    assert_eq!(nap_after(Duration::ZERO), Duration::from_micros(10), "never a busy loop of zero-length sleeps");
    assert_eq!(nap_after(Duration::from_secs(60)), Duration::from_millis(1), "a late reply costs at most 1 ms more");
}

#[test]
fn a_peers_write_makes_the_target_hot_and_quiet_makes_it_idle() {
    use super::progress::HOT;
    let Some(p) = pair() else { return };
    // Connected first (the connection's own set-up wakes the target too), then nothing moves
    // for longer than HOT: both endpoints idle.
    p.a.put(p.to_b, &6u64.to_ne_bytes(), None, &p.remote_b, 0).unwrap();
    p.a.quiet().unwrap();
    // Late control traffic of the connection (the provider's own acknowledgements) may arrive
    // after quiet and make an endpoint hot again for HOT: left alone, the pair must still go
    // idle, within a bound (a fixed sleep of 3 x HOT failed about 1 run in 10 on a loaded VM).
    let start = std::time::Instant::now();
    while p.a.inner.quiet_for() < HOT || p._b.inner.quiet_for() < HOT {
        assert!(start.elapsed() < Duration::from_secs(2), "a fresh pair left alone never went idle");
        std::thread::sleep(HOT);
    }
    // An idle endpoint's pause sleeps (on the wait descriptor, for want of work) instead of
    // returning at once: an idle job must not spin.
    let t = std::time::Instant::now();
    p._b.inner.pause(Duration::from_millis(20));
    assert!(t.elapsed() >= Duration::from_millis(10), "an idle pause returned after {:?}", t.elapsed());
    p.a.put(p.to_b, &7u64.to_ne_bytes(), None, &p.remote_b, 0).unwrap();
    assert!(p.a.inner.quiet_for() < HOT, "posting makes the initiator hot");
    // The target notices the bytes arriving (its progress thread or this look at the wait
    // descriptor, before anything reads them).
    let start = std::time::Instant::now();
    while p._b.inner.quiet_for() >= HOT {
        p._b.inner.arrived();
        assert!(start.elapsed() < Duration::from_secs(10), "the target never saw the peer's write arrive");
        std::hint::spin_loop();
    }
    p.a.quiet().unwrap();
    // Over a manual-progress provider with transmit-complete writes, quiet returns once the
    // bytes left; the target applies them when its provider runs: drive it, boundedly.
    let start = std::time::Instant::now();
    while read_b(&p, 0) != 7 {
        p._b.progress(Duration::ZERO);
        assert!(start.elapsed() < Duration::from_secs(10), "the put never landed at the target");
    }
}

#[test]
fn after_a_starved_yield_hot_pauses_sleep_until_work() {
    use std::sync::atomic::Ordering;
    let Some(p) = pair() else { return };
    let b = &p._b.inner;
    p.a.put(p.to_b, &5u64.to_ne_bytes(), None, &p.remote_b, 0).unwrap();
    p.a.quiet().unwrap();
    // (Whatever the connection still had to say is read by b's progress thread meanwhile.)
    std::thread::sleep(super::progress::HOT * 3);
    // A yield just now ran another process for a time slice: a hot endpoint's pause sleeps on
    // the wait descriptor (nothing arrives: for the whole pause) instead of yielding again.
    b.yield_starved.store(b.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
    b.note_activity();
    let t = std::time::Instant::now();
    b.pause(Duration::from_millis(200));
    assert!(t.elapsed() >= Duration::from_millis(100), "a hot pause after a starved yield returned after {:?}", t.elapsed());
    // Never starved: a hot pause is a yield.
    b.yield_starved.store(0, Ordering::Relaxed);
    b.note_activity();
    let t = std::time::Instant::now();
    b.pause(Duration::from_millis(200));
    assert!(t.elapsed() < Duration::from_millis(100), "a hot pause slept {:?} with no starved yield", t.elapsed());
}

#[test]
fn a_starved_waits_pause_ends_when_the_peers_write_arrives() {
    use std::sync::atomic::Ordering;
    let Some(p) = pair() else { return };
    let b = &p._b;
    p.a.put(p.to_b, &5u64.to_ne_bytes(), None, &p.remote_b, 0).unwrap();
    p.a.quiet().unwrap();
    std::thread::sleep(super::progress::HOT * 3);
    // This process's last yield lost the core for a time slice: a polling wait's pause
    // sleeps on the wait descriptor instead (nothing arrives: for the whole pause).
    let starve = || b.inner.yield_starved.store(b.inner.epoch.elapsed().as_nanos() as u64, Ordering::Relaxed);
    starve();
    let t = std::time::Instant::now();
    b.pause(Duration::from_millis(200));
    assert!(t.elapsed() >= Duration::from_millis(100), "a starved pause returned after {:?}", t.elapsed());
    // ... and ends as soon as a peer's write arrives, long before its limit; the wait's next
    // look (driving the provider) then finds the data.
    starve();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            p.a.put(p.to_b, &9u64.to_ne_bytes(), None, &p.remote_b, 0).unwrap();
        });
        let t = std::time::Instant::now();
        b.pause(Duration::from_secs(30));
        assert!(t.elapsed() < Duration::from_secs(15), "a starved pause slept {:?} past the peer's write", t.elapsed());
    });
    let start = std::time::Instant::now();
    while read_b(&p, 0) != 9 {
        b.progress(Duration::ZERO);
        assert!(start.elapsed() < Duration::from_secs(10), "the put never landed at the target");
    }
    p.a.quiet().unwrap();
}
