//! Host-side and on-stream collectives of GPU PEs, with the library's own kernels
//! (src/cuda/kernels: no NCCL). Small broadcasts, fcollects and alltoalls (up to 2 KiB per
//! member, on the first LL_TEAMS team handles, all peers over P2P) are one block of the device
//! library's own block collective (ll.ptx): its low-latency mailboxes carry the data in one hop
//! with no barrier. Every other call is one kernel launch on the caller's stream: block 0
//! announces that this PE's inputs are ready, every block waits for the other members', the
//! blocks pull the members' data straight through the mapped heap window with 16-byte loads,
//! and the last block exchanges "done" with the members. The blocking host forms run the same
//! kernel on the library's stream and wait for it.
//!
//! Reductions: small or two-member ones reduce the whole array on every PE (each PE reads the
//! others' sources); large ones on more than two PEs are pushed (PE k reduces slice k and stores
//! it into every member's dest), which reads and writes (n-1)/n of the data per PE instead of
//! reading (n-1) times it; large in-place ones take two phases (PE k reduces slice k, then
//! copies the other slices from their owners), safe when dest is the source; small in-place
//! ones first copy the source to a staging area the others read instead. Broadcasts of 512 KiB
//! and more on more than two PEs are pushed by the non-roots, each its slice of the root's data.
//!
//! Limits: the staging area, like the device collectives' scratch, is one per PE, so two
//! in-place reductions of at most STAGE_BYTES must not run on two streams of one PE at once;
//! collectives sharing a pair of PEs are matched in the order they run on the device (the step
//! counts live there, so graph replays synchronise anew), so they must run in one order on
//! every PE: on one stream, or on streams ordered with each other (as NVSHMEM requires).

use super::coll_first::{first_call, mark};
use super::{cu, GpuState, LL_SLOT, LL_TEAMS, STAGE_BYTES};
use crate::abi::RSHMEM_DEVICE_FLAG_ALL_P2P;
use crate::cuda::coll::{
    CollKernels, GatherArgs, Kind, LlArgs, LlKernel, RedOp, ReduceArgs, SyncArgs, BARRIER_STEPS, CHUNKS, GATHER_STEPS, LL_ALLTOALL,
    LL_BROADCAST, LL_FCOLLECT, MAX_TEAM, REDUCE_DIRECT, REDUCE_DIRECT_STEPS, REDUCE_PUSH, REDUCE_STAGED, REDUCE_TWO_PHASE,
    REDUCE_TWO_PHASE_STEPS, VECTORS_PER_BLOCK,
};
use crate::cuda::StreamHandle;
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::team::Team;
use crate::runtime::State;

/// Pairs of u32 ticket counters in the runtime area (Area::tickets); consecutive launches use
/// consecutive pairs, so kernels on several streams do not share one.
pub const TICKET_SLOTS: usize = 64;

/// Reductions (not in place, not reduce-scatters) on more than two PEs are pushed once reducing
/// directly would read at least this many bytes from the other members per PE ((members - 1) x
/// bytes): PE k reduces slice k and stores it into every member's dest, one release at the exit
/// covering it (rk_reduce_kernel, mode 3). It reads and writes (members - 1) / members of the
/// bytes instead of reading (members - 1) x bytes, but every element crosses the links twice
/// (4 x H100, 4 PEs, int32 sum, in one call: 256 KiB direct 13.1 µs, pushed 12.9; 512 KiB 16.3
/// -> 13.2; 1 MiB 20.6 (two phases) -> 14.5; 4 MiB 34.5 -> 28.4; 128 KiB 11.7 direct, 12.8
/// pushed). Two PEs: direct (pushed, 32 KiB-4 MiB were 0.3-1.8 µs slower there).
const PUSH_READ_BYTES: usize = 3 << 19;

/// Whether a reduction (not in place, not a reduce-scatter) of `bytes` over `members` is pushed.
fn reduce_push(members: usize, bytes: usize) -> bool {
    members > 2 && (members - 1).saturating_mul(bytes) >= PUSH_READ_BYTES
}

/// Bytes of a pushed reduction's slice per block: each thread then has one or two 16-byte
/// vectors per member in flight (4 x H100, 4 PEs, int32 sum: 8 KiB 13.2 µs at 512 KiB, 16 KiB
/// 13.9, 32 KiB 15.2; 4 MiB 28.4, 27.9, 28.4).
const PUSH_BLOCK_BYTES: usize = 8 << 10;

