//! The memory of one PE's command channel and typed access to its words (layout: the
//! `RshmemProxy*` structs of `crate::abi`, shared with device/rshmem_proxy.cuh).
//!
//! The issuers (GPU threads, or host threads standing in for them) and the proxy thread touch
//! the same words concurrently; every shared word is read and written here through atomics
//! (`AtomicU64`/`AtomicU32` views of the C words), never through plain references.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::mem::offset_of;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::abi::{
    RshmemProxyAmo, RshmemProxyChannel, RshmemProxyCmd, RshmemProxyIssue, RshmemProxyLane, RshmemProxyResult, RSHMEM_PROXY_DEAD,
    RSHMEM_PROXY_MAGIC, RSHMEM_PROXY_STALL_BARRIER, RSHMEM_PROXY_STALL_CHANNEL, RSHMEM_PROXY_VERSION, RSHMEM_PROXY_WAIT_COMPLETION,
    RSHMEM_PROXY_WAIT_RESULT, RSHMEM_PROXY_WAIT_SLOT,
};
use crate::error::{Error, Result};

/// One allocation, 64-byte aligned and zeroed, released on drop (by `release`, or by the
/// global allocator for `Block::new`).
pub struct Block {
    ptr: *mut u8,
    layout: Layout,
    release: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl Block {
    fn new(bytes: usize) -> Block {
        let layout = Layout::from_size_align(bytes.max(64), 64).expect("channel size fits a Layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating a proxy channel of {bytes} bytes");
        Block { ptr, layout, release: None }
    }

    /// Memory allocated elsewhere (pinned host, GPU): `ptr` is zeroed and 64-byte aligned,
    /// `release` frees it.
    pub fn foreign(ptr: *mut u8, release: Box<dyn FnOnce() + Send + Sync>) -> Block {
        Block { ptr, layout: Layout::new::<u8>(), release: Some(release) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        match self.release.take() {
            Some(release) => release(),
            // SAFETY: allocated in Block::new with this layout.
            None => unsafe { dealloc(self.ptr, self.layout) },
        }
    }
}

/// Where a channel's memory comes from: `shared` for what both sides poll (header, rings,
/// results, lane words), `issue` for the issuers' ticket words.
pub trait ChannelMemory {
    fn shared(&self, bytes: usize) -> Result<Block>;
    fn issue(&self, bytes: usize) -> Result<Block>;
}

/// Ordinary process memory for all of it (the host build and its tests).
pub struct HostChannelMemory;

impl ChannelMemory for HostChannelMemory {
    fn shared(&self, bytes: usize) -> Result<Block> {
        Ok(Block::new(bytes))
    }
    fn issue(&self, bytes: usize) -> Result<Block> {
        Ok(Block::new(bytes))
    }
}

/// A channel's memory: the header, the rings, the results, the lane words and the issue words.
/// `new_host` puts all of it in ordinary memory (the host build and its tests). The GPU build
/// (`proxy::gpu`) puts the header, rings, results and lane words in pinned host memory the GPU
/// maps, and the issue words (atomics of GPU threads only) in GPU memory.
pub struct Channel {
    header: *mut RshmemProxyChannel,
    lanes: usize,
    slots: usize,
    _blocks: Vec<Block>,
}

// SAFETY: every word shared between threads is accessed through atomics (see the accessors);
// the pointers stay valid for the Channel's life.
unsafe impl Send for Channel {}
// SAFETY: as above.
unsafe impl Sync for Channel {}

impl Channel {
    /// A channel in ordinary memory: `lanes` rings of `slots` commands (a power of two).
    pub fn new_host(mype: usize, lanes: usize, slots: usize, stall: Duration) -> Result<Channel> {
        Channel::new_in(&HostChannelMemory, mype, lanes, slots, stall)
    }

    /// A channel whose memory comes from `mem`.
    pub fn new_in(mem: &dyn ChannelMemory, mype: usize, lanes: usize, slots: usize, stall: Duration) -> Result<Channel> {
        let routine = "nvshmem_init";
        if lanes == 0 || lanes > 4096 {
            return Err(Error::invalid(routine, format!("proxy channel: {lanes} lanes; expected 1 to 4096")));
        }
        if !slots.is_power_of_two() || !(2..=1 << 16).contains(&slots) {
            return Err(Error::invalid(routine, format!("proxy channel: {slots} slots per lane; expected a power of two from 2 to 65536")));
        }
        let blocks = vec![
            mem.shared(size_of::<RshmemProxyChannel>())?,
            mem.shared(lanes * slots * size_of::<RshmemProxyCmd>())?,
            mem.shared(lanes * slots * size_of::<RshmemProxyResult>())?,
            mem.shared(lanes * size_of::<RshmemProxyLane>())?,
            // One more line than the lanes: the remote-AMO claim word (GPU atomics only).
            mem.issue((lanes + 1) * size_of::<RshmemProxyIssue>())?,
        ];
        let header = blocks[0].ptr.cast::<RshmemProxyChannel>();
        let h = RshmemProxyChannel {
            magic: RSHMEM_PROXY_MAGIC,
            version: RSHMEM_PROXY_VERSION,
            status: 0,
            lanes: lanes as u32,
            slots: slots as u32,
            mype: mype as i32,
            cmds: blocks[1].ptr as u64,
            results: blocks[2].ptr as u64,
            lane_state: blocks[3].ptr as u64,
            issue: blocks[4].ptr as u64,
            stall_ns: stall.as_nanos().min(u64::MAX as u128) as u64,
            amo: RshmemProxyAmo { claim: blocks[4].ptr as u64 + (lanes * size_of::<RshmemProxyIssue>()) as u64, ..Default::default() },
            ..Default::default()
        };
        // SAFETY: header points to a fresh, aligned block of the right size nobody else sees yet.
        unsafe { header.write(h) };
        Ok(Channel { header, lanes, slots, _blocks: blocks })
    }

    /// The header's address: what device code (or the host harness) is given.
    pub fn as_ptr(&self) -> *mut RshmemProxyChannel {
        self.header
    }

    pub fn lanes(&self) -> usize {
        self.lanes
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    fn status_word(&self) -> &AtomicU32 {
        // SAFETY: `status` is an aligned u32 of the live header; AtomicU32 has its layout.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.header).status) }
    }

    fn base(&self, f: impl Fn(&RshmemProxyChannel) -> u64) -> u64 {
        // SAFETY: the address fields are written once in new_host, before the channel is shared.
        f(unsafe { &*self.header })
    }

    /// The PE this channel belongs to.
    pub fn mype(&self) -> i32 {
        // SAFETY: written once in new_in, before the channel is shared.
        unsafe { (*self.header).mype }
    }

    /// How long an issuer waits before it says so (and the host before it gives up).
    pub fn stall_ns(&self) -> u64 {
        self.base(|h| h.stall_ns)
    }

    /// The target PE of command `ticket` of `lane` if it has been posted (for messages: a
    /// racing rewrite of the slot only makes the message name another PE).
    pub fn target_of(&self, lane: usize, ticket: u64) -> Option<i32> {
        if self.cmd_seq(lane, ticket).load(Ordering::Acquire) != ticket + 1 {
            return None;
        }
        // SAFETY: `pe` is an aligned i32 of a live slot.
        Some(unsafe { (&raw const (*self.cmd(lane, ticket)).pe).read_volatile() })
    }

    pub fn status(&self) -> u32 {
        self.status_word().load(Ordering::Acquire)
    }

    pub(super) fn set_status(&self, status: u32) {
        self.status_word().store(status, Ordering::Release);
    }

    /// Marks the channel dead at (lane, pe, ticket): issuers waiting on it stop and report.
    pub(super) fn set_dead(&self, lane: usize, pe: i32, ticket: u64) {
        // SAFETY: plain fields of the live header, written before the status that publishes them.
        unsafe {
            (&raw mut (*self.header).failed_lane).write_volatile(lane as u32);
            (&raw mut (*self.header).failed_pe).write_volatile(pe);
            (&raw mut (*self.header).failed_ticket).write_volatile(ticket);
        }
        self.set_status(RSHMEM_PROXY_DEAD);
    }

    /// The slot of `ticket` in `lane`'s ring.
    pub(super) fn cmd(&self, lane: usize, ticket: u64) -> *mut RshmemProxyCmd {
        let i = lane * self.slots + (ticket as usize & (self.slots - 1));
        (self.base(|h| h.cmds) as *mut RshmemProxyCmd).wrapping_add(i)
    }

    /// The word `seq` of a slot.
    pub(super) fn cmd_seq(&self, lane: usize, ticket: u64) -> &AtomicU64 {
        // SAFETY: `seq` is the aligned first u64 of a live slot.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.cmd(lane, ticket)).seq) }
    }

    fn result(&self, lane: usize, ticket: u64) -> *mut RshmemProxyResult {
        let i = lane * self.slots + (ticket as usize & (self.slots - 1));
        (self.base(|h| h.results) as *mut RshmemProxyResult).wrapping_add(i)
    }

    /// Publishes a fetching command's result: the value, then `ready`.
    pub(super) fn put_result(&self, lane: usize, ticket: u64, value: u64) {
        let r = self.result(lane, ticket);
        // SAFETY: aligned u64 fields of a live result slot; the issuer reads them through atomics.
        unsafe {
            AtomicU64::from_ptr(&raw mut (*r).value).store(value, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*r).ready).store(ticket + 1, Ordering::Release);
        }
    }

    /// Whether the issuer of a fetching command has taken its result.
    pub(super) fn result_taken(&self, lane: usize, ticket: u64) -> bool {
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.result(lane, ticket)).taken) }.load(Ordering::Acquire) > ticket
    }

    fn lane(&self, lane: usize) -> *mut RshmemProxyLane {
        (self.base(|h| h.lane_state) as *mut RshmemProxyLane).wrapping_add(lane)
    }

    /// Credits: tickets below this have left `lane`'s ring.
    pub fn consumed(&self, lane: usize) -> &AtomicU64 {
        // SAFETY: aligned u64 of a live lane record.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.lane(lane)).consumed) }
    }

    /// Tickets below this that asked for completion are complete.
    pub fn completed(&self, lane: usize) -> &AtomicU64 {
        // SAFETY: as above.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.lane(lane)).completed) }
    }

    /// The u64 field at `offset` of the header's remote-AMO record.
    fn amo_word(&self, offset: usize) -> &AtomicU64 {
        let at = self.header.cast::<u8>().wrapping_add(offset_of!(RshmemProxyChannel, amo) + offset);
        // SAFETY: `offset` is that of a u64 field of the record (aligned, live as long as the
        // channel); device threads write `result` and `done` concurrently, so atomics only.
        unsafe { AtomicU64::from_ptr(at.cast()) }
    }

    /// Posts remote AMO number `seq` (the one before it done): the fields, then `seq`, for a
    /// device thread to take (RshmemProxyAmo). `op` is an `AmoOp` code, `size` 4 or 8.
    pub fn post_amo(&self, seq: u64, addr: u64, op: u32, size: u32, a: u64, b: u64) {
        self.amo_word(offset_of!(RshmemProxyAmo, addr)).store(addr, Ordering::Relaxed);
        self.amo_word(offset_of!(RshmemProxyAmo, a)).store(a, Ordering::Relaxed);
        self.amo_word(offset_of!(RshmemProxyAmo, b)).store(b, Ordering::Relaxed);
        // `op` and `size` share one aligned u64 (little-endian: op first).
        self.amo_word(offset_of!(RshmemProxyAmo, op)).store(u64::from(op) | u64::from(size) << 32, Ordering::Relaxed);
        self.amo_word(offset_of!(RshmemProxyAmo, seq)).store(seq, Ordering::Release);
    }

    /// The old value of remote AMO `seq`, once a device thread has run it.
    pub fn amo_result(&self, seq: u64) -> Option<u64> {
        (self.amo_word(offset_of!(RshmemProxyAmo, done)).load(Ordering::Acquire) >= seq)
            .then(|| self.amo_word(offset_of!(RshmemProxyAmo, result)).load(Ordering::Relaxed))
    }

    /// A long wait a device thread reported since the report numbered `*last` (RshmemProxyStall),
    /// as the line the proxy thread logs; `*last` becomes its number.
    pub fn stall_report(&self, last: &mut u64) -> Option<String> {
        // SAFETY: the record is part of the live header; device threads write it concurrently,
        // so every field is read with an atomic load of its own width.
        let r = unsafe { &raw mut (*self.header).stall };
        // SAFETY: as above, for each aligned field.
        let (seq, word, seen, want) = unsafe {
            let seq = AtomicU64::from_ptr(&raw mut (*r).seq).load(Ordering::Acquire);
            if seq == *last {
                return None;
            }
            let w = |p: *mut u64| AtomicU64::from_ptr(p).load(Ordering::Relaxed);
            (seq, w(&raw mut (*r).word), w(&raw mut (*r).seen), w(&raw mut (*r).want))
        };
        // SAFETY: as above, the 4-byte fields.
        let (what, cmp_or_pe, in_heap, block, thread) = unsafe {
            let w = |p: *mut u32| AtomicU32::from_ptr(p).load(Ordering::Relaxed);
            (
                w(&raw mut (*r).what),
                w((&raw mut (*r).cmp_or_pe).cast()) as i32,
                w(&raw mut (*r).in_heap),
                w(&raw mut (*r).block),
                w(&raw mut (*r).thread),
            )
        };
        *last = seq;
        let who = format!("a device thread (block {block}, thread {thread})");
        Some(match what {
            // device/rshmem_proxy.cuh `wait_for`: word = ring, in_heap = op, seen = what for, want = ms.
            RSHMEM_PROXY_STALL_CHANNEL => {
                let target = if cmp_or_pe >= 0 { format!("to PE {cmp_or_pe}") } else { "(every ring)".to_string() };
                let waits_for = match seen {
                    RSHMEM_PROXY_WAIT_SLOT => "a free slot (the ring is full)",
                    RSHMEM_PROXY_WAIT_COMPLETION => "its completion",
                    RSHMEM_PROXY_WAIT_RESULT => "its result",
                    _ => "the commands posted before it",
                };
                format!(
                    "{who}: its {} {target} has waited {want} ms for {waits_for} in proxy ring {word}; the proxy thread is not keeping up (is it alive? is the target's host reachable?)",
                    op_name(in_heap)
                )
            }
            RSHMEM_PROXY_STALL_BARRIER => format!(
                "{who} has waited 10 s in a device barrier or collective for PE {cmp_or_pe}, which has not arrived (a deadlock, a dead PE, collectives called in different orders, or PE {cmp_or_pe}'s kernel not running); the kernel cannot end before it does"
            ),
            _ => {
                let place = if in_heap != 0 { format!("symmetric heap offset {word}") } else { format!("address {word:#x} (outside the symmetric heap: no other PE can write it)") };
                format!(
                    "{who} has waited 10 s in nvshmem_wait_until / signal_wait_until: the word at {place} holds {seen}, and it waits until it is {} {want}; no PE has written that yet (a sender that never sent, or counts that differ between PEs), and the kernel cannot end before one does",
                    cmp_name(cmp_or_pe)
                )
            }
        })
    }

    /// The next ticket issuers of `lane` will take (host channels only: in the GPU build this
    /// word is in GPU memory, where the host must not read it).
    pub fn tickets(&self, lane: usize) -> &AtomicU64 {
        let issue = (self.base(|h| h.issue) as *mut RshmemProxyIssue).wrapping_add(lane);
        // SAFETY: aligned u64 of a live issue record.
        unsafe { AtomicU64::from_ptr(&raw mut (*issue).ticket) }
    }
}

