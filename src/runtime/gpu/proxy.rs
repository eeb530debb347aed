//! A GPU PE's proxy thread, in jobs that span hosts (src/proxy/gpu.rs has the design): started
//! once the job's state exists (the mailboxes live in the host symmetric heap, the network is
//! the job's), stopped at finalize after every PE's kernels are done.

use std::sync::Arc;

use super::GpuState;
use crate::error::{Error, ErrorKind, Result};
use crate::fabric::AtomicOp;
use crate::proxy::gpu::{AmoDoorbell, AmoKernel, GpuLocal, MailboxLayout, MailboxSetup, Mailboxes, TargetGpu};
use crate::proxy::{Proxy, ProxyConfig};
use crate::runtime::{state, State};
use crate::transport::{AmoType, Route, Segment, Transport};

/// Bytes of one mailbox's ring at most (a request carries up to half of it; a larger transfer
/// takes several requests, several in flight), and the host heap all of one PE's mailboxes
/// may take (of the GPU job's 8 MiB host heap; 2 PEs: 2 MiB rings, room for three 512 KiB
/// put pieces, `proxy::gpu::PIECE`).
const MAILBOX_RING: usize = 2 << 20;
const MAILBOX_BUDGET: usize = 4 << 20;

/// Collective (every GPU PE of a job that spans hosts): allocates the mailboxes and starts the
/// proxy thread.
pub fn start(st: &'static State) -> Result<()> {
    let routine = "nvshmem_init";
    let Some(g) = &st.gpu else { return Ok(()) };
    let Some(channel) = &g.proxy_channel else { return Ok(()) };
    let npes = st.npes;
    let ring = ((MAILBOX_BUDGET / npes).saturating_sub(128) / 4096 * 4096).clamp(4096, MAILBOX_RING);
    let bytes = MailboxLayout::bytes(npes, ring).next_multiple_of(PAGE);
    let at = st.alloc.lock().unwrap_or_else(|e| e.into_inner()).alloc(bytes, PAGE).ok_or_else(|| {
        Error::new(
            ErrorKind::OutOfMemory,
            routine,
            format!("the proxy's mailboxes need {bytes} bytes of the host symmetric heap, which is full"),
        )
    })?;
    let area = (st.heap.my_base() + at) as *mut u8;
    // SAFETY: `at..at + bytes` was just allocated in this PE's host heap, mapped for the job.
    unsafe { std::ptr::write_bytes(area, 0, bytes) };
    // Page-locked for the driver: a request's data is copied into GPU memory by DMA straight from
    // the mailbox (a copy from pageable memory is staged by the driver, synchronously).
    // SAFETY: the host heap stays mapped until finalize, after `stop` dropped the registration.
    match unsafe { crate::cuda::HostRegistration::new(area, bytes) } {
        Ok(r) => *REGISTERED.lock().unwrap_or_else(|e| e.into_inner()) = Some(r),
        Err(e) => crate::runtime::log::info(&format!(
            "the proxy's mailboxes could not be page-locked for the GPU ({e}): requests from other hosts are copied through the driver's staging"
        )),
    }
    // Nobody writes into a peer's mailboxes before the peer has cleared them.
    st.boot.barrier()?;
    // The atomic kernel the target side runs is loaded now, not at its first use: loading a
    // module may wait for the context's running kernels, and one spinning in a device barrier
    // waits for that very atomic.
    g.kernels()?;
    let remote: Vec<bool> = (0..npes).map(|p| st.routes.route(p) == Route::Network).collect();
    let stall = std::time::Duration::from_nanos(stall_ns(channel));
    let taker = AmoTaker { gpu: GpuLocal::new(g.device)?, channel: channel.as_ptr() as u64 };
    let target = OwnGpu { copies: GpuLocal::new(g.device)?, doorbell: AmoDoorbell::new(channel.clone(), Box::new(taker), stall) };
    let boxes = Arc::new(Mailboxes::new(MailboxSetup {
        net: Arc::new(JobNetwork),
        layout: MailboxLayout::at(at, npes, ring),
        me: st.me,
        host_base: st.heap.my_base(),
        remote,
        gpu: Box::new(target),
        stall,
    }));
    let memory = Arc::new(GpuLocal::new(g.device)?);
    drop(memory.bounce_slots());
    let _ = g.mailboxes.set(boxes.clone());
    let proxy = Proxy::start_serving(channel.clone(), boxes.clone(), memory, Some(boxes), ProxyConfig::new(npes));
    *g.proxy.lock().unwrap_or_else(|e| e.into_inner()) = Some(proxy);
    crate::runtime::log::info(&format!(
        "proxy thread started: PEs on other hosts through mailbox rings of {ring} bytes over the job's network"
    ));
    if crate::cuda::lazy_loading() == Some(true) {
        crate::log::warn(LAZY_LOADING);
    }
    Ok(())
}

