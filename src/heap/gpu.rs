//! The GPU symmetric heap (CUDA virtual memory management).
//!
//! One virtual-address window is reserved once per process: `npes * stride` bytes, with PE
//! `p`'s heap at `window + p * stride` in *every* process. Physical memory is created in chunks
//! on demand (`grow`, collective), exported as POSIX file descriptors, passed to the other local
//! PEs through the bootstrap (`allgather_fds`: SCM_RIGHTS over the abstract Unix socket, so no
//! file is created anywhere), imported, and mapped at the owner's slot. Chunks are the same size
//! on every PE and growth is driven by the deterministic allocator, so every PE maps the same
//! extent at the same time.
//!
//! Mapping is the slow step (cuMemMap + cuMemSetAccess of every local PE's chunk: ~18 ms for
//! 512 MiB at 2 PEs on H100, serialised by the driver across processes). So init maps one chunk
//! (`ahead` bytes, one CUMEM_GRANULARITY) beyond the runtime area before it returns, and each
//! growth also creates and exchanges the *next* chunk and a background thread maps it while the
//! program runs (started once the allocation is over on every PE, `start_ahead`: started inside
//! the growth, it slowed the other PEs' mapping of what was needed now); the growth after that
//! only waits for that thread (if it is still busy) and publishes the chunk. The price is one
//! chunk of GPU memory held ahead of need (RSHMEM_HEAP_MAP_AHEAD=0: none, every growth maps on
//! demand). Init maps its chunk itself, as NVSHMEM maps its heap at init: mapped in the
//! background, it held up the program's first allocation (4 x H100, 4 PEs: nvshmem_malloc(256
//! MiB) right after init waited 4.5 ms for it) and, contending for the driver, its first barrier
//! and collectives.
//!
//! A growth's fixed cost was this PE's own new memory: exporting a chunk right after
//! cuMemCreate waits for the driver's work on it (0.7-1.9 ms on 2 x H200, the most of a 1 GiB
//! growth's 3.5 ms; results/gpu-compare-2026-11-28e-rows), and a chunk exported after that work
//! was done took 0.1 ms. So a background thread also creates *and exports* this PE's next chunk
//! (a spare, `SpareState`: one CUMEM_GRANULARITY) once init is over and after each growth that
//! took it, and keeps its descriptor: the growth uses it as the chunk it maps ahead, so a growth
//! that the chunk mapped ahead covers only exchanges descriptors (the next chunk's mapping runs
//! in the background). The chunk ahead is only ever a spare: creating it on the growth's path
//! would put the export's wait back there. Using the spare for the memory of now instead left no
//! chunk mapped ahead, so every later growth mapped on its path: 1.4-1.5 ms for 64 MiB and 2 MiB
//! against 0.32-0.39 ms this way (1 x H200, 2 PEs under MPS; results/gpu-compare-2026-11-29b-malloc).
//! The price is one more chunk of GPU memory held (unmapped) ahead of need; it
//! is released when a growth runs out of GPU memory (made again after the next growth that
//! works), when the heap stops growing, and at finalize. RSHMEM_HEAP_MAP_AHEAD=0: no spare.

use std::os::fd::{AsRawFd, OwnedFd};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bootstrap::Bootstrap;
use crate::cuda::{self, CuError, CuResult, Device, Mapping, PhysMem, PrimaryContext, VaRange};
use crate::error::{Error, ErrorKind, Result, UNNAMED};

/// Smallest alignment of a GPU heap allocation. 512 bytes (NVSHMEM's too): buffers start on a
/// 128-byte line, so a warp's contiguous 16-byte stores fill whole lines; at the allocator's
/// 16 bytes a 512-byte warp store to a peer touched 5 lines instead of 4 (the likely cause of the
/// bare-store floors running ~10% below NVSHMEM's on the same buffers).
pub const ALLOC_ALIGN: usize = 512;

/// One chunk of one PE's heap as mapped here.
struct Chunk {
    // Field order is drop order: unmap, then release the handle.
    _map: Mapping,
    _mem: PhysMem,
}

/// Where one PE's chunk comes from before it is mapped here: this PE's own memory, or a
/// peer's exported descriptor.
enum Source {
    Own(PhysMem),
    Peer(OwnedFd),
}

