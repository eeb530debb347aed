//! RMA and atomics on one endpoint, and waiting for their completion.
//!
//! Completion counting: every operation adds one to its class's "posted" count *before* it is
//! posted (and takes it back if posting fails); the provider adds one to the class's counter
//! when it completes (in error or not). `settle` waits until the counter, read first, reaches
//! the posted count, read after it: then every operation posted before the counter was read is
//! complete, including the caller's own, whatever other threads post meanwhile. Reads and
//! fetching atomics are one class, writes and plain atomics the other (FI_READ / FI_WRITE
//! counter bindings).

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::mr::{register, Region, RemoteRegion};
use super::pack::PACK_MAX;
use super::stage::{self, Stage, CHUNK, STAGED_MAX};
use super::{error, sys, Fabric, Inner, Peer};
use crate::error::{Error, ErrorKind, Result};

/// An element type libfabric atomics know.
pub trait AtomicValue: Copy + Default + Send + PartialEq + std::fmt::Debug {
    const DATATYPE: u32;
    const NAME: &'static str;
    const INTEGER: bool;
}

macro_rules! atomic_value {
    ($($t:ty => $dt:ident, $int:literal;)*) => {$(
        impl AtomicValue for $t {
            const DATATYPE: u32 = sys::$dt;
            const NAME: &'static str = stringify!($t);
            const INTEGER: bool = $int;
        }
    )*};
}
atomic_value! {
    i32 => FI_INT32, true;
    u32 => FI_UINT32, true;
    i64 => FI_INT64, true;
    u64 => FI_UINT64, true;
    f32 => FI_FLOAT, false;
    f64 => FI_DOUBLE, false;
}

/// The OpenSHMEM AMOs, as libfabric operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// add, inc (and fetch_add, fetch_inc)
    Add,
    And,
    Or,
    Xor,
    /// set (and swap, when fetching)
    Set,
    /// fetch (fetching only)
    Read,
    /// compare_swap (compare only)
    CompareSwap,
}

impl AtomicOp {
    fn fi_op(self) -> u32 {
        match self {
            AtomicOp::Add => sys::FI_SUM,
            AtomicOp::And => sys::FI_BAND,
            AtomicOp::Or => sys::FI_BOR,
            AtomicOp::Xor => sys::FI_BXOR,
            AtomicOp::Set => sys::FI_ATOMIC_WRITE,
            AtomicOp::Read => sys::FI_ATOMIC_READ,
            AtomicOp::CompareSwap => sys::FI_CSWAP,
        }
    }
}

/// Which form of an atomic: plain (no result), fetching, or compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicKind {
    Plain,
    Fetching,
    Compare,
}

impl AtomicKind {
    fn flags(self) -> u64 {
        match self {
            AtomicKind::Plain => 0,
            AtomicKind::Fetching => sys::FI_FETCH_ATOMIC,
            AtomicKind::Compare => sys::FI_COMPARE_ATOMIC,
        }
    }
}

/// One row of the atomics table: whether the provider does it natively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomicSupport {
    pub op: AtomicOp,
    pub kind: AtomicKind,
    pub datatype: &'static str,
    pub native: bool,
}

/// The AMOs OpenSHMEM has, per element kind (bitwise and add only on integers).
fn amo_rows(integer: bool) -> Vec<(AtomicOp, AtomicKind)> {
    use AtomicKind::*;
    use AtomicOp::*;
    let mut rows = vec![(Set, Plain), (Set, Fetching), (Read, Fetching)];
    if integer {
        for op in [Add, And, Or, Xor] {
            rows.push((op, Plain));
            rows.push((op, Fetching));
        }
        rows.push((CompareSwap, Compare));
    }
    rows
}

/// How long a wait for completions polls before it sleeps until the provider has work.
const SPIN_BEFORE_BLOCKING: Duration = Duration::from_micros(50);
/// The same for a put in place waiting until its data has been sent: it leaves as fast as the
/// socket drains (a 4 MiB put takes about 1 ms over tcp here), and the wait descriptor does
/// not wake a sleeper when the socket has room again, so a sleep there stalled the stream.
const IN_PLACE_SPIN: Duration = Duration::from_millis(2);
/// Between two looks of that wait, a sleep of this long: the put is not done because the
/// socket is full (a send that fits completes at once), and a full socket holds far more than
/// drains in a few tens of µs, so the sleep idles nothing; polling instead pushed the rest a
/// few KiB per system call as room appeared, 4 MiB puts at 0.62x the acknowledged ones
/// (results/net-2026-11-29c-putbw/).
const IN_PLACE_NAP: Duration = Duration::from_micros(50);

