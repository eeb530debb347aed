//! The library's ABI: items whose layout or values C code depends on. cbindgen turns this file
//! into include/rshmem/rshmem_abi.h (committed; CI fails when regenerating it changes it).

/// Major version of the library ABI (the SONAME is librshmem.so.<major>).
pub const RSHMEM_VERSION_MAJOR: u32 = 0;
pub const RSHMEM_VERSION_MINOR: u32 = 1;
pub const RSHMEM_VERSION_PATCH: u32 = 0;

/// C `long double` on x86-64 (80-bit extended, stored in 16 bytes, 16-aligned). Moved as
/// bytes; the arithmetic on it lives in `crate::sys::longdouble`.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LongDouble(pub [u8; 16]);

/// C `float _Complex` and `double _Complex` (real part, then imaginary part).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ComplexF(pub f32, pub f32);
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ComplexD(pub f64, pub f64);

/// Status codes of the routines that return one, NVSHMEM and OpenSHMEM alike: NVSHMEM's
/// `nvshmemx_status` numbering (device/rshmem_common.h declares it for C; a test compares).
/// OpenSHMEM routines that return void report errors by message and global exit instead.
/// Which error kind returns which code: `ErrorKind::status` (src/error.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RshmemStatus {
    Success = 0,
    ErrorInvalidValue = 1,
    ErrorOutOfMemory = 2,
    ErrorNotSupported = 3,
    ErrorSymmetry = 4,
    ErrorGpuNotSelected = 5,
    ErrorCollectiveLaunchFailed = 6,
    ErrorInternal = 7,
}

// ---------------------------------------------------------------------------------------------
// GPU device state (issue 3). The device library (device/, header-only) keeps one copy of this
// struct in `__constant__` memory per translation unit (or one merged copy under -rdc) and
// reads every field from the constant cache. The host library fills it in at nvshmem_init and
// writes it into every registered copy (see device/rshmem_state.cuh and src/runtime/gpu.rs).

/// `RshmemDeviceState::magic` once the state is valid (0 before nvshmem_init).
pub const RSHMEM_DEVICE_STATE_MAGIC: u32 = 0x5244_5653; // "RDVS"
/// Bumped whenever the layout of `RshmemDeviceState` changes.
pub const RSHMEM_DEVICE_STATE_VERSION: u32 = 4;
/// sizeof(RshmemDeviceState); the device headers check it with static_assert.
pub const RSHMEM_DEVICE_STATE_SIZE: usize = 176;

/// Every PE's heap can be reached with loads, stores and atomics (NVLink / PCIe P2P).
pub const RSHMEM_DEVICE_FLAG_ALL_P2P: u32 = 1;
/// Device-side argument checks are on (RSHMEM_DEVICE_CHECKS=1).
pub const RSHMEM_DEVICE_FLAG_CHECKS: u32 = 2;
/// Some peers are reached through IBGDA (`ibgda` is set; a peer with `peer_bases[pe] == 0` is one).
pub const RSHMEM_DEVICE_FLAG_IBGDA: u32 = 4;
/// Some peers are on other hosts and reached through the proxy (`proxy` is set).
pub const RSHMEM_DEVICE_FLAG_PROXY: u32 = 8;

/// How device code reaches a PE (`RshmemDeviceState::routes`, one byte per PE).
pub const RSHMEM_ROUTE_P2P: u8 = 0;
pub const RSHMEM_ROUTE_IBGDA: u8 = 1;
pub const RSHMEM_ROUTE_PROXY: u8 = 2;