/// Blocks of a pushed reduction of `bytes` over `members`: narrow elements take twice as many
/// (as reduce_grid).
fn push_grid(bytes: usize, members: usize, elem: usize, sms: u32) -> u32 {
    ((bytes / members).div_ceil(PUSH_BLOCK_BYTES).saturating_mul(if elem >= 4 { 1 } else { 2 })).clamp(1, sms as usize) as u32
}

/// Bytes of one chunk of a two-phase kernel's slice (rk_two_phase): one block makes a chunk,
/// flags it and fetches the other members' chunks of the same number (4 x H100, 4 PEs, reduce
/// 1 MiB: 4 KiB chunks 20.6 µs, 8 KiB 21.0, 16 KiB 22.6; 2 and 4 MiB within 0.2 µs of 8 KiB).
const CHUNK_BYTES: usize = 4 << 10;

/// Chunks a slice of `slice_bytes` is cut into (the grid has one block per chunk, up to one per
/// SM; slices larger than CHUNKS x CHUNK_BYTES take larger chunks).
fn chunks_for(slice_bytes: usize) -> usize {
    slice_bytes.div_ceil(CHUNK_BYTES).clamp(1, CHUNKS)
}

/// Broadcasts of at least this many bytes on more than two PEs are pushed by the non-roots
/// (rk_broadcast_push): each reads its 1 / (members - 1) of the root's data and stores it into
/// every non-root's dest, so the root's links carry the data once instead of once per member,
/// with no flag per chunk (4 x H100, 4 PEs, in one call: 512 KiB 11.9 µs pulled from the root,
/// 11.6 pushed; 1 MiB 16.2 -> 13.1; 2 MiB 24.4 (two phases) -> 16.5; 4 MiB 34.7 -> 23.3; 256
/// KiB 9.5 pulled, 10.6 pushed). Two PEs: the one other member pulls (pushed: 1.2-1.8 µs slower).
const BROADCAST_PUSH_BYTES: usize = 512 << 10;

/// Whether a broadcast of `nbytes` over `members` is pushed by the non-roots.
fn broadcast_push(members: usize, nbytes: usize) -> bool {
    members > 2 && nbytes >= BROADCAST_PUSH_BYTES
}

/// Bytes of a non-root's slice per block of a pushed broadcast (4 x H100, 4 PEs: 8 and 16 KiB
/// within 0.2 µs of each other from 512 KiB to 4 MiB, 32 KiB 0.5-0.8 µs slower).
const BROADCAST_PUSH_BLOCK_BYTES: usize = 16 << 10;

/// The data collectives built on the gather kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gather {
    /// PE_root's source to every member's dest (root: a team index).
    Broadcast { root: i32 },
    /// Every member's source, in member order, to every member's dest.
    Fcollect,
    /// Block j of member k's source to block k of member j's dest.
    Alltoall,
}

/// One broadcast / fcollect / alltoall: `nbytes` per member block of elements of `elem` bytes,
/// from `src` to `dest` (symmetric addresses of the caller's).
#[derive(Clone, Copy, Debug)]
pub struct GatherCall {
    pub what: Gather,
    pub dest: *mut u8,
    pub src: *const u8,
    pub nbytes: usize,
    pub elem: usize,
}

/// One OP reduction of `n` elements of `kind` from `src` into `dest` (symmetric addresses of
/// the caller's); `scatter`: a reduce-scatter (the source holds `n` per member).
#[derive(Clone, Copy, Debug)]
pub struct ReduceCall {
    pub op: RedOp,
    pub kind: Kind,
    pub dest: *mut u8,
    pub src: *const u8,
    pub n: usize,
    pub scatter: bool,
}

fn overlaps(a: u64, alen: usize, b: u64, blen: usize) -> bool {
    a < b + blen as u64 && b < a + alen as u64
}

/// Blocks of a reduction of `bytes` in elements of `elem` bytes: narrow elements (1 and 2
/// bytes) keep half as many vectors in flight per thread (rk_reduce_range), so a block takes
/// half as many bytes (4 x H100, 4 PEs, bf16 sum: 32 KiB 14.3 -> 11.2 µs, 512 KiB 17.6 -> 16.3).
fn reduce_grid(bytes: usize, elem: usize, sms: u32) -> u32 {
    grid_for_parts(bytes, if elem >= 4 { 1 } else { 2 }, sms)
}

