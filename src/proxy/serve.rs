//! The proxy thread's loop. Each lane is served in ticket order: a slot is taken once its `seq`
//! says this lap's command is complete in it, run, and its credit returned by advancing the
//! lane's `consumed` — except that the slot of a fetching command stays out of circulation
//! until its issuer has taken the result (credits come back in ticket order, so one slow
//! reader holds back later slots of its lane, never overwrites its result).
//!
//! Ordering: one lane's commands run in order, and every command runs to the point the
//! transport's semantics need before the next starts; a put-with-signal is a put, a transport
//! fence, then the signal AMO; a fence command is a transport fence; a quiet is a transport
//! quiet, after which `completed` passes it.
//!
//! Merging: consecutive `p` commands of one lane to one PE at contiguous addresses (a put from
//! shared memory arrives as 8-byte `p`s; so do a warp's `p`s to neighbouring elements) go to
//! the transport as one put (`Run`), issued before any other command of the lane runs and
//! before the lane's credits come back, so a quiet that waits for them finds them sent. One put
//! for several is no weaker than the separate puts, which nothing ordered among themselves.
//! After each round over the lanes `Inbound::flush` lets a pipelining transport publish what
//! it was given.
//!
//! Gets: a round's `g` commands are read together after it (`Gets`): neighbouring ones to one
//! PE as one span, all of them completed by one quiet.
//!
//! Device stalls: a device thread's long wait posted to the channel (`Channel::stall_report`) is
//! logged on the host at once, at the top of every round.
//!
//! Idle: after `spin` without a command the thread sleeps, 1 µs at first, doubling up to
//! `max_sleep` (GPU threads cannot wake a sleeping thread; the bounded sleep is the price).
//! With PEs on other hosts it keeps polling for `linger` after its last work, and for up to
//! `awaiting` while requests it sent are unacknowledged (`Pacing`): an idle job still sleeps.
//!
//! A command that fails (transport error, or a malformed command) stops the thread: the channel
//! is marked dead at that lane/ticket, so waiting issuers stop and say so, and the message is
//! logged and kept for `Proxy::failure`. A panic inside the transport does the same.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Channel, Inbound, LocalMemory, ProxyConfig};
use crate::abi::*;
use crate::error::{Error, Result};
use crate::fabric::AtomicOp;
use crate::transport::{AmoType, Segment, Transport};

/// Commands other than `g`s taken from one lane before the next lane gets a turn (`g`s: up to
/// the ring's slots, see `serve`).
const BATCH: usize = 32;

/// The most bytes of `p` commands merged into one put.
const MERGE_MAX: usize = 64 << 10;

/// Consecutive `p` commands to one PE at contiguous heap offsets, not yet given to the
/// transport.
#[derive(Default)]
struct Run {
    pe: usize,
    start: usize,
    data: Vec<u8>,
}

impl Run {
    /// Takes `value`'s first `len` bytes for heap offset `off` of `pe` if they continue the run.
    fn extend(&mut self, pe: usize, off: usize, value: u64, len: usize) -> bool {
        let continues = self.data.is_empty() || (pe == self.pe && off == self.start + self.data.len());
        if !continues || self.data.len() + len > MERGE_MAX {
            return false;
        }
        if self.data.is_empty() {
            (self.pe, self.start) = (pe, off);
        }
        self.data.extend_from_slice(&value.to_le_bytes()[..len]);
        true
    }

    /// Gives the run to the transport as one put.
    fn issue(&mut self, tr: &dyn Transport) -> Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        // No C routine runs the proxy thread: its errors are named here.
        let r = tr.put(self.pe, Segment::Heap, self.start, &self.data).map_err(|e| e.named("nvshmem_p"));
        self.data.clear();
        r
    }
}

struct Lane {
    /// The next ticket to take.
    head: u64,
    /// Fetching commands whose results the issuers have not taken yet, oldest first.
    unread: VecDeque<u64>,
    /// The last `consumed` written.
    returned: u64,
}

/// What the proxy thread works with.
pub(super) struct Parts<'a> {
    pub ch: &'a Channel,
    pub transport: &'a dyn Transport,
    pub memory: &'a dyn LocalMemory,
    pub inbound: Option<&'a dyn Inbound>,
    pub cfg: &'a ProxyConfig,
    pub stop: &'a AtomicBool,
}