/// How long a wait that has lasted `waited` (past SPIN_BEFORE_BLOCKING) sleeps on the wait
/// descriptor: a quarter of that, 10 µs to 1 ms. The descriptor wakes the sleeper for local
/// completions only, not for what comes from peers (an RMA write into our memory, or, on
/// tcp;ofi_rxm, the reply to a read until someone drives the provider), so the sleep is kept
/// in proportion to the wait instead of relying on it.
pub(super) fn nap_after(waited: Duration) -> Duration {
    (waited / 4).clamp(Duration::from_micros(10), Duration::from_millis(1))
}

/// Rounds of a wait that polls between two of its pauses (`Inner::pace`).
const PACE: u32 = 64;
/// The same for a wait for replies (reads, fetching atomics): each round. Those replies come
/// only once the target's provider is driven, and on a host with fewer cores than busy PEs
/// (three 1-PE hosts on 2 cores) the target may be queued behind this very PE: a wait that
/// polled 64 rounds (each several system calls on tcp;ofi_rxm) before yielding held it off
/// that long. With a yield each round (and targets kept hot: `Fabric::progress`), 8-byte
/// puts to 2 PEs + one quiet took 28-34 µs instead of 50-93 (results/net-2026-11-28c-multi/);
/// alone on its core a yield costs about 1 µs.
const REPLY_PACE: u32 = 1;

#[derive(Clone, Copy)]
enum Class {
    Writes,
    Reads,
}

impl Inner {
    fn class(&self, c: Class) -> (*mut sys::fid_cntr, &AtomicU64, &'static str) {
        match c {
            Class::Writes => (self.writes, &self.writes_posted, "writes and atomics"),
            Class::Reads => (self.reads, &self.reads_posted, "reads and fetching atomics"),
        }
    }

    fn settled(&self, c: Class) -> &AtomicU64 {
        match c {
            Class::Writes => &self.writes_settled,
            Class::Reads => &self.reads_settled,
        }
    }

    /// Reads the CQ, which also drives progress on manual-progress providers; records errors.
    pub(super) fn poll(&self) {
        let mut entries = [std::ptr::null_mut::<c_void>(); 8];
        loop {
            // SAFETY: the CQ is open with FI_CQ_FORMAT_CONTEXT (one pointer per entry) and the
            // buffer holds `entries.len()` of them.
            let rc = unsafe { sys::cq_read(self.cq, entries.as_mut_ptr().cast(), entries.len()) };
            if rc == -sys::FI_EAVAIL {
                self.read_error();
            } else if rc <= 0 {
                return;
            }
            for &context in entries.iter().take(rc.max(0) as usize).filter(|c| !c.is_null()) {
                // SAFETY: only staged writes ask for completions, with their slot as context.
                unsafe { stage::completed(context) };
            }
        }
    }

    fn read_error(&self) {
        // SAFETY: a zeroed entry (err_data_size 0: the provider lends its own buffer) is valid.
        let mut e: sys::fi_cq_err_entry = unsafe { std::mem::zeroed() };
        // SAFETY: the CQ is open; `e` is writable.
        if unsafe { sys::cq_readerr(self.cq, &mut e) } < 0 {
            return;
        }
        if !e.op_context.is_null() {
            // SAFETY: as in `poll` (a staged write that failed is finished too).
            unsafe { stage::completed(e.op_context) };
        }
        let what = if e.flags & sys::FI_ATOMIC != 0 {
            "an atomic"
        } else if e.flags & sys::FI_READ != 0 {
            "an RMA read"
        } else if e.flags & sys::FI_WRITE != 0 {
            "an RMA write"
        } else {
            "an operation"
        };
        // SAFETY: prov_errno and err_data are from this CQ's last error entry, read just now.
        let detail = unsafe { sys::cq_strerror(self.cq, e.prov_errno, e.err_data) }
            .filter(|s| !s.is_empty())
            .map(|s| format!(" (provider says: {s})"))
            .unwrap_or_default();
        let message = format!(
            "{what} failed on provider {}: {}{detail}. Fix: {}",
            self.info.provider,
            self.lib.api.describe(e.err as isize),
            fix_for(e.err)
        );
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(message);
    }

    /// The first error completion read so far, if any (every later operation fails with it).
    pub(super) fn failure(&self) -> Option<String> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn failed(&self, errors: u64) -> Error {
        // The error entry may trail the counter's error count a little.
        for _ in 0..1000 {
            if let Some(m) = self.failure() {
                return error(m);
            }
            self.poll();
            std::thread::yield_now();
        }
        error(format!(
            "{errors} operations failed on provider {} (it gave no details; FI_LOG_LEVEL=warn makes it say more)",
            self.info.provider
        ))
    }