/// A command's RSHMEM_PROXY_OP_* (low 16 bits of `op`) as the device routine family.
fn op_name(op: u32) -> &'static str {
    match op & 0xffff {
        1 => "put",
        2 => "get",
        3 => "p",
        4 => "g",
        5 => "atomic",
        6 => "fetching atomic",
        7 => "put with signal",
        8 => "fence",
        9 => "quiet",
        _ => "command",
    }
}

/// NVSHMEM_CMP_* (include/shmem.h's SHMEM_CMP_* values) as words.
fn cmp_name(cmp: i32) -> &'static str {
    match cmp {
        0 => "equal to",
        1 => "not equal to",
        2 => "greater than",
        3 => "less than or equal to",
        4 => "less than",
        5 => "greater than or equal to",
        _ => "(an unknown comparison) with",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_shapes_are_named_errors() {
        let stall = Duration::from_secs(1);
        let e = Channel::new_host(0, 0, 8, stall).err().unwrap();
        assert!(e.to_string().contains("proxy channel: 0 lanes; expected 1 to 4096"), "{e}");
        for slots in [0, 1, 6, 1 << 17] {
            let e = Channel::new_host(0, 1, slots, stall).err().unwrap();
            assert!(
                e.to_string().contains(&format!("proxy channel: {slots} slots per lane; expected a power of two from 2 to 65536")),
                "{e}"
            );
        }
        let c = Channel::new_host(3, 2, 4, stall).unwrap();
        // SAFETY: the header is live and nobody else uses this channel.
        let h = unsafe { *c.as_ptr() };
        assert_eq!(
            (h.magic, h.version, h.lanes, h.slots, h.mype, h.stall_ns),
            (RSHMEM_PROXY_MAGIC, RSHMEM_PROXY_VERSION, 2, 4, 3, 1_000_000_000)
        );
        assert_eq!(c.cmd(1, 5) as u64 - h.cmds, (4 + 1) * 64, "lane 1, ticket 5 -> slot 1 of lane 1");
        assert_eq!(c.status(), 0);
    }

    /// A device thread's slow proxy wait (device/rshmem_proxy.cuh, `report_slow` of the CUDA
    /// build) is a stall record the proxy thread turns into one line, once.
    #[test]
    fn a_slow_channel_wait_is_logged_once() {
        let c = Channel::new_host(1, 2, 4, Duration::from_secs(1)).unwrap();
        let mut last = 0;
        assert_eq!(c.stall_report(&mut last), None);
        // SAFETY: the header is live; nothing else uses this channel (the device's stores).
        unsafe {
            let r = &raw mut (*c.as_ptr()).stall;
            (*r).what = RSHMEM_PROXY_STALL_CHANNEL;
            (*r).word = 1;
            (*r).in_heap = crate::abi::RSHMEM_PROXY_OP_G | crate::abi::RSHMEM_PROXY_FLAG_RESULT;
            (*r).seen = RSHMEM_PROXY_WAIT_RESULT;
            (*r).want = 1049;
            (*r).cmp_or_pe = 3;
            (*r).block = 7;
            (*r).thread = 33;
            (*r).seq = 1;
        }
        let line = c.stall_report(&mut last).expect("a report");
        assert_eq!(
            line,
            "a device thread (block 7, thread 33): its g to PE 3 has waited 1049 ms for its result in proxy ring 1; the proxy thread is not keeping up (is it alive? is the target's host reachable?)"
        );
        assert_eq!(c.stall_report(&mut last), None, "said once");
    }
}