pub(super) fn run(p: &Parts, failure: &Mutex<Option<String>>) {
    let (ch, stop) = (p.ch, p.stop);
    let mut lanes: Vec<Lane> = (0..ch.lanes()).map(|_| Lane { head: 0, unread: VecDeque::new(), returned: 0 }).collect();
    let mut current: (usize, i32, u64) = (0, -1, 0);
    let mut gets = Gets::default();
    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| serve(p, &mut lanes, &mut current, &mut gets)));
    if gets.in_flight() {
        // The transport may still write answers into them (another thread's wait reading
        // acknowledgements): never freed.
        std::mem::forget(gets);
    }
    let message = match served {
        Ok(Ok(())) => return,
        // Stopped while a request failed (the process is exiting): nothing is waiting for it.
        Ok(Err(_)) if stop.load(Ordering::Acquire) => return,
        Ok(Err(e)) => e.to_string(),
        Err(panic) => {
            let what = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            format!("the proxy thread panicked: {}", what.unwrap_or_else(|| "(no message)".into()))
        }
    };
    let (lane, pe, ticket) = current;
    let message = format!("PE {}: proxy thread stopped at lane {lane} command {ticket} (to PE {pe}): {message}; device operations to other hosts can no longer complete", ch.mype());
    crate::log::warn(&message);
    *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
    ch.set_dead(lane, pe, ticket);
}

fn serve(p: &Parts, lanes: &mut [Lane], current: &mut (usize, i32, u64), gets: &mut Gets) -> Result<()> {
    let Parts { ch, transport, memory, inbound, cfg, stop } = *p;
    let mut pacing = Pacing::new(Instant::now());
    let mut run = Run::default();
    let mut stalls = 0u64;
    while !stop.load(Ordering::Acquire) {
        if let Some(line) = ch.stall_report(&mut stalls) {
            crate::log::warn(&line);
        }
        let mut worked = false;
        for (l, lane) in lanes.iter_mut().enumerate() {
            // `BATCH` commands before the next lane's turn, `g`s aside: those only wait for the
            // end of the round, so all the lane holds are taken (up to its slots) and read together.
            let (mut others, mut gs) = (0, 0);
            while others < BATCH && gs < ch.slots() {
                let t = lane.head;
                if ch.cmd_seq(l, t).load(Ordering::Acquire) != t + 1 {
                    break;
                }
                // SAFETY: the issuer finished writing this slot before its release store of
                // `seq`, which we acquired; nobody writes it again before we return its credit.
                let cmd = unsafe { ch.cmd(l, t).read_volatile() };
                *current = (l, cmd.pe, t);
                crate::log::trace(|| format!("proxy: lane {l} command {t}: op {:#x} to PE {}, {} bytes", cmd.op, cmd.pe, cmd.bytes));
                if let Some((pe, len)) = started_g(&cmd, cfg) {
                    // Read at the end of the round: after every `p` of the lane, this thread's
                    // before it among them (its run is issued at the end of the lane's turn).
                    gets.take(TakenG { pe, off: cmd.remote as usize, len, lane: l, ticket: t });
                    gs += 1;
                } else {
                    others += 1;
                    if !merged(&mut run, &cmd, cfg) {
                        run.issue(transport)?;
                        if !merged(&mut run, &cmd, cfg) {
                            execute(ch, transport, memory, cfg, l, t, &cmd)?;
                        }
                    }
                }
                if cmd.op & RSHMEM_PROXY_FLAG_RESULT != 0 {
                    lane.unread.push_back(t);
                }
                lane.head = t + 1;
                worked = true;
            }
            run.issue(transport)?;
            while lane.unread.front().is_some_and(|t| ch.result_taken(l, *t)) {
                lane.unread.pop_front();
            }
            let credit = lane.unread.front().copied().unwrap_or(lane.head);
            if credit != lane.returned {
                ch.consumed(l).store(credit, Ordering::Release);
                lane.returned = credit;
                worked = true;
            }
        }
        gets.finish(ch, transport, current)?;
        if let Some(i) = inbound {
            *current = (0, -1, 0);
            i.flush()?;
            worked |= i.serve()?;
        }
        if worked {
            pacing.worked(Instant::now());
            continue;
        }
        let awaiting = inbound.is_some_and(|i| i.awaiting());
        match (pacing.pause(Instant::now(), cfg, inbound.is_some(), awaiting), inbound) {
            (None, _) => std::hint::spin_loop(),
            (Some(nap), Some(i)) => i.idle(nap),
            (Some(nap), None) => std::thread::sleep(nap),
        }
    }
    Ok(())
}