/// Direct reductions (not reduce-scatters) on more than two PEs of at least this many bytes
/// take a block per SPREAD_BLOCK_BYTES (narrow elements two), not per 32 KiB: each block then
/// has fewer vectors of the (members - 1) sources in flight, more blocks share the reads
/// (4 x H100, 4 PEs, in one call, 32 KiB per block -> 8 KiB: float sum 64 KiB 11.32 -> 10.89
/// µs, 128 KiB 12.01 -> 11.51, 256 KiB 13.57 -> 12.95; int32 sum 256 KiB 13.48 -> 12.87; bf16
/// 256 KiB 13.39 -> 13.05; at 32 KiB float and int32 0.3 µs slower, hence from 64 KiB). Two
/// PEs keep 32 KiB (mixed there: 64-128 KiB 0.2-0.3 µs faster, 32 KiB and bf16 slower).
const SPREAD_MIN_BYTES: usize = 64 << 10;
const SPREAD_BLOCK_BYTES: usize = 8 << 10;

/// Blocks of a direct reduction of `bytes` over `members` (reduce_grid, or SPREAD_BLOCK_BYTES
/// per block on more than two PEs from SPREAD_MIN_BYTES on).
fn direct_grid(bytes: usize, elem: usize, members: usize, scatter: bool, sms: u32) -> u32 {
    if members > 2 && !scatter && bytes >= SPREAD_MIN_BYTES {
        (bytes.div_ceil(SPREAD_BLOCK_BYTES).saturating_mul(if elem >= 4 { 1 } else { 2 })).clamp(1, sms as usize) as u32
    } else {
        reduce_grid(bytes, elem, sms)
    }
}

/// fcollect/alltoall of up to this many bytes in all take a block per GATHER_BLOCK_BYTES of
/// each member's share, not per VECTORS_PER_BLOCK vectors (32 KiB): more loads in flight at
/// once (4 x H100, 4 PEs, in one call: fcollect 64 KiB 8.68 -> 7.70 µs, 128 KiB 8.17 -> 7.97;
/// session 17's 8 KiB-per-block variant: 4 MiB at 2 PEs 14.4 -> 15.0, hence only small ones).
const GATHER_SMALL_BYTES: usize = 1 << 20;
const GATHER_BLOCK_BYTES: usize = 8 << 10;

/// Blocks of an fcollect/alltoall of `nbytes` per member over `members`.
fn gather_grid(nbytes: usize, members: usize, sms: u32) -> u32 {
    if nbytes.saturating_mul(members) <= GATHER_SMALL_BYTES {
        (nbytes.div_ceil(GATHER_BLOCK_BYTES).saturating_mul(members)).clamp(1, sms as usize) as u32
    } else {
        grid_for_parts(nbytes, members, sms)
    }
}

/// Blocks for `parts` pieces of `bytes` each that the kernel moves at once (rk_parts: one part
/// per member it reads from), up to one block per SM.
fn grid_for_parts(bytes: usize, parts: usize, sms: u32) -> u32 {
    let vectors = bytes.div_ceil(16);
    vectors.div_ceil(VECTORS_PER_BLOCK).saturating_mul(parts).clamp(1, sms as usize) as u32
}

impl GpuState {
    pub(super) fn coll_kernels(&self) -> Result<&CollKernels> {
        self.loaded(&self.coll_kernels, || cu(CollKernels::load()))
    }

    /// The low-latency kernel with the device state written into its module, loaded on first
    /// use.
    pub(super) fn ll_kernel(&self) -> Result<&LlKernel> {
        // The general collective module comes along when it loads as machine code (~0.3 ms
        // then, not the first larger collective's); a JIT compile (~0.1 s) waits for its use.
        // Loaded before, not inside, `loaded` below: that holds the one loading lock.
        if self.ll_kernel.get().is_none() && crate::cuda::image::loads_without_jit(crate::cuda::coll::COLL) {
            self.coll_kernels()?;
            mark("load coll.ptx");
        }
        self.loaded(&self.ll_kernel, || {
            let k = cu(LlKernel::load())?;
            mark("load ll.ptx");
            super::write_target(&super::Target::Module(k.module() as usize), &self.dstate, self.stream.0)
                .map_err(|why| Error::of(ErrorKind::Internal, format!("the library's own small-collective kernel: {why}")))?;
            mark("write the device state into ll.ptx");
            Ok(k)
        })
    }