/// This PE's next chunk, created and exported ahead of need (its descriptor kept until a growth
/// exchanges it), or a chunk of now created by the growth itself (exported there).
struct OwnChunk {
    mem: PhysMem,
    fd: Option<OwnedFd>,
}

enum SpareState {
    /// Being created and exported by a background thread.
    Making(JoinHandle<CuResult<OwnChunk>>),
    Ready(OwnChunk),
}

/// Whether a spare of `spare` bytes (None: none is ready) can be the chunk a growth maps `next`
/// bytes ahead (`growth_plan`); it is, if every PE offers one (agreed in the growth's
/// allgather). Chunks are mapped whole, so only an exact size fits (a larger spare would map past
/// what the runtime may use); otherwise the spare stays for a later growth.
fn spare_fits_ahead(spare: Option<usize>, next: usize) -> bool {
    matches!(spare, Some(b) if b > 0 && b == next)
}

/// Whether to start making a spare of `ahead` bytes when `have` bytes of each heap are mapped or
/// mapped ahead: there is none yet, the heap may grow (`stopped`: it is broken, or its last growth
/// ran out of GPU memory), and a chunk that size still fits in the heap's address space.
fn wants_spare(ahead: usize, have: usize, stride: usize, has_spare: bool, stopped: bool) -> bool {
    ahead > 0 && !has_spare && !stopped && have.checked_add(ahead).is_some_and(|end| end <= stride)
}

/// What mapping one growth's chunks gives: the chunks and the time it took, or the PE whose
/// chunk failed and why.
type Mapped = std::result::Result<(Vec<Chunk>, Duration), (usize, CuError)>;

/// The chunks to map, one per local PE: the PE, the address, where its memory comes from.
type Plan = Vec<(usize, u64, Source)>;

/// The next chunk of every local PE's heap (`bytes` each, at the heap's current end), mapped
/// ahead of need.
struct Ahead {
    bytes: usize,
    state: AheadState,
}

enum AheadState {
    /// Exchanged, not mapped yet: the growth that planned it returns first, and the thread
    /// starts once every PE has left the allocation (`start_ahead`), so that this mapping does
    /// not compete for the driver with the other PEs' mapping of the memory needed now.
    Planned(Plan),
    /// Being mapped by a background thread.
    Running(JoinHandle<Mapped>),
    /// No thread could be started: why.
    NoThread(String),
}

/// Bytes of each PE's heap init maps before it returns: the runtime area (`initial`) and the
/// first chunk ahead of need, within the heap's address space.
pub fn init_extent(initial: usize, ahead: usize, stride: usize) -> usize {
    initial.saturating_add(ahead).min(stride).max(initial)
}

/// How many bytes a growth to `want` maps now and how many it maps ahead, when `mapped` bytes
/// are mapped and `pending` more are mapped ahead already: the pending chunk is taken first, the
/// rest of `want` (in whole `granularity` steps) is mapped now, and `ahead` bytes after that are
/// started in the background (if every PE has a spare that size, `spare_fits_ahead`); nothing past
/// `stride`.
pub fn growth_plan(mapped: usize, pending: usize, want: usize, stride: usize, granularity: usize, ahead: usize) -> (usize, usize) {
    let have = mapped + pending;
    let now = if want > have { round_up(want - have, granularity).min(stride - have) } else { 0 };
    (now, ahead.min(stride - have - now))
}