    /// Waits until every operation of class `c` posted so far has completed.
    fn settle(&self, c: Class) -> Result<()> {
        self.settle_after_spinning(c, SPIN_BEFORE_BLOCKING, Duration::ZERO)
    }

    /// `settle`, polling for `spin` before it sleeps (`pace`), and sleeping `nap` (if not zero)
    /// after each look that found it not done.
    fn settle_after_spinning(&self, c: Class, spin: Duration, nap: Duration) -> Result<()> {
        let (cntr, posted, what) = self.class(c);
        let settled = self.settled(c);
        // Nothing posted since a wait saw everything complete (a barrier's quiet, mostly):
        // no call into the provider, which on tcp;ofi_rxm costs system calls per counter.
        if posted.load(Ordering::Acquire) == settled.load(Ordering::Acquire) {
            return Ok(());
        }
        let start = Instant::now();
        let mut rounds = 0u32;
        let every = match c {
            Class::Reads => REPLY_PACE,
            Class::Writes => PACE,
        };
        let _driving = self.driver();
        loop {
            // SAFETY: the counter is open; reading it also drives manual progress.
            let done = unsafe { sys::cntr_read(cntr) };
            let want = posted.load(Ordering::Acquire);
            // A failed operation counts as an error, not as done: `done` reaching `want` says
            // they all succeeded, without the error count's call (each read drives progress,
            // system calls on tcp;ofi_rxm).
            if done >= want {
                settled.fetch_max(want, Ordering::AcqRel);
                return Ok(());
            }
            // SAFETY: as above.
            let errors = unsafe { sys::cntr_readerr(cntr) };
            if errors > 0 {
                return Err(self.failed(errors));
            }
            self.poll();
            // tcp;ofi_rxm counts a failed write or read on no counter: its error completion,
            // read by `poll`, is all there is, and the operation never completes otherwise.
            if let Some(m) = self.failure() {
                return Err(error(m));
            }
            if !nap.is_zero() {
                std::thread::sleep(nap);
            }
            if let Some(waited) = self.pace(&mut rounds, every, start, spin) {
                return Err(self.incomplete(&format!("{} {what} posted", want - done), waited));
            }
        }
    }

    /// The error for `what` (operations) not completed after `waited`.
    #[cold]
    fn incomplete(&self, what: &str, waited: Duration) -> Error {
        error(format!(
            "{what} on provider {} did not complete in {:.0} s (a peer that exited or stopped making progress?). \
                 Fix: check that every PE is alive and reachable; RSHMEM_FABRIC_TIMEOUT sets the limit",
            self.info.provider,
            waited.as_secs_f64()
        ))
    }

    /// Paces a wait that polls: every `every`th round, once the wait has lasted `spin`, pauses
    /// (`Inner::pause`: yields while the endpoint is hot, else sleeps until the provider has
    /// work, for a quarter of the wait so far, at most 1 ms), and before that yields. A quick
    /// reply is caught by polling; a slow one is waited for in the kernel, leaving the core to
    /// whoever has to produce it. Returns how long the wait has lasted once that is past the
    /// timeout.
    fn pace(&self, rounds: &mut u32, every: u32, start: Instant, spin: Duration) -> Option<Duration> {
        *rounds += 1;
        if !rounds.is_multiple_of(every) {
            return None;
        }
        let waited = start.elapsed();
        if waited > spin {
            self.pause(nap_after(waited));
        } else {
            self.yield_or_block(nap_after(waited));
        }
        (waited > self.timeout).then_some(waited)
    }

    /// Claims a free chunk of the staging ring, waiting (and driving the provider) until the
    /// write that last used it has completed.
    pub(super) fn claim_chunk(&self, stage: &Stage) -> Result<usize> {
        let i = stage.next_slot();
        let slot = stage.slot(i);
        if slot.take() {
            return Ok(i);
        }
        let start = Instant::now();
        let _driving = self.driver();
        let mut rounds = 0u32;
        loop {
            self.poll();
            if slot.take() {
                return Ok(i);
            }
            if let Some(m) = self.failure() {
                return Err(error(m));
            }
            if let Some(waited) = self.pace(&mut rounds, PACE, start, SPIN_BEFORE_BLOCKING) {
                return Err(self.incomplete("a staging buffer's write", waited));
            }
        }
    }

