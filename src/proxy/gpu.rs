//! The proxy for GPU PEs: the channel in pinned host memory, local memory on the GPU, and the
//! target side over a network that cannot write GPU memory (libfabric tcp has no FI_HMEM).
//!
//! **Target side** ("mailboxes"): a PE's GPU heap is reached only by that PE's own proxy. Every
//! ordered pair (source, target) has one mailbox in the target's *host* symmetric heap, which
//! the network transport has registered: a 64-byte request header and a data area. The source
//! proxy writes the data and the header, completes them (transport quiet; a fence when there
//! is no data), then writes the header's `seq`; the target proxy sees `seq` advance, runs the
//! request on its GPU — puts and gets as copies on its own stream, AMOs through the doorbell
//! (`AmoDoorbell`: a device thread of the target GPU runs it with system-scope atomics, so it
//! is atomic with the GPU's own AMOs) — waits for them, then writes `seq` into the source's
//! acknowledgement word. The source waits for that before
//! the next request to that PE, so every remote operation is in GPU memory when its proxy
//! command completes: quiet and fence are trivially satisfied, and a signal (a separate AMO
//! request after its put) is never visible before its data. While a proxy waits for an
//! acknowledgement it serves the requests sent to it, so two proxies waiting on each other
//! cannot deadlock. A target that does not answer within `stall` is an error naming it and the
//! operation (the proxy then stops and the device callers trap with its message).

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

fn cu<T>(r: cuda::CuResult<T>, routine: &'static str) -> Result<T> {
    r.map_err(|e| e.into_error(routine))
}

/// Channel memory for a GPU PE: rings and lane words in pinned host memory the GPU maps (the
/// proxy polls them, the GPU writes them); the issue words in GPU memory (GPU atomics only).
pub struct PinnedChannelMemory<'a> {
    pub stream: &'a Stream,
}

impl ChannelMemory for PinnedChannelMemory<'_> {
    fn shared(&self, bytes: usize) -> Result<Block> {
        let m = cu(PinnedHost::alloc(bytes), "nvshmem_init")?;
        let ptr = m.ptr;
        Ok(Block::foreign(ptr, Box::new(move || drop(m))))
    }
    fn issue(&self, bytes: usize) -> Result<Block> {
        let m = cu(DeviceMem::alloc(bytes, self.stream.0), "nvshmem_init")?;
        let ptr = m.ptr as *mut u8;
        Ok(Block::foreign(ptr, Box::new(move || drop(m))))
    }
}

/// A command's local buffer on the GPU (or anywhere the driver can copy from): copied through
/// a host bounce buffer on the proxy's own non-blocking stream, so a user kernel that waits for
/// the proxy on another stream (the default one included) never blocks the copy.
pub struct GpuLocal {
    ctx: PrimaryContext,
    stream: Stream,
}

impl GpuLocal {
    pub fn new(device: cuda::Device) -> Result<GpuLocal> {
        let ctx = cu(PrimaryContext::retain(device), "nvshmem_init")?;
        cu(ctx.make_current(), "nvshmem_init")?;
        Ok(GpuLocal { stream: cu(Stream::create_urgent(), "nvshmem_init")?, ctx })
    }

    /// Copies `len` bytes from `src` to `dst` (unified addresses) and waits for the copy.
    pub fn copy(&self, dst: u64, src: u64, len: usize, routine: &'static str) -> Result<()> {
        cu(self.ctx.make_current(), routine)?;
        // SAFETY: both ranges are valid for `len` bytes (the callers' buffers) and stay so until
        // the synchronize below returns.
        unsafe { cu(cuda::memcpy_async(dst, src, len, self.stream.0), routine)? };
        cu(cuda::stream_synchronize(self.stream.0), routine)
    }
}

impl GpuLocal {
    /// Whether everything given to this stream has finished.
    pub fn idle(&self, routine: &'static str) -> Result<bool> {
        cu(cuda::stream_idle(self.stream.0), routine)
    }

    /// Launches the remote-AMO taker of the channel at `channel` on this stream (AmoDoorbell).
    pub fn launch_amo_taker(&self, kernels: &cuda::kernels::Kernels, channel: u64, routine: &'static str) -> Result<()> {
        cu(self.ctx.make_current(), routine)?;
        // SAFETY: `channel` is this PE's live channel header in pinned memory the GPU maps; it
        // outlives the proxy, which finalize stops only after its kernels are done.
        unsafe { cu(kernels.proxy_amo(self.stream.0, channel), routine) }
    }
}