pub struct GpuHeap {
    /// Chunks of every PE's heap (ours included), in mapping order.
    chunks: Vec<Chunk>,
    /// The chunk being mapped ahead of need (taken by the next growth; joined on drop).
    pending: Option<Ahead>,
    /// This PE's next chunk, created and exported ahead of need (joined and released on drop).
    spare: Option<SpareState>,
    /// The last growth ran out of GPU memory: no spare is made until a growth works again.
    spare_paused: bool,
    /// Declared after `chunks`, so the window is freed only once everything in it is unmapped.
    window: VaRange,
    pub stride: usize,
    pub npes: usize,
    pub me: usize,
    /// Bytes of each PE's heap that are backed and mapped (a multiple of `granularity`).
    pub mapped: usize,
    pub granularity: usize,
    /// Bytes each growth maps ahead of need in the background (0: none).
    ahead: usize,
    pub device: Device,
    /// Which PEs' heaps are mapped here (those on this host).
    pub local: Vec<bool>,
    /// Set on every PE together when a chunk mapped ahead could not be mapped on some PE: the
    /// extents would differ between PEs, so the heap grows no more.
    broken: Option<String>,
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

impl GpuHeap {
    /// Collective: reserves the window for `size` bytes per PE and maps the first `initial`
    /// bytes of every PE's heap and `ahead` bytes more (see `init_extent`); each later growth
    /// maps `ahead` bytes more in the background.
    /// `local[pe]`: PE `pe` is on this host (its heap is mapped here; the heaps of PEs on other
    /// hosts keep their place in the window, unmapped: the proxy reaches them).
    pub fn create(boot: &dyn Bootstrap, device: Device, size: usize, initial: usize, ahead: usize, local: Vec<bool>) -> Result<GpuHeap> {
        let routine = "nvshmem_init";
        let granularity = cuda::granularity(device).map_err(|e| e.into_error(routine))?;
        let stride = round_up(size.max(1), granularity);
        let npes = boot.size();
        let total = stride.checked_mul(npes).ok_or_else(|| {
            Error::invalid(routine, format!("NVSHMEM_SYMMETRIC_SIZE={size} times {npes} PEs overflows the address space"))
        })?;
        let window = VaRange::reserve(total, granularity).map_err(|e| {
            Error::new(
                ErrorKind::OutOfMemory,
                routine,
                format!("reserving {total} bytes of GPU virtual address space for {npes} heaps of {stride} bytes failed ({e}); lower NVSHMEM_SYMMETRIC_SIZE"),
            )
        })?;
        let ahead = round_up(ahead, granularity);
        let mut heap = GpuHeap {
            chunks: Vec::new(),
            pending: None,
            spare: None,
            spare_paused: false,
            window,
            stride,
            npes,
            me: boot.rank(),
            mapped: 0,
            granularity,
            ahead: 0,
            device,
            local,
            broken: None,
        };
        heap.grow(boot, init_extent(initial, ahead, stride)).map_err(|e| e.in_routine(routine))?;
        heap.ahead = ahead;
        // Made while the rest of init runs, so that the program's first growth finds it ready.
        heap.start_spare();
        Ok(heap)
    }

    /// Device address of PE `pe`'s heap in this process.
    #[inline]
    pub fn base_of(&self, pe: usize) -> u64 {
        self.window.base + (pe * self.stride) as u64
    }

    #[inline]
    pub fn my_base(&self) -> u64 {
        self.base_of(self.me)
    }

    pub fn window_base(&self) -> u64 {
        self.window.base
    }

    /// Offset of `addr..addr+len` in this PE's heap, if it lies in the mapped part.
    #[inline]
    pub fn offset_of(&self, addr: u64, len: usize) -> Option<usize> {
        let off = addr.wrapping_sub(self.my_base()) as usize;
        (off < self.mapped && len <= self.mapped - off).then_some(off)
    }