    /// Whether a broadcast/fcollect/alltoall of `nbytes` per member on team handle `team` takes
    /// the device library's low-latency protocol (its slots exist for the first LL_TEAMS team
    /// handles and hold LL_SLOT / 2 bytes per member; every peer must be a P2P mapping).
    fn ll_fits(&self, team: i32, nbytes: usize) -> bool {
        team >= 0 && (team as usize) < LL_TEAMS && nbytes <= LL_SLOT / 2 && self.dstate.flags & RSHMEM_DEVICE_FLAG_ALL_P2P != 0
    }

    /// The synchronisation arguments of one launch over `team` taking `steps` steps with every
    /// member (the counts before it are on the device: see src/cuda/kernels/common.cuh).
    fn sync_args(&self, me: usize, team: &Team, steps: u32) -> Result<SyncArgs> {
        if team.set.size > MAX_TEAM {
            return Err(Error::of(
                ErrorKind::Unsupported,
                format!("the team has {} PEs; on-stream and host collectives of GPU PEs support teams of up to {MAX_TEAM}", team.set.size),
            ));
        }
        let slot = self.ticket_slot.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % TICKET_SLOTS;
        Ok(SyncArgs {
            flags: self.base + self.area.stream_flags() as u64,
            steps: self.base + self.area.stream_steps() as u64,
            heap_stride: self.stride as i64,
            tickets: self.base + (self.area.tickets() + 8 * slot) as u64,
            chunks: self.base + self.area.stream_chunks() as u64,
            mype: me as i32,
            start: team.set.start as i32,
            stride: team.set.stride as i32,
            size: team.set.size as i32,
            my: team.my_index as i32,
            total: steps as i32,
        })
    }
}

// The on-stream routines take the caller's stream as a handle its maker vouched for, and
// pointers that are translated and bounds-checked before any use. Errors are left for the C
// boundary to name; `routine` is the name as data, for the host barriers of a team across
// hosts (coll_hosts.rs), whose waiting and fatal messages name it.
impl State {
    /// This PE's `len` bytes at `addr`, which must lie in the GPU symmetric heap (the members
    /// read it, or it receives their data) and be aligned to `align`.
    fn coll_buffer(&self, addr: *const u8, len: usize, align: usize, what: &str) -> Result<u64> {
        let a = self.gpu_translate(addr, len, self.me as i32).map_err(|mut e| {
            e.message = format!("{what}: {}", e.message);
            e
        })?;
        if a % align as u64 != 0 {
            return Err(Error::invalid_value(format!("{what} {addr:p} is not aligned to its {align}-byte element type")));
        }
        Ok(a)
    }

    /// nvshmemx_barrier_on_stream / team_sync_on_stream / barrier_all_on_stream /
    /// sync_all_on_stream: later work on every member's stream starts after earlier work on
    /// every member's stream is complete (kernels end with their stores performed).
    pub fn gpu_barrier_on_stream(&self, team: i32, stream: StreamHandle, routine: &'static str) -> Result<()> {
        let trace = first_call("barrier", 0, stream);
        let (_, t) = self.gpu_team(team)?;
        if self.team_spans_hosts(&t) {
            return self.barrier_across_hosts(team, stream, routine);
        }
        let g = self.gpu()?;
        let k = g.coll_kernels()?;
        mark("checks and kernel module");
        let args = g.sync_args(self.me, &t, BARRIER_STEPS)?;
        cu(g.ctx.make_current())?;
        // SAFETY: the flag words and tickets are this PE's runtime area, mapped in every
        // member's window for the life of the job.
        let r = cu(unsafe { k.barrier(stream.raw(), &args) });
        trace.launched();
        r
    }