    /// Posts one write (counted with the writes), retrying while the provider's queue is full.
    pub(super) fn post_write(&self, what: &str, op: impl FnMut() -> isize) -> Result<()> {
        self.post(what, Class::Writes, op)
    }

    /// Posts one operation of class `c`, retrying while the provider's queue is full. A full
    /// queue empties only as completions are read and, on manual-progress providers, as this
    /// endpoint reads what its peers send (a peer blocked on its own full queue toward us
    /// drains only if we read): so each retry drives the provider (CQ and both counters), this
    /// thread stands in for the progress thread meanwhile, a failure read on the way ends the
    /// wait at once, and a long wait sleeps until the provider has work, leaving the core to
    /// the peers that have to make room.
    fn post(&self, what: &str, c: Class, mut op: impl FnMut() -> isize) -> Result<()> {
        let (_, posted, _) = self.class(c);
        let mut start = None;
        let mut _driving = None;
        let mut rounds = 0u32;
        loop {
            posted.fetch_add(1, Ordering::AcqRel);
            let rc = op();
            if rc >= 0 {
                self.note_activity();
                // A thread posting calls into the provider: the progress thread keeps out of
                // its way (progress.rs: it parks while application threads drive).
                self.driven.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            posted.fetch_sub(1, Ordering::AcqRel);
            if rc != -sys::FI_EAGAIN {
                return self.check(what, rc);
            }
            // (Only a full queue pays for the clock and the driver.)
            let since = *start.get_or_insert_with(Instant::now);
            _driving.get_or_insert_with(|| self.driver());
            self.poll();
            // SAFETY: the counters are open; reading them drives manual progress too.
            unsafe {
                sys::cntr_read(self.writes);
                sys::cntr_read(self.reads);
            }
            if let Some(m) = self.failure() {
                return Err(error(m));
            }
            if let Some(waited) = self.pace(&mut rounds, PACE, since, SPIN_BEFORE_BLOCKING) {
                return Err(self.stuck_posting(what, waited));
            }
        }
    }

    /// The error for an operation the provider refused to take (FI_EAGAIN) for the whole
    /// timeout, with the counts that say what this endpoint still waits for.
    #[cold]
    fn stuck_posting(&self, what: &str, waited: Duration) -> Error {
        // SAFETY: the counters are open.
        let (writes, reads) = unsafe { (sys::cntr_read(self.writes), sys::cntr_read(self.reads)) };
        let open = |posted: &AtomicU64, done: u64| posted.load(Ordering::Acquire).saturating_sub(done);
        error(format!(
            "{what}: provider {} took no new operation for {:.0} s (its send queue stayed full, or it could not connect \
                 to the peer; {} writes and {} reads of this PE were still incomplete). Fix: check that the peer is alive, \
                 reachable on the interface chosen (RSHMEM_FABRIC_DOMAIN) and calling into SHMEM; FI_LOG_LEVEL=warn makes the \
                 provider say more; RSHMEM_FABRIC_TIMEOUT sets the limit",
            self.info.provider,
            waited.as_secs_f64(),
            open(&self.writes_posted, writes),
            open(&self.reads_posted, reads),
        ))
    }
}

fn fix_for(err: i32) -> &'static str {
    match err {
        libc::ECONNREFUSED | libc::ECONNRESET | libc::EHOSTUNREACH | libc::ENETUNREACH | libc::ETIMEDOUT | libc::EPIPE => {
            "the peer may have exited, or its address is not reachable from this interface (RSHMEM_FABRIC_DOMAIN names it on every host)"
        }
        libc::ECANCELED => {
            "the connection to the peer was closed under the operation: the peer exited, or refused an operation of ours \
             (an address or key it has not registered: its own error says which)"
        }
        libc::EACCES | libc::EINVAL | libc::EFAULT | libc::EPERM | 266 => {
            "the remote address or key is outside a registered region (register the memory on the peer and send its key before use)"
        }
        _ => "see the provider's message; FI_LOG_LEVEL=warn makes libfabric say more",
    }
}

/// A local buffer's descriptor, and the temporary registration behind it if one was needed.
struct Local {
    desc: sys::Ptr,
    _temp: Option<Region>,
}

impl Fabric {
    fn local(&self, ptr: *const u8, len: usize, region: Option<&Region>) -> Result<Local> {
        if let Some(r) = region {
            if !r.contains(ptr as usize, len) {
                return Err(Error::invalid_value(format!(
                    "the local buffer of {len} bytes at {ptr:p} is not inside the region given for it"
                )));
            }
            return Ok(Local { desc: r.desc(), _temp: None });
        }
        if !self.inner.info.requires(sys::FI_MR_LOCAL) || len == 0 {
            return Ok(Local { desc: std::ptr::null_mut(), _temp: None });
        }
        // FI_MR_LOCAL: this buffer must be registered for the operation.
        let temp = register(&self.inner, ptr.cast_mut(), len)?;
        Ok(Local { desc: temp.desc(), _temp: Some(temp) })
    }

