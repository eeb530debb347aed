//! The proxy for GPU PEs: the channel in pinned host memory, local memory on the GPU, and the
//! target side over a network that cannot write GPU memory (libfabric tcp has no FI_HMEM).
//!
//! **Target side** ("mailboxes"): a PE's GPU heap is reached only by that PE's own proxy. Every
//! ordered pair (source, target) has one mailbox in the target's *host* symmetric heap, which
//! the network transport has registered: a ring of records, each a 64-byte header (the
//! request's sequence number and a checksum over the header and the data), then the data
//! rounded up to 64 bytes. The source writes each record into the ring with one network write
//! and goes on; after a batch (the end of the proxy's round over its lanes, or before it waits
//! for anything) it flushes the transport with a fence, which sends what the transport still
//! holds and costs nothing more where the provider keeps writes in order (tcp;ofi_rxm reports
//! FI_ORDER_WAW), or completes the writes where it does not. No quiet and no separate
//! announcement: the target polls the place of the next record in each ring and serves it once
//! it holds the next sequence number *and* a checksum that matches — a record still arriving
//! (a network writes a record's bytes in no promised order, and the header may land first) or
//! the stale bytes of an earlier lap never match, so a torn record is never executed; a whole
//! record with another sequence number than the next one is a named error. The target serves
//! each source's records in order — puts and gets as copies on its own stream, AMOs through the
//! doorbell (`AmoDoorbell`: a device thread of the target GPU runs it with system-scope atomics,
//! so it is atomic with the GPU's own AMOs); before an AMO, a get's answer or the
//! acknowledgement it waits for its copies — and writes the last number served into the
//! source's acknowledgement word once those copies are done (meanwhile it goes on receiving
//! and serving: it never blocks on them before an acknowledgement). Requests whose answer is needed (gets, fetching AMOs) wait
//! for their acknowledgement; puts and non-fetching AMOs do not (several in flight per pair:
//! the ring's space is the limit, reclaimed as acknowledgements come back). Ordering: one
//! pair's requests run in the order sent, so a fence needs nothing and a signal (an AMO request
//! after its put) is never visible before its data; quiet waits until every pair has
//! acknowledged all it was sent. While a proxy waits for an acknowledgement it serves the
//! requests sent to it, so two proxies waiting on each other cannot deadlock. A target that
//! does not answer within `stall` is an error naming it and the oldest unanswered request (the
//! proxy then stops and the device callers trap with its message). Everything read from a
//! mailbox is checked (sequence, checksum, lengths within the ring): a stranger's garbage is
//! ignored or a named error, never a wild copy.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::channel::{Block, ChannelMemory};
use super::{Inbound, LocalMemory};
use crate::cuda::kernels::AmoOp;
use crate::cuda::{self, DeviceMem, PinnedHost, PrimaryContext, Stream};
use crate::error::{Error, ErrorKind, Result};
use crate::fabric::AtomicOp;
use crate::transport::{AmoType, Segment, Transport};

fn cu<T>(r: cuda::CuResult<T>) -> Result<T> {
    r.map_err(Error::from)
}

/// Channel memory for a GPU PE: rings and lane words in pinned host memory the GPU maps (the
/// proxy polls them, the GPU writes them); the issue words in GPU memory (GPU atomics only).
pub struct PinnedChannelMemory<'a> {
    pub stream: &'a Stream,
}

impl ChannelMemory for PinnedChannelMemory<'_> {
    fn shared(&self, bytes: usize) -> Result<Block> {
        let m = cu(PinnedHost::alloc(bytes))?;
        let ptr = m.ptr;
        Ok(Block::foreign(ptr, Box::new(move || drop(m))))
    }
    fn issue(&self, bytes: usize) -> Result<Block> {
        let m = cu(DeviceMem::alloc(bytes, self.stream.0))?;
        let ptr = m.ptr as *mut u8;
        Ok(Block::foreign(ptr, Box::new(move || drop(m))))
    }
}

/// A command's local buffer on the GPU (or anywhere the driver can copy from): copied through
/// a host bounce buffer on the proxy's own non-blocking stream, so a user kernel that waits for
/// the proxy on another stream (the default one included) never blocks the copy.
///
/// A put's source goes through two pinned bounce slots of `PIECE` bytes, piece by piece: the
/// copy of piece k+1 runs while piece k is sent (before, the whole source was copied into
/// pageable memory first, which the driver stages synchronously, and only then sent). With the
/// target's mailboxes page-locked and large data sent beside its header: 0.49-0.52 -> 0.83-0.91
/// GB/s at 1-4 MiB, beside a 3.5-3.95 GB/s TCP stream (results/gpu-crosshost-2026-11-28d/).
pub struct GpuLocal {
    ctx: PrimaryContext,
    stream: Stream,
    /// The bounce slots, allocated at the first use (None inside: pinned memory was refused,
    /// and puts are copied through pageable memory in one piece as before).
    bounce: Mutex<Option<Option<[PinnedHost; 2]>>>,
}

/// Bytes of one bounce slot: a piece of a put's source copied at a time, sent as one request
/// while it fits in half a mailbox ring (2 PEs: 2 MiB rings). 256 -> 512 KiB (session 28):
/// half the per-piece costs (header write, round trip, copy settle) per byte, 1.14-1.2x at
/// 1-4 MiB across 2 hosts (results/gpu-crosshost-2026-11-29c-proxy/, round 2).
pub const PIECE: usize = 512 << 10;

impl GpuLocal {
    pub fn new(device: cuda::Device) -> Result<GpuLocal> {
        let ctx = cu(PrimaryContext::retain(device))?;
        cu(ctx.make_current())?;
        Ok(GpuLocal { stream: cu(Stream::create_urgent())?, ctx, bounce: Mutex::new(None) })
    }

    /// Copies `len` bytes from `src` to `dst` (unified addresses) and waits for the copy.
    pub fn copy(&self, dst: u64, src: u64, len: usize) -> Result<()> {
        // SAFETY: both ranges stay valid until the settle below returns.
        unsafe { self.copy_async(dst, src, len)? };
        self.settle()
    }

    /// Starts copying `len` bytes from `src` to `dst` (unified addresses) on this stream.
    ///
    /// # Safety
    /// Both ranges must stay valid for `len` bytes until `settle` returns.
    pub unsafe fn copy_async(&self, dst: u64, src: u64, len: usize) -> Result<()> {
        cu(self.ctx.make_current())?;
        // SAFETY: the caller keeps both ranges valid until the copy is settled.
        unsafe { cu(cuda::memcpy_async(dst, src, len, self.stream.0)) }
    }

    /// Waits for every copy on this stream.
    pub fn settle(&self) -> Result<()> {
        cu(self.ctx.make_current())?;
        cu(cuda::stream_synchronize(self.stream.0))
    }
}

impl GpuLocal {
    /// The put bounce slots, allocated at the first call (the proxy's `start` makes it, so that
    /// the first put does not pay for the allocation: session 22's first 4 KiB bandwidth row).
    pub fn bounce_slots(&self) -> std::sync::MutexGuard<'_, Option<Option<[PinnedHost; 2]>>> {
        let mut bounce = self.bounce.lock().unwrap_or_else(|e| e.into_inner());
        bounce.get_or_insert_with(|| {
            let slots = cu(self.ctx.make_current()).and_then(|_| Ok([cu(PinnedHost::alloc(PIECE))?, cu(PinnedHost::alloc(PIECE))?]));
            let why = |e: Error| format!("rshmem proxy: no pinned bounce buffers ({e}); puts are copied through pageable memory");
            slots.map_err(|e| crate::log::warn(&why(e))).ok()
        });
        bounce
    }

    /// Whether everything given to this stream has finished.
    pub fn idle(&self) -> Result<bool> {
        cu(cuda::stream_idle(self.stream.0))
    }

    /// Launches the remote-AMO taker of the channel at `channel` on this stream (AmoDoorbell).
    pub fn launch_amo_taker(&self, kernels: &cuda::kernels::Kernels, channel: u64) -> Result<()> {
        cu(self.ctx.make_current())?;
        // SAFETY: `channel` is this PE's live channel header in pinned memory the GPU maps; it
        // outlives the proxy, which finalize stops only after its kernels are done.
        unsafe { cu(kernels.proxy_amo(self.stream.0, channel)) }
    }
}

impl LocalMemory for GpuLocal {
    fn with_source(&self, addr: u64, len: usize, f: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<()> {
        let routine = "rshmem proxy (reading a put's source)";
        if len == 0 {
            return f(0, &[]);
        }
        let bounce = self.bounce_slots();
        let Some(slots) = bounce.as_ref().and_then(|b| b.as_ref()) else {
            let mut whole = vec![0u8; len];
            self.copy(whole.as_mut_ptr() as u64, addr, len).map_err(|e| e.named(routine))?;
            return f(0, &whole);
        };
        let piece = |k: usize| (k * PIECE, PIECE.min(len - k * PIECE));
        let start = |k: usize| {
            let (at, n) = piece(k);
            // SAFETY: slot k % 2 holds PIECE bytes and stays allocated while `self` lives; the
            // source is the issuer's, live until the command completes; nothing reads the slot
            // before the settle that follows this copy.
            unsafe { self.copy_async(slots[k % 2].ptr as u64, addr + at as u64, n) }.map_err(|e| e.named(routine))
        };
        start(0)?;
        self.settle().map_err(|e| e.named(routine))?;
        let pieces = len.div_ceil(PIECE);
        for k in 0..pieces {
            if k + 1 < pieces {
                start(k + 1)?;
            }
            let (at, n) = piece(k);
            // SAFETY: piece k's copy into its slot has settled; the copy in flight writes the other slot.
            let sent = f(at, unsafe { std::slice::from_raw_parts(slots[k % 2].ptr as *const u8, n) });
            // The next piece has landed (and no copy is left in flight when `f` failed).
            self.settle().map_err(|e| e.named(routine))?;
            sent?;
        }
        Ok(())
    }

    fn with_dest(&self, addr: u64, len: usize, f: &mut dyn FnMut(&mut [u8]) -> Result<()>) -> Result<()> {
        let mut bounce = vec![0u8; len];
        f(&mut bounce)?;
        self.copy(addr, bounce.as_ptr() as u64, len).map_err(|e| e.named("rshmem proxy (writing a get's destination)"))
    }
}

// ---- mailboxes ---------------------------------------------------------------------------

const REQ_PUT: u32 = 1;
const REQ_GET: u32 = 2;
const REQ_AMO: u32 = 3;
/// Not a request: the next one starts at the beginning of the ring (it did not fit before
/// its end). Carries the number of that next request.
const REQ_WRAP: u32 = 4;

/// A request header as it lies in the target's ring (64 bytes), its data right after it.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Request {
    seq: u64,
    op: u32,
    /// AMO: the kernel's `AmoOp` code; its operand size in `len`.
    amo: u32,
    /// Byte offset in the target's GPU heap.
    off: u64,
    len: u64,
    a: u64,
    b: u64,
    /// AMO: the old value, written by the target before its acknowledgement. Put and get: the
    /// source's wall-clock time when it wrote the request (`profile.rs`). Not checksummed.
    result: u64,
    /// `Request::checksum` of the header (all but `result` and this word) and the data.
    check: u64,
}