/// The hot part of the device state, as device code sees it.
///
/// Heaps are laid out in one reserved virtual-address window: PE `p`'s heap is mapped at
/// `window_base + p * heap_stride` in every process, so the address of a symmetric object on
/// PE `p` is `ptr + (p - mype) * heap_stride` — pure arithmetic, no table lookup.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemDeviceState {
    /// RSHMEM_DEVICE_STATE_MAGIC when valid.
    pub magic: u32,
    /// RSHMEM_DEVICE_STATE_VERSION.
    pub version: u32,
    pub mype: i32,
    pub npes: i32,
    pub node_mype: i32,
    pub node_npes: i32,
    /// RSHMEM_DEVICE_FLAG_* bits.
    pub flags: u32,
    pub reserved0: u32,
    /// Device address of this PE's heap.
    pub heap_base: u64,
    /// Distance between consecutive PEs' heaps in the window (= bytes reserved per PE).
    pub heap_stride: u64,
    /// Device address where PE 0's heap is mapped.
    pub window_base: u64,
    /// Device address of `u64[npes]`: PE p's heap base as mapped here, 0 when unreachable.
    pub peer_bases: u64,
    /// Device address (this PE's heap) of `u64[npes]` barrier counters peers add to.
    pub sync_counters: u64,
    /// Device address of `u64[npes]`: how many barrier signals this PE consumed per peer.
    pub sync_consumed: u64,
    /// Device address of `u64[npes]`: on-stream barrier flags peers write to.
    pub stream_flags: u64,
    /// Device address (this PE's heap) of the collectives' scratch buffer, and its size.
    pub coll_scratch: u64,
    pub coll_scratch_bytes: u64,
    /// Device address of `RshmemDeviceTeam[max_teams]`: the teams this PE belongs to, indexed
    /// by their nvshmem_team_t handle (size 0: no team there).
    pub teams: u64,
    pub max_teams: u32,
    pub reserved1: u32,
    /// Device address of this PE's `rshmem_ibgda_state` (device/ibgda/ibgda_state.h), 0 when no
    /// peer is reached through IBGDA. Added in version 2 (was reserved).
    pub ibgda: u64,
    /// Device collectives (device/rshmem_coll.cuh), all in this PE's heap; added in version 3.
    /// `u64[coll_ll_teams][2]`: how many small collectives of each family (exchanges,
    /// broadcasts) this PE has started on each team.
    pub coll_calls: u64,
    /// `u64[coll_ll_teams][npes + 2]`: per member (world PE), the number of the last of this
    /// PE's small broadcasts it has taken out of its slot (written by that member); then the
    /// number of this PE's last small broadcast as root, for each parity.
    pub coll_acks: u64,
    /// Low-latency receive slots, `[coll_ll_teams][2][2][npes]` of `coll_ll_slot` bytes each:
    /// team, family, parity of the call number, sending world PE. A slot holds 16-byte units
    /// of 8 payload bytes and two copies of the call's flag.
    pub coll_ll: u64,
    pub coll_ll_slot: u32,
    /// Teams (handles below this) that have slots; others always take the direct path.
    pub coll_ll_teams: u32,
    /// Host (and device) address of this PE's proxy channel (`RshmemProxyChannel`), 0 when no
    /// PE is on another host. Added in version 4.
    pub proxy: u64,
    /// Device address of `u8[npes]`: each PE's RSHMEM_ROUTE_*, 0 when every PE is P2P.
    pub routes: u64,
}

/// One team as device code sees it: its members are the world PEs `start + i * stride`,
/// `0 <= i < size`; `my_index` is this PE's `i`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemDeviceTeam {
    pub start: i32,
    pub stride: i32,
    pub size: i32,
    pub my_index: i32,
}

// ---------------------------------------------------------------------------------------------
// Proxy command channel (issue 19; src/proxy/, device/rshmem_proxy.cuh). Device threads hand
// operations for PEs on other hosts to a host proxy thread through `lanes` rings of `slots`
// fixed-size commands each. The rings and the proxy's counters live in pinned host memory the
// GPU maps; the ticket counters the issuing threads take in GPU memory. Bump
// RSHMEM_PROXY_VERSION on every change of these structs.

pub const RSHMEM_PROXY_MAGIC: u32 = 0x5250_5843; // "RPXC"
pub const RSHMEM_PROXY_VERSION: u32 = 3;