    /// broadcast / fcollect / alltoall of `nbytes` per member block, ordered on `stream`.
    pub fn gpu_gather_on_stream(&self, team: i32, call: GatherCall, stream: StreamHandle, routine: &'static str) -> Result<()> {
        let GatherCall { what, dest, src, nbytes, elem } = call;
        let trace = first_call(
            match what {
                Gather::Broadcast { .. } => "broadcast",
                Gather::Fcollect => "fcollect",
                Gather::Alltoall => "alltoall",
            },
            nbytes,
            stream,
        );
        let (_, t) = self.gpu_team(team)?;
        let n = t.set.size;
        let (dest_len, src_len, only) = match what {
            Gather::Broadcast { root } => {
                if root < 0 || root as usize >= n {
                    return Err(Error::of(
                        ErrorKind::InvalidPe,
                        format!("PE_root {root} is not a member index of the team (0..={})", n - 1),
                    ));
                }
                (nbytes, nbytes, root)
            }
            Gather::Fcollect => (crate::runtime::rma::bytes(n, nbytes)?, nbytes, -1),
            Gather::Alltoall => {
                let all = crate::runtime::rma::bytes(n, nbytes)?;
                (all, all, -1)
            }
        };
        if nbytes == 0 {
            return Ok(());
        }
        let d = self.coll_buffer(dest, dest_len, elem, "dest")?;
        let s = self.coll_buffer(src, src_len, elem, "source")?;
        let same = d == s && matches!(what, Gather::Broadcast { .. });
        if !same && overlaps(d, dest_len, s, src_len) {
            return Err(Error::invalid_value("dest and source overlap; they must be separate arrays"));
        }
        if self.team_spans_hosts(&t) {
            return self.gather_across_hosts(team, &t, call, stream, routine);
        }
        let g = self.gpu()?;
        mark("checks (team, buffers)");
        if g.ll_fits(team, nbytes) {
            let k = g.ll_kernel()?;
            mark("small-collective kernel ready");
            let (what, root) = match what {
                Gather::Broadcast { root } => (LL_BROADCAST, root),
                Gather::Fcollect => (LL_FCOLLECT, 0),
                Gather::Alltoall => (LL_ALLTOALL, 0),
            };
            let args = LlArgs { dest: d, src: s, nbytes: nbytes as u64, team, what, root, pad: 0 };
            cu(g.ctx.make_current())?;
            // SAFETY: the module holds the device state (ll_kernel); dest and source were
            // checked to lie in this PE's heap (symmetric on every member); team and size have
            // low-latency slots (ll_fits).
            let r = cu(unsafe { k.launch(stream.raw(), &args) });
            trace.launched();
            return r;
        }
        let k = g.coll_kernels()?;
        mark("collective kernel module ready");
        let push = only >= 0 && broadcast_push(n, nbytes);
        let args = GatherArgs {
            s: g.sync_args(self.me, &t, GATHER_STEPS)?,
            dest: d,
            src: s,
            nbytes: nbytes as u64,
            dest_step: if only >= 0 { 0 } else { nbytes as u64 },
            src_off: if what == Gather::Alltoall { (t.my_index * nbytes) as u64 } else { 0 },
            only,
            push: push as i32,
        };
        // fcollect/alltoall: the grid as one part per member; a broadcast reads from the root
        // (pushed: each non-root its slice).
        let grid = if push {
            (nbytes / (n - 1)).div_ceil(BROADCAST_PUSH_BLOCK_BYTES).clamp(1, g.sms as usize) as u32
        } else if only >= 0 {
            grid_for_parts(nbytes, 1, g.sms)
        } else {
            gather_grid(nbytes, n, g.sms)
        };
        cu(g.ctx.make_current())?;
        // SAFETY: dest and source were checked to lie in this PE's mapped heap with the lengths
        // the kernel touches (symmetric: the same ranges on every member).
        let r = cu(unsafe { k.gather(stream.raw(), grid, &args) });
        trace.launched();
        r
    }