const HEADER: usize = 64;

/// One step of the checksums of requests and acknowledgements.
fn mix(h: u64, w: u64) -> u64 {
    let h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 29)
}

/// The most answer bytes an acknowledgement carries.
const CARRIED_MAX: usize = 32;

/// The acknowledgement a target writes into the source's slot (`MailboxLayout::ack`), in one
/// write. It carries the answer of the last request it covers when that is a get of at most
/// `CARRIED_MAX` bytes or an AMO (its old value), so the source need not read it from the
/// target's ring: one network round trip less for a single `g` or fetching AMO. The source
/// trusts `carried`/`answer` only when `check` matches (the write may land in pieces, or a
/// later acknowledgement over it); otherwise it reads the answer from the ring as before.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Ack {
    /// The last request served (the word `wait_acked` polls).
    served: u64,
    /// The target's `wall_ns` when it wrote this (the source's profile). Not checksummed.
    time: u64,
    /// The request whose answer `answer` holds; 0: none.
    carried: u64,
    answer: [u64; 4],
    check: u64,
}
const _: () = assert!(size_of::<Ack>() == 64 && CARRIED_MAX == 32);

impl Ack {
    fn checksum(&self) -> u64 {
        [self.served, self.carried, self.answer[0], self.answer[1], self.answer[2], self.answer[3]]
            .into_iter()
            .fold(0x4143_4b52_5348_4d45, mix)
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: Ack is plain old data of 64 bytes.
        unsafe { std::slice::from_raw_parts((self as *const Ack).cast::<u8>(), size_of::<Ack>()) }
    }
}

/// Data up to this size is copied behind its header and sent as one write; larger data goes
/// as a write of its own.
const JOINED_MAX: usize = 4096;
const _: () = assert!(size_of::<Request>() == HEADER);

impl Request {
    /// Bytes the request takes in the ring.
    fn size(&self) -> usize {
        HEADER + self.data_len().next_multiple_of(64)
    }
    fn data_len(&self) -> usize {
        if self.op == REQ_AMO {
            0
        } else {
            self.len as usize
        }
    }
    /// A 64-bit hash of the header's fields (but `result` and `check`) and of `data`, read
    /// word by word through `word` (the source's slice, or the target's ring read volatile).
    fn checksum(&self, data_len: usize, word: impl Fn(usize) -> u64) -> u64 {
        let head = [self.seq, u64::from(self.op) | u64::from(self.amo) << 32, self.off, self.len, self.a, self.b];
        let h = head.into_iter().fold(0x5253_484d_454d_5052, mix);
        // The data in four interleaved chains (word i into chain i % 4), which the CPU runs side
        // by side: in one chain each word's multiply waits for the one before it (both sides
        // hash every byte of a put). Each chain starts from its own seed, so words exchanged
        // between chains change the sum.
        let words = data_len.div_ceil(8);
        let mut chains = [h, h ^ 1, h ^ 2, h ^ 3];
        for i in (0..words / 4 * 4).step_by(4) {
            for (k, c) in chains.iter_mut().enumerate() {
                *c = mix(*c, word(i + k));
            }
        }
        let tail = (words / 4 * 4..words).fold(chains[0], |h, i| mix(h, word(i)));
        chains[1..].iter().fold(tail, |h, c| mix(h, *c))
    }

    /// Bytes of data the source sends with the request (a put's).
    fn sent_len(&self) -> usize {
        if self.op == REQ_PUT {
            self.len as usize
        } else {
            0
        }
    }