/// Command opcodes (`RshmemProxyCmd::op`, low 16 bits).
pub const RSHMEM_PROXY_OP_PUT: u32 = 1;
pub const RSHMEM_PROXY_OP_GET: u32 = 2;
/// Put of `bytes` (1..=8) taken from `value`.
pub const RSHMEM_PROXY_OP_P: u32 = 3;
/// Get of `bytes` (1..=8) into the command's result.
pub const RSHMEM_PROXY_OP_G: u32 = 4;
/// Non-fetching AMO (`amo` = RSHMEM_PROXY_AMO_*, `amo_type` = RSHMEM_PROXY_TYPE_*).
pub const RSHMEM_PROXY_OP_AMO: u32 = 5;
/// Fetching AMO (compare-swap takes `compare`); the old value goes to the command's result.
pub const RSHMEM_PROXY_OP_FETCH_AMO: u32 = 6;
/// Put, then the signal AMO (`amo`: SET or ADD, `value`, at heap offset `compare`) ordered after it.
pub const RSHMEM_PROXY_OP_PUT_SIGNAL: u32 = 7;
/// Orders earlier puts and AMOs of this lane before later ones.
pub const RSHMEM_PROXY_OP_FENCE: u32 = 8;
/// Completes every operation posted before it.
pub const RSHMEM_PROXY_OP_QUIET: u32 = 9;
/// Bit of `op`: the issuer waits for `completed` to pass this command's ticket.
pub const RSHMEM_PROXY_FLAG_WAIT: u32 = 1 << 16;
/// Bit of `op`: the issuer waits for the command's result (G, FETCH_AMO).
pub const RSHMEM_PROXY_FLAG_RESULT: u32 = 1 << 17;

/// AMO operations (`RshmemProxyCmd::amo`).
pub const RSHMEM_PROXY_AMO_ADD: u32 = 0;
pub const RSHMEM_PROXY_AMO_AND: u32 = 1;
pub const RSHMEM_PROXY_AMO_OR: u32 = 2;
pub const RSHMEM_PROXY_AMO_XOR: u32 = 3;
/// set (swap when fetching)
pub const RSHMEM_PROXY_AMO_SET: u32 = 4;
/// fetch (fetching only)
pub const RSHMEM_PROXY_AMO_READ: u32 = 5;
/// compare-swap (fetching only)
pub const RSHMEM_PROXY_AMO_CSWAP: u32 = 6;

/// AMO element types (`RshmemProxyCmd::amo_type`).
pub const RSHMEM_PROXY_TYPE_I32: u32 = 0;
pub const RSHMEM_PROXY_TYPE_U32: u32 = 1;
pub const RSHMEM_PROXY_TYPE_I64: u32 = 2;
pub const RSHMEM_PROXY_TYPE_U64: u32 = 3;
pub const RSHMEM_PROXY_TYPE_F32: u32 = 4;
pub const RSHMEM_PROXY_TYPE_F64: u32 = 5;

/// `RshmemProxyChannel::status`: the proxy thread serves the rings.
pub const RSHMEM_PROXY_RUNNING: u32 = 1;
/// The proxy thread has stopped (an operation failed or the thread died); `RshmemProxyChannel::
/// failed_ticket`/`failed_lane` say where, the host log says why. Issuers stop waiting.
pub const RSHMEM_PROXY_DEAD: u32 = 2;

/// One command: 64 bytes, one per ring slot. The issuer writes every field, then `seq` (ticket
/// + 1) with release semantics; the proxy reads a slot only once `seq` says it is this lap's.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyCmd {
    pub seq: u64,
    /// RSHMEM_PROXY_OP_* | RSHMEM_PROXY_FLAG_*.
    pub op: u32,
    /// Target PE.
    pub pe: i32,
    /// Byte offset of the target in the target PE's symmetric heap.
    pub remote: u64,
    /// Local address: the source of a put, the destination of a get.
    pub local: u64,
    pub bytes: u64,
    /// p's value, the AMO operand, or the signal value.
    pub value: u64,
    /// compare-swap's condition, or the signal's heap offset.
    pub compare: u64,
    /// RSHMEM_PROXY_AMO_*.
    pub amo: u32,
    /// RSHMEM_PROXY_TYPE_*.
    pub amo_type: u32,
}