impl LocalMemory for GpuLocal {
    fn with_source(&self, addr: u64, len: usize, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let mut bounce = vec![0u8; len];
        self.copy(bounce.as_mut_ptr() as u64, addr, len, "rshmem proxy (reading a put's source)")?;
        f(&bounce)
    }

    fn with_dest(&self, addr: u64, len: usize, f: &mut dyn FnMut(&mut [u8]) -> Result<()>) -> Result<()> {
        let mut bounce = vec![0u8; len];
        f(&mut bounce)?;
        self.copy(addr, bounce.as_ptr() as u64, len, "rshmem proxy (writing a get's destination)")
    }
}

// ---- mailboxes ---------------------------------------------------------------------------

const REQ_PUT: u32 = 1;
const REQ_GET: u32 = 2;
const REQ_AMO: u32 = 3;

/// A request header as it lies in the target's mailbox (64 bytes; `seq` first, written last).
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
    /// AMO: the old value, written by the target before its acknowledgement.
    result: u64,
    _pad: u64,
}

const HEADER: usize = 64;
const _: () = assert!(size_of::<Request>() == HEADER);

/// Where the mailboxes lie in every PE's host heap (the same offsets on every PE).
#[derive(Clone, Copy, Debug)]
pub struct MailboxLayout {
    /// Heap offset of mailbox 0; the mailbox for requests from PE s is at `inbox + s * stride`.
    pub inbox: usize,
    /// Bytes of data a request carries at most.
    pub data: usize,
    /// Heap offset of the acknowledgement words, one per target PE, 64 bytes apart.
    pub acks: usize,
}

impl MailboxLayout {
    /// Bytes of host heap the layout needs for `npes` PEs with `data` bytes per mailbox.
    pub fn bytes(npes: usize, data: usize) -> usize {
        npes * (HEADER + data) + npes * 64
    }

    /// The layout at heap offset `at`.
    pub fn at(at: usize, npes: usize, data: usize) -> MailboxLayout {
        MailboxLayout { inbox: at, data, acks: at + npes * (HEADER + data) }
    }

    fn mailbox(&self, from: usize) -> usize {
        self.inbox + from * (HEADER + self.data)
    }

    fn ack(&self, target: usize) -> usize {
        self.acks + target * 64
    }
}

/// How the target side reaches its own GPU heap.
pub trait TargetGpu: Send + Sync {
    /// Copies `len` bytes between host memory and the GPU heap at `off` (to the GPU when
    /// `to_gpu`), complete on return.
    fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()>;
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
}

impl AmoDoorbell {
    pub fn new(channel: std::sync::Arc<super::Channel>, kernel: Box<dyn AmoKernel>, stall: Duration) -> AmoDoorbell {
        AmoDoorbell { channel, kernel, stall, state: Mutex::new((0, 0)) }
    }