    /// OP reduction (or reduce-scatter) of `n` elements of `kind` over `team`, ordered on
    /// `stream`.
    pub fn gpu_reduce_on_stream(&self, team: i32, call: ReduceCall, stream: StreamHandle, routine: &'static str) -> Result<()> {
        let ReduceCall { op, kind, dest, src, n, scatter } = call;
        let trace = first_call(if scatter { "reducescatter" } else { "reduce" }, n * kind.size(), stream);
        let (_, t) = self.gpu_team(team)?;
        if !kind.supports(op) {
            return Err(Error::invalid_value(format!("{} is not defined for floating-point types", op.name())));
        }
        let elem = kind.size();
        let bytes = crate::runtime::rma::bytes(n, elem)?;
        let src_len = if scatter { crate::runtime::rma::bytes(t.set.size, bytes)? } else { bytes };
        if n == 0 {
            return Ok(());
        }
        let d = self.coll_buffer(dest, bytes, elem, "dest")?;
        let s = self.coll_buffer(src, src_len, elem, "source")?;
        let in_place = d == s && !scatter;
        if !in_place && overlaps(d, bytes, s, src_len) {
            return Err(Error::invalid_value(if scatter {
                "dest and source overlap; they must be separate arrays".to_string()
            } else {
                "dest and source overlap without being the same array (in place is allowed; partial overlap is not)".to_string()
            }));
        }
        if self.team_spans_hosts(&t) {
            return self.reduce_across_hosts(team, &t, call, stream, routine);
        }
        // In place: small ones stage their source (two steps, one block), larger ones take
        // two phases; large ones on more than two PEs are pushed.
        let mode = if in_place && bytes <= STAGE_BYTES {
            REDUCE_STAGED
        } else if in_place {
            REDUCE_TWO_PHASE
        } else if !scatter && reduce_push(t.set.size, bytes) {
            REDUCE_PUSH
        } else {
            REDUCE_DIRECT
        };
        let g = self.gpu()?;
        let k = g.coll_kernels()?;
        mark("checks and kernel module");
        let steps = if mode == REDUCE_TWO_PHASE { REDUCE_TWO_PHASE_STEPS } else { REDUCE_DIRECT_STEPS };
        let chunks = if mode == REDUCE_TWO_PHASE { chunks_for(bytes / t.set.size) } else { 0 };
        let args = ReduceArgs {
            s: g.sync_args(self.me, &t, steps)?,
            dest: d,
            src: s,
            n: n as u64,
            src_off: if scatter { (t.my_index * n) as u64 } else { 0 },
            stage: g.base + g.area.stage() as u64,
            mode,
            chunks: chunks as i32,
        };
        let grid = match mode {
            REDUCE_STAGED => 1,
            REDUCE_PUSH => push_grid(bytes, t.set.size, elem, g.sms),
            REDUCE_TWO_PHASE => (chunks as u32).min(g.sms),
            _ => direct_grid(bytes, elem, t.set.size, scatter, g.sms),
        };
        cu(g.ctx.make_current())?;
        // SAFETY: dest (n elements) and source (n, or n per member) lie in this PE's mapped
        // heap (checked above), the same ranges on every member; the staging area holds
        // STAGE_BYTES >= the bytes staged (the launch loads the kind's module on its first use).
        let r = cu(unsafe { k.reduce(stream.raw(), grid, op, kind.for_op(op), &args) });
        trace.launched();
        r
    }