    /// Collective: makes at least `want` bytes of every PE's heap usable. Every PE must call
    /// it with the same `want` (the allocator guarantees that).
    pub fn grow(&mut self, boot: &dyn Bootstrap, want: usize) -> Result<()> {
        if want <= self.mapped {
            return Ok(());
        }
        if want > self.stride {
            return Err(Error::of(
                ErrorKind::OutOfMemory,
                format!("the GPU symmetric heap would need {want} bytes per PE but its address space holds {}; set NVSHMEM_MAX_MEMORY_PER_GPU (or NVSHMEM_SYMMETRIC_SIZE) higher", self.stride),
            ));
        }
        if let Some(why) = &self.broken {
            return Err(Error::of(ErrorKind::System, why.clone()));
        }
        let t0 = Instant::now();
        // This PE's spare (its thread has usually finished by now; a failed one is none).
        let mut spare = self.take_spare();
        let pending = self.pending.as_ref().map_or(0, |a| a.bytes);
        let (now, next) = growth_plan(self.mapped, pending, want, self.stride, self.granularity, self.ahead);
        // The chunk mapped ahead comes first (it lies at the heap's end); its thread has
        // usually finished by now.
        let adopted = match self.pending.take() {
            None => Ok(Duration::ZERO),
            Some(a) => {
                let mapped = match a.state {
                    // Not started (no allocation's end came between): mapped here, now.
                    AheadState::Planned(plan) => Ok(map_all(plan, a.bytes, self.device)),
                    AheadState::Running(t) => t.join().map_err(|_| "the thread mapping the GPU heap ahead of need panicked".to_string()),
                    AheadState::NoThread(why) => Err(why),
                };
                match mapped {
                    Ok(Ok((chunks, took))) => {
                        self.chunks.extend(chunks);
                        self.mapped += a.bytes;
                        Ok(took)
                    }
                    Ok(Err((pe, e))) => Err(format!("mapping PE {pe}'s GPU heap ahead of need: {e}")),
                    Err(why) => Err(why),
                }
            }
        };
        let waited = t0.elapsed();
        let offered = spare_fits_ahead(spare.as_ref().map(|c| c.mem.size), next);
        let t1 = Instant::now();
        let own_now = (now > 0).then(|| PhysMem::create(self.device, now).map(|mem| OwnChunk { mem, fd: None }));
        let created = t1.elapsed();
        // Every PE learns whether every PE took its chunk ahead, got its memory for now and has
        // its spare for the chunk ahead, so that all of them give up (the heap stays as it was)
        // or go without the chunk ahead together, instead of some waiting for the others'
        // descriptors.
        let ok = u8::from(own_now.as_ref().is_none_or(|r| r.is_ok()));
        let got = boot.allgather(&[u8::from(adopted.is_ok()), ok, u8::from(offered)]).map_err(|e| e.in_routine(UNNAMED))?;
        let short = |i: usize| got.iter().position(|v| v.get(i) != Some(&1));
        if let Some(pe) = short(0) {
            let why = match &adopted {
                Err(e) => e.clone(),
                Ok(_) => format!("PE {pe} could not map the GPU heap chunk it had prepared ahead of need"),
            };
            let why =
                format!("{why}; the GPU symmetric heap cannot grow any more in this job (RSHMEM_HEAP_MAP_AHEAD=0 maps on demand only)");
            // The heap grows no more: this PE's spare is released on the way out.
            self.broken = Some(why.clone());
            return Err(Error::of(ErrorKind::System, why));
        }
        // Out of GPU memory on some PE: every PE also releases its spare (made again after the
        // next growth that works), which may be what the program needs next.
        let own_now = match (own_now, short(1)) {
            (None, _) => None,
            (Some(Ok(c)), None) => Some(c),
            (Some(Err(e)), _) => {
                self.spare_paused = true;
                return Err(no_gpu_memory(format!("allocating {now} bytes of GPU memory for this PE's symmetric heap failed: {e}")));
            }
            (Some(Ok(_)), Some(pe)) => {
                self.spare_paused = true;
                return Err(no_gpu_memory(format!("PE {pe} could not allocate {now} bytes of GPU memory for its symmetric heap")));
            }
        };
        self.spare_paused = false;
        // The chunk ahead comes only from spares, and only when every PE has one; else this
        // PE's spare stays for a later growth.
        let own_next = if short(2).is_none() { spare.take() } else { None };
        let spare_note = match &own_next {
            Some(_) => "this PE's spare used ahead",
            _ if spare.is_some() => "spare kept",
            _ => "no spare",
        };
        self.spare = spare.map(SpareState::Ready);
        let mut times =
            GrowthTimes { waited, ahead_took: adopted.unwrap_or_default(), created, fds: [Duration::ZERO; 3], mapped: Duration::ZERO };
        if now == 0 && own_next.is_none() {
            self.log_growth(0, spare_note, &times);
            return Ok(());
        }
        let t2 = Instant::now();
        // Each local PE's descriptors: the chunk of now first (if any), then the one ahead. A
        // spare's was exported ahead of need; a chunk this growth created is exported here.
        let mut own = [own_now, own_next];
        let mut fds = Vec::new();
        for c in own.iter_mut().flatten() {
            fds.push(match c.fd.take() {
                Some(fd) => fd,
                None => c.mem.export_fd().map_err(|e| e.into_error(UNNAMED))?,
            });
        }
        let exported = t2.elapsed();
        let raw: Vec<_> = fds.iter().map(|f| f.as_raw_fd()).collect();
        let all = boot.allgather_fds(&raw).map_err(|e| e.in_routine(UNNAMED))?;
        let t_close = Instant::now();
        drop(fds);
        // Export, exchange and close apart. On 2 x H200 the export of a chunk just created is the
        // growth's fixed cost (0.7-1.9 ms: it waits for the driver's work after cuMemCreate;
        // when another thread made and exported the second chunk meanwhile, exporting the first
        // took 0.1 ms); the exchange takes 0.06-0.2 ms and the close under 0.1 ms
        // (results/gpu-compare-2026-11-28e-rows). A spare's costs nothing here.
        times.fds = [exported, t_close - t2 - exported, t_close.elapsed()];
        let next = if own[1].is_some() { next } else { 0 };
        let mut plans: [Plan; 2] = [Vec::new(), Vec::new()];
        for (pe, theirs) in all.into_iter().enumerate() {
            if !self.local[pe] {
                continue;
            }
            let mut theirs = theirs.into_iter();
            for (k, (bytes, at)) in [(now, self.mapped), (next, self.mapped + now)].into_iter().enumerate() {
                if bytes == 0 {
                    continue;
                }
                let src = if pe == self.me {
                    Source::Own(own[k].take().expect("this PE's chunk is planned once").mem)
                } else {
                    Source::Peer(theirs.next().ok_or_else(|| no_descriptor(boot, pe))?)
                };
                plans[k].push((pe, self.base_of(pe) + at as u64, src));
            }
        }
        let [plan_now, plan_next] = plans;
        let t3 = Instant::now();
        if now > 0 {
            let (chunks, _) = map_all(plan_now, now, self.device).map_err(|(pe, e)| peer_error(e, pe))?;
            self.chunks.extend(chunks);
            self.mapped += now;
        }
        times.mapped = t3.elapsed();
        if !plan_next.is_empty() {
            // Mapped once the allocation is over on every PE (`start_ahead`), or by the next
            // growth if nothing starts it before.
            self.pending = Some(Ahead { bytes: next, state: AheadState::Planned(plan_next) });
        }
        self.log_growth(now, spare_note, &times);
        Ok(())
    }