    /// The checksum of this header with `data` (the source's side).
    fn checksum_of(&self, data: &[u8]) -> u64 {
        // Whole words straight from the slice; only the last one is padded (1.7x faster over
        // 256 KiB than padding every word through a copy).
        self.checksum(data.len(), |i| match data.get(i * 8..i * 8 + 8) {
            Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")),
            None => {
                let mut w = [0u8; 8];
                let part = &data[i * 8..];
                w[..part.len()].copy_from_slice(part);
                u64::from_le_bytes(w)
            }
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: Request is plain old data of HEADER bytes.
        unsafe { std::slice::from_raw_parts((self as *const Request).cast::<u8>(), HEADER) }
    }
}

/// Where the mailboxes lie in every PE's host heap (the same offsets on every PE).
#[derive(Clone, Copy, Debug)]
pub struct MailboxLayout {
    /// Heap offset of mailbox 0; the ring for requests from PE s is at `inbox + s * ring`.
    pub inbox: usize,
    /// Bytes of each mailbox's ring (a multiple of 64, at least 256).
    pub ring: usize,
    /// Heap offset of the acknowledgement words, one per target PE, 64 bytes apart.
    pub acks: usize,
}

impl MailboxLayout {
    /// Bytes of host heap the layout needs for `npes` PEs with rings of `ring` bytes.
    pub fn bytes(npes: usize, ring: usize) -> usize {
        npes * ring + npes * 64
    }

    /// The layout at heap offset `at`.
    pub fn at(at: usize, npes: usize, ring: usize) -> MailboxLayout {
        assert!(ring >= 256 && ring.is_multiple_of(64), "a mailbox ring of {ring} bytes");
        MailboxLayout { inbox: at, ring, acks: at + npes * ring }
    }

    /// The most data one request carries: half a ring less its header, so a request always
    /// fits behind the waste of a wrap.
    pub fn chunk(&self) -> usize {
        (self.ring / 2 - HEADER) / 64 * 64
    }

    fn ring_at(&self, from: usize) -> usize {
        self.inbox + from * self.ring
    }

    fn ack(&self, target: usize) -> usize {
        self.acks + target * 64
    }
}

/// How the target side reaches its own GPU heap.
pub trait TargetGpu: Send + Sync {
    /// Starts copying `len` bytes between host memory and the GPU heap at `off` (to the GPU when
    /// `to_gpu`): either may still be in flight until `settle`, and the copies run in the order
    /// started (a get's copy from the GPU reads the data of the puts before it).
    fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()>;
    /// Waits until every copy is complete.
    fn settle(&self) -> Result<()> {
        Ok(())
    }
    /// Whether every copy started is complete, without waiting (the default waits for them).
    fn settled(&self) -> Result<bool> {
        self.settle().map(|_| true)
    }
    /// The process is exiting: whatever waits gives up (`Mailboxes::abandon`).
    fn abandon(&self) {}
    /// An atomic on the `size`-byte word at heap offset `off`, atomic with the GPU's own, asked
    /// for by PE `from`.
    fn amo(&self, from: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64>;
}

/// The one-thread kernel that takes a posted remote AMO when no waiting device thread does
/// (device/rshmem_proxy.cuh `serve_amo`; a test fake on the host build).
pub trait AmoKernel: Send + Sync {
    /// Whether every kernel launched before has finished (its stream is idle).
    fn idle(&self) -> Result<bool>;
    /// Launches one, which takes the posted AMO unless a device thread did.
    fn launch(&self) -> Result<()>;
}

/// How long a posted AMO waits for a device thread before the kernel is launched.
const KERNEL_AFTER: Duration = Duration::from_micros(20);

/// Remote AMOs on this PE's GPU memory without relying on a free SM: each is posted to the
/// channel's AMO record, and the first taker runs it — a device thread of a kernel that waits in
/// device code (the wait loops of the device library look there now and then), or the proxy's
/// one-thread kernel. The kernel is launched once per AMO unless one launched earlier has not
/// run yet (a grid holding every SM keeps it queued; then the waiting threads of that grid are
/// the takers, and no queue of kernels builds up behind it). One AMO at a time, in order.
pub struct AmoDoorbell {
    channel: std::sync::Arc<super::Channel>,
    kernel: Box<dyn AmoKernel>,
    stall: Duration,
    /// The last AMO posted, and the last one a kernel was launched after.
    state: Mutex<(u64, u64)>,
    /// Set at a failing exit: a waiting AMO gives up at once.
    abandoned: std::sync::atomic::AtomicBool,
}

impl AmoDoorbell {
    pub fn new(channel: std::sync::Arc<super::Channel>, kernel: Box<dyn AmoKernel>, stall: Duration) -> AmoDoorbell {
        AmoDoorbell { channel, kernel, stall, state: Mutex::new((0, 0)), abandoned: Default::default() }
    }

    /// Makes a waiting AMO give up (process exit: the proxy thread must end within the exit
    /// hook's wait, not keep launching kernels while the driver tears the context down).
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    /// Runs `op` (an `AmoOp`) on the `size`-byte word at GPU address `addr`, for PE `from`;
    /// returns the old value.
    #[allow(clippy::too_many_arguments)]
    pub fn run(&self, from: usize, addr: u64, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (seq, launched) = &mut *state;
        *seq += 1;
        self.channel.post_amo(*seq, addr, op as u32, size as u32, a, b);
        let start = Instant::now();
        let mut polls = 0u32;
        loop {
            if let Some(old) = self.channel.amo_result(*seq) {
                return Ok(old);
            }
            // Waiting device threads first (a launch can block in the driver while the GPU is
            // busy); then the kernel. One launched after the post sees it; one launched before
            // may have looked too early, so once the stream is idle another goes.
            if *launched < *seq && start.elapsed() > KERNEL_AFTER && self.kernel.idle()? {
                self.kernel.launch()?;
                *launched = *seq;
            }
            if self.abandoned.load(Ordering::Acquire) {
                return Err(Error::of(
                    ErrorKind::System,
                    format!("PE {}: the process is exiting; PE {from}'s atomic on this PE's GPU memory abandoned", self.channel.mype()),
                ));
            }
            if start.elapsed() > self.stall {
                return Err(Error::of(ErrorKind::System, format!(
                        "PE {}: PE {from}'s atomic on this PE's GPU memory (address {addr:#x}) has not run after {:.1} s: no device thread took it and the one-thread atomic kernel has not run (is a kernel holding every SM without waiting in device code?)",
                        self.channel.mype(),
                        start.elapsed().as_secs_f64()
                    ),
                ));
            }
            polls += 1;
            if polls < 200 {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(5));
            }
        }
    }
}

/// One target's side of this PE's sending: what went into its ring and what came back.
#[derive(Default)]
struct Outbox {
    /// The last request written into the ring, and the last one `publish` sent on.
    sent: u64,
    published: u64,
    /// Ring bytes used so far (a position that only grows; modulo the ring size it is where
    /// the next request goes), and the position below which the target is done with them.
    write: u64,
    free_from: u64,
    /// Requests not acknowledged yet: their header and the ring position after them.
    unacked: VecDeque<(Request, u64)>,
    /// Gets started by `get_nbi` whose answers are not read yet, in the order sent.
    gets: VecDeque<PendingGet>,
}

/// A get whose answer is read once the target acknowledges it, before its place in the ring
/// can be written again (`Mailboxes::read_answers`).
#[derive(Clone, Copy)]
struct PendingGet {
    seq: u64,
    /// Heap offset of its record in the target's host heap, and the record's size.
    rec: usize,
    size: usize,
    /// Where the answer goes (the caller keeps it valid until its quiet returns).
    dst: usize,
    len: usize,
}

/// One source's side of this PE's serving.
#[derive(Clone, Copy, Default)]
struct Inbox {
    served: u64,
    read: u64,
    /// The last request acknowledged (below `served` while its copies are still running).
    acked: u64,
    /// Since when served requests have waited for their copies before their acknowledgement.
    copying: Option<Instant>,
    /// The last request served if its answer fits in an acknowledgement: its number, and the
    /// address and size of the answer in our ring (ready once its copy is settled).
    last: Option<(u64, usize, usize)>,
}

/// The network transport for GPU PEs on other hosts: every operation is a mailbox request
/// served by the target's proxy (see the module comment). Used by this PE's proxy thread (as
/// its `Transport`; `serve` is its target side) and by host-side operations (`transport/proxy.rs`).
pub struct Mailboxes {
    s: MailboxSetup,
    /// Per target: the sending state, held by one sender at a time (the proxy thread and
    /// host-side operations share each pair's ring).
    out: Vec<Mutex<Outbox>>,
    /// Per source: the serving state.
    inbox: Mutex<Vec<Inbox>>,
    /// Per target: the last request announced to it (`Outbox::published`, readable without
    /// its lock: `Inbound::awaiting`).
    announced: Vec<AtomicU64>,
    /// Set when the process exits without finalize: a request waiting for its acknowledgement
    /// gives up at once (the proxy thread is being joined).
    abandoned: std::sync::atomic::AtomicBool,
    /// Where served requests spent their time (logged at finalize).
    profile: super::profile::Profile,
}

/// What a PE's `Mailboxes` are made of.
pub struct MailboxSetup {
    /// The job's network (it reaches every PE's host heap).
    pub net: std::sync::Arc<dyn Transport>,
    pub layout: MailboxLayout,
    pub me: usize,
    /// Host address of this PE's heap (where its mailboxes and acknowledgement words lie).
    pub host_base: usize,
    /// Which PEs are reached through mailboxes (on another host).
    pub remote: Vec<bool>,
    /// This PE's GPU memory, as the target side reaches it.
    pub gpu: Box<dyn TargetGpu>,
    /// How long a target may take to acknowledge before it is an error.
    pub stall: Duration,
}

impl Mailboxes {
    pub fn new(s: MailboxSetup) -> Mailboxes {
        let npes = s.remote.len();
        Mailboxes {
            s,
            out: (0..npes).map(|_| Mutex::new(Outbox::default())).collect(),
            inbox: Mutex::new(vec![Inbox::default(); npes]),
            announced: (0..npes).map(|_| AtomicU64::new(0)).collect(),
            abandoned: std::sync::atomic::AtomicBool::new(false),
            profile: super::profile::Profile::default(),
        }
    }

    /// The profile of what this PE served, one line (None: nothing served).
    pub fn profile(&self) -> Option<String> {
        self.profile.summary()
    }

    /// Makes every request that waits for an acknowledgement give up (process exit).
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
        self.s.gpu.abandon();
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: `off` is an 8-byte aligned word of this PE's mailbox area in its host heap,
        // mapped for the life of the job; the network writes it, we read it atomically.
        unsafe { AtomicU64::from_ptr((self.s.host_base + off) as *mut u64) }
    }

    /// Serves every request waiting in this PE's mailboxes; true when there was one.
    pub fn serve(&self) -> Result<bool> {
        // On a manual-progress provider (tcp) a peer's write into our mailboxes lands only while
        // a thread of ours drives the provider; left to the fabric's progress thread, which naps
        // up to 1 ms, every request cost over a millisecond (first GPU benchmark).
        self.s.net.progress(Duration::ZERO);
        let mut inbox = self.inbox.lock().unwrap_or_else(|e| e.into_inner());
        let (mut any, mut copying) = (false, false);
        for from in 0..self.s.remote.len() {
            if !self.s.remote[from] {
                continue;
            }
            let at = &mut inbox[from];
            let before = at.served;
            // Bounded: the source writes no more than its ring holds before our acknowledgement.
            while let Some((hdr, r)) = self.arrived(from, at)? {
                if r.op != REQ_AMO {
                    self.profile.arrived(r.result);
                }
                let began = Instant::now();
                self.serve_one(from, at, hdr, r)?;
                self.profile.served(began);
            }
            any |= at.served != before;
            if at.acked == at.served {
                continue;
            }
            // Everything served is in GPU memory (and a get's answer in the ring) before the
            // acknowledgement says so. The copies run while this thread goes on receiving (on
            // a manual-progress network the next request's bytes move only while it drives the
            // provider) and serving; the acknowledgement goes once they are done. Before, the
            // thread waited for them here, and the source's next write waited with it.
            let began = *at.copying.get_or_insert_with(Instant::now);
            if !self.s.gpu.settled()? {
                copying = true;
                continue;
            }
            let settled = Instant::now();
            // The number served, when it was written (the source's profile reads it), and the
            // last request's answer when it fits.
            let mut ack = Ack { served: at.served, time: super::profile::wall_ns(), ..Default::default() };
            if let Some((seq, addr, len)) = at.last.filter(|l| l.0 == at.served) {
                let mut answer = [0u8; CARRIED_MAX];
                // SAFETY: `len` <= CARRIED_MAX bytes of request `seq`'s record in our ring: its
                // copy is settled and its place is not written again before this acknowledgement.
                unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, answer.as_mut_ptr(), len) };
                for (w, b) in ack.answer.iter_mut().zip(answer.chunks(8)) {
                    *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                }
                ack.carried = seq;
            }
            ack.check = ack.checksum();
            self.s
                .net
                .put_message(from, Segment::Heap, self.s.layout.ack(self.s.me), ack.bytes())
                .map_err(|e| e.named("rshmem proxy (acknowledging)"))?;
            self.profile.acknowledged(settled - began, settled.elapsed());
            crate::log::trace(|| format!("proxy: served requests {}..={} from PE {from}", at.acked + 1, at.served));
            (at.acked, at.copying) = (at.served, None);
            any = true;
        }
        // Copies still running count as work: the thread polls on rather than napping.
        Ok(any || copying)
    }

    /// The next request from PE `from` if it has arrived whole: its header's place and the
    /// header (past a wrap marker, at the ring's start).
    fn arrived(&self, from: usize, at: &mut Inbox) -> Result<Option<(*mut Request, Request)>> {
        let ring = self.s.layout.ring;
        let want = at.served + 1;
        let pos = (at.read % ring as u64) as usize;
        let Some(r) = self.record_at(from, pos, want)? else { return Ok(None) };
        if r.op != REQ_WRAP {
            return Ok(Some((self.record_ptr(from, pos), r)));
        }
        if pos == 0 {
            return Err(proxy_error(format!(
                "PE {from} sent a wrap marker at the start of its ring (request {want}); its mailbox is corrupt"
            )));
        }
        at.read += (ring - pos) as u64;
        match self.record_at(from, 0, want)? {
            Some(r) if r.op == REQ_WRAP => {
                Err(proxy_error(format!("PE {from} sent two wrap markers for request {want}; its mailbox is corrupt")))
            }
            Some(r) => Ok(Some((self.record_ptr(from, 0), r))),
            None => Ok(None),
        }
    }

    fn record_ptr(&self, from: usize, pos: usize) -> *mut Request {
        (self.s.host_base + self.s.layout.ring_at(from) + pos) as *mut Request
    }

    /// The record at ring position `pos` of PE `from`'s mailbox if it is request `want` and
    /// whole (its checksum matches). Stale bytes of an earlier lap and a record still arriving
    /// are `None`; a whole record with a later number is a named error.
    fn record_at(&self, from: usize, pos: usize, want: u64) -> Result<Option<Request>> {
        let hdr = self.record_ptr(from, pos);
        // SAFETY: `pos` is a 64-byte aligned place inside the ring (multiples of 64, modulo the
        // ring size), in this PE's mapped host heap. The network may be writing it meanwhile:
        // volatile reads, and nothing is trusted before the checksum matches.
        let r = unsafe { hdr.read_volatile() };
        if r.seq < want {
            return Ok(None); // an earlier lap's (or never written)
        }
        // Bounded before anything is read past the header: a get's answer and a put's data
        // take at most a chunk, and the record lies within the ring.
        let fits = usize::try_from(r.len).is_ok_and(|len| len <= self.s.layout.chunk());
        if !fits || pos + r.size() > self.s.layout.ring {
            return Ok(None);
        }
        let data_len = r.sent_len();
        let data = (hdr as usize + HEADER) as *const u64;
        let sum = r.checksum(data_len, |i| {
            // SAFETY: word i of the data lies inside the record's place in the ring (checked above:
            // the data rounded up to 64 bytes fits), 8-byte aligned.
            let w = u64::from_le(unsafe { data.add(i).read_volatile() });
            let valid = data_len - i * 8;
            if valid >= 8 {
                w
            } else {
                w & ((1u64 << (8 * valid)) - 1)
            }
        });
        if sum != r.check {
            return Ok(None); // still arriving, torn, or a stranger's bytes
        }
        std::sync::atomic::fence(Ordering::Acquire);
        if r.seq != want {
            return Err(proxy_error(format!(
                "PE {from}'s mailbox holds a whole request {} ({}) where request {want} belongs; its mailbox is corrupt",
                r.seq,
                request_name(&r)
            )));
        }
        Ok(Some(r))
    }

    /// Serves request `r` (the next one) from PE `from`, whose header lies at `hdr`.
    fn serve_one(&self, from: usize, at: &mut Inbox, hdr: *mut Request, r: Request) -> Result<()> {
        let len = r.len as usize; // checked by `record_at`
        crate::log::trace(|| format!("proxy: serving request {} from PE {from} ({})", r.seq, request_name(&r)));
        let data = (hdr as usize + HEADER) as *mut u8;
        match r.op {
            REQ_PUT => self.s.gpu.copy(r.off as usize, data, len, true)?,
            REQ_GET => self.s.gpu.copy(r.off as usize, data, len, false)?,
            REQ_AMO if len == 4 || len == 8 => {
                let op = amo_from_code(r.amo).ok_or_else(|| proxy_error(format!("PE {from} asked for AMO {}", r.amo)))?;
                // After this source's earlier puts (a signal after its data).
                self.s.gpu.settle()?;
                let old = self.s.gpu.amo(from, r.off as usize, op, len, r.a, r.b)?;
                // SAFETY: our own mailbox header, read by the source only after the ack.
                unsafe { (&raw mut (*hdr).result).write_volatile(old) };
            }
            op => return Err(proxy_error(format!("PE {from} sent a malformed request {} (operation {op}, {len} bytes)", r.seq))),
        }
        at.last = match r.op {
            REQ_GET if len <= CARRIED_MAX => Some((r.seq, data as usize, len)),
            // SAFETY: a field of our own mailbox header (address only).
            REQ_AMO => Some((r.seq, unsafe { &raw const (*hdr).result } as usize, 8)),
            _ => None,
        };
        at.served = r.seq;
        at.read += r.size() as u64;
        Ok(())
    }

    /// Writes one request into `pe`'s ring (waiting for room if it is full); returns its number.
    /// It is sent on at the next `publish` at the latest.
    fn send(&self, pe: usize, out: &mut Outbox, mut r: Request, data: Option<&[u8]>) -> Result<u64> {
        if !self.s.remote.get(pe).copied().unwrap_or(false) {
            return Err(Error::of(
                ErrorKind::Internal,
                format!("PE {pe} is not on another host; the proxy reaches only PEs on other hosts"),
            ));
        }
        let ring = self.s.layout.ring as u64;
        let size = r.size() as u64;
        let pos = out.write % ring;
        let start = if pos + size > ring { out.write + (ring - pos) } else { out.write };
        if start + size - out.free_from > ring {
            // Room comes back with the acknowledgement of the oldest requests that free it.
            let need = start + size - ring;
            let upto = out.unacked.iter().find(|(_, end)| *end >= need).map(|(q, _)| q.seq).unwrap_or(out.sent);
            self.wait_acked(pe, out, upto)?;
        }
        let seq = out.sent + 1;
        let base = self.s.layout.ring_at(self.s.me);
        if start != out.write {
            let mut wrap = Request { seq, op: REQ_WRAP, ..Default::default() };
            wrap.check = wrap.checksum_of(&[]);
            self.s.net.put_message(pe, Segment::Heap, base + pos as usize, wrap.bytes())?;
        }
        r.seq = seq;
        if r.op != REQ_AMO {
            r.result = super::profile::wall_ns(); // not checksummed; the target's profile reads it
        }
        let data = data.unwrap_or_default();
        r.check = r.checksum_of(data);
        // A message: the target learns of it by its checksum, the source by the acknowledgement
        // (no transport quiet needs to read it back).
        let at = base + (start % ring) as usize;
        if data.len() > JOINED_MAX {
            // Data and header as two writes, in either order (the checksum covers both): no
            // copy of the data into a record first.
            self.s.net.put_message(pe, Segment::Heap, at + HEADER, data)?;
            self.s.net.put_message(pe, Segment::Heap, at, r.bytes())?;
        } else {
            let mut record = Vec::with_capacity(HEADER + data.len());
            record.extend_from_slice(r.bytes());
            record.extend_from_slice(data);
            self.s.net.put_message(pe, Segment::Heap, at, &record)?;
        }
        out.sent = seq;
        out.write = start + size;
        out.unacked.push_back((r, out.write));
        crate::log::trace(|| format!("proxy: request {seq} to PE {pe} ({}) written", request_name(&r)));
        Ok(seq)
    }

    /// Sends on every request written to `pe` so far: the transport's progress pushes out
    /// what it held back (small writes packed together). Neither a quiet nor the provider's
    /// write ordering is needed: the target trusts a record only once its checksum matches.
    fn publish(&self, pe: usize, out: &mut Outbox) -> Result<()> {
        if out.published == out.sent {
            return Ok(());
        }
        self.s.net.progress(Duration::ZERO);
        out.published = out.sent;
        self.announced[pe].store(out.sent, Ordering::Relaxed);
        Ok(())
    }

    /// Announces what is written, then waits until `pe` has served request `seq`, serving this
    /// PE's own mailboxes meanwhile.
    fn wait_acked(&self, pe: usize, out: &mut Outbox, seq: u64) -> Result<()> {
        self.publish(pe, out)?;
        let ack = self.word(self.s.layout.ack(pe));
        let start = Instant::now();
        let mut spins = 0u32;
        let mut acked = ack.load(Ordering::Acquire);
        let waited = acked < seq;
        while acked < seq {
            if !self.serve()? {
                if self.abandoned.load(Ordering::Acquire) {
                    return Err(Error::of(
                        ErrorKind::System,
                        format!("PE {}: the process is exiting; request {} to PE {pe} abandoned", self.s.me, acked + 1),
                    ));
                }
                if start.elapsed() > self.s.stall {
                    let name = out.unacked.iter().find(|(q, _)| q.seq > acked).map(|(q, _)| request_name(q)).unwrap_or_default();
                    return Err(Error::of(ErrorKind::System, format!("PE {}: PE {pe} (another host) has not served request {} ({name}) after {:.1} s: its proxy or its process is gone, or its host is unreachable", self.s.me, acked + 1, start.elapsed().as_secs_f64()),
                    ));
                }
                spins += 1;
                if spins > 1000 {
                    self.s.net.progress(Duration::from_micros(20));
                } else {
                    std::hint::spin_loop();
                }
            }
            acked = ack.load(Ordering::Acquire);
        }
        if acked > out.sent {
            return Err(proxy_error(format!("PE {pe} acknowledged request {acked}, but only {} were sent to it", out.sent)));
        }
        if waited {
            // The time stamp written with the acknowledgement that ended the wait (or a later one's).
            self.profile.ack_seen(self.word(self.s.layout.ack(pe) + 8).load(Ordering::Relaxed));
        }
        // Answers first: the acknowledged records' places may be written again below.
        self.read_answers(pe, out, acked)?;
        while out.unacked.front().is_some_and(|(q, _)| q.seq <= acked) {
            out.free_from = out.unacked.pop_front().map(|(_, end)| end).unwrap_or(out.free_from);
        }
        crate::log::trace(|| format!("proxy: requests up to {seq} to PE {pe} acknowledged after {} us", start.elapsed().as_micros()));
        Ok(())
    }

    /// The answer `pe`'s acknowledgement carries, with its request's number, if the record in
    /// our slot is whole (its checksum matches: not torn, not being overwritten).
    fn carried(&self, pe: usize) -> Option<(u64, [u8; CARRIED_MAX])> {
        let slot = self.s.layout.ack(pe);
        for _ in 0..4 {
            let w: [u64; 8] = std::array::from_fn(|i| self.word(slot + 8 * i).load(Ordering::Acquire));
            let ack = Ack { served: w[0], time: w[1], carried: w[2], answer: [w[3], w[4], w[5], w[6]], check: w[7] };
            if ack.check == ack.checksum() {
                let mut answer = [0u8; CARRIED_MAX];
                for (b, w) in answer.chunks_mut(8).zip(ack.answer) {
                    b.copy_from_slice(&w.to_le_bytes());
                }
                return (ack.carried != 0).then_some((ack.carried, answer));
            }
            std::hint::spin_loop();
        }
        None
    }

    /// Reads the answers of the started gets up to request `acked` (served: the target wrote
    /// them into their records): the one the acknowledgement carries from it, the others with
    /// one network read per run of adjacent records.
    fn read_answers(&self, pe: usize, out: &mut Outbox, acked: u64) -> Result<()> {
        if let Some((seq, answer)) = self.carried(pe).filter(|c| c.0 <= acked) {
            if let Some(i) = out.gets.iter().position(|g| g.seq == seq && g.len <= CARRIED_MAX) {
                let g = out.gets.remove(i).expect("found");
                // SAFETY: as below (`len` <= CARRIED_MAX).
                unsafe { std::ptr::copy_nonoverlapping(answer.as_ptr(), g.dst as *mut u8, g.len) };
            }
        }
        let mut span = Vec::new();
        while out.gets.front().is_some_and(|g| g.seq <= acked) {
            let first = out.gets[0];
            let mut n = 1;
            while out.gets.get(n).is_some_and(|g| g.seq <= acked && g.rec == out.gets[n - 1].rec + out.gets[n - 1].size) {
                n += 1;
            }
            let last = out.gets[n - 1];
            span.resize(last.rec + last.size - first.rec, 0);
            self.s.net.get(pe, Segment::Heap, first.rec, &mut span)?;
            for g in out.gets.drain(..n) {
                let at = g.rec - first.rec + HEADER;
                // SAFETY: `get_nbi`'s caller keeps `len` writable bytes at `dst` untouched until
                // its quiet returns, which cannot happen before this acknowledgement is seen.
                unsafe { std::ptr::copy_nonoverlapping(span[at..at + g.len].as_ptr(), g.dst as *mut u8, g.len) };
            }
        }
        Ok(())
    }

    fn outbox(&self, pe: usize) -> Result<std::sync::MutexGuard<'_, Outbox>> {
        let m = self.out.get(pe).ok_or_else(|| Error::invalid_value(format!("PE {pe} is not in this job")))?;
        Ok(m.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Sends one request; with `answer`, waits for it and returns the AMO result (a get's data
    /// is read into `answer`'s buffer).
    fn request(&self, pe: usize, r: Request, data: Option<&[u8]>, answer: Option<&mut [u8]>) -> Result<u64> {
        let mut out = self.outbox(pe)?;
        let seq = self.send(pe, &mut out, r, data)?;
        let want_result = r.op == REQ_AMO && answer.is_some();
        let Some(back) = answer else { return Ok(0) };
        self.wait_acked(pe, &mut out, seq)?;
        // The request's place in the ring is ours until the next one is written (we hold `out`).
        let end = out.write; // this request is the last written
        let at = self.s.layout.ring_at(self.s.me) + ((end - r.size() as u64) % self.s.layout.ring as u64) as usize;
        // Carried by the acknowledgement (one round trip) or read from the record (two).
        let carried = self.carried(pe).filter(|c| c.0 == seq).map(|c| c.1);
        if want_result {
            let mut v = [0u8; 8];
            match carried {
                Some(a) => v.copy_from_slice(&a[..8]),
                None => self.s.net.get(pe, Segment::Heap, at + 48, &mut v)?,
            }
            return Ok(u64::from_le_bytes(v));
        }
        match carried {
            Some(a) if back.len() <= CARRIED_MAX => back.copy_from_slice(&a[..back.len()]),
            _ => self.s.net.get(pe, Segment::Heap, at + HEADER, back)?,
        }
        Ok(0)
    }

    /// Waits until `pe` has served every request sent to it (host-side operations: in its GPU
    /// memory on return, as they were before requests were pipelined).
    pub fn complete(&self, pe: usize) -> Result<()> {
        let mut out = self.outbox(pe)?;
        let sent = out.sent;
        self.wait_acked(pe, &mut out, sent)
    }

    #[allow(clippy::too_many_arguments)]
    fn amo_request(&self, pe: usize, seg: Segment, off: usize, op: AmoOp, ty: AmoType, a: u64, b: u64, fetching: bool) -> Result<u64> {
        heap_only(seg)?;
        let size = match ty {
            AmoType::I32 | AmoType::U32 | AmoType::F32 => 4,
            AmoType::I64 | AmoType::U64 | AmoType::F64 => 8,
        };
        let r = Request { op: REQ_AMO, amo: op as u32, off: off as u64, len: size, a, b, ..Default::default() };
        let mut result = [0u8; 0];
        self.request(pe, r, None, fetching.then_some(&mut result[..]))
    }

    /// The atomic kernel's `op` on the `size`-byte word at GPU heap offset `off` of PE `pe`
    /// (host-initiated atomics); waits for it and returns the old value.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic(&self, pe: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        let r = Request { op: REQ_AMO, amo: op as u32, off: off as u64, len: size as u64, a, b, ..Default::default() };
        self.request(pe, r, None, Some(&mut []))
    }
}