/// The result of a fetching command, one per ring slot. The proxy writes `value`, then `ready`
/// (ticket + 1); the issuer reads `value`, then writes `taken` (ticket + 1), which lets the proxy
/// hand the slot out again.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyResult {
    pub value: u64,
    pub ready: u64,
    pub taken: u64,
    pub reserved: u64,
}

/// What the proxy writes back for one lane (its own 64-byte line: the GPU polls it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyLane {
    /// Credits: tickets below this have left the ring (their slots may be written again).
    pub consumed: u64,
    /// Tickets below this that carried RSHMEM_PROXY_FLAG_WAIT are complete (a quiet's
    /// operations are done, a blocking put's source may be reused).
    pub completed: u64,
    pub reserved: [u64; 6],
}

/// What the issuers own for one lane (GPU memory): the next ticket, and the last `consumed`
/// they read (so a post reads host memory only when the ring looks full).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyIssue {
    pub ticket: u64,
    pub consumed_seen: u64,
    pub reserved: [u64; 6],
}

/// The channel of one PE, in pinned host memory; device code gets its address.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyChannel {
    /// RSHMEM_PROXY_MAGIC.
    pub magic: u32,
    /// RSHMEM_PROXY_VERSION.
    pub version: u32,
    /// RSHMEM_PROXY_RUNNING or RSHMEM_PROXY_DEAD (0: not started).
    pub status: u32,
    /// Number of rings; a thread posts to ring `CTA index % lanes`.
    pub lanes: u32,
    /// Slots per ring, a power of two.
    pub slots: u32,
    /// The PE this channel belongs to.
    pub mype: i32,
    /// `RshmemProxyCmd[lanes][slots]` (host memory).
    pub cmds: u64,
    /// `RshmemProxyResult[lanes][slots]` (host memory).
    pub results: u64,
    /// `RshmemProxyLane[lanes]` (host memory, written by the proxy).
    pub lane_state: u64,
    /// `RshmemProxyIssue[lanes]` (GPU memory; host memory on the host build).
    pub issue: u64,
    /// How long an issuer waits for credits or a completion before it reports the stall.
    pub stall_ns: u64,
    /// Where the proxy stopped, when `status` is RSHMEM_PROXY_DEAD.
    pub failed_lane: u32,
    pub failed_pe: i32,
    pub failed_ticket: u64,
    /// A remote PE's atomic on this PE's GPU memory, waiting for a device thread to run it.
    pub amo: RshmemProxyAmo,
    /// The last long wait a device thread reported, for the proxy thread to log.
    pub stall: RshmemProxyStall,
}

/// `RshmemProxyStall::what`: a point-to-point wait (wait_until, signal_wait_until).
pub const RSHMEM_PROXY_STALL_WAIT: u32 = 1;
/// `RshmemProxyStall::what`: a device barrier's wait for one PE's arrival.
pub const RSHMEM_PROXY_STALL_BARRIER: u32 = 2;
/// `RshmemProxyStall::what`: a wait of the proxy channel itself (device/rshmem_proxy.cuh
/// `wait_for`): `word` is the ring, `cmp_or_pe` the target PE, `in_heap` the command's op,
/// `seen` what it waits for (RSHMEM_PROXY_WAIT_*), `want` the milliseconds waited.
pub const RSHMEM_PROXY_STALL_CHANNEL: u32 = 3;
/// What a proxy channel wait waits for (`RshmemProxyStall::seen` of RSHMEM_PROXY_STALL_CHANNEL).
pub const RSHMEM_PROXY_WAIT_SLOT: u64 = 0;
pub const RSHMEM_PROXY_WAIT_COMPLETION: u64 = 1;
pub const RSHMEM_PROXY_WAIT_RESULT: u64 = 2;
pub const RSHMEM_PROXY_WAIT_EARLIER: u64 = 3;