    /// Runs an on-stream collective on the library's stream and waits for it (the blocking
    /// host forms: nvshmem_TYPENAME_OP_reduce and friends).
    pub fn gpu_blocking(&self, body: impl FnOnce(StreamHandle) -> Result<()>) -> Result<()> {
        let g = self.gpu()?;
        cu(g.ctx.make_current())?;
        body(g.stream.handle())?;
        g.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_grow_with_the_data_up_to_one_block_per_sm() {
        assert_eq!(grid_for_parts(4, 1, 132), 1);
        assert_eq!(grid_for_parts(VECTORS_PER_BLOCK * 16, 1, 132), 1);
        assert_eq!(grid_for_parts(VECTORS_PER_BLOCK * 16 + 1, 1, 132), 2);
        assert_eq!(grid_for_parts(4 << 20, 1, 132), 128);
        assert_eq!(grid_for_parts(1 << 30, 1, 132), 132);
    }

    #[test]
    fn narrow_reductions_take_twice_the_blocks() {
        assert_eq!(reduce_grid(32 << 10, 4, 132), 1);
        assert_eq!(reduce_grid(32 << 10, 2, 132), 2);
        assert_eq!(reduce_grid(32 << 10, 1, 132), 2);
        assert_eq!(reduce_grid(64 << 20, 2, 132), 132);
    }

    #[test]
    fn direct_reductions_on_more_than_two_pes_spread_from_64_kib() {
        let at = SPREAD_MIN_BYTES;
        assert_eq!(direct_grid(at, 4, 4, false, 132), (at / SPREAD_BLOCK_BYTES) as u32);
        assert_eq!(direct_grid(at, 2, 4, false, 132), 2 * (at / SPREAD_BLOCK_BYTES) as u32, "narrow: twice");
        assert_eq!(direct_grid(at - 16, 4, 4, false, 132), reduce_grid(at - 16, 4, 132), "smaller: 32 KiB per block");
        assert_eq!(direct_grid(at, 4, 2, false, 132), reduce_grid(at, 4, 132), "two PEs: 32 KiB per block");
        assert_eq!(direct_grid(at, 4, 4, true, 132), reduce_grid(at, 4, 132), "reduce-scatters unchanged");
        assert_eq!(direct_grid(64 << 20, 4, 4, false, 132), 132, "up to one block per SM");
    }

    #[test]
    fn gathers_take_blocks_for_every_member_up_to_one_per_sm() {
        assert_eq!(grid_for_parts(4, 4, 132), 4, "one block per member, however small");
        assert_eq!(grid_for_parts(VECTORS_PER_BLOCK * 16 + 1, 4, 132), 8);
        assert_eq!(grid_for_parts(4 << 20, 4, 132), 132);
        assert_eq!(grid_for_parts(4, 200, 132), 132, "fewer blocks than members: blocks take several");
        assert_eq!(grid_for_parts(usize::MAX, 4, 132), 132);
    }

    #[test]
    fn large_broadcasts_to_more_than_two_pes_are_pushed() {
        assert!(broadcast_push(4, BROADCAST_PUSH_BYTES));
        assert!(broadcast_push(3, 64 << 20));
        assert!(!broadcast_push(4, BROADCAST_PUSH_BYTES - 1), "smaller: one pull from the root");
        assert!(!broadcast_push(2, 4 << 20), "two PEs: the one other member reads the root's data once anyway");
    }

    #[test]
    fn reductions_are_pushed_from_the_read_threshold() {
        let at4 = PUSH_READ_BYTES / 3;
        assert!(!reduce_push(4, at4 - 16), "4 PEs, just below: directly");
        assert!(reduce_push(4, at4), "4 PEs: 3 x bytes of reads");
        assert!(reduce_push(8, at4), "8 PEs read more at the same size");
        assert!(!reduce_push(2, 64 << 20), "two PEs: directly at every size");
        assert!(!reduce_push(3, PUSH_READ_BYTES / 2 - 16));
        assert!(reduce_push(3, PUSH_READ_BYTES / 2));
    }

    #[test]
    fn pushed_reductions_take_a_block_per_push_bytes_of_the_slice() {
        assert_eq!(push_grid(4 * PUSH_BLOCK_BYTES, 4, 4, 132), 1);
        assert_eq!(push_grid(4 * PUSH_BLOCK_BYTES + 64, 4, 4, 132), 2);
        assert_eq!(push_grid(4 * PUSH_BLOCK_BYTES, 4, 2, 132), 2, "narrow elements: twice the blocks");
        assert_eq!(push_grid(1 << 30, 4, 4, 132), 132, "up to one block per SM");
        assert_eq!(push_grid(4, 4, 4, 132), 1);
    }

    #[test]
    fn slices_take_a_chunk_per_chunk_bytes_up_to_the_flag_words() {
        assert_eq!(chunks_for(0), 1);
        assert_eq!(chunks_for(1), 1);
        assert_eq!(chunks_for(CHUNK_BYTES), 1);
        assert_eq!(chunks_for(CHUNK_BYTES + 1), 2);
        assert_eq!(chunks_for(CHUNKS * CHUNK_BYTES), CHUNKS);
        assert_eq!(chunks_for(usize::MAX), CHUNKS, "larger slices take larger chunks");
    }

    #[test]
    fn small_gathers_take_a_block_per_gather_block_bytes_of_each_share() {
        assert_eq!(gather_grid(4, 2, 132), 2, "one block per member, however small");
        assert_eq!(gather_grid(GATHER_BLOCK_BYTES + 1, 2, 132), 4);
        assert_eq!(gather_grid(GATHER_SMALL_BYTES / 4, 4, 132), (GATHER_SMALL_BYTES / 4 / GATHER_BLOCK_BYTES * 4).min(132) as u32);
        assert_eq!(
            gather_grid(GATHER_SMALL_BYTES, 4, 132),
            grid_for_parts(GATHER_SMALL_BYTES, 4, 132),
            "larger: as many blocks as any copy"
        );
    }

    #[test]
    fn overlap_of_ranges() {
        assert!(overlaps(100, 10, 105, 10));
        assert!(overlaps(105, 10, 100, 10));
        assert!(!overlaps(100, 10, 110, 10));
        assert!(!overlaps(110, 10, 100, 10));
        assert!(overlaps(100, 10, 100, 10));
    }
}