    /// This PE's spare with its thread joined; None when there is none or making it failed.
    fn take_spare(&mut self) -> Option<OwnChunk> {
        let made = match self.spare.take()? {
            SpareState::Ready(c) => return Some(c),
            SpareState::Making(t) => match t.join() {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err("its thread panicked".to_string()),
            },
        };
        made.map_err(|why| {
            crate::log::info(&format!("GPU heap: no spare chunk ahead of need ({why}); the growth creates its memory itself"))
        })
        .ok()
    }

    /// Starts creating and exporting this PE's next chunk in a background thread (`wants_spare`
    /// says when), for the next growth to take.
    fn start_spare(&mut self) {
        let have = self.mapped + self.pending.as_ref().map_or(0, |a| a.bytes);
        if !wants_spare(self.ahead, have, self.stride, self.spare.is_some(), self.broken.is_some() || self.spare_paused) {
            return;
        }
        let (device, bytes) = (self.device, self.ahead);
        let spawned = std::thread::Builder::new().name("rshmem-heap-spare".into()).spawn(move || {
            // The driver's memory calls want a context current on the calling thread.
            let ctx = PrimaryContext::retain(device)?;
            ctx.make_current()?;
            let mem = PhysMem::create(device, bytes)?;
            let fd = mem.export_fd()?;
            Ok(OwnChunk { mem, fd: Some(fd) })
        });
        // Without a thread there is no spare: the growths create their memory themselves.
        self.spare = spawned.ok().map(SpareState::Making);
    }

    /// Starts mapping the chunk the last growth planned ahead of need in a background thread,
    /// to be taken by the next growth, and making this PE's next spare if the growth took it.
    /// Call it after the allocation's closing barrier: started inside the growth, the thread's
    /// cuMemMap/cuMemSetAccess calls competed (the driver serialises them across processes) with
    /// the other PEs' mapping of the memory needed now, and so slowed the allocation itself.
    pub fn start_ahead(&mut self) {
        self.start_mapping_ahead();
        self.start_spare();
    }

    fn start_mapping_ahead(&mut self) {
        let Some((bytes, plan)) = take_planned(&mut self.pending) else {
            return;
        };
        let device = self.device;
        let me = self.me;
        let spawned = std::thread::Builder::new().name("rshmem-heap-ahead".into()).spawn(move || {
            // The driver's memory calls want a context current on the calling thread.
            let ctx = PrimaryContext::retain(device).map_err(|e| (me, e))?;
            ctx.make_current().map_err(|e| (me, e))?;
            map_all(plan, bytes, device)
        });
        // Without a thread the chunks are released again (the plan is dropped with the
        // closure), and the next growth fails on every PE together (see `grow`).
        let state = match spawned {
            Ok(t) => AheadState::Running(t),
            Err(e) => AheadState::NoThread(format!("no thread to map {bytes} bytes of the GPU heap ahead of need: {e}")),
        };
        self.pending = Some(Ahead { bytes, state });
    }

