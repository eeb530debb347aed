//! The GPU symmetric heap (CUDA virtual memory management).
//!
//! One virtual-address window is reserved once per process: `npes * stride` bytes, with PE
//! `p`'s heap at `window + p * stride` in *every* process. Physical memory is created in chunks
//! on demand (`grow`, collective), exported as POSIX file descriptors, passed to the other local
//! PEs through the bootstrap (`allgather_fds`: SCM_RIGHTS over the abstract Unix socket, so no
//! file is created anywhere), imported, and mapped at the owner's slot. Chunks are the same size
//! on every PE and growth is driven by the deterministic allocator, so every PE maps the same
//! extent at the same time.

use std::os::fd::AsRawFd;
use std::time::Instant;

use crate::bootstrap::Bootstrap;
use crate::cuda::{self, CuResult, Device, Mapping, PhysMem, VaRange};
use crate::error::{Error, Result};

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

pub struct GpuHeap {
    /// Chunks of every PE's heap (ours included), in mapping order.
    chunks: Vec<Chunk>,
    /// Declared after `chunks`, so the window is freed only once everything in it is unmapped.
    window: VaRange,
    pub stride: usize,
    pub npes: usize,
    pub me: usize,
    /// Bytes of each PE's heap that are backed and mapped (a multiple of `granularity`).
    pub mapped: usize,
    pub granularity: usize,
    pub device: Device,
    /// Which PEs' heaps are mapped here (those on this host).
    pub local: Vec<bool>,
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

impl GpuHeap {
    /// Collective: reserves the window for `size` bytes per PE and maps the first `initial`
    /// bytes of every PE's heap.
    /// `local[pe]`: PE `pe` is on this host (its heap is mapped here; the heaps of PEs on other
    /// hosts keep their place in the window, unmapped: the proxy reaches them).
    pub fn create(boot: &dyn Bootstrap, device: Device, size: usize, initial: usize, local: Vec<bool>) -> Result<GpuHeap> {
        let routine = "nvshmem_init";
        let granularity = cuda::granularity(device).map_err(|e| e.into_error(routine))?;
        let stride = round_up(size.max(1), granularity);
        let npes = boot.size();
        let total = stride.checked_mul(npes).ok_or_else(|| {
            Error::invalid(routine, format!("NVSHMEM_SYMMETRIC_SIZE={size} times {npes} PEs overflows the address space"))
        })?;
        let window = VaRange::reserve(total, granularity).map_err(|e| {
            Error::new(
                crate::error::ErrorKind::OutOfMemory,
                routine,
                format!("reserving {total} bytes of GPU virtual address space for {npes} heaps of {stride} bytes failed ({e}); lower NVSHMEM_SYMMETRIC_SIZE"),
            )
        })?;
        let mut heap = GpuHeap { chunks: Vec::new(), window, stride, npes, me: boot.rank(), mapped: 0, granularity, device, local };
        heap.grow(boot, initial, routine)?;
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
    pub fn grow(&mut self, boot: &dyn Bootstrap, want: usize, routine: &'static str) -> Result<()> {
        if want <= self.mapped {
            return Ok(());
        }
        if want > self.stride {
            return Err(Error::new(
                crate::error::ErrorKind::OutOfMemory,
                routine,
                format!("the GPU symmetric heap would need {want} bytes per PE but its address space holds {}; set NVSHMEM_MAX_MEMORY_PER_GPU (or NVSHMEM_SYMMETRIC_SIZE) higher", self.stride),
            ));
        }
        let bytes = round_up(want - self.mapped, self.granularity).min(self.stride - self.mapped);
        let t0 = Instant::now();
        let mine = PhysMem::create(self.device, bytes);
        let created = t0.elapsed();
        // Every PE learns whether every PE got its memory, so that all of them give up together
        // (the heap stays as it was) instead of some waiting for the others' descriptors.
        let got = boot.allgather(&[u8::from(mine.is_ok())]).map_err(|e| e.in_routine(routine))?;
        let short = got.iter().position(|v| v.first() != Some(&1));
        let mine = match (mine, short) {
            (Ok(m), None) => m,
            (Err(e), _) => {
                return Err(no_gpu_memory(
                    routine,
                    format!("allocating {bytes} bytes of GPU memory for this PE's symmetric heap failed: {e}"),
                ))
            }
            (Ok(_), Some(pe)) => {
                return Err(no_gpu_memory(
                    routine,
                    format!("PE {pe} could not allocate {bytes} bytes of GPU memory for its symmetric heap"),
                ))
            }
        };
        let fd = mine.export_fd().map_err(|e| e.into_error(routine))?;
        let t1 = Instant::now();
        let all = boot.allgather_fds(&[fd.as_raw_fd()]).map_err(|e| e.in_routine(routine))?;
        drop(fd);
        let t2 = Instant::now();
        let at = self.mapped;
        let mut mine = Some(mine);
        for (pe, fds) in all.iter().enumerate() {
            if !self.local[pe] {
                continue;
            }
            let mem = if pe == self.me {
                mine.take().expect("own chunk is mapped once")
            } else {
                let f = fds.first().ok_or_else(|| {
                    Error::bootstrap(format!(
                        "PE {pe} sent no GPU heap descriptor{}",
                        if boot.local_pes().contains(&pe) {
                            ""
                        } else {
                            ": it runs on another host, and GPU heaps across hosts are not supported yet"
                        }
                    ))
                    .in_routine(routine)
                })?;
                PhysMem::import_fd(f.as_raw_fd(), bytes).map_err(|e| peer_error(e, pe, routine))?
            };
            let map = Mapping::map(self.base_of(pe) + at as u64, &mem, self.device).map_err(|e| peer_error(e, pe, routine))?;
            self.chunks.push(Chunk { _map: map, _mem: mem });
        }
        self.mapped += bytes;
        // Where a growth's time goes (NVSHMEM_DEBUG=INFO). Measured on 2 x H100 for +512 MiB:
        // create 0.5, export 1-2, exchange 0.1-1, import+map of the 2 chunks 18 ms. The mapping
        // (cuMemMap + cuMemSetAccess) dominates; done in one thread per chunk it took as long,
        // the driver serialising it across the processes, so it stays sequential here.
        crate::log::info(&format!(
            "GPU heap +{bytes} bytes per PE: create {:.2} ms, export {:.2} ms, exchange {:.2} ms, import+map {} chunks {:.2} ms",
            created.as_secs_f64() * 1e3,
            (t1 - t0).saturating_sub(created).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
            all.len(),
            t2.elapsed().as_secs_f64() * 1e3
        ));
        Ok(())
    }

    /// Bytes of GPU memory this PE's own heap holds now.
    pub fn own_bytes(&self) -> usize {
        self.mapped
    }
}

/// Running out of GPU memory while growing the heap (every PE gets it together; see `grow`).
fn no_gpu_memory(routine: &'static str, what: String) -> Error {
    Error::new(
        crate::error::ErrorKind::OutOfMemory,
        routine,
        format!("{what}; free GPU memory, or lower NVSHMEM_SYMMETRIC_SIZE / NVSHMEM_CUMEM_GRANULARITY"),
    )
}

fn peer_error(e: cuda::CuError, pe: usize, routine: &'static str) -> Error {
    let mut err = e.into_error(routine);
    err.message = format!("mapping PE {pe}'s GPU heap: {} (are the GPUs peer-accessible? check `nvidia-smi topo -m`)", err.message);
    err
}

/// Helper for callers that only need the CUDA result of a heap-independent call.
pub fn check<T>(r: CuResult<T>, routine: &'static str) -> Result<T> {
    r.map_err(|e| e.into_error(routine))
}