fn request_name(r: &Request) -> String {
    match r.op {
        REQ_PUT => format!("a put of {} bytes", r.len),
        REQ_GET => format!("a get of {} bytes", r.len),
        _ => format!("an atomic on {} bytes", r.len),
    }
}

fn amo_from_code(code: u32) -> Option<AmoOp> {
    use AmoOp::*;
    [Add, And, Or, Xor, Swap, CompareSwap, Fetch, Set].into_iter().find(|o| *o as u32 == code)
}

fn proxy_error(what: String) -> Error {
    Error::new(ErrorKind::Internal, "rshmem proxy", what)
}

fn heap_only(seg: Segment) -> Result<()> {
    match seg {
        Segment::Heap => Ok(()),
        Segment::Statics => Err(Error::invalid_value("GPU PEs on other hosts are reached in the symmetric heap only")),
    }
}

/// The kernel's operation for a network AMO (`fetching`: the old value is wanted).
fn kernel_op(op: AtomicOp, fetching: bool) -> AmoOp {
    match op {
        AtomicOp::Add => AmoOp::Add,
        AtomicOp::And => AmoOp::And,
        AtomicOp::Or => AmoOp::Or,
        AtomicOp::Xor => AmoOp::Xor,
        AtomicOp::Set if fetching => AmoOp::Swap,
        AtomicOp::Set => AmoOp::Set,
        AtomicOp::Read => AmoOp::Fetch,
        AtomicOp::CompareSwap => AmoOp::CompareSwap,
    }
}