    /// Where a growth's time goes (NVSHMEM_DEBUG=INFO); `spare`: what this PE's spare did.
    fn log_growth(&self, now: usize, spare: &str, t: &GrowthTimes) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        crate::log::info(&format!(
            "GPU heap: {} bytes per PE mapped (+{now} now, {} ahead): waited {:.2} ms for the chunks prepared ahead (mapping ahead took {:.2} ms), {spare}, create {:.2} ms, export+exchange {:.2} ms (export {:.2}, exchange {:.2}, close {:.2}), import+map now {:.2} ms",
            self.mapped,
            self.pending.as_ref().map_or(0, |a| a.bytes),
            ms(t.waited),
            ms(t.ahead_took),
            ms(t.created),
            ms(t.fds.iter().sum()),
            ms(t.fds[0]),
            ms(t.fds[1]),
            ms(t.fds[2]),
            ms(t.mapped)
        ));
    }

    /// Bytes of GPU memory this PE's own heap holds now (the chunk mapped ahead and the spare
    /// included).
    pub fn own_bytes(&self) -> usize {
        self.mapped + self.pending.as_ref().map_or(0, |a| a.bytes) + if self.spare.is_some() { self.ahead } else { 0 }
    }
}

/// Where one growth's time went (`log_growth`).
struct GrowthTimes {
    /// Joining the threads that made the spare and mapped the chunk ahead.
    waited: Duration,
    /// What mapping the chunk ahead took in its thread.
    ahead_took: Duration,
    /// Creating the memory of now (nothing when the spare supplied it).
    created: Duration,
    /// Exporting this PE's descriptors, exchanging them, closing them.
    fds: [Duration; 3],
    /// Importing and mapping every local PE's chunk of now.
    mapped: Duration,
}

impl Drop for GpuHeap {
    fn drop(&mut self) {
        // The background mapping must end before the window it maps into is freed; its chunks
        // are then unmapped and released here.
        if let Some(Ahead { state: AheadState::Running(t), .. }) = self.pending.take() {
            drop(t.join());
        }
        // The spare, never mapped, is released with its descriptor closed.
        if let Some(SpareState::Making(t)) = self.spare.take() {
            drop(t.join());
        }
    }
}

/// Imports (a peer's) and maps each PE's chunk of `bytes` at its address.
/// The chunk planned ahead, taken for mapping; a chunk already being mapped (or failed) stays
/// where it is. Every allocation's closing sync calls `start_ahead`: taking a running chunk there
/// detached its thread, so the next growth mapped over the same addresses (cuMemMap:
/// CUDA_ERROR_INVALID_VALUE on 2 x H200, heap_ahead) or lost the chunk.
fn take_planned(pending: &mut Option<Ahead>) -> Option<(usize, Plan)> {
    match pending.take() {
        Some(Ahead { bytes, state: AheadState::Planned(plan) }) => Some((bytes, plan)),
        other => {
            *pending = other;
            None
        }
    }
}

fn map_all(plan: Plan, bytes: usize, device: Device) -> Mapped {
    let t = Instant::now();
    let mut chunks = Vec::with_capacity(plan.len());
    for (pe, va, src) in plan {
        let mem = match src {
            Source::Own(m) => m,
            Source::Peer(fd) => PhysMem::import_fd(fd.as_raw_fd(), bytes).map_err(|e| (pe, e))?,
        };
        let map = Mapping::map(va, &mem, device).map_err(|e| (pe, e))?;
        chunks.push(Chunk { _map: map, _mem: mem });
    }
    Ok((chunks, t.elapsed()))
}

fn no_descriptor(boot: &dyn Bootstrap, pe: usize) -> Error {
    Error::bootstrap(format!(
        "PE {pe} sent no GPU heap descriptor{}",
        if boot.local_pes().contains(&pe) { "" } else { ": it runs on another host, and GPU heaps across hosts are not supported yet" }
    ))
    .in_routine(UNNAMED)
}