    fn target(dst: &RemoteRegion, off: usize, len: usize) -> Result<u64> {
        dst.at(off, len).ok_or_else(|| {
            Error::invalid_value(format!("{len} bytes at offset {off} are outside the peer's registered region of {} bytes", dst.len))
        })
    }

    /// Posts one RMA write (Class::Writes) or read (Class::Reads) of `len` bytes at `buf`, and
    /// with `wait`, waits for it. The caller keeps `buf` valid (and, for a read, untouched)
    /// until the operation is complete.
    #[allow(clippy::too_many_arguments)]
    fn rma(
        &self,
        c: Class,
        peer: Peer,
        buf: *mut u8,
        len: usize,
        local: Option<&Region>,
        remote: &RemoteRegion,
        off: usize,
        wait: bool,
    ) -> Result<()> {
        let addr = Self::target(remote, off, len)?;
        if len == 0 {
            return Ok(());
        }
        self.out.send(&self.inner)?;
        let l = self.local(buf, len, local)?;
        let inner = &self.inner;
        let (what, ep, key) = (if matches!(c, Class::Writes) { "fi_write" } else { "fi_read" }, inner.ep, remote.key);
        // SAFETY: the caller keeps `buf` valid for `len` bytes until completion (see above).
        inner.post(what, c, || unsafe {
            match c {
                Class::Writes => sys::write(ep, buf.cast_const().cast(), len, l.desc, peer.0, addr, key),
                Class::Reads => sys::read(ep, buf.cast(), len, l.desc, peer.0, addr, key),
            }
        })?;
        if wait {
            inner.settle(c)?;
        }
        Ok(())
    }

    /// Writes `src` to the peer; returns when `src` may be reused (small puts are injected,
    /// puts of a few KiB packed where a progress thread sends what stays packed: pack.rs).
    pub fn put(&self, peer: Peer, src: &[u8], local: Option<&Region>, dst: &RemoteRegion, off: usize) -> Result<()> {
        let inner = &self.inner;
        if src.len() > inner.info.inject_size && src.len() <= PACK_MAX && self.progress.is_some() {
            let addr = Self::target(dst, off, src.len())?;
            if self.out.put(inner, peer, dst.key, addr, src)? {
                inner.wake_for_pack();
            }
            return Ok(());
        }
        self.out.send(inner)?;
        if !src.is_empty() && src.len() <= inner.info.inject_size {
            let addr = Self::target(dst, off, src.len())?;
            // SAFETY: inject copies `src` before returning.
            return inner.post("fi_inject_write", Class::Writes, || unsafe {
                sys::inject_write(inner.ep, src.as_ptr().cast(), src.len(), peer.0, addr, dst.key)
            });
        }
        if self.sends_in_place(src.len()) {
            return self.put_in_place(peer, src, local, dst, off);
        }
        if src.len() <= STAGED_MAX {
            return self.put_staged(peer, src, dst, off);
        }
        // `src` stays borrowed until the write is complete (wait).
        self.rma(Class::Writes, peer, src.as_ptr().cast_mut(), src.len(), local, dst, off, true)
    }

    /// Whether a blocking put of `len` bytes is written straight from the caller's buffer
    /// (`put_in_place`): above what packs, on a manual-progress
    /// provider (tcp: there a write is sent when posted; on hardware its completion may wait
    /// for more than the peer's acknowledgement, and the staging ring is kept) that keeps
    /// writes in order and serves a read after the writes before it (quiet's read-back).
    fn sends_in_place(&self, len: usize) -> bool {
        let info = &self.inner.info;
        len > PACK_MAX && self.progress.is_some() && info.ordered_writes && info.ordered_reads
    }