impl Transport for Mailboxes {
    fn describe(&self) -> String {
        format!("proxy mailboxes over {}", self.s.net.describe())
    }

    /// Written into the target's ring; in its GPU memory once acknowledged (quiet waits).
    fn put(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        heap_only(seg)?;
        let data = self.s.layout.chunk();
        for (i, chunk) in src.chunks(data).enumerate() {
            let r = Request { op: REQ_PUT, off: (off + i * data) as u64, len: chunk.len() as u64, ..Default::default() };
            self.request(pe, r, Some(chunk), None)?;
        }
        Ok(())
    }

    fn get(&self, pe: usize, seg: Segment, off: usize, dst: &mut [u8]) -> Result<()> {
        heap_only(seg)?;
        let data = self.s.layout.chunk();
        for (i, chunk) in dst.chunks_mut(data).enumerate() {
            let r = Request { op: REQ_GET, off: (off + i * data) as u64, len: chunk.len() as u64, ..Default::default() };
            self.request(pe, r, None, Some(chunk))?;
        }
        Ok(())
    }

    /// Sent at once; the answer is read when the target's acknowledgement covers it (at the
    /// latest at `quiet`), with the answers of the gets sent beside it: many gets in flight cost
    /// about one round trip together, not one each.
    unsafe fn get_nbi(&self, pe: usize, seg: Segment, off: usize, dst: *mut u8, len: usize) -> Result<()> {
        heap_only(seg)?;
        if len > self.s.layout.chunk() {
            // SAFETY: the caller's `len` writable bytes at `dst`.
            return self.get(pe, seg, off, unsafe { std::slice::from_raw_parts_mut(dst, len) });
        }
        let r = Request { op: REQ_GET, off: off as u64, len: len as u64, ..Default::default() };
        let mut out = self.outbox(pe)?;
        let seq = self.send(pe, &mut out, r, None)?;
        let rec = self.s.layout.ring_at(self.s.me) + ((out.write - r.size() as u64) % self.s.layout.ring as u64) as usize;
        out.gets.push_back(PendingGet { seq, rec, size: r.size(), dst: dst as usize, len });
        Ok(())
    }

    fn amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<()> {
        self.amo_request(pe, seg, off, kernel_op(op, false), ty, value, 0, false).map(|_| ())
    }

    fn fetch_amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<u64> {
        self.amo_request(pe, seg, off, kernel_op(op, true), ty, value, 0, true)
    }

    fn compare_swap(&self, pe: usize, seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64) -> Result<u64> {
        self.amo_request(pe, seg, off, AmoOp::CompareSwap, ty, cond, value, true)
    }

    /// A target serves one source's requests in the order sent: nothing to order.
    fn fence(&self) -> Result<()> {
        Ok(())
    }

    /// Waits until every target has served everything sent to it.
    fn quiet(&self) -> Result<()> {
        (0..self.s.remote.len()).filter(|p| self.s.remote[*p]).try_for_each(|pe| self.complete(pe))
    }
}

impl Inbound for Mailboxes {
    fn serve(&self) -> Result<bool> {
        Mailboxes::serve(self)
    }
    fn flush(&self) -> Result<()> {
        for pe in (0..self.s.remote.len()).filter(|p| self.s.remote[*p]) {
            let routine = "rshmem proxy (sending requests)";
            let mut out = self.outbox(pe).map_err(|e| e.named(routine))?;
            self.publish(pe, &mut out).map_err(|e| e.named(routine))?;
        }
        Ok(())
    }
    fn idle(&self, nap: Duration) {
        self.s.net.progress(nap);
    }
    fn awaiting(&self) -> bool {
        (0..self.s.remote.len()).any(|pe| {
            self.s.remote[pe] && self.word(self.s.layout.ack(pe)).load(Ordering::Acquire) < self.announced[pe].load(Ordering::Relaxed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// Host heaps of `n` PEs in one process; the "network" copies into them (an aligned 8-byte
    /// write is one atomic store, as the real one delivers it whole).
    struct Heaps {
        mem: Vec<Box<[AtomicU64]>>,
        /// PEs whose host is "down": puts to them fail.
        down: Vec<AtomicBool>,
        /// A manual-progress network: puts wait here until some thread calls `progress`.
        manual: AtomicBool,
        queued: Mutex<Vec<(usize, usize, Vec<u8>)>>,
        /// Quiets and fences asked for, and reads made.
        quiets: std::sync::atomic::AtomicUsize,
        reads: std::sync::atomic::AtomicUsize,
        fences: std::sync::atomic::AtomicUsize,
    }

    impl Heaps {
        fn new(n: usize, bytes: usize) -> Arc<Heaps> {
            Arc::new(Heaps {
                mem: (0..n).map(|_| (0..bytes / 8).map(|_| AtomicU64::new(0)).collect()).collect(),
                down: (0..n).map(|_| AtomicBool::new(false)).collect(),
                manual: AtomicBool::new(false),
                queued: Mutex::new(Vec::new()),
                quiets: Default::default(),
                reads: Default::default(),
                fences: Default::default(),
            })
        }
        fn deliver(&self, pe: usize, off: usize, src: &[u8]) {
            if src.len() == 8 && off.is_multiple_of(8) {
                self.mem[pe][off / 8].store(u64::from_le_bytes(src.try_into().unwrap()), Ordering::Release);
            } else {
                // SAFETY: off..off+len lies in PE pe's heap (the tests keep to it).
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), (self.base(pe) + off) as *mut u8, src.len()) };
            }
        }
        fn base(&self, pe: usize) -> usize {
            self.mem[pe].as_ptr() as usize
        }
    }

    impl Transport for Heaps {
        fn describe(&self) -> String {
            "test heaps".into()
        }
        fn put(&self, pe: usize, _: Segment, off: usize, src: &[u8]) -> Result<()> {
            if self.down[pe].load(Ordering::Acquire) {
                return Err(Error::of(ErrorKind::System, format!("PE {pe}'s host is unreachable")));
            }
            if self.manual.load(Ordering::Acquire) {
                self.queued.lock().unwrap().push((pe, off, src.to_vec()));
            } else {
                self.deliver(pe, off, src);
            }
            Ok(())
        }
        fn progress(&self, block: Duration) {
            for (pe, off, data) in std::mem::take(&mut *self.queued.lock().unwrap()) {
                self.deliver(pe, off, &data);
            }
            std::thread::sleep(block);
        }
        fn get(&self, pe: usize, _: Segment, off: usize, dst: &mut [u8]) -> Result<()> {
            self.reads.fetch_add(1, Ordering::Relaxed);
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping((self.base(pe) + off) as *const u8, dst.as_mut_ptr(), dst.len()) };
            Ok(())
        }
        fn amo(&self, _: usize, _: Segment, _: usize, _: AtomicOp, _: AmoType, _: u64) -> Result<()> {
            unreachable!("mailboxes use puts and gets only")
        }
        fn fetch_amo(&self, _: usize, _: Segment, _: usize, _: AtomicOp, _: AmoType, _: u64) -> Result<u64> {
            unreachable!()
        }
        fn compare_swap(&self, _: usize, _: Segment, _: usize, _: AmoType, _: u64, _: u64) -> Result<u64> {
            unreachable!()
        }
        fn fence(&self) -> Result<()> {
            self.fences.fetch_add(1, Ordering::AcqRel);
            Ok(())
        }
        fn quiet(&self) -> Result<()> {
            self.quiets.fetch_add(1, Ordering::AcqRel);
            Ok(())
        }
    }