/// Running out of GPU memory while growing the heap (every PE gets it together; see `grow`).
fn no_gpu_memory(what: String) -> Error {
    Error::of(
        crate::error::ErrorKind::OutOfMemory,
        format!("{what}; free GPU memory, or lower NVSHMEM_SYMMETRIC_SIZE / NVSHMEM_CUMEM_GRANULARITY"),
    )
}

fn peer_error(e: cuda::CuError, pe: usize) -> Error {
    let mut err = e.into_error(UNNAMED);
    err.message = format!("mapping PE {pe}'s GPU heap: {} (are the GPUs peer-accessible? check `nvidia-smi topo -m`)", err.message);
    err
}

#[cfg(test)]
mod tests {
    use super::{growth_plan, init_extent, spare_fits_ahead, take_planned, wants_spare, Ahead, AheadState};
    use std::time::Duration;

    const MIB: usize = 1 << 20;
    const G: usize = 2 * MIB;
    const CHUNK: usize = 512 * MIB;
    const STRIDE: usize = 4096 * MIB;

    #[test]
    fn init_maps_the_runtime_area_and_one_chunk_ahead_itself() {
        // Mapped before init returns (its growth runs with nothing ahead), so that
        // nvshmem_malloc(256 MiB) after init finds it mapped and grows nothing.
        assert_eq!(init_extent(G, CHUNK, STRIDE), G + CHUNK);
        assert_eq!(growth_plan(0, 0, init_extent(G, CHUNK, STRIDE), STRIDE, G, 0), (G + CHUNK, 0));
        assert_eq!(init_extent(G, 0, STRIDE), G, "RSHMEM_HEAP_MAP_AHEAD=0: nothing ahead");
    }

    #[test]
    fn init_maps_nothing_past_the_address_space_of_the_heap() {
        // A heap smaller than a chunk (NVSHMEM_SYMMETRIC_SIZE=512 KiB): all of it, no more.
        assert_eq!(init_extent(G, CHUNK, 4 * G), 4 * G);
        assert_eq!(init_extent(G, CHUNK, G), G);
    }

    #[test]
    fn a_growth_maps_what_it_needs_now_and_one_chunk_ahead() {
        assert_eq!(growth_plan(G + CHUNK, 0, G + CHUNK + G, STRIDE, G, CHUNK), (G, CHUNK));
        assert_eq!(growth_plan(G + CHUNK, 0, G + CHUNK + G, STRIDE, G, 0), (G, 0), "RSHMEM_HEAP_MAP_AHEAD=0: nothing ahead");
    }

    #[test]
    fn a_growth_within_the_chunk_ahead_maps_nothing_now() {
        // An allocation past the mapped end: the runtime's ensure_mapped asks for a whole chunk
        // more, which is exactly the pending one; the next chunk goes ahead.
        assert_eq!(growth_plan(G, CHUNK, G + CHUNK, STRIDE, G, CHUNK), (0, CHUNK));
        assert_eq!(growth_plan(G, CHUNK, G + 256 * MIB, STRIDE, G, CHUNK), (0, CHUNK));
    }

    #[test]
    fn a_growth_past_the_chunk_ahead_maps_the_rest_now_in_granularity_steps() {
        // 1 GiB when 512 MiB were mapped ahead: those, and the other 512 MiB + 1 byte (rounded
        // up) now.
        let want = G + 1024 * MIB + 1;
        assert_eq!(growth_plan(G, CHUNK, want, STRIDE, G, CHUNK), (514 * MIB, CHUNK));
        // Without a pending chunk everything is mapped now, as before.
        assert_eq!(growth_plan(G, 0, want, STRIDE, G, 0), (1026 * MIB, 0));
    }

    #[test]
    fn nothing_is_mapped_past_the_address_space_of_the_heap() {
        assert_eq!(growth_plan(STRIDE - CHUNK - G, CHUNK, STRIDE - G, STRIDE, G, CHUNK), (0, G));
        assert_eq!(growth_plan(STRIDE - CHUNK, CHUNK, STRIDE, STRIDE, G, CHUNK), (0, 0));
        assert_eq!(growth_plan(0, 0, STRIDE, STRIDE, G, CHUNK), (STRIDE, 0));
    }