/// When the proxy thread polls again after a round without work.
struct Pacing {
    /// The end of its last round with work.
    idle_since: Instant,
    /// Its last sleep (0 after work).
    sleep: Duration,
}

impl Pacing {
    fn new(now: Instant) -> Pacing {
        Pacing { idle_since: now, sleep: Duration::ZERO }
    }

    fn worked(&mut self, now: Instant) {
        (self.idle_since, self.sleep) = (now, Duration::ZERO);
    }

    /// None: poll again at once. Some(nap): sleep about that long first. `remote`: the proxy
    /// serves PEs on other hosts; `awaiting`: requests it sent are unacknowledged.
    fn pause(&mut self, now: Instant, cfg: &ProxyConfig, remote: bool, awaiting: bool) -> Option<Duration> {
        let awake = match (remote, awaiting) {
            (true, true) => cfg.awaiting.max(cfg.linger),
            (true, false) => cfg.linger,
            (false, _) => cfg.spin,
        };
        if now.saturating_duration_since(self.idle_since) < awake.max(cfg.spin) {
            return None;
        }
        self.sleep = (self.sleep * 2).clamp(Duration::from_micros(1), cfg.max_sleep);
        Some(self.sleep)
    }
}

/// Two `g`s of a round to one PE whose bytes are at most this far apart are read as one span.
const SPAN_GAP: usize = 64;

/// The most bytes one span reads.
const SPAN_MAX: usize = 4096;

/// A `g` command taken this round: its target PE, heap offset and size, and its slot.
#[derive(Clone, Copy, Debug, PartialEq)]
struct TakenG {
    pe: usize,
    off: usize,
    len: usize,
    lane: usize,
    ticket: u64,
}

/// Neighbouring `g`s of a round read as one: its target and first byte, its `g`s (a range of
/// `Gets::taken` once sorted) and the buffer the transport writes.
struct Span {
    pe: usize,
    start: usize,
    gs: std::ops::Range<usize>,
    answer: Box<[u8]>,
}

/// The `g` commands of a round, answered together after the round's one quiet. Sorted by
/// target PE and offset, `g`s within `SPAN_GAP` bytes of each other are read as one span (at
/// most `SPAN_MAX` bytes, from the first `g`'s byte to the last's, so inside the heap): one
/// `Transport::get_nbi` (one mailbox request, one copy on the target, one answer) for a CTA's
/// threads reading neighbouring elements, where one each cost a network write, a copy and its
/// completion per `g` (NVIDIA's shmem_g_latency at 256 threads: 9.3 -> 1.8 µs per `g`,
/// results/gpu-crosshost-2026-11-29d-glat/). All started `g`s share the quiet's round trips.
/// Safe to read late and in any order: the issuing thread waits for its result and posts
/// nothing meanwhile, and its earlier commands were sent before the round ends.
#[derive(Default)]
struct Gets {
    taken: Vec<TakenG>,
    /// Between `finish`'s first `get_nbi` and its quiet: the spans the transport is writing.
    spans: Vec<Span>,
}

impl Gets {
    fn take(&mut self, g: TakenG) {
        self.taken.push(g);
    }

    /// Whether the transport may still write into a span's buffer (a `finish` that failed
    /// after starting one): then they must never be freed.
    fn in_flight(&self) -> bool {
        !self.spans.is_empty()
    }

    /// Sorts the taken `g`s and cuts them into spans.
    fn plan(&mut self) {
        self.taken.sort_by_key(|g| (g.pe, g.off));
        let mut first = 0;
        while first < self.taken.len() {
            let (pe, start) = (self.taken[first].pe, self.taken[first].off);
            let mut end = start.saturating_add(self.taken[first].len);
            let mut next = first + 1;
            while let Some(g) = self.taken.get(next) {
                let g_end = g.off.saturating_add(g.len);
                if g.pe != pe || g.off > end.saturating_add(SPAN_GAP) || g_end.max(end) - start > SPAN_MAX {
                    break;
                }
                end = end.max(g_end);
                next += 1;
            }
            self.spans.push(Span { pe, start, gs: first..next, answer: vec![0u8; end - start].into_boxed_slice() });
            first = next;
        }
    }