    /// A "GPU heap" of 64 words whose AMOs run under a lock (atomic with each other). Copies
    /// both ways stay in flight until `settle`, then run in the order started, as on a CUDA
    /// stream: a get's answer reaches the mailbox only then. An AMO that runs while a copy is in
    /// flight is recorded (it could overtake its data).
    #[derive(Default)]
    struct FakeGpu {
        mem: Mutex<Vec<u64>>,
        in_flight: Mutex<Vec<Staged>>,
        early_amos: std::sync::atomic::AtomicUsize,
        /// While set, copies stay in flight when asked whether they are done (`settled`).
        hold: AtomicBool,
    }

    /// A copy in flight on the fake GPU's stream.
    enum Staged {
        /// A put's data for heap offset `off`.
        ToGpu { off: usize, data: Vec<u8> },
        /// A get's answer: `len` bytes at `off` into the mailbox at address `host`.
        FromGpu { off: usize, host: usize, len: usize },
    }

    impl FakeGpu {
        fn new() -> FakeGpu {
            FakeGpu::with_words(64)
        }
        fn with_words(n: usize) -> FakeGpu {
            FakeGpu { mem: Mutex::new(vec![0; n]), ..Default::default() }
        }
        fn land(&self) {
            let mut m = self.mem.lock().unwrap();
            for c in std::mem::take(&mut *self.in_flight.lock().unwrap()) {
                let heap = m.as_mut_ptr() as *mut u8;
                match c {
                    // SAFETY: in bounds (asserted when queued).
                    Staged::ToGpu { off, data } => unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), heap.add(off), data.len()) },
                    // SAFETY: in bounds; the mailbox's data area has room for `len` bytes and the
                    // source reads it only after the acknowledgement, sent after this settle.
                    Staged::FromGpu { off, host, len } => unsafe { std::ptr::copy_nonoverlapping(heap.add(off), host as *mut u8, len) },
                }
            }
        }
        fn bytes(&self, off: usize, len: usize) -> Vec<u8> {
            let m = self.mem.lock().unwrap();
            // SAFETY: the tests read inside the 512 bytes.
            unsafe { std::slice::from_raw_parts((m.as_ptr() as *const u8).add(off), len) }.to_vec()
        }
    }

    impl TargetGpu for FakeGpu {
        fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()> {
            assert!(off + len <= self.mem.lock().unwrap().len() * 8);
            let c = if to_gpu {
                // SAFETY: the request's data in the mailbox, live for `len` bytes.
                Staged::ToGpu { off, data: unsafe { std::slice::from_raw_parts(host, len) }.to_vec() }
            } else {
                Staged::FromGpu { off, host: host as usize, len }
            };
            self.in_flight.lock().unwrap().push(c);
            Ok(())
        }
        fn settle(&self) -> Result<()> {
            self.land();
            Ok(())
        }
        fn settled(&self) -> Result<bool> {
            if self.hold.load(Ordering::Acquire) {
                return Ok(self.in_flight.lock().unwrap().is_empty());
            }
            self.settle().map(|_| true)
        }
        fn amo(&self, _from: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
            assert_eq!(size, 8);
            if !self.in_flight.lock().unwrap().is_empty() {
                self.early_amos.fetch_add(1, Ordering::AcqRel);
            }
            let mut m = self.mem.lock().unwrap();
            let w = &mut m[off / 8];
            let old = *w;
            *w = match op {
                AmoOp::Add => old.wrapping_add(a),
                AmoOp::Set | AmoOp::Swap => a,
                AmoOp::CompareSwap if old == a => b,
                AmoOp::CompareSwap | AmoOp::Fetch => old,
                AmoOp::And => old & a,
                AmoOp::Or => old | a,
                AmoOp::Xor => old ^ a,
            };
            Ok(old)
        }
    }

    const RING: usize = 256; // small: a request carries 64 bytes at most, 4 fit in the ring

    fn pair(stall: Duration) -> (Arc<Heaps>, Arc<Mailboxes>, Arc<Mailboxes>, Arc<FakeGpu>) {
        pair_with_ring(stall, RING)
    }

    fn pair_with_ring(stall: Duration, ring: usize) -> (Arc<Heaps>, Arc<Mailboxes>, Arc<Mailboxes>, Arc<FakeGpu>) {
        pair_sized(stall, ring, 4096, 64)
    }

    /// `pair_with_ring` with host heaps of `heap` bytes and a target GPU heap of `words` words.
    fn pair_sized(stall: Duration, ring: usize, heap: usize, words: usize) -> (Arc<Heaps>, Arc<Mailboxes>, Arc<Mailboxes>, Arc<FakeGpu>) {
        let heaps = Heaps::new(2, heap);
        let layout = MailboxLayout::at(64, 2, ring);
        let gpu1 = Arc::new(FakeGpu::with_words(words));
        struct Shared(Arc<FakeGpu>);
        impl TargetGpu for Shared {
            fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()> {
                self.0.copy(off, host, len, to_gpu)
            }
            fn settle(&self) -> Result<()> {
                self.0.settle()
            }
            fn settled(&self) -> Result<bool> {
                self.0.settled()
            }
            fn amo(&self, from: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
                self.0.amo(from, off, op, size, a, b)
            }
        }
        let make = |me: usize, gpu: Box<dyn TargetGpu>| {
            Arc::new(Mailboxes::new(MailboxSetup {
                net: heaps.clone(),
                layout,
                me,
                host_base: heaps.base(me),
                remote: vec![me != 0, me != 1],
                gpu,
                stall,
            }))
        };
        let pe0 = make(0, Box::new(FakeGpu::new()));
        let pe1 = make(1, Box::new(Shared(gpu1.clone())));
        (heaps, pe0, pe1, gpu1)
    }

    /// PE 1's proxy loop: serves until `stop`.
    fn serving(pe: Arc<Mailboxes>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Result<()>> {
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                pe.serve()?;
            }
            Ok(())
        })
    }

    #[test]
    fn requests_land_in_the_target_gpu_heap() {
        let (_heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let data: Vec<u8> = (1..=160).collect();
        pe0.put(1, Segment::Heap, 8, &data).unwrap();
        let mut back = vec![0u8; 160];
        pe0.get(1, Segment::Heap, 8, &mut back).unwrap();
        assert_eq!(back, data, "a put of 3 requests, read back in 3");
        assert_eq!(gpu1.bytes(8, 160), data, "the data is in the target's GPU heap");
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Add, AmoType::U64, 5).unwrap(), 0);
        pe0.amo(1, Segment::Heap, 256, AtomicOp::Add, AmoType::U64, 2).unwrap();
        assert_eq!(pe0.compare_swap(1, Segment::Heap, 256, AmoType::U64, 7, 100).unwrap(), 7);
        assert_eq!(pe0.compare_swap(1, Segment::Heap, 256, AmoType::U64, 7, 200).unwrap(), 100, "no swap: 100 != 7");
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Set, AmoType::U64, 9).unwrap(), 100);
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Read, AmoType::U64, 0).unwrap(), 9);
        assert_eq!(gpu1.mem.lock().unwrap()[32], 9);
        let e = pe0.put(0, Segment::Heap, 0, &[1]).unwrap_err().to_string();
        assert!(e.contains("PE 0 is not on another host"), "{e}");
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
    }

    /// PE 1's GPU heap words hold 0x1111_0000_0000 + their index.
    fn numbered(gpu: &FakeGpu) {
        for (i, w) in gpu.mem.lock().unwrap().iter_mut().enumerate() {
            *w = 0x1111_0000_0000 + i as u64;
        }
    }

    #[test]
    fn a_small_answer_comes_with_the_acknowledgement() {
        let (heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        numbered(&gpu1);
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let reads = || heaps.reads.load(Ordering::Relaxed);
        // A `g`: the acknowledgement brings its 8 bytes; the ring is not read.
        let mut v = [0u8; 8];
        // SAFETY: `v` outlives the quiet below.
        unsafe { pe0.get_nbi(1, Segment::Heap, 24, v.as_mut_ptr(), 8) }.unwrap();
        pe0.quiet().unwrap();
        assert_eq!(u64::from_le_bytes(v), 0x1111_0000_0003);
        assert_eq!(reads(), 0, "a carried answer needs no read");
        // Blocking gets: 32 bytes are carried, 40 are read from the ring.
        let mut b = [0u8; 32];
        pe0.get(1, Segment::Heap, 8, &mut b).unwrap();
        assert_eq!(b.to_vec(), gpu1.bytes(8, 32));
        assert_eq!(reads(), 0);
        let mut c = [0u8; 40];
        pe0.get(1, Segment::Heap, 12, &mut c).unwrap();
        assert_eq!(c.to_vec(), gpu1.bytes(12, 40));
        assert_eq!(reads(), 1, "too big to carry: read");
        // A fetching AMO's old value comes with it too.
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Add, AmoType::U64, 1).unwrap(), 0x1111_0000_0020);
        assert_eq!(pe0.compare_swap(1, Segment::Heap, 256, AmoType::U64, 0x1111_0000_0021, 5).unwrap(), 0x1111_0000_0021);
        assert_eq!(gpu1.mem.lock().unwrap()[32], 5);
        assert_eq!(reads(), 1);
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
    }

    #[test]
    fn answers_not_carried_are_read_from_the_ring() {
        let (heaps, pe0, pe1, gpu1) = pair_with_ring(Duration::from_secs(20), 1024); // 8 gets fit
        numbered(&gpu1);
        let reads = || heaps.reads.load(Ordering::Relaxed);
        // Three gets acknowledged together: the last one's answer is carried, the other two
        // (adjacent records) are read with one network read.
        let mut v = [[0u8; 8]; 3];
        for (k, d) in v.iter_mut().enumerate() {
            // SAFETY: `v` outlives the quiet below.
            unsafe { pe0.get_nbi(1, Segment::Heap, 8 * (k + 1), d.as_mut_ptr(), 8) }.unwrap();
        }
        pe0.flush().unwrap();
        assert!(pe1.serve().unwrap());
        assert_eq!(pe1.inbox.lock().unwrap()[0].acked, 3, "one acknowledgement for the three");
        pe0.quiet().unwrap();
        assert_eq!(v.map(u64::from_le_bytes), [0x1111_0000_0001, 0x1111_0000_0002, 0x1111_0000_0003]);
        assert_eq!(reads(), 1);
        // An acknowledgement that does not check (torn, or overwritten while read) carries
        // nothing: the answer is read from the ring and is still right.
        let mut w = [0u8; 8];
        // SAFETY: `w` outlives the quiet below.
        unsafe { pe0.get_nbi(1, Segment::Heap, 40, w.as_mut_ptr(), 8) }.unwrap();
        pe0.flush().unwrap();
        assert!(pe1.serve().unwrap());
        let slot = pe0.s.layout.ack(1);
        assert_eq!(pe0.carried(1).map(|c| c.0), Some(4));
        heaps.deliver(0, slot + 24, &0xdead_u64.to_le_bytes());
        assert_eq!(pe0.carried(1), None, "a record whose checksum fails is not trusted");
        pe0.quiet().unwrap();
        assert_eq!(u64::from_le_bytes(w), 0x1111_0000_0005);
        assert_eq!(reads(), 2);
    }

    #[test]
    fn two_proxies_waiting_on_each_other_do_not_deadlock() {
        let (_heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        // Each side waits for room in the other's ring (4 requests) and then for completion
        // while the other does the same; a side that finishes first keeps serving until the
        // other is done too (as a real proxy thread does).
        let pe1_done = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let t = {
            let (pe1, pe1_done, stop) = (pe1.clone(), pe1_done.clone(), stop.clone());
            std::thread::spawn(move || -> Result<()> {
                for i in 0..200 {
                    pe1.amo(0, Segment::Heap, 8 * (i % 4), AtomicOp::Add, AmoType::U64, 1)?;
                }
                pe1.quiet()?;
                pe1_done.store(true, Ordering::Release);
                while !stop.load(Ordering::Acquire) {
                    pe1.serve()?;
                }
                Ok(())
            })
        };
        for _ in 0..200 {
            pe0.amo(1, Segment::Heap, 0, AtomicOp::Add, AmoType::U64, 1).unwrap();
        }
        pe0.quiet().unwrap();
        while !pe1_done.load(Ordering::Acquire) {
            pe0.serve().unwrap();
        }
        stop.store(true, Ordering::Release);
        t.join().unwrap().unwrap();
        assert_eq!(gpu1.mem.lock().unwrap()[0], 200);
    }

    /// Host-side operations and the proxy thread of one PE send to the same target at once:
    /// they share the pair's ring, one request at a time.
    #[test]
    fn two_senders_on_one_pe_share_a_mailbox_in_turn() {
        let (_heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let senders: Vec<_> = (0..2)
            .map(|k| {
                let pe0 = pe0.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        if k == 0 {
                            pe0.atomic(1, 0, AmoOp::Add, 8, 1, 0).unwrap();
                        } else {
                            pe0.amo(1, Segment::Heap, 0, AtomicOp::Add, AmoType::U64, 1).unwrap();
                        }
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        pe0.quiet().unwrap();
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        assert_eq!(gpu1.mem.lock().unwrap()[0], 200, "every add of both senders arrived once");
    }

    /// Puts and non-fetching AMOs do not wait: several are in flight (here with nobody serving
    /// yet), sent on without a transport quiet or fence; the target runs them in order and a
    /// signal's AMO only after its data's copy has landed.
    #[test]
    fn requests_are_pipelined_and_a_signal_follows_its_data() {
        let (heaps, pe0, pe1, gpu1) = pair_with_ring(Duration::from_secs(20), 512); // room for all three
        let waits = || (heaps.quiets.load(Ordering::Acquire), heaps.fences.load(Ordering::Acquire));
        pe0.put(1, Segment::Heap, 8, &[5u8; 40]).unwrap();
        pe0.put(1, Segment::Heap, 8, &[6u8; 16]).unwrap(); // overwrites, in order
        pe0.amo(1, Segment::Heap, 256, AtomicOp::Set, AmoType::U64, 1).unwrap();
        assert_eq!(gpu1.mem.lock().unwrap()[32], 0);
        Inbound::flush(&*pe0).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        pe0.quiet().unwrap();
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        assert_eq!(waits(), (0, 0), "no transport quiet or fence between a request and its target");
        let mut want = vec![6u8; 16];
        want.extend([5u8; 24]);
        assert_eq!(gpu1.bytes(8, 40), want, "the second put landed over the first");
        assert_eq!(gpu1.mem.lock().unwrap()[32], 1, "the signal");
        assert_eq!(gpu1.early_amos.load(Ordering::Acquire), 0, "an AMO ran while a copy before it was in flight");
    }

    /// The target does not wait for its copies into GPU memory: it goes on serving (and
    /// receiving) while they run, and acknowledges what it served only once they are done, so
    /// a source never learns of a put before its data is in the target's GPU memory.
    #[test]
    fn an_acknowledgement_waits_for_its_copies_while_serving_goes_on() {
        let (_heaps, pe0, pe1, gpu1) = pair_with_ring(Duration::from_secs(20), 512);
        gpu1.hold.store(true, Ordering::Release);
        let acked = || pe0.word(pe0.s.layout.ack(1)).load(Ordering::Acquire);
        pe0.put(1, Segment::Heap, 8, &[5u8; 40]).unwrap();
        Inbound::flush(&*pe0).unwrap();
        assert!(pe1.serve().unwrap(), "served, its copy running");
        assert_eq!((acked(), gpu1.bytes(8, 8)), (0, vec![0u8; 8]), "no acknowledgement before the data landed");
        pe0.put(1, Segment::Heap, 48, &[7u8; 16]).unwrap();
        Inbound::flush(&*pe0).unwrap();
        assert!(pe1.serve().unwrap());
        assert_eq!(gpu1.in_flight.lock().unwrap().len(), 2, "the next request was served while the first copy ran");
        assert!(pe1.serve().unwrap(), "copies in flight count as work (no nap)");
        assert_eq!(acked(), 0);
        assert!(Inbound::awaiting(&*pe0), "the source keeps polling for its answer");
        gpu1.hold.store(false, Ordering::Release);
        assert!(pe1.serve().unwrap(), "the acknowledgement is sent");
        assert_eq!(acked(), 2, "both requests acknowledged together");
        let mut want = vec![5u8; 40];
        want.extend([7u8; 16]);
        assert_eq!(gpu1.bytes(8, 56), want);
        assert!(!pe1.serve().unwrap(), "nothing left to do");
        pe0.quiet().unwrap();
        assert!(!Inbound::awaiting(&*pe0));
    }

    /// PE 1's ring for requests from PE 0 lies at heap offset 64 (`pair`'s layout).
    const RING_FROM_0: usize = 64;

    /// A record lands in pieces (the header first, then its data byte by byte, as a network
    /// may deliver it): the target runs it only once the last byte is there.
    #[test]
    fn a_torn_record_is_never_executed() {
        let (heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(5));
        heaps.manual.store(true, Ordering::Release); // the network holds the write back
        pe0.put(1, Segment::Heap, 8, &[9u8; 40]).unwrap();
        let (to, off, record) = heaps.queued.lock().unwrap().pop().expect("the request's write");
        assert_eq!((to, off, record.len()), (1, RING_FROM_0, HEADER + 40));
        let at = heaps.base(1) + off;
        for k in 0..record.len() {
            // SAFETY: byte k of the record's place in PE 1's ring, inside its heap.
            unsafe { ((at + k) as *mut u8).write_volatile(record[k]) };
            if k + 1 < record.len() {
                assert!(!pe1.serve().unwrap(), "served with {} of {} bytes there", k + 1, record.len());
                assert_eq!(gpu1.bytes(8, 40), [0u8; 40], "a torn record touched the GPU heap");
            }
        }
        assert!(pe1.serve().unwrap(), "the whole record is served");
        assert_eq!(gpu1.bytes(8, 40), [9u8; 40]);
        // A byte flipped in a whole record's data (a stranger's write): never served.
        pe0.put(1, Segment::Heap, 0, &[3u8; 8]).unwrap();
        let (_, off, mut record) = heaps.queued.lock().unwrap().pop().expect("the second request's write");
        record[HEADER + 5] ^= 0x10;
        heaps.deliver(1, off, &record);
        assert!(!pe1.serve().unwrap(), "a record with a wrong byte was served");
        assert_eq!(gpu1.bytes(0, 8), [0u8; 8]);
    }

    /// Garbage in a mailbox: bytes whose checksum does not match are ignored (they are what a
    /// record still arriving looks like); a whole record with a number out of sequence, or an
    /// operation nobody sends, is a named error and runs nothing.
    #[test]
    fn garbage_in_a_mailbox_is_ignored_or_named() {
        let (heaps, _pe0, pe1, gpu1) = pair(Duration::from_secs(5));
        let put = |seq: u64, op: u32, data: &[u8]| {
            let mut r = Request { seq, op, off: 0, len: data.len() as u64, ..Default::default() };
            r.check = r.checksum_of(data);
            let mut bytes = r.bytes().to_vec();
            bytes.extend_from_slice(data);
            heaps.deliver(1, RING_FROM_0, &bytes);
        };
        // Request 1's number with a checksum that matches nothing.
        let junk = Request { seq: 1, op: REQ_PUT, len: 8, check: 0x1234, ..Default::default() };
        heaps.deliver(1, RING_FROM_0, junk.bytes());
        assert!(!pe1.serve().unwrap(), "unchecked bytes were served");
        put(77, REQ_PUT, &[1u8; 8]);
        let e = pe1.serve().unwrap_err().to_string();
        assert!(
            e.contains("PE 0's mailbox holds a whole request 77 (a put of 8 bytes) where request 1 belongs; its mailbox is corrupt"),
            "{e}"
        );
        put(1, 9, &[]);
        let e = pe1.serve().unwrap_err().to_string();
        assert!(e.contains("PE 0 sent a malformed request 1 (operation 9, 0 bytes)"), "{e}");
        assert_eq!(gpu1.bytes(0, 8), [0u8; 8], "garbage ran");
    }

    /// A proxy that announced requests awaits their acknowledgement (it polls instead of
    /// napping, serve.rs `Pacing`) until the target has served them, and not before announcing.
    #[test]
    fn announced_requests_are_awaited_until_acknowledged() {
        let (_heaps, pe0, pe1, _gpu1) = pair_with_ring(Duration::from_secs(20), 512);
        assert!(!Inbound::awaiting(&*pe0), "nothing sent");
        pe0.put(1, Segment::Heap, 8, &[5u8; 40]).unwrap();
        assert!(!Inbound::awaiting(&*pe0), "written, not announced yet: nothing can answer");
        Inbound::flush(&*pe0).unwrap();
        assert!(Inbound::awaiting(&*pe0), "announced, not acknowledged");
        assert!(!Inbound::awaiting(&*pe1), "the target sent nothing");
        assert!(pe1.serve().unwrap(), "the target served the request");
        assert!(!Inbound::awaiting(&*pe0), "acknowledged");
    }

    /// Requests of every size wrap the ring many times, wait for room, and land in the order
    /// sent (overlapping puts: the last one wins), with gets in between reading what is there.
    #[test]
    fn many_requests_wrap_the_ring_in_order() {
        let (_heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let mut model = vec![0u8; 200];
        for i in 0..120usize {
            let (off, len) = ((i * 13) % 100, (i * 7) % 100 + 1);
            let data: Vec<u8> = (0..len).map(|k| (i + k) as u8).collect();
            pe0.put(1, Segment::Heap, off, &data).unwrap();
            model[off..off + len].copy_from_slice(&data);
            if i % 17 == 0 {
                let mut back = vec![0u8; 200];
                pe0.get(1, Segment::Heap, 0, &mut back).unwrap();
                assert_eq!(back, model, "after put {i}");
            }
        }
        pe0.quiet().unwrap();
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        assert_eq!(gpu1.bytes(0, 200), model);
    }

    /// Gets started together are answered together: correct values (a get after a put sees
    /// it), one network read per run of adjacent get records instead of one per get, and more
    /// gets than the ring holds still all answered (room is made by reading answers first).
    #[test]
    fn started_gets_are_answered_together() {
        let (heaps, pe0, pe1, _gpu1) = pair_sized(Duration::from_secs(20), 4096, 16 << 10, 64);
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let word = |i: u64| (i * 0x0101_0101 + 7) ^ (i << 40);
        for i in 0..64u64 {
            pe0.put(1, Segment::Heap, i as usize * 8, &word(i).to_le_bytes()).unwrap();
        }
        pe0.quiet().unwrap();
        let reads = || heaps.reads.load(Ordering::Relaxed);
        // 20 gets of 8 or 4 bytes; a put to word 3 between get 9 and get 10 (both of word 3).
        let mut answers = [[0u8; 8]; 20];
        let before = reads();
        for (k, a) in answers.iter_mut().enumerate() {
            let (i, len) = if k == 9 || k == 10 { (3, 8) } else { (k as u64 * 3 % 64, 4 + 4 * (k % 2)) };
            if k == 10 {
                pe0.put(1, Segment::Heap, 24, &0xfeed_u64.to_le_bytes()).unwrap();
            }
            // SAFETY: `answers` outlives the quiet below and is not touched before it.
            unsafe { pe0.get_nbi(1, Segment::Heap, i as usize * 8, a.as_mut_ptr(), len).unwrap() };
        }
        pe0.quiet().unwrap();
        let made = reads() - before;
        for (k, a) in answers.iter().enumerate() {
            let (want, len) = match k {
                9 => (word(3), 8),
                10 => (0xfeed, 8),
                _ => (word(k as u64 * 3 % 64), 4 + 4 * (k % 2)),
            };
            assert_eq!(a[..len], want.to_le_bytes()[..len], "get {k}");
        }
        assert!(made <= 3, "20 gets in two runs of adjacent records took {made} network reads");
        // 100 gets, more than the ring's 32 records: each answer before its place is reused.
        let mut many = vec![0u64; 100];
        for (k, a) in many.iter_mut().enumerate() {
            let i = (k * 7 % 64) as u64;
            // SAFETY: as above.
            unsafe { pe0.get_nbi(1, Segment::Heap, i as usize * 8, (a as *mut u64).cast(), 8).unwrap() };
        }
        pe0.quiet().unwrap();
        for (k, a) in many.iter().enumerate() {
            let i = (k * 7 % 64) as u64;
            assert_eq!(*a, if i == 3 { 0xfeed } else { word(i) }, "get {k} of 100");
        }
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
    }

    /// Data above `JOINED_MAX` goes as a write of its own beside its header (either may land
    /// first): it lands whole and in order, and a record whose data has not landed yet is not
    /// served.
    #[test]
    fn large_data_goes_beside_its_header() {
        let (heaps, pe0, pe1, gpu1) = pair_sized(Duration::from_secs(20), 64 << 10, 160 << 10, 8 << 10);
        let data: Vec<u8> = (0..3 * JOINED_MAX + 24).map(|i| (i * 7 % 251) as u8).collect();
        heaps.manual.store(true, Ordering::Release);
        pe0.put(1, Segment::Heap, 16, &data).unwrap();
        let writes = std::mem::take(&mut *heaps.queued.lock().unwrap());
        assert_eq!(writes.iter().map(|w| w.2.len()).collect::<Vec<_>>(), [data.len(), HEADER], "the data, then its header");
        heaps.deliver(1, writes[1].1, &writes[1].2); // the header first: not served without its data
        assert!(!pe1.serve().unwrap(), "a header was served before its data landed");
        heaps.deliver(1, writes[0].1, &writes[0].2);
        assert!(pe1.serve().unwrap());
        assert_eq!(gpu1.bytes(16, data.len()), data);
        heaps.manual.store(false, Ordering::Release);
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let mut back = vec![0u8; data.len()];
        pe0.get(1, Segment::Heap, 16, &mut back).unwrap();
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        assert_eq!(back, data);
    }

    /// The checksum covers every data word in its place: a changed word, or two words swapped
    /// (within a chain or between chains), changes it.
    #[test]
    fn the_checksum_sees_changed_and_swapped_words() {
        let r = Request { seq: 3, op: REQ_PUT, len: 72, ..Default::default() };
        let data: Vec<u8> = (0..72u8).collect();
        let sum = r.checksum_of(&data);
        assert_eq!(sum, r.checksum_of(&data), "deterministic");
        let swapped = |a: usize, b: usize| {
            let mut d = data.clone();
            for k in 0..8 {
                d.swap(a * 8 + k, b * 8 + k);
            }
            r.checksum_of(&d)
        };
        assert_ne!(swapped(0, 4), sum, "words 0 and 4 (one chain) swapped");
        assert_ne!(swapped(0, 1), sum, "words 0 and 1 (two chains) swapped");
        assert_ne!(swapped(3, 8), sum, "a chain's word and the tail's swapped");
        for i in 0..data.len() {
            let mut d = data.clone();
            d[i] ^= 1;
            assert_ne!(r.checksum_of(&d), sum, "byte {i} flipped");
        }
        // A last word shorter than 8 bytes counts as if padded with zeros, as the target reads
        // it (its ring holds other bytes behind the data).
        for len in [1, 7, 9, 13, 71] {
            let mut ring = data.clone();
            ring[len..].fill(0xaa);
            let word = |i: usize| {
                let w = u64::from_le_bytes(ring[i * 8..i * 8 + 8].try_into().unwrap());
                if len - i * 8 >= 8 {
                    w
                } else {
                    w & ((1u64 << (8 * (len - i * 8))) - 1)
                }
            };
            assert_eq!(r.checksum_of(&data[..len]), r.checksum(len, word), "{len} bytes");
        }
    }

    #[test]
    fn a_silent_target_is_a_named_error_in_bounded_time() {
        let (_heaps, pe0, _pe1, _) = pair(Duration::from_millis(300));
        let t = Instant::now();
        pe0.put(1, Segment::Heap, 0, &[1, 2, 3]).unwrap();
        let e = pe0.quiet().map_err(|e| e.named("nvshmem_quiet")).unwrap_err().to_string();
        assert!(t.elapsed() < Duration::from_secs(5), "gave up after {:?}", t.elapsed());
        assert!(e.contains("nvshmem_quiet") && e.contains("PE 1 (another host) has not served request 1 (a put of 3 bytes)"), "{e}");
    }

    /// On a manual-progress network nothing lands unless someone drives it: the serving and
    /// the waiting side do (the fabric's own progress thread naps up to 1 ms per wake-up).
    #[test]
    fn both_sides_drive_a_manual_progress_network() {
        let (heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(5));
        heaps.manual.store(true, Ordering::Release);
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        pe0.put(1, Segment::Heap, 8, &[7u8; 8]).unwrap();
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 16, AtomicOp::Add, AmoType::U64, 3).unwrap(), 0);
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        let m = gpu1.mem.lock().unwrap();
        assert_eq!((m[1], m[2]), (u64::from_le_bytes([7; 8]), 3));
    }

    /// A failing exit stops the proxy thread before the CUDA context goes: a request waiting
    /// for a silent peer gives up as soon as the mailboxes are abandoned, not after the stall.
    #[test]
    fn an_abandoned_request_gives_up_at_once() {
        let (_heaps, pe0, _pe1, _) = pair(Duration::from_secs(60));
        let sender = {
            let pe0 = pe0.clone();
            std::thread::spawn(move || {
                let mut back = [0u8; 3];
                pe0.get(1, Segment::Heap, 0, &mut back).map_err(|e| e.named("nvshmem_getmem")).unwrap_err().to_string()
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        pe0.abandon();
        let e = sender.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "gave up after {:?}", t.elapsed());
        assert!(e.contains("nvshmem_getmem") && e.contains("the process is exiting; request 1 to PE 1 abandoned"), "{e}");
    }

    #[test]
    fn an_unreachable_host_is_named() {
        let (heaps, pe0, _pe1, _) = pair(Duration::from_secs(5));
        heaps.down[1].store(true, Ordering::Release);
        let e = pe0.amo(1, Segment::Heap, 0, AtomicOp::Add, AmoType::U64, 1).unwrap_err().to_string();
        assert!(e.contains("PE 1's host is unreachable"), "{e}");
    }
}