    /// A put written from `src` itself: no staging copy. It asks for no completion flag, so it
    /// completes (and `src` may be reused) once its data is in the socket, without the peer's
    /// acknowledgement that tcp (libfabric 1.17 and later) sends for a FI_TRANSMIT_COMPLETE
    /// write, which cost a round trip per put (the socket ran dry before the next put); while
    /// the socket is full the wait sleeps `IN_PLACE_NAP` between looks (session 16 measured
    /// this put without the acknowledgement 3x slower at 256 KiB when it polled instead; with
    /// the naps 256 KiB puts went 1.24-1.39x faster: results/net-2026-11-29c-putbw/). Puts
    /// over 256 KiB kept the acknowledgement until session 30: without it, 1 MiB puts were
    /// 1.14x faster on a loaded machine and level on a quiet one, never slower
    /// (results/net-2026-11-29f-putbw/). The peer is noted: quiet's
    /// read-back, ordered after the write, is what says it arrived.
    fn put_in_place(&self, peer: Peer, src: &[u8], local: Option<&Region>, dst: &RemoteRegion, off: usize) -> Result<()> {
        let addr = Self::target(dst, off, src.len())?;
        let l = self.local(src.as_ptr(), src.len(), local)?;
        let inner = &self.inner;
        // SAFETY: `src` stays borrowed until the write has completed (settle below).
        inner.post("fi_writemsg", Class::Writes, || unsafe {
            let to = [sys::fi_rma_iov { addr, len: src.len(), key: dst.key }];
            sys::writemsg(inner.ep, src.as_ptr().cast(), src.len(), l.desc, peer.0, &to, std::ptr::null_mut(), 0)
        })?;
        {
            let mut unflushed = inner.unflushed.lock().unwrap_or_else(|p| p.into_inner());
            match unflushed.iter_mut().find(|(p, ..)| *p == peer) {
                Some(e) => *e = (peer, dst.key, addr),
                None => unflushed.push((peer, dst.key, addr)),
            }
        }
        inner.settle_after_spinning(Class::Writes, IN_PLACE_SPIN, IN_PLACE_NAP)
    }

    /// Quiet's read-back: one byte read from each peer sent an in-place write since
    /// the last quiet, at a place that write went to, and from each of `also` (peers the
    /// caller sent injected writes or atomics, at the start of the region given), all posted
    /// before one wait, so the whole read-back costs one round trip however many peers it
    /// reads from. The provider serves a read after the writes before it (FI_ORDER_RAW), so
    /// when the reads are back every such write is in place. The lock is held until then: a
    /// quiet on another thread meanwhile waits for these reads instead of finding the list
    /// empty and returning early.
    fn read_back(&self, also: &[(Peer, &RemoteRegion)]) -> Result<()> {
        let inner = &self.inner;
        let mut unflushed = inner.unflushed.lock().unwrap_or_else(|p| p.into_inner());
        for &(peer, region) in also {
            if !unflushed.iter().any(|(p, ..)| *p == peer) {
                unflushed.push((peer, region.key, Self::target(region, 0, 1)?));
            }
        }
        if unflushed.is_empty() {
            return Ok(());
        }
        let mut probes = vec![0u8; unflushed.len()];
        let l = self.local(probes.as_ptr(), probes.len(), None)?;
        for (i, &(peer, key, addr)) in unflushed.iter().enumerate() {
            let buf = probes[i..].as_mut_ptr();
            // SAFETY: `probes` outlives the reads (settle below, before it is dropped).
            inner.post("fi_read", Class::Reads, || unsafe { sys::read(inner.ep, buf.cast(), 1, l.desc, peer.0, addr, key) })?;
        }
        unflushed.clear();
        inner.settle(Class::Reads)
    }