    /// Reads the round's spans, waits for them (one quiet) and answers every `g` from its span.
    /// `current` names the span's first `g` while it is started (for a failure's message).
    fn finish(&mut self, ch: &Channel, tr: &dyn Transport, current: &mut (usize, i32, u64)) -> Result<()> {
        if self.taken.is_empty() {
            return Ok(());
        }
        self.plan();
        for s in &mut self.spans {
            let g = self.taken[s.gs.start];
            *current = (g.lane, g.pe as i32, g.ticket);
            // SAFETY: the boxed buffer does not move and is not touched until the quiet below
            // returns (or is never freed if the thread stops first: `run`, `in_flight`).
            unsafe { tr.get_nbi(s.pe, Segment::Heap, s.start, s.answer.as_mut_ptr(), s.answer.len()) }.map_err(|e| e.named("nvshmem_g"))?;
        }
        tr.quiet().map_err(|e| e.named("nvshmem_g"))?;
        for s in self.spans.drain(..) {
            for g in &self.taken[s.gs] {
                let mut v = [0u8; 8];
                v[..g.len].copy_from_slice(&s.answer[g.off - s.start..][..g.len]);
                ch.put_result(g.lane, g.ticket, u64::from_le_bytes(v));
            }
        }
        self.taken.clear();
        Ok(())
    }
}

/// A `g` that may be answered at the end of the round: its target PE and size, when valid
/// (others run through `execute`, which names what is wrong).
fn started_g(c: &RshmemProxyCmd, cfg: &ProxyConfig) -> Option<(usize, usize)> {
    let pe = usize::try_from(c.pe).ok().filter(|p| *p < cfg.npes)?;
    let len = usize::try_from(c.bytes).ok().filter(|n| (1..=8).contains(n))?;
    (c.op == RSHMEM_PROXY_OP_G | RSHMEM_PROXY_FLAG_RESULT).then_some((pe, len))
}

/// Adds `c` to the run if it is a `p` that may merge (valid, no completion or result wanted).
fn merged(run: &mut Run, c: &RshmemProxyCmd, cfg: &ProxyConfig) -> bool {
    let pe = usize::try_from(c.pe).ok().filter(|p| *p < cfg.npes);
    match (c.op, pe, usize::try_from(c.bytes)) {
        (RSHMEM_PROXY_OP_P, Some(pe), Ok(len @ 1..=8)) => run.extend(pe, c.remote as usize, c.value, len),
        _ => false,
    }
}

fn amo_op(code: u32) -> Option<AtomicOp> {
    Some(match code {
        RSHMEM_PROXY_AMO_ADD => AtomicOp::Add,
        RSHMEM_PROXY_AMO_AND => AtomicOp::And,
        RSHMEM_PROXY_AMO_OR => AtomicOp::Or,
        RSHMEM_PROXY_AMO_XOR => AtomicOp::Xor,
        RSHMEM_PROXY_AMO_SET => AtomicOp::Set,
        RSHMEM_PROXY_AMO_READ => AtomicOp::Read,
        RSHMEM_PROXY_AMO_CSWAP => AtomicOp::CompareSwap,
        _ => return None,
    })
}

fn amo_type(code: u32) -> Option<AmoType> {
    Some(match code {
        RSHMEM_PROXY_TYPE_I32 => AmoType::I32,
        RSHMEM_PROXY_TYPE_U32 => AmoType::U32,
        RSHMEM_PROXY_TYPE_I64 => AmoType::I64,
        RSHMEM_PROXY_TYPE_U64 => AmoType::U64,
        RSHMEM_PROXY_TYPE_F32 => AmoType::F32,
        RSHMEM_PROXY_TYPE_F64 => AmoType::F64,
        _ => return None,
    })
}

fn bad(what: String) -> Error {
    Error::new(crate::error::ErrorKind::Internal, "rshmem proxy", format!("malformed command: {what}"))
}