/// A device thread that has waited RSHMEMI_WAIT_WARN_NS (device/rshmem_p2p.cuh) says so here too:
/// its printf reaches stdout only when the kernel ends, which a hung kernel never does, so the
/// proxy thread logs each new report on the host at once (device/rshmem_proxy.cuh `note_stall`,
/// `Channel::stall_report`). The reporter that moves `busy` from 0 to 1 writes the fields, then
/// `seq` + 1 (release), then `busy` = 0; one arriving while another writes stays silent.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyStall {
    pub seq: u64,
    pub busy: u32,
    /// RSHMEM_PROXY_STALL_*.
    pub what: u32,
    /// The word waited on: its symmetric heap offset, or its address when `in_heap` is 0.
    pub word: u64,
    /// The value it holds and the one awaited (a barrier: the arrivals seen and awaited).
    pub seen: u64,
    pub want: u64,
    /// NVSHMEM_CMP_* of a wait; the PE a barrier waits for.
    pub cmp_or_pe: i32,
    pub in_heap: u32,
    /// The waiting thread's block and thread index (x).
    pub block: u32,
    pub thread: u32,
}

/// A remote PE's atomic on this PE's GPU memory (src/proxy/gpu.rs, "AMOs without a free SM"):
/// the target's proxy writes the fields, then `seq` (release); the first device thread to move
/// the claim word (GPU memory, at `claim`) from `seq - 1` to `seq` runs it with system-scope
/// atomics, writes `result`, then `done` = `seq` (release). Device threads that wait in device
/// code look here now and then, and the proxy launches a one-thread kernel that does the same,
/// so the atomic runs whether the target's SMs are free or held by a kernel that waits for it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RshmemProxyAmo {
    pub seq: u64,
    /// GPU address of the word (4 or 8 bytes, aligned).
    pub addr: u64,
    /// The operand (compare-swap: the condition).
    pub a: u64,
    /// Compare-swap's new value.
    pub b: u64,
    /// The library's atomic-kernel codes (`cuda::kernels::AmoOp`): 0 add, 1 and, 2 or, 3 xor,
    /// 4 swap, 5 compare-swap, 6 fetch, 7 set.
    pub op: u32,
    /// 4 or 8.
    pub size: u32,
    /// The old value.
    pub result: u64,
    pub done: u64,
    /// GPU address of the claim word (written once, at creation).
    pub claim: u64,
}

// ---------------------------------------------------------------------------------------------
// NVSHMEM init attributes (include/nvshmem.h gives them NVSHMEM's names: nvshmemx_uniqueid_t,
// nvshmemx_uniqueid_args_t, nvshmemx_init_args_t, nvshmemx_init_attr_t). Sizes are NVSHMEM's.

/// nvshmemx_init_attr flags (NVSHMEMX_INIT_*).
pub const RSHMEM_INIT_THREAD_PES: u32 = 1;
pub const RSHMEM_INIT_WITH_MPI_COMM: u32 = 1 << 1;
pub const RSHMEM_INIT_WITH_SHMEM: u32 = 1 << 2;
pub const RSHMEM_INIT_WITH_UNIQUEID: u32 = 1 << 3;

/// Bytes of the opaque part of a unique id.
pub const RSHMEM_UNIQUEID_BYTES: usize = 124;

/// A unique id: made by rank 0 (nvshmemx_get_uniqueid), passed to every rank by the program.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RshmemUniqueId {
    /// (1 << 16) + sizeof(struct).
    pub version: i32,
    pub internal: [u8; RSHMEM_UNIQUEID_BYTES],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RshmemUniqueIdArgs {
    pub version: i32,
    pub id: *mut RshmemUniqueId,
    pub myrank: i32,
    pub nranks: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RshmemInitArgs {
    pub version: i32,
    pub uid_args: RshmemUniqueIdArgs,
    pub content: [u8; 96],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RshmemInitAttr {
    pub version: i32,
    pub mpi_comm: *mut core::ffi::c_void,
    pub args: RshmemInitArgs,
}