    /// A put through the staging ring (stage.rs): `src` is copied chunk by chunk, each chunk
    /// posted as soon as it is filled; returns without waiting for the writes.
    pub(super) fn put_staged(&self, peer: Peer, src: &[u8], dst: &RemoteRegion, off: usize) -> Result<()> {
        let addr = Self::target(dst, off, src.len())?;
        let inner = &self.inner;
        let stage = self.out.stage(inner)?;
        let completion =
            sys::FI_COMPLETION | if inner.info.delivery_complete { sys::FI_DELIVERY_COMPLETE } else { sys::FI_TRANSMIT_COMPLETE };
        for (k, piece) in src.chunks(CHUNK).enumerate() {
            let i = inner.claim_chunk(stage)?;
            let chunk = stage.chunk(i);
            // SAFETY: we hold slot i, so nothing else uses its chunk, which holds CHUNK bytes.
            unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), chunk, piece.len()) };
            let at = addr + (k * CHUNK) as u64;
            // SAFETY: the chunk stays ours (slot busy) until the write's completion frees it.
            let posted = inner.post("fi_writemsg", Class::Writes, || unsafe {
                let to = [sys::fi_rma_iov { addr: at, len: piece.len(), key: dst.key }];
                sys::writemsg(inner.ep, chunk.cast_const().cast(), piece.len(), stage.desc(), peer.0, &to, stage.context(i), completion)
            });
            if let Err(e) = posted {
                stage.slot(i).free();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Starts a write of `len` bytes at `src` (inside `local`, if given) to the peer; `quiet`
    /// completes it. A buffer outside any region on a provider that needs local registrations
    /// is registered for the call, which then waits (the registration cannot outlive it).
    ///
    /// # Safety
    /// `src` must stay valid and unchanged until the next `quiet` returns.
    pub unsafe fn put_nbi(
        &self,
        peer: Peer,
        src: *const u8,
        len: usize,
        local: Option<&Region>,
        dst: &RemoteRegion,
        off: usize,
    ) -> Result<()> {
        let wait = self.temporary_registration(local);
        self.rma(Class::Writes, peer, src.cast_mut(), len, local, dst, off, wait)
    }

    fn temporary_registration(&self, local: Option<&Region>) -> bool {
        local.is_none() && self.inner.info.requires(sys::FI_MR_LOCAL)
    }

    /// Reads from the peer into `dst`; returns when the data has arrived.
    pub fn get(&self, peer: Peer, dst: &mut [u8], local: Option<&Region>, src: &RemoteRegion, off: usize) -> Result<()> {
        // `dst` stays mutably borrowed until the read is complete (wait).
        self.rma(Class::Reads, peer, dst.as_mut_ptr(), dst.len(), local, src, off, true)
    }

    /// Starts a read of `len` bytes from the peer into `dst` (inside `local`, if given; as
    /// for put_nbi otherwise); `quiet` completes it.
    ///
    /// # Safety
    /// `dst` must stay valid, and not be read or written, until the next `quiet` returns.
    pub unsafe fn get_nbi(
        &self,
        peer: Peer,
        dst: *mut u8,
        len: usize,
        local: Option<&Region>,
        src: &RemoteRegion,
        off: usize,
    ) -> Result<()> {
        let wait = self.temporary_registration(local);
        self.rma(Class::Reads, peer, dst, len, local, src, off, wait)
    }

    /// Drives the provider from this thread (the progress thread stays parked meanwhile and
    /// for a while after), then, with `block` > 0, pauses until it has work or `block` passes:
    /// a yield while the endpoint is hot, a sleep once it is idle (progress.rs).
    pub fn progress(&self, block: Duration) {
        let inner = &self.inner;
        let _driving = inner.driver();
        if let Err(e) = self.out.send(inner) {
            inner.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.message);
        }
        if block.is_zero() {
            inner.poll();
            return;
        }
        // A wait that would sleep: first see whether a peer sent something (a request this
        // PE's provider has to answer keeps the endpoint hot: `pause` then only yields).
        inner.arrived();
        inner.poll();
        inner.pause(block);
        // Looked at again before the provider is driven: a request that arrived during the
        // pause and is served by the poll below keeps this PE hot too. Without this look a
        // PE whose requests were all read by this poll went idle after `HOT` although it
        // served one every few tens of µs, and slept (results/net-2026-11-28c-multi/).
        inner.arrived();
        inner.poll();
    }

    /// A pause between two looks of a wait that still polls (a wait for memory other hosts
    /// write, in its first `NETWORK_SPIN`): a yield, or, while this process's yields are
    /// starved (`Inner::yield_or_block`), a sleep until the provider has work, at most `max`.
    /// A plain yield there handed the core to a busy process for its whole time slice: a
    /// barrier across hosts beside 2 busy loops took 1.6-1.8 ms (results/net-2026-11-28d-load/).
    pub fn pause(&self, max: Duration) {
        let inner = &self.inner;
        let _driving = inner.driver();
        inner.yield_or_block(max);
    }

    /// Completes every operation this endpoint has posted (OpenSHMEM quiet).
    pub fn quiet(&self) -> Result<()> {
        self.quiet_reading(&[])
    }

    /// `quiet`, whose read-back also reads one byte from each of `also` (peers sent writes or
    /// atomics that complete when sent, with a region of theirs to read from): the reads go
    /// out together and are waited for once (`read_back`).
    pub fn quiet_reading(&self, also: &[(Peer, &RemoteRegion)]) -> Result<()> {
        self.out.send(&self.inner)?;
        self.inner.settle(Class::Writes)?;
        self.read_back(also)?;
        self.inner.settle(Class::Reads)
    }

    /// Orders earlier writes to each peer before later ones (OpenSHMEM fence): nothing to do
    /// where the provider delivers writes in order, else a quiet of the writes.
    pub fn fence(&self) -> Result<()> {
        self.out.send(&self.inner)?;
        if self.inner.info.ordered_writes {
            return Ok(());
        }
        self.inner.settle(Class::Writes)
    }

    fn amo_target<T: AtomicValue>(&self, peer: Peer, op: AtomicOp, dst: &RemoteRegion, off: usize) -> Result<sys::AtomicTarget> {
        let size = std::mem::size_of::<T>();
        if !off.is_multiple_of(size) {
            return Err(Error::invalid_value(format!("offset {off} is not aligned to the {size}-byte {}", T::NAME)));
        }
        if !self.inner.info.atomics {
            return Err(Error::of(
                ErrorKind::Unsupported,
                format!("fabric: provider {} has no native atomics; this AMO needs the fallback", self.inner.info.provider),
            ));
        }
        let addr = Self::target(dst, off, size)?;
        self.out.send(&self.inner)?;
        Ok(sys::AtomicTarget { peer: peer.0, addr, key: dst.key, datatype: T::DATATYPE, op: op.fi_op() })
    }

    /// A non-fetching AMO (add, and, or, xor, set); complete at the next quiet.
    pub fn atomic<T: AtomicValue>(&self, peer: Peer, op: AtomicOp, value: T, dst: &RemoteRegion, off: usize) -> Result<()> {
        let t = self.amo_target::<T>(peer, op, dst, off)?;
        let inner = &self.inner;
        // SAFETY: inject copies the operand before returning.
        inner.post("fi_inject_atomic", Class::Writes, || unsafe { sys::inject_atomic(inner.ep, (&value as *const T).cast(), t) })
    }

    /// A fetching AMO (fetch_add/and/or/xor, swap, fetch); returns the old value.
    pub fn fetch_atomic<T: AtomicValue>(&self, peer: Peer, op: AtomicOp, value: T, dst: &RemoteRegion, off: usize) -> Result<T> {
        let t = self.amo_target::<T>(peer, op, dst, off)?;
        // operand, result: one buffer, so FI_MR_LOCAL needs one registration.
        let mut buf = [value, T::default()];
        let l = self.local(buf.as_ptr().cast(), std::mem::size_of_val(&buf), None)?;
        let inner = &self.inner;
        let (operand, result) = (buf.as_ptr(), buf[1..].as_mut_ptr());
        // SAFETY: `buf` lives until `settle` has seen the fetch complete.
        inner.post("fi_fetch_atomic", Class::Reads, || unsafe {
            sys::fetch_atomic(inner.ep, operand.cast(), l.desc, result.cast(), l.desc, t)
        })?;
        inner.settle(Class::Reads)?;
        Ok(buf[1])
    }

    /// compare_swap: writes `value` where the remote element equals `compare`; returns the old.
    pub fn compare_swap<T: AtomicValue>(&self, peer: Peer, compare: T, value: T, dst: &RemoteRegion, off: usize) -> Result<T> {
        let t = self.amo_target::<T>(peer, AtomicOp::CompareSwap, dst, off)?;
        let mut buf = [value, compare, T::default()];
        let l = self.local(buf.as_ptr().cast(), std::mem::size_of_val(&buf), None)?;
        let inner = &self.inner;
        let (operand, cmp, result) = (buf.as_ptr(), buf[1..].as_ptr(), buf[2..].as_mut_ptr());
        // SAFETY: `buf` lives until `settle` has seen the compare-swap complete.
        inner.post("fi_compare_atomic", Class::Reads, || unsafe {
            sys::compare_atomic(inner.ep, operand.cast(), cmp.cast(), result.cast(), [l.desc; 3], t)
        })?;
        inner.settle(Class::Reads)?;
        Ok(buf[2])
    }

    /// Which AMOs the provider does natively for `T`; the others need the fallback.
    pub fn atomic_support<T: AtomicValue>(&self) -> Vec<AtomicSupport> {
        let inner = &self.inner;
        amo_rows(T::INTEGER)
            .into_iter()
            .map(|(op, kind)| {
                let native = inner.info.atomics && {
                    let mut attr = sys::fi_atomic_attr { count: 0, size: 0 };
                    // SAFETY: the domain and endpoint are open; `attr` is writable.
                    let rc = unsafe { sys::query_atomic(inner.domain, T::DATATYPE, op.fi_op(), &mut attr, kind.flags()) };
                    if rc == -sys::FI_ENOSYS {
                        // SAFETY: as above (the endpoint's *valid calls, for older providers).
                        unsafe { sys::atomic_valid(inner.ep, T::DATATYPE, op.fi_op(), kind.flags()) >= 1 }
                    } else {
                        rc == 0 && attr.count >= 1
                    }
                };
                AtomicSupport { op, kind, datatype: T::NAME, native }
            })
            .collect()
    }
}