/// Runs one command (lane `l`, ticket `t`) to the point its ordering needs.
fn execute(ch: &Channel, tr: &dyn Transport, mem: &dyn LocalMemory, cfg: &ProxyConfig, l: usize, t: u64, c: &RshmemProxyCmd) -> Result<()> {
    let op = c.op & 0xffff;
    let pe = match op {
        RSHMEM_PROXY_OP_FENCE | RSHMEM_PROXY_OP_QUIET => 0, // no target
        _ => usize::try_from(c.pe)
            .ok()
            .filter(|p| *p < cfg.npes)
            .ok_or_else(|| bad(format!("target PE {} is not in 0..{}", c.pe, cfg.npes)))?,
    };
    let remote = c.remote as usize;
    let len = usize::try_from(c.bytes).map_err(|_| bad(format!("{} bytes", c.bytes)))?;
    let small = |routine| if (1..=8).contains(&len) { Ok(len) } else { Err(bad(format!("{routine} of {len} bytes (1 to 8)"))) };
    let amo = || amo_op(c.amo).ok_or_else(|| bad(format!("AMO operation {}", c.amo)));
    let ty = || amo_type(c.amo_type).ok_or_else(|| bad(format!("AMO type {}", c.amo_type)));
    let mut result = None;
    // No C routine runs the proxy thread: its errors are named after the device routine.
    let routine = match op {
        RSHMEM_PROXY_OP_PUT => "nvshmem_putmem",
        RSHMEM_PROXY_OP_GET => "nvshmem_getmem",
        RSHMEM_PROXY_OP_P => "nvshmem_p",
        RSHMEM_PROXY_OP_G => "nvshmem_g",
        RSHMEM_PROXY_OP_AMO => "nvshmem_atomic",
        RSHMEM_PROXY_OP_FETCH_AMO if c.amo == RSHMEM_PROXY_AMO_CSWAP => "nvshmem_atomic_compare_swap",
        RSHMEM_PROXY_OP_FETCH_AMO => "nvshmem_atomic_fetch",
        RSHMEM_PROXY_OP_PUT_SIGNAL => "nvshmem_putmem_signal",
        RSHMEM_PROXY_OP_FENCE => "nvshmem_fence",
        RSHMEM_PROXY_OP_QUIET => "nvshmem_quiet",
        _ => "rshmem proxy",
    };
    let named = |e: Error| e.named(routine);
    match op {
        RSHMEM_PROXY_OP_PUT => mem.with_source(c.local, len, &mut |at, src| tr.put(pe, Segment::Heap, remote + at, src).map_err(named))?,
        RSHMEM_PROXY_OP_GET => mem.with_dest(c.local, len, &mut |dst| tr.get(pe, Segment::Heap, remote, dst).map_err(named))?,
        RSHMEM_PROXY_OP_P => tr.put(pe, Segment::Heap, remote, &c.value.to_le_bytes()[..small("p")?]).map_err(named)?,
        RSHMEM_PROXY_OP_G => {
            let mut b = [0u8; 8];
            tr.get(pe, Segment::Heap, remote, &mut b[..small("g")?]).map_err(named)?;
            result = Some(u64::from_le_bytes(b));
        }
        RSHMEM_PROXY_OP_AMO => tr.amo(pe, Segment::Heap, remote, amo()?, ty()?, c.value).map_err(named)?,
        RSHMEM_PROXY_OP_FETCH_AMO => {
            result = Some(match amo()? {
                AtomicOp::CompareSwap => tr.compare_swap(pe, Segment::Heap, remote, ty()?, c.compare, c.value).map_err(named)?,
                o => tr.fetch_amo(pe, Segment::Heap, remote, o, ty()?, c.value).map_err(named)?,
            })
        }
        RSHMEM_PROXY_OP_PUT_SIGNAL => {
            let sig = match c.amo {
                RSHMEM_PROXY_AMO_SET => AtomicOp::Set,
                RSHMEM_PROXY_AMO_ADD => AtomicOp::Add,
                other => return Err(bad(format!("signal operation {other}"))),
            };
            mem.with_source(c.local, len, &mut |at, src| tr.put(pe, Segment::Heap, remote + at, src).map_err(named))?;
            tr.fence().map_err(named)?;
            tr.amo(pe, Segment::Heap, c.compare as usize, sig, AmoType::U64, c.value).map_err(named)?;
        }
        RSHMEM_PROXY_OP_FENCE => tr.fence().map_err(named)?,
        RSHMEM_PROXY_OP_QUIET => tr.quiet().map_err(named)?,
        other => return Err(bad(format!("operation {other:#x}"))),
    }
    match (result, c.op & RSHMEM_PROXY_FLAG_RESULT != 0) {
        (Some(v), true) => ch.put_result(l, t, v),
        (None, false) => {}
        (_, wanted) => return Err(bad(format!("operation {op} {} RSHMEM_PROXY_FLAG_RESULT", if wanted { "with" } else { "without" }))),
    }
    if c.op & RSHMEM_PROXY_FLAG_WAIT != 0 {
        ch.completed(l).store(t + 1, Ordering::Release);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::{ProcessMemory, Proxy};
    use std::sync::Arc;

    /// A transport that records the `get_nbi`s and quiets it sees and answers the reads at the
    /// quiet from per-PE heaps (byte `i` of PE `p`: `heap_byte(p, i)`); the `fail_at`-th
    /// `get_nbi` (from 0) fails. Nothing else is expected of it.
    struct Recorder {
        fail_at: Option<usize>,
        seen: Mutex<Seen>,
    }

    #[derive(Default)]
    struct Seen {
        /// (pe, offset, length, destination address) of each `get_nbi`.
        gets: Vec<(usize, usize, usize, usize)>,
        /// Of those, the ones the next quiet answers.
        due: usize,
        quiets: usize,
    }

    fn heap_byte(pe: usize, i: usize) -> u8 {
        (i * 7 + pe * 101 + 3) as u8
    }

    /// What a `g` of `len` bytes at `off` of `pe` must return.
    fn expected(pe: usize, off: usize, len: usize) -> u64 {
        (0..len).map(|k| u64::from(heap_byte(pe, off + k)) << (8 * k)).sum()
    }

    impl Recorder {
        fn new(fail_at: Option<usize>) -> Recorder {
            Recorder { fail_at, seen: Mutex::new(Seen::default()) }
        }
        fn reads(&self) -> Vec<Read> {
            self.seen.lock().unwrap().gets.iter().map(|&(pe, off, len, _)| (pe, off, len)).collect()
        }
        fn quiets(&self) -> usize {
            self.seen.lock().unwrap().quiets
        }
    }

    impl Transport for Recorder {
        fn describe(&self) -> String {
            "recorder".into()
        }
        fn put(&self, _: usize, _: Segment, _: usize, _: &[u8]) -> Result<()> {
            Err(bad("a put in a test of gets".into()))
        }
        fn get(&self, _: usize, _: Segment, _: usize, _: &mut [u8]) -> Result<()> {
            Err(bad("a blocking get in a test of gets".into()))
        }
        unsafe fn get_nbi(&self, pe: usize, _: Segment, off: usize, dst: *mut u8, len: usize) -> Result<()> {
            let mut seen = self.seen.lock().unwrap();
            seen.gets.push((pe, off, len, dst as usize));
            if self.fail_at == Some(seen.gets.len() - 1) {
                return Err(Error::of(crate::error::ErrorKind::System, "the network is gone"));
            }
            Ok(())
        }
        fn amo(&self, _: usize, _: Segment, _: usize, _: AtomicOp, _: AmoType, _: u64) -> Result<()> {
            Err(bad("an AMO in a test of gets".into()))
        }
        fn fetch_amo(&self, _: usize, _: Segment, _: usize, _: AtomicOp, _: AmoType, _: u64) -> Result<u64> {
            Err(bad("an AMO in a test of gets".into()))
        }
        fn compare_swap(&self, _: usize, _: Segment, _: usize, _: AmoType, _: u64, _: u64) -> Result<u64> {
            Err(bad("an AMO in a test of gets".into()))
        }
        fn fence(&self) -> Result<()> {
            Ok(())
        }
        fn quiet(&self) -> Result<()> {
            let mut seen = self.seen.lock().unwrap();
            for &(pe, off, len, dst) in &seen.gets[seen.due..] {
                for k in 0..len {
                    // SAFETY: `get_nbi`'s caller keeps `len` writable bytes at `dst` until this
                    // quiet returns (what the test checks: a freed buffer would be a bug).
                    unsafe { (dst as *mut u8).add(k).write(heap_byte(pe, off + k)) };
                }
            }
            seen.due = seen.gets.len();
            seen.quiets += 1;
            Ok(())
        }
    }

    /// The result of `ticket` in `lane`, once the proxy has written it.
    fn result(ch: &Channel, lane: usize, ticket: u64) -> Option<u64> {
        // SAFETY: the header of a live host channel; its result slots are `lanes * slots`
        // aligned records, read here through atomics as the issuers do.
        unsafe {
            let h = &*ch.as_ptr();
            let r = (h.results as *mut crate::abi::RshmemProxyResult).add(lane * ch.slots() + (ticket as usize & (ch.slots() - 1)));
            let ready = std::sync::atomic::AtomicU64::from_ptr(&raw mut (*r).ready).load(Ordering::Acquire);
            (ready == ticket + 1).then(|| std::sync::atomic::AtomicU64::from_ptr(&raw mut (*r).value).load(Ordering::Relaxed))
        }
    }

    /// A `g` or a read: (PE, heap offset, bytes).
    type Read = (usize, usize, usize);

    /// Takes `gs` as the `g`s of one round, on lanes 0 and 1 from ticket 0, and finishes it:
    /// the transport's reads and each `g`'s result.
    fn round(gs: &[Read]) -> (Vec<Read>, Vec<Option<u64>>) {
        let ch = Channel::new_host(0, 2, 1024, Duration::from_secs(1)).unwrap();
        let tr = Recorder::new(None);
        let mut gets = Gets::default();
        for (t, &(pe, off, len)) in gs.iter().enumerate() {
            gets.take(TakenG { pe, off, len, lane: t % 2, ticket: t as u64 / 2 });
        }
        gets.finish(&ch, &tr, &mut (0, -1, 0)).unwrap();
        assert!(!gets.in_flight() && gets.taken.is_empty(), "a finished round keeps nothing");
        assert_eq!(tr.quiets(), 1, "one quiet for the round");
        (tr.reads(), (0..gs.len()).map(|t| result(&ch, t % 2, t as u64 / 2)).collect())
    }

    #[test]
    fn neighbouring_gs_of_a_round_are_one_read() {
        // 32 threads' ints, taken out of order: one read of the 128 bytes.
        let gs: Vec<_> = (0..32).map(|i| (1, 4096 + ((i * 13) % 32) * 4, 4)).collect();
        let (reads, results) = round(&gs);
        assert_eq!(reads, [(1, 4096, 128)]);
        for (&(pe, off, len), got) in gs.iter().zip(&results) {
            assert_eq!(*got, Some(expected(pe, off, len)), "g of {len} bytes at {off}");
        }
        // Gaps up to SPAN_GAP bytes are read across; one byte more starts a new span.
        let (reads, _) = round(&[(1, 0, 8), (1, 8 + SPAN_GAP, 8), (1, 16 + 2 * SPAN_GAP + 1, 4)]);
        assert_eq!(reads, [(1, 0, 16 + SPAN_GAP), (1, 16 + 2 * SPAN_GAP + 1, 4)]);
    }

    #[test]
    fn far_offsets_and_other_pes_are_read_apart() {
        let gs = [(2, 64, 8), (1, 64, 8), (1, 100_000, 4), (0, 72, 8), (2, 72, 8)];
        let (reads, results) = round(&gs);
        assert_eq!(reads, [(0, 72, 8), (1, 64, 8), (1, 100_000, 4), (2, 64, 16)]);
        for (&(pe, off, len), got) in gs.iter().zip(&results) {
            assert_eq!(*got, Some(expected(pe, off, len)), "PE {pe} offset {off}");
        }
        // A span ends before it would exceed SPAN_MAX bytes.
        let gs: Vec<_> = (0..SPAN_MAX / 8 + 2).map(|i| (1, i * 8, 8)).collect();
        let (reads, results) = round(&gs);
        assert_eq!(reads, [(1, 0, SPAN_MAX), (1, SPAN_MAX, 16)]);
        assert!(results.iter().zip(&gs).all(|(got, &(pe, off, len))| *got == Some(expected(pe, off, len))));
    }

    #[test]
    fn every_ticket_gets_its_own_bytes_whatever_size_and_alignment() {
        // Sizes 1, 2, 4, 8 at unaligned, overlapping and repeated offsets, all in one span.
        let gs = [(1, 3, 1), (1, 5, 2), (1, 7, 4), (1, 9, 8), (1, 3, 8), (1, 12, 2), (1, 9, 8), (1, 0, 1), (1, 17, 4)];
        let (reads, results) = round(&gs);
        assert_eq!(reads, [(1, 0, 21)]);
        for (&(pe, off, len), got) in gs.iter().zip(&results) {
            assert_eq!(*got, Some(expected(pe, off, len)), "g of {len} bytes at {off}");
        }
        // The upper bytes of a short `g`'s value are zero, not its neighbours'.
        assert_eq!(results[0].unwrap() >> 8, 0);
        assert_eq!(results[1].unwrap() >> 16, 0);
        assert_eq!(results[2].unwrap() >> 32, 0);
    }

    #[test]
    fn spans_being_read_stay_alive_when_a_round_fails() {
        let ch = Channel::new_host(0, 1, 16, Duration::from_secs(1)).unwrap();
        let tr = Recorder::new(Some(1));
        let mut gets = Gets::default();
        for (t, (pe, off)) in [(1, 0), (2, 0), (3, 0)].into_iter().enumerate() {
            gets.take(TakenG { pe, off, len: 8, lane: 0, ticket: t as u64 });
        }
        let mut current = (0, -1, 0);
        let e = gets.finish(&ch, &tr, &mut current).unwrap_err();
        assert!(e.to_string().contains("nvshmem_g") && e.to_string().contains("the network is gone"), "{e}");
        assert_eq!(current, (0, 2, 1), "the failure names the g whose read failed");
        assert!(gets.in_flight(), "the read started before the failure may still land: kept");
        // The transport's late answer lands in the buffer the round still holds.
        tr.quiet().unwrap();
        let dst = tr.seen.lock().unwrap().gets[0].3;
        assert_eq!(dst, gets.spans[0].answer.as_ptr() as usize);
        assert_eq!(u64::from_le_bytes(gets.spans[0].answer[..8].try_into().unwrap()), expected(1, 0, 8));
        assert_eq!(result(&ch, 0, 0), None, "no result from a failed round");
    }

    /// Posts a `g` as a device thread would: the fields, then `seq`.
    fn post_g(ch: &Channel, lane: usize, ticket: u64, pe: i32, off: u64, len: u64) {
        let cmd = RshmemProxyCmd { op: RSHMEM_PROXY_OP_G | RSHMEM_PROXY_FLAG_RESULT, pe, remote: off, bytes: len, ..Default::default() };
        // SAFETY: a slot of a live host channel that nobody else writes (the proxy reads it
        // only after the release store of `seq` below).
        unsafe { ch.cmd(lane, ticket).write_volatile(cmd) };
        ch.cmd_seq(lane, ticket).store(ticket + 1, Ordering::Release);
    }

    #[test]
    fn a_lanes_gs_beyond_the_batch_are_taken_in_one_round() {
        let ch = Arc::new(Channel::new_host(0, 1, 256, Duration::from_secs(5)).unwrap());
        let n = 3 * BATCH as u64 + 5;
        for t in 0..n {
            post_g(&ch, 0, t, 1, 8 * t, 8);
        }
        let tr = Arc::new(Recorder::new(None));
        let proxy = Proxy::start(ch.clone(), tr.clone(), Arc::new(ProcessMemory), ProxyConfig::new(2));
        let deadline = Instant::now() + Duration::from_secs(20);
        while result(&ch, 0, n - 1).is_none() {
            assert!(Instant::now() < deadline && proxy.failure().is_none(), "no answer: {:?}", proxy.failure());
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(proxy);
        assert_eq!(tr.reads(), [(1, 0, 8 * n as usize)], "one read for all of them");
        assert_eq!(tr.quiets(), 1, "one round");
        for t in 0..n {
            assert_eq!(result(&ch, 0, t), Some(expected(1, 8 * t as usize, 8)), "ticket {t}");
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_proxy_with_remote_peers_stays_awake_while_an_answer_is_due() {
        let cfg = ProxyConfig::new(2);
        let t0 = Instant::now();
        let mut p = Pacing::new(t0);
        // Local PEs only: polls for `spin`, then naps 1 µs, doubling to `max_sleep`.
        assert_eq!(p.pause(t0 + cfg.spin / 2, &cfg, false, false), None);
        let naps: Vec<_> = (0..12).filter_map(|_| p.pause(t0 + ms(1), &cfg, false, false)).collect();
        assert_eq!(naps[0], Duration::from_micros(1));
        assert_eq!(naps[1], Duration::from_micros(2));
        assert_eq!(*naps.last().unwrap(), cfg.max_sleep);
        // Remote peers: no nap within `linger` of the last work (a reply is likely soon)...
        p.worked(t0);
        assert_eq!(p.pause(t0 + cfg.linger - Duration::from_micros(1), &cfg, true, false), None);
        assert_eq!(p.pause(t0 + cfg.linger, &cfg, true, false), Some(Duration::from_micros(1)));
        // ...and none while requests are unacknowledged, up to `awaiting`; then naps again.
        p.worked(t0);
        assert_eq!(p.pause(t0 + cfg.awaiting - ms(1), &cfg, true, true), None);
        assert_eq!(p.pause(t0 + cfg.awaiting, &cfg, true, true), Some(Duration::from_micros(1)));
        // An idle job (nothing sent, nothing due) sleeps up to `max_sleep` between polls.
        let mut last = None;
        for _ in 0..20 {
            last = p.pause(t0 + ms(500), &cfg, true, false);
        }
        assert_eq!(last, Some(cfg.max_sleep));
        // Work resets it: polling at once again.
        p.worked(t0 + ms(500));
        assert_eq!(p.pause(t0 + ms(501), &cfg, true, false), None);
    }
}