    #[test]
    fn the_spare_is_the_chunk_ahead_when_its_size_fits() {
        // nvshmem_malloc(1 GiB) after init: 512 MiB are created now, the spare init's thread made
        // goes ahead (no export on the growth's path for it).
        let (now, next) = growth_plan(G + CHUNK, 0, 2 * G + 2 * CHUNK - G, STRIDE, G, CHUNK);
        assert_eq!((now, next), (CHUNK, CHUNK));
        assert!(spare_fits_ahead(Some(CHUNK), next));
        assert!(!spare_fits_ahead(None, next), "no spare: none ahead");
        // Within the chunk mapped ahead: nothing now, the spare goes ahead.
        assert!(spare_fits_ahead(Some(CHUNK), growth_plan(G, CHUNK, G + G, STRIDE, G, CHUNK).1));
        // Near the end of the address space the sizes differ: it stays (mapped whole, a spare
        // would reach past what the runtime may use).
        assert!(!spare_fits_ahead(Some(CHUNK), G));
        assert!(!spare_fits_ahead(Some(CHUNK), 0));
        assert!(!spare_fits_ahead(Some(0), 0));
    }

    #[test]
    fn a_spare_is_made_only_while_the_heap_may_grow_into_it() {
        assert!(wants_spare(CHUNK, G + CHUNK, STRIDE, false, false));
        assert!(!wants_spare(0, G + CHUNK, STRIDE, false, false), "RSHMEM_HEAP_MAP_AHEAD=0: growth on demand only");
        assert!(!wants_spare(CHUNK, G + CHUNK, STRIDE, true, false), "one at a time");
        assert!(!wants_spare(CHUNK, G + CHUNK, STRIDE, false, true), "not after running out of GPU memory, nor once broken");
        assert!(wants_spare(CHUNK, STRIDE - CHUNK, STRIDE, false, false));
        assert!(!wants_spare(CHUNK, STRIDE - CHUNK + G, STRIDE, false, false), "no room left for a whole chunk");
        assert!(!wants_spare(CHUNK, usize::MAX, STRIDE, false, false));
    }

    #[test]
    fn growths_within_the_chunk_ahead_create_nothing_once_a_spare_is_ready() {
        // After a first growth has a chunk mapped ahead, allocations that each need up to a chunk
        // more take that chunk (nothing now) and the spare becomes the next chunk ahead, so no
        // growth creates or exports memory on its path and nothing is held beyond one spare.
        let (mut mapped, mut pending) = (init_extent(G, CHUNK, STRIDE) + CHUNK, CHUNK);
        let mut spare = wants_spare(CHUNK, mapped + pending, STRIDE, false, false).then_some(CHUNK);
        for _ in 0..3 {
            let want = mapped + CHUNK;
            let (now, next) = growth_plan(mapped, pending, want, STRIDE, G, CHUNK);
            assert_eq!(now, 0, "the chunk mapped ahead covers it");
            assert!(spare_fits_ahead(spare, next));
            (mapped, pending) = (mapped + pending, next);
            spare = wants_spare(CHUNK, mapped + pending, STRIDE, false, false).then_some(CHUNK);
            assert_eq!(spare, Some(CHUNK));
        }
        assert_eq!(mapped, G + 5 * CHUNK);
    }

    #[test]
    fn only_a_planned_chunk_is_taken_for_mapping() {
        // Every allocation's sync calls start_ahead: a chunk already being mapped must stay
        // pending for the next growth, not be taken (its thread detached) by a second call.
        let running = std::thread::spawn(|| Ok((Vec::new(), Duration::ZERO)));
        let mut pending = Some(Ahead { bytes: CHUNK, state: AheadState::Running(running) });
        assert!(take_planned(&mut pending).is_none());
        assert!(matches!(&pending, Some(Ahead { bytes: CHUNK, state: AheadState::Running(_) })), "the running chunk stays pending");
        let mut pending = Some(Ahead { bytes: CHUNK, state: AheadState::NoThread("none".into()) });
        assert!(take_planned(&mut pending).is_none());
        assert!(matches!(&pending, Some(Ahead { state: AheadState::NoThread(_), .. })), "the failure stays for the next growth to report");
        let mut pending = Some(Ahead { bytes: CHUNK, state: AheadState::Planned(Vec::new()) });
        assert_eq!(take_planned(&mut pending).map(|(bytes, plan)| (bytes, plan.len())), Some((CHUNK, 0)));
        assert!(pending.is_none(), "a planned chunk is taken once");
        assert!(take_planned(&mut None).is_none());
    }
}