    /// Runs `op` (an `AmoOp`) on the `size`-byte word at GPU address `addr`, for PE `from`;
    /// returns the old value.
    #[allow(clippy::too_many_arguments)]
    pub fn run(&self, from: usize, addr: u64, op: AmoOp, size: usize, a: u64, b: u64, routine: &'static str) -> Result<u64> {
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
            if start.elapsed() > self.stall {
                return Err(Error::new(
                    ErrorKind::System,
                    routine,
                    format!(
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

/// The network transport for GPU PEs on other hosts: every operation is a mailbox request
/// served by the target's proxy (see the module comment). Made for the one proxy thread of
/// this PE; `serve` is its target side.
pub struct Mailboxes {
    net: std::sync::Arc<dyn Transport>,
    layout: MailboxLayout,
    me: usize,
    /// Host address of this PE's heap (where its mailboxes and acknowledgement words lie).
    host_base: usize,
    /// Which PEs are reached through mailboxes (on another host).
    remote: Vec<bool>,
    gpu: Box<dyn TargetGpu>,
    stall: Duration,
    /// Per target: the last request sent. Per source: the last request served.
    sent: Mutex<Vec<u64>>,
    served: Mutex<Vec<u64>>,
    /// Per target: held while a request to it is in flight (the proxy thread and host-side
    /// operations share the one mailbox of each pair).
    in_flight: Vec<Mutex<()>>,
    /// Set when the process exits without finalize: a request waiting for its acknowledgement
    /// gives up at once (the proxy thread is being joined).
    abandoned: std::sync::atomic::AtomicBool,
}

impl Mailboxes {
    pub fn new(
        net: std::sync::Arc<dyn Transport>,
        layout: MailboxLayout,
        me: usize,
        host_base: usize,
        remote: Vec<bool>,
        gpu: Box<dyn TargetGpu>,
        stall: Duration,
    ) -> Mailboxes {
        let npes = remote.len();
        Mailboxes {
            net,
            layout,
            me,
            host_base,
            remote,
            gpu,
            stall,
            sent: Mutex::new(vec![0; npes]),
            served: Mutex::new(vec![0; npes]),
            in_flight: (0..npes).map(|_| Mutex::new(())).collect(),
            abandoned: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Makes every request that waits for an acknowledgement give up (process exit).
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::Release);
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: `off` is an 8-byte aligned word of this PE's mailbox area in its host heap,
        // mapped for the life of the job; the network writes it, we read it atomically.
        unsafe { AtomicU64::from_ptr((self.host_base + off) as *mut u64) }
    }

    /// Serves every request waiting in this PE's mailboxes; true when there was one.
    pub fn serve(&self) -> Result<bool> {
        // On a manual-progress provider (tcp) a peer's write into our mailboxes lands only while
        // a thread of ours drives the provider; left to the fabric's progress thread, which naps
        // up to 1 ms, every request cost over a millisecond (first GPU benchmark).
        self.net.progress(Duration::ZERO);
        let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        let mut any = false;
        for from in 0..self.remote.len() {
            if !self.remote[from] {
                continue;
            }
            let at = self.layout.mailbox(from);
            let seq = self.word(at).load(Ordering::Acquire);
            if seq == served[from] {
                continue;
            }
            if seq != served[from] + 1 {
                return Err(proxy_error(format!(
                    "PE {from} wrote request {seq} into its mailbox after request {}; the mailbox is corrupt",
                    served[from]
                )));
            }
            let hdr = (self.host_base + at) as *mut Request;
            // SAFETY: the source completed the header before writing `seq`, which we acquired;
            // it writes nothing more into this mailbox until we acknowledge.
            let r = unsafe { hdr.read_volatile() };
            crate::log::trace(|| format!("proxy: serving request {seq} from PE {from} ({})", request_name(&r)));
            let data = (self.host_base + at + HEADER) as *mut u8;
            let len = usize::try_from(r.len).unwrap_or(usize::MAX);
            match r.op {
                REQ_PUT | REQ_GET if len <= self.layout.data => self.gpu.copy(r.off as usize, data, len, r.op == REQ_PUT)?,
                REQ_AMO if len == 4 || len == 8 => {
                    let op = amo_from_code(r.amo).ok_or_else(|| proxy_error(format!("PE {from} asked for AMO {}", r.amo)))?;
                    let old = self.gpu.amo(from, r.off as usize, op, len, r.a, r.b)?;
                    // SAFETY: our own mailbox header, read by the source only after the ack.
                    unsafe { (&raw mut (*hdr).result).write_volatile(old) };
                }
                op => return Err(proxy_error(format!("PE {from} sent a malformed request (operation {op}, {len} bytes)"))),
            }
            served[from] = seq;
            self.net.put(from, Segment::Heap, self.layout.ack(self.me), &seq.to_le_bytes(), "rshmem proxy (acknowledging)")?;
            crate::log::trace(|| format!("proxy: served request {seq} from PE {from}"));
            any = true;
        }
        Ok(any)
    }

    /// Sends one request to `pe` and waits for its acknowledgement; returns the AMO result.
    fn request(&self, pe: usize, mut r: Request, out: Option<&[u8]>, back: Option<&mut [u8]>, routine: &'static str) -> Result<u64> {
        if !self.remote.get(pe).copied().unwrap_or(false) {
            return Err(proxy_error(format!("{routine}: PE {pe} is not on another host; the proxy reaches only PEs on other hosts")));
        }
        let _pair = self.in_flight[pe].lock().unwrap_or_else(|e| e.into_inner());
        let seq = {
            let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
            sent[pe] += 1;
            sent[pe]
        };
        let at = self.layout.mailbox(self.me);
        if let Some(d) = out {
            self.net.put(pe, Segment::Heap, at + HEADER, d, routine)?;
        }
        r.seq = 0;
        // SAFETY: Request is plain old data of HEADER bytes.
        let bytes = unsafe { std::slice::from_raw_parts((&r as *const Request).cast::<u8>(), HEADER) };
        self.net.put(pe, Segment::Heap, at + 8, &bytes[8..], routine)?;
        // Data and header before `seq`: a quiet where data went (a large put may take another
        // path through the provider than the small writes after it); a header alone needs only
        // the transport's ordering of writes to one PE (a fence: free on ordered providers).
        if out.is_some() {
            self.net.quiet(routine)?;
        } else {
            self.net.fence(routine)?;
        }
        self.net.put(pe, Segment::Heap, at, &seq.to_le_bytes(), routine)?;
        crate::log::trace(|| format!("proxy: {routine}: request {seq} to PE {pe} ({}) posted", request_name(&r)));
        let ack = self.word(self.layout.ack(pe));
        let start = Instant::now();
        let mut spins = 0u32;
        while ack.load(Ordering::Acquire) < seq {
            if self.serve()? {
                continue;
            }
            if self.abandoned.load(Ordering::Acquire) {
                return Err(Error::new(
                    ErrorKind::System,
                    routine,
                    format!("PE {}: the process is exiting; request {seq} to PE {pe} abandoned", self.me),
                ));
            }
            if start.elapsed() > self.stall {
                return Err(Error::new(
                    ErrorKind::System,
                    routine,
                    format!("PE {}: PE {pe} (another host) has not served request {seq} ({}) after {:.1} s: its proxy or its process is gone, or its host is unreachable", self.me, request_name(&r), start.elapsed().as_secs_f64()),
                ));
            }
            spins += 1;
            if spins > 1000 {
                self.net.progress(Duration::from_micros(20));
            } else {
                std::hint::spin_loop();
            }
        }
        crate::log::trace(|| format!("proxy: request {seq} to PE {pe} acknowledged after {} us", start.elapsed().as_micros()));
        if let Some(d) = back {
            self.net.get(pe, Segment::Heap, at + HEADER, d, routine)?;
        }
        if r.op == REQ_AMO {
            let mut v = [0u8; 8];
            self.net.get(pe, Segment::Heap, at + 48, &mut v, routine)?;
            return Ok(u64::from_le_bytes(v));
        }
        Ok(0)
    }

    #[allow(clippy::too_many_arguments)]
    fn amo_request(
        &self,
        pe: usize,
        seg: Segment,
        off: usize,
        op: AmoOp,
        ty: AmoType,
        a: u64,
        b: u64,
        routine: &'static str,
    ) -> Result<u64> {
        heap_only(seg, routine)?;
        let size = match ty {
            AmoType::I32 | AmoType::U32 | AmoType::F32 => 4,
            AmoType::I64 | AmoType::U64 | AmoType::F64 => 8,
        };
        self.atomic(pe, off, op, size, a, b, routine)
    }

    /// The atomic kernel's `op` on the `size`-byte word at GPU heap offset `off` of PE `pe`
    /// (host-initiated atomics); returns the old value.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic(&self, pe: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64, routine: &'static str) -> Result<u64> {
        let r = Request { op: REQ_AMO, amo: op as u32, off: off as u64, len: size as u64, a, b, ..Default::default() };
        self.request(pe, r, None, None, routine)
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

fn heap_only(seg: Segment, routine: &'static str) -> Result<()> {
    match seg {
        Segment::Heap => Ok(()),
        Segment::Statics => Err(Error::invalid(routine, "GPU PEs on other hosts are reached in the symmetric heap only")),
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
        format!("proxy mailboxes over {}", self.net.describe())
    }

    fn put(&self, pe: usize, seg: Segment, off: usize, src: &[u8], routine: &'static str) -> Result<()> {
        heap_only(seg, routine)?;
        for (i, chunk) in src.chunks(self.layout.data).enumerate() {
            let r = Request { op: REQ_PUT, off: (off + i * self.layout.data) as u64, len: chunk.len() as u64, ..Default::default() };
            self.request(pe, r, Some(chunk), None, routine)?;
        }
        Ok(())
    }

    fn get(&self, pe: usize, seg: Segment, off: usize, dst: &mut [u8], routine: &'static str) -> Result<()> {
        heap_only(seg, routine)?;
        let data = self.layout.data;
        for (i, chunk) in dst.chunks_mut(data).enumerate() {
            let r = Request { op: REQ_GET, off: (off + i * data) as u64, len: chunk.len() as u64, ..Default::default() };
            self.request(pe, r, None, Some(chunk), routine)?;
        }
        Ok(())
    }

    fn amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64, routine: &'static str) -> Result<()> {
        self.amo_request(pe, seg, off, kernel_op(op, false), ty, value, 0, routine).map(|_| ())
    }

    fn fetch_amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64, routine: &'static str) -> Result<u64> {
        self.amo_request(pe, seg, off, kernel_op(op, true), ty, value, 0, routine)
    }

    fn compare_swap(&self, pe: usize, seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64, routine: &'static str) -> Result<u64> {
        self.amo_request(pe, seg, off, AmoOp::CompareSwap, ty, cond, value, routine)
    }

    /// Every request completed before the next was sent: nothing to order.
    fn fence(&self, _routine: &'static str) -> Result<()> {
        Ok(())
    }

    /// Every request is in the target's GPU memory when it returns: nothing to complete.
    fn quiet(&self, _routine: &'static str) -> Result<()> {
        Ok(())
    }
}

impl Inbound for Mailboxes {
    fn serve(&self) -> Result<bool> {
        Mailboxes::serve(self)
    }
    fn idle(&self, nap: Duration) {
        self.net.progress(nap);
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
        /// Quiets and fences asked for.
        quiets: std::sync::atomic::AtomicUsize,
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
        fn put(&self, pe: usize, _: Segment, off: usize, src: &[u8], routine: &'static str) -> Result<()> {
            if self.down[pe].load(Ordering::Acquire) {
                return Err(Error::new(ErrorKind::System, routine, format!("PE {pe}'s host is unreachable")));
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
        fn get(&self, pe: usize, _: Segment, off: usize, dst: &mut [u8], _: &'static str) -> Result<()> {
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping((self.base(pe) + off) as *const u8, dst.as_mut_ptr(), dst.len()) };
            Ok(())
        }
        fn amo(&self, _: usize, _: Segment, _: usize, _: AtomicOp, _: AmoType, _: u64, _: &'static str) -> Result<()> {
            unreachable!("mailboxes use puts and gets only")
        }
        fn fetch_amo(&self, _: usize, _: Segment, _: usize, _: AtomicOp, _: AmoType, _: u64, _: &'static str) -> Result<u64> {
            unreachable!()
        }
        fn compare_swap(&self, _: usize, _: Segment, _: usize, _: AmoType, _: u64, _: u64, _: &'static str) -> Result<u64> {
            unreachable!()
        }
        fn fence(&self, _: &'static str) -> Result<()> {
            self.fences.fetch_add(1, Ordering::AcqRel);
            Ok(())
        }
        fn quiet(&self, _: &'static str) -> Result<()> {
            self.quiets.fetch_add(1, Ordering::AcqRel);
            Ok(())
        }
    }

    /// A "GPU heap" of 64 words whose AMOs run under a lock (atomic with each other).
    struct FakeGpu(Mutex<Vec<u64>>);

    impl TargetGpu for FakeGpu {
        fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()> {
            let mut m = self.0.lock().unwrap();
            let gpu = m.as_mut_ptr() as *mut u8;
            assert!(off + len <= m.len() * 8);
            // SAFETY: both ranges are live and in bounds (asserted).
            unsafe {
                if to_gpu {
                    std::ptr::copy_nonoverlapping(host, gpu.add(off), len)
                } else {
                    std::ptr::copy_nonoverlapping(gpu.add(off), host, len)
                }
            }
            Ok(())
        }
        fn amo(&self, _from: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
            assert_eq!(size, 8);
            let mut m = self.0.lock().unwrap();
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

    const DATA: usize = 16; // small, so a 40-byte put takes three requests

    fn pair(stall: Duration) -> (Arc<Heaps>, Arc<Mailboxes>, Arc<Mailboxes>, Arc<FakeGpu>) {
        let heaps = Heaps::new(2, 4096);
        let layout = MailboxLayout::at(64, 2, DATA);
        let gpu1 = Arc::new(FakeGpu(Mutex::new(vec![0; 64])));
        struct Shared(Arc<FakeGpu>);
        impl TargetGpu for Shared {
            fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()> {
                self.0.copy(off, host, len, to_gpu)
            }
            fn amo(&self, from: usize, off: usize, op: AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
                self.0.amo(from, off, op, size, a, b)
            }
        }
        let make = |me: usize, gpu: Box<dyn TargetGpu>| {
            Arc::new(Mailboxes::new(heaps.clone(), layout, me, heaps.base(me), vec![me != 0, me != 1], gpu, stall))
        };
        let pe0 = make(0, Box::new(FakeGpu(Mutex::new(vec![0; 64]))));
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
        let data: Vec<u8> = (1..=40).collect();
        pe0.put(1, Segment::Heap, 8, &data, "test put").unwrap();
        let mut back = vec![0u8; 40];
        pe0.get(1, Segment::Heap, 8, &mut back, "test get").unwrap();
        assert_eq!(back, data, "a put of 3 chunks, read back in 3 chunks");
        let word = gpu1.0.lock().unwrap()[1];
        assert_eq!(word, u64::from_le_bytes(data[..8].try_into().unwrap()), "the data is in the target's GPU heap");
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Add, AmoType::U64, 5, "fadd").unwrap(), 0);
        pe0.amo(1, Segment::Heap, 256, AtomicOp::Add, AmoType::U64, 2, "add").unwrap();
        assert_eq!(pe0.compare_swap(1, Segment::Heap, 256, AmoType::U64, 7, 100, "cswap").unwrap(), 7);
        assert_eq!(pe0.compare_swap(1, Segment::Heap, 256, AmoType::U64, 7, 200, "cswap").unwrap(), 100, "no swap: 100 != 7");
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Set, AmoType::U64, 9, "swap").unwrap(), 100);
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 256, AtomicOp::Read, AmoType::U64, 0, "fetch").unwrap(), 9);
        assert_eq!(gpu1.0.lock().unwrap()[32], 9);
        let e = pe0.put(0, Segment::Heap, 0, &[1], "nvshmem_putmem").unwrap_err().to_string();
        assert!(e.contains("PE 0 is not on another host"), "{e}");
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
    }

    #[test]
    fn two_proxies_waiting_on_each_other_do_not_deadlock() {
        let (_heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        // Each side's requests are served by the other while it waits for its own; a side that
        // finishes first keeps serving until the other is done too (as a real proxy thread does).
        let pe1_done = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let t = {
            let (pe1, pe1_done, stop) = (pe1.clone(), pe1_done.clone(), stop.clone());
            std::thread::spawn(move || -> Result<()> {
                for i in 0..200 {
                    pe1.amo(0, Segment::Heap, 8 * (i % 4), AtomicOp::Add, AmoType::U64, 1, "t")?;
                }
                pe1_done.store(true, Ordering::Release);
                while !stop.load(Ordering::Acquire) {
                    pe1.serve()?;
                }
                Ok(())
            })
        };
        for _ in 0..200 {
            pe0.amo(1, Segment::Heap, 0, AtomicOp::Add, AmoType::U64, 1, "t").unwrap();
        }
        while !pe1_done.load(Ordering::Acquire) {
            pe0.serve().unwrap();
        }
        stop.store(true, Ordering::Release);
        t.join().unwrap().unwrap();
        assert_eq!(gpu1.0.lock().unwrap()[0], 200);
    }

    /// Host-side operations and the proxy thread of one PE send to the same target at once:
    /// each request keeps the pair's mailbox until it is acknowledged.
    #[test]
    fn two_senders_on_one_pe_share_a_mailbox_in_turn() {
        let (_heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(20));
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let senders: Vec<_> = (0..2)
            .map(|_| {
                let pe0 = pe0.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        pe0.atomic(1, 0, AmoOp::Add, 8, 1, 0, "t").unwrap();
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        assert_eq!(gpu1.0.lock().unwrap()[0], 200, "every add of both senders arrived once");
    }

    /// Before `seq`: a request that carries data completes it (quiet: a large put may take
    /// another path through the provider than the small writes after it); a header alone is
    /// only ordered before its `seq` (fence, free where the provider orders writes).
    #[test]
    fn only_requests_with_data_pay_a_quiet_before_their_seq() {
        let (heaps, pe0, pe1, _) = pair(Duration::from_secs(20));
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        let counts = || (heaps.quiets.load(Ordering::Acquire), heaps.fences.load(Ordering::Acquire));
        pe0.put(1, Segment::Heap, 8, &[1u8; 40], "test put").unwrap(); // 3 chunks of DATA bytes
        assert_eq!(counts(), (3, 0), "a quiet per request with data");
        pe0.amo(1, Segment::Heap, 256, AtomicOp::Add, AmoType::U64, 1, "add").unwrap();
        let mut back = [0u8; 8];
        pe0.get(1, Segment::Heap, 8, &mut back, "get").unwrap();
        assert_eq!(counts(), (3, 2), "an AMO and a get: a fence each");
        assert_eq!(back, [1u8; 8]);
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
    }

    #[test]
    fn a_silent_target_is_a_named_error_in_bounded_time() {
        let (_heaps, pe0, _pe1, _) = pair(Duration::from_millis(300));
        let t = Instant::now();
        let e = pe0.put(1, Segment::Heap, 0, &[1, 2, 3], "nvshmem_putmem").unwrap_err().to_string();
        assert!(t.elapsed() < Duration::from_secs(5), "gave up after {:?}", t.elapsed());
        assert!(e.contains("nvshmem_putmem") && e.contains("PE 1 (another host) has not served request 1 (a put of 3 bytes)"), "{e}");
    }

    /// On a manual-progress network nothing lands unless someone drives it: the serving and
    /// the waiting side do (the fabric's own progress thread naps up to 1 ms per wake-up).
    #[test]
    fn both_sides_drive_a_manual_progress_network() {
        let (heaps, pe0, pe1, gpu1) = pair(Duration::from_secs(5));
        heaps.manual.store(true, Ordering::Release);
        let stop = Arc::new(AtomicBool::new(false));
        let server = serving(pe1, stop.clone());
        pe0.put(1, Segment::Heap, 8, &[7u8; 8], "nvshmem_putmem").unwrap();
        assert_eq!(pe0.fetch_amo(1, Segment::Heap, 16, AtomicOp::Add, AmoType::U64, 3, "fadd").unwrap(), 0);
        stop.store(true, Ordering::Release);
        server.join().unwrap().unwrap();
        let m = gpu1.0.lock().unwrap();
        assert_eq!((m[1], m[2]), (u64::from_le_bytes([7; 8]), 3));
    }

    /// A failing exit stops the proxy thread before the CUDA context goes: a request waiting
    /// for a silent peer gives up as soon as the mailboxes are abandoned, not after the stall.
    #[test]
    fn an_abandoned_request_gives_up_at_once() {
        let (_heaps, pe0, _pe1, _) = pair(Duration::from_secs(60));
        let sender = {
            let pe0 = pe0.clone();
            std::thread::spawn(move || pe0.put(1, Segment::Heap, 0, &[1, 2, 3], "nvshmem_putmem").unwrap_err().to_string())
        };
        std::thread::sleep(Duration::from_millis(50));
        let t = Instant::now();
        pe0.abandon();
        let e = sender.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "gave up after {:?}", t.elapsed());
        assert!(e.contains("nvshmem_putmem") && e.contains("the process is exiting; request 1 to PE 1 abandoned"), "{e}");
    }

    #[test]
    fn an_unreachable_host_and_a_corrupt_mailbox_are_named() {
        let (heaps, pe0, pe1, _) = pair(Duration::from_secs(5));
        heaps.down[1].store(true, Ordering::Release);
        let e = pe0.amo(1, Segment::Heap, 0, AtomicOp::Add, AmoType::U64, 1, "nvshmem_atomic_add").unwrap_err().to_string();
        assert!(e.contains("PE 1's host is unreachable"), "{e}");
        // A stranger's garbage in PE 1's mailbox from PE 0: sequence 77 after 0.
        heaps.mem[1][64 / 8].store(77, Ordering::Release);
        let e = pe1.serve().unwrap_err().to_string();
        assert!(e.contains("PE 0 wrote request 77 into its mailbox after request 0"), "{e}");
    }
}