/// The mailboxes are registered in whole pages.
const PAGE: usize = 4096;

/// The mailboxes' page-lock, dropped at `stop` (before finalize unmaps the host heap).
static REGISTERED: std::sync::Mutex<Option<crate::cuda::HostRegistration>> = std::sync::Mutex::new(None);

/// Lazy loading makes a kernel's first launch wait until the GPU is idle, and meanwhile holds
/// up the proxy's copies: a kernel or stream that waits for data from another host never ends
/// (the stream and coll hangs of the 4-PE runs). CUDA reads the setting once, at its start.
const LAZY_LOADING: &str = "CUDA loads kernels lazily (CUDA_MODULE_LOADING is unset or LAZY): a kernel's first launch then waits for the GPU to go idle and holds up the proxy's copies, so device code or a stream that waits for another host's data can hang; set CUDA_MODULE_LOADING=EAGER in the job's environment";

fn stall_ns(channel: &crate::proxy::Channel) -> u64 {
    // SAFETY: the header is live for the channel's life and `stall_ns` is written once at creation.
    unsafe { (*channel.as_ptr()).stall_ns }
}

/// Host quiet for what device code posted to the proxy: every command of every finished
/// kernel has run and is complete in its target's memory (nothing to do without a proxy).
pub fn drain(g: &GpuState) -> Result<()> {
    let proxy = g.proxy.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(proxy), Some(channel)) = (proxy.as_ref(), &g.proxy_channel) else { return Ok(()) };
    // The issuers' ticket words are in GPU memory: read them with a copy.
    let mut issue = vec![crate::abi::RshmemProxyIssue::default(); channel.lanes()];
    // SAFETY: the header's `issue` is written once at creation.
    let at = unsafe { (*channel.as_ptr()).issue };
    g.copy_now(issue.as_mut_ptr() as u64, at, std::mem::size_of_val(&issue[..]))?;
    let issued: Vec<u64> = issue.iter().map(|i| i.ticket).collect();
    proxy.drain(&issued)
}

/// Stops the proxy thread (finalize, once no PE's kernel can need it).
pub fn stop(g: &GpuState) {
    drop(g.proxy.lock().unwrap_or_else(|e| e.into_inner()).take());
    drop(REGISTERED.lock().unwrap_or_else(|e| e.into_inner()).take());
    if let Some(line) = g.mailboxes.get().and_then(|b| b.profile()) {
        crate::log::info(&line);
    }
}

/// Stops the proxy thread at a failing exit (no finalize: the peers may be gone), before the
/// CUDA driver's own exit handler tears the context down under it: a request waiting for a
/// peer's acknowledgement gives up at once, and the thread ends within a few milliseconds
/// (waited for up to 2 s; nothing is freed, the process is ending).
pub fn stop_at_exit(g: &GpuState) {
    let proxy = g.proxy.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(p) = &proxy {
        p.request_stop(); // first: the abandoned request's error is then not reported
    }
    if let Some(b) = g.mailboxes.get() {
        b.abandon();
    }
    if let Some(p) = proxy {
        p.abandon_at_exit(std::time::Duration::from_secs(2));
    }
}

/// Whether a request from another host may reach `len` bytes at offset `off` of this PE's
/// window: inside the mapped heap, or inside one symmetrically registered user buffer (this
/// PE's own allocation is mapped at that offset of its slot: gpu/user_buffer.rs).
/// A remote PE's request that names memory this PE's GPU does not have (`what` says which).
fn outside(routine: &'static str, what: String, g: &GpuState) -> Error {
    let heap = g.mapped();
    Error::invalid(routine, format!("{what} outside this PE's GPU heap ({heap} bytes) and its symmetrically registered buffers (nvshmemx_buffer_register_symmetric)"))
}

fn reachable(g: &GpuState, off: usize, len: usize) -> bool {
    let Some(end) = off.checked_add(len) else { return false };
    end <= g.mapped() || (off >= g.heap_end && g.symmetric.lock().unwrap_or_else(|p| p.into_inner()).covers(off, len))
}

/// This PE's GPU heap, as the target side of the mailboxes reaches it.
struct OwnGpu {
    copies: GpuLocal,
    /// Remote PEs' AMOs: taken by a device thread that waits, or by the one-thread kernel.
    doorbell: AmoDoorbell,
}

/// The doorbell's one-thread kernel, on a stream of its own: one that waits for a free SM holds
/// up none of the proxy's copies.
struct AmoTaker {
    gpu: GpuLocal,
    channel: u64,
}

impl AmoKernel for AmoTaker {
    fn idle(&self) -> Result<bool> {
        self.gpu.idle().map_err(|e| e.named("rshmem proxy (a remote PE's atomic)"))
    }
    fn launch(&self) -> Result<()> {
        let routine = "rshmem proxy (a remote PE's atomic)";
        // No C routine runs this thread: its errors are named here.
        let kernels = state().and_then(|st| st.gpu()?.kernels()).map_err(|e| e.named(routine))?;
        self.gpu.launch_amo_taker(kernels, self.channel).map_err(|e| e.named(routine))
    }
}

impl TargetGpu for OwnGpu {
    fn copy(&self, off: usize, host: *mut u8, len: usize, to_gpu: bool) -> Result<()> {
        let routine = "rshmem proxy (a remote PE's put or get)";
        let g = state()?.gpu()?;
        if !reachable(g, off, len) {
            return Err(outside(routine, format!("{len} bytes at heap offset {off} are"), g));
        }
        let gpu = g.base + off as u64;
        let (dst, src) = if to_gpu { (gpu, host as u64) } else { (host as u64, gpu) };
        // Started, not waited for, both ways: `Mailboxes::serve` settles before an AMO and before
        // the acknowledgement that lets the source read a get's answer, and one stream keeps a
        // get after the puts it follows.
        // SAFETY: the GPU range was checked above; the host range is a request's record in this
        // PE's mailbox (a put's data, a get's answer place), which its source neither reuses nor
        // reads until the acknowledgement, sent only after `settle`.
        unsafe { self.copies.copy_async(dst, src, len) }.map_err(|e| e.named(routine))
    }

    fn settle(&self) -> Result<()> {
        self.copies.settle().map_err(|e| e.named("rshmem proxy (a remote PE's put or get)"))
    }

    fn settled(&self) -> Result<bool> {
        self.copies.idle().map_err(|e| e.named("rshmem proxy (a remote PE's put or get)"))
    }

    fn abandon(&self) {
        self.doorbell.abandon();
    }

    fn amo(&self, from: usize, off: usize, op: crate::cuda::kernels::AmoOp, size: usize, a: u64, b: u64) -> Result<u64> {
        let routine = "rshmem proxy (a remote PE's atomic)";
        let st = state()?;
        let g = st.gpu()?;
        if !off.is_multiple_of(size) || !reachable(g, off, size) {
            return Err(outside(routine, format!("a {size}-byte atomic at heap offset {off} is misaligned or"), g));
        }
        let word = g.base + off as u64;
        self.doorbell.run(from, word, op, size, a, b).map_err(|e| e.named(routine))
    }
}

/// The job's network transport, looked up at each call (the proxy thread outlives no State:
/// finalize stops it first).
struct JobNetwork;

fn net() -> Result<&'static dyn Transport> {
    state()?.net.as_deref().ok_or_else(|| Error::of(ErrorKind::Internal, "the job spans hosts but has no network transport"))
}

impl Transport for JobNetwork {
    fn describe(&self) -> String {
        net().map(|n| n.describe()).unwrap_or_default()
    }
    fn put(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        net()?.put(pe, seg, off, src)
    }
    fn put_message(&self, pe: usize, seg: Segment, off: usize, src: &[u8]) -> Result<()> {
        net()?.put_message(pe, seg, off, src)
    }
    fn get(&self, pe: usize, seg: Segment, off: usize, dst: &mut [u8]) -> Result<()> {
        net()?.get(pe, seg, off, dst)
    }
    fn amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<()> {
        net()?.amo(pe, seg, off, op, ty, value)
    }
    fn fetch_amo(&self, pe: usize, seg: Segment, off: usize, op: AtomicOp, ty: AmoType, value: u64) -> Result<u64> {
        net()?.fetch_amo(pe, seg, off, op, ty, value)
    }
    fn compare_swap(&self, pe: usize, seg: Segment, off: usize, ty: AmoType, cond: u64, value: u64) -> Result<u64> {
        net()?.compare_swap(pe, seg, off, ty, cond, value)
    }
    fn fence(&self) -> Result<()> {
        net()?.fence()
    }
    fn quiet(&self) -> Result<()> {
        net()?.quiet()
    }
    fn progress(&self, block: std::time::Duration) {
        match net() {
            Ok(n) => n.progress(block),
            Err(_) => std::thread::sleep(block),
        }
    }
}
