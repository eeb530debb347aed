/* Block put (and get) through Hopper's bulk-copy engine (cp.async.bulk, sm_90+).
 *
 * There is no global-to-global bulk copy: the data goes global -> shared (completing on an
 * mbarrier with a byte count) and shared -> global (completing as a bulk async-group), through
 * a small staging buffer, RSHMEM_BULK_STAGES (2) stages per warp so that loads and stores
 * overlap. A block's transfer is split over its warps; lane 0 of each issues the copies of the
 * warp's share, and the copy engine, not the threads, moves the bytes.
 *
 * Where: 16-byte aligned addresses and sizes in global memory, at least RSHMEM_BULK_MIN_WARP
 * bytes (64 KiB) per warp of the block, and a grid of at most RSHMEM_BULK_MAX_CTAS (8) blocks;
 * else the SM copy of rshmem_p2p.cuh. Measured on 4 x H100 over NVLink, blocks of 1024 threads
 * (results/gpu-tma-2026-11-27e-h100x4): with 8 CTAs and 64-256 KiB per warp the bulk copy
 * moved 301-310 GB/s where the SM copy moved 280-304, and less below (0.86-0.93x at 16 KiB);
 * with 132 CTAs it reached only ~285 GB/s in all (the SM copy 343): the bulk stores of many SMs
 * together fill NVLink less than their plain stores, so a few CTAs gain and a full grid loses.
 * Gets stay on the
 * SM copy unless RSHMEM_BULK_GET=1 (not measured). Warp-scope RMA stays on the SM copy (see
 * rshmemi_bulk_warp in rshmem_rma.cuh).
 *
 * Opt-in: compile with -DRSHMEM_BULK=1. It is off by default because its static shared buffer
 * would be added to every kernel that calls a block put: a drop-in NVSHMEM kernel already
 * holding more than ~15 KiB of static shared memory would stop compiling, and small blocks
 * would lose occupancy; the gain (8 CTAs, >= 64 KiB per warp) is a few percent.
 *
 * Header-only, no -rdc: the staging buffer is a __shared__ array of this header, allocated in
 * every kernel that calls a block put (RSHMEM_BULK_BYTES, 32 KiB by default, plus 512
 * bytes of mbarriers; a kernel's static shared memory may be 48 KiB in all). Warp w uses only
 * its own 1/32 of it.
 *
 * Completion: each issuing lane waits for its bulk stores to complete before it returns
 * (cp.async.bulk.wait_group 0, then a proxy fence), because a later quiet may be called by any
 * thread and a bulk async-group can only be waited for by the thread that issued it. So an
 * _nbi put is complete when its lanes return (the contract allows it; quiet and barriers then
 * order it like ordinary stores), and a blocking put returns with the source reusable. */
#ifndef RSHMEM_BULK_CUH
#define RSHMEM_BULK_CUH

#ifndef RSHMEM_BULK
#define RSHMEM_BULK 0
#endif
#ifndef RSHMEM_BULK_BYTES
#define RSHMEM_BULK_BYTES 32768
#endif
#ifndef RSHMEM_BULK_MIN_WARP
#define RSHMEM_BULK_MIN_WARP 65536
#endif
#ifndef RSHMEM_BULK_MAX_CTAS
#define RSHMEM_BULK_MAX_CTAS 8
#endif
#ifndef RSHMEM_BULK_GET
#define RSHMEM_BULK_GET 0
#endif

#if RSHMEM_BULK && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RSHMEMI_BULK_ON 1

#ifndef RSHMEM_BULK_STAGES
#define RSHMEM_BULK_STAGES 2
#endif
enum { RSHMEMI_BULK_WARP_STAGES = RSHMEM_BULK_STAGES, RSHMEMI_BULK_SLOTS = 32 };
static_assert(RSHMEM_BULK_BYTES % (RSHMEMI_BULK_SLOTS * RSHMEMI_BULK_WARP_STAGES * 16) == 0,
              "RSHMEM_BULK_BYTES must be a multiple of 32 warps x RSHMEM_BULK_STAGES x 16 bytes");

/* Shared memory of the bulk path: the staging bytes and an mbarrier per stage (warp w's are
 * RSHMEM_BULK_STAGES * w and on). */
struct rshmemi_bulk_smem {
    alignas(128) unsigned char buf[RSHMEM_BULK_BYTES];
    unsigned long long bar[RSHMEMI_BULK_SLOTS * RSHMEMI_BULK_WARP_STAGES];
};

/* ---- the instructions (PTX ISA 8.0, sm_90) ---------------------------------------------------- */
RSHMEMI_DEV unsigned rshmemi_smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
RSHMEMI_DEV void rshmemi_mbar_init(unsigned bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
RSHMEMI_DEV void rshmemi_mbar_inval(unsigned bar) { asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bar) : "memory"); }
/* The copy engine sees the barrier's initialization, and global data the generic proxy wrote
 * before (by this thread, or by others before a barrier this thread passed). */
RSHMEMI_DEV void rshmemi_bulk_fence_in() {
    asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async;" ::: "memory");
}
/* Arrive on the barrier expecting `bytes`, then start the global -> shared copy that brings them. */
RSHMEMI_DEV void rshmemi_bulk_load(unsigned dst, const void *src, unsigned bytes, unsigned bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
RSHMEMI_DEV void rshmemi_mbar_wait(unsigned bar, unsigned parity) {
    asm volatile(
        "{\n\t.reg .pred p;\n"
        "rshmemi_wait_%=:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
        "@!p bra rshmemi_wait_%=;\n}" ::"r"(bar),
        "r"(parity)
        : "memory");
}
/* shared -> global as one bulk async-group. */
RSHMEMI_DEV void rshmemi_bulk_store(void *dst, unsigned src, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\tcp.async.bulk.commit_group;" ::"l"(dst),
                 "r"(src), "r"(bytes)
                 : "memory");
}
/* At most N of this thread's bulk groups still reading their shared source. */
template <int N>
RSHMEMI_DEV void rshmemi_bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
/* Every bulk store of this thread complete, and visible to the generic proxy (the fences of
 * quiet, barrier and signal that follow order them like ordinary stores). */
RSHMEMI_DEV void rshmemi_bulk_drain() {
    asm volatile("cp.async.bulk.wait_group 0;\n\tfence.proxy.async;" ::: "memory");
}

RSHMEMI_DEV rshmemi_bulk_smem &rshmemi_bulk_shared() {
    __shared__ rshmemi_bulk_smem sm;
    return sm;
}

/* Lane 0 of warp w moves n bytes (16-byte aligned ends, n a multiple of 16) from s to d
 * through the warp's 1/32 of the buffer, STAGES stages of SLOT / STAGES bytes. Chunk c lives in
 * stage c % STAGES; the STAGES chunks after the one being stored are loaded or on their way.
 * Before a stage is loaded again, the store just issued from it must have read it
 * (wait_group.read 0). Lean on registers (the state is d, s, n and c): a kernel that calls it
 * pays for them across the call (ctest/budget/registers.cu). */
static __device__ __noinline__ void rshmemi_bulk_pipe(char *d, const char *s, size_t n, unsigned w) {
    enum { STAGES = RSHMEMI_BULK_WARP_STAGES, SLOT = RSHMEM_BULK_BYTES / RSHMEMI_BULK_SLOTS, STAGE = SLOT / STAGES };
    rshmemi_bulk_smem &sm = rshmemi_bulk_shared();
    const unsigned buf = rshmemi_smem_addr(sm.buf) + w * SLOT, bars = rshmemi_smem_addr(sm.bar) + 8 * STAGES * w;
#pragma unroll
    for (int k = 0; k < STAGES; k++) rshmemi_mbar_init(bars + 8 * k);
    rshmemi_bulk_fence_in();
#pragma unroll
    for (int k = 0; k < STAGES; k++)
        if (n > (size_t)k * STAGE) {
            const size_t left = n - (size_t)k * STAGE;
            rshmemi_bulk_load(buf + k * STAGE, s + (size_t)k * STAGE, left < STAGE ? (unsigned)left : STAGE, bars + 8 * k);
        }
    for (unsigned c = 0; n != 0; c++) {
        const unsigned k = c % STAGES, len = n < STAGE ? (unsigned)n : STAGE;
        rshmemi_mbar_wait(bars + 8 * k, (c / STAGES) & 1);
        rshmemi_bulk_store(d, buf + k * STAGE, len);
        if (n > (size_t)STAGES * STAGE) { /* chunk c + STAGES exists: into this stage */
            const size_t left = n - (size_t)STAGES * STAGE;
            rshmemi_bulk_wait_read<0>();
            rshmemi_bulk_load(buf + k * STAGE, s + (size_t)STAGES * STAGE, left < STAGE ? (unsigned)left : STAGE, bars + 8 * k);
        }
        d += len;
        s += len;
        n -= len;
    }
    rshmemi_bulk_drain();
#pragma unroll
    for (int k = 0; k < STAGES; k++) rshmemi_mbar_inval(bars + 8 * k);
}
RSHMEMI_DEV unsigned rshmemi_block_warps() { return (blockDim.x * blockDim.y * blockDim.z + 31) / 32; }

/* Whether the bulk path takes this transfer: both ends 16-byte aligned global memory, the size
 * a multiple of 16, each of the `warps` warps moving at least RSHMEM_BULK_MIN_WARP bytes, and a
 * grid of at most RSHMEM_BULK_MAX_CTAS blocks. The same answer in every thread of the block
 * (it depends on the arguments and the launch only). */
RSHMEMI_DEV bool rshmemi_bulk_fits(const void *d, const void *s, size_t n, unsigned warps) {
    return n / warps >= (size_t)RSHMEM_BULK_MIN_WARP && gridDim.x * gridDim.y * gridDim.z <= RSHMEM_BULK_MAX_CTAS &&
           (((uintptr_t)d | (uintptr_t)s | (uintptr_t)n) & 15) == 0 && __isGlobal(d) && __isGlobal(s);
}

/* A block's copy: each warp's lane 0 moves the warp's share (16-byte multiples) through the
 * warp's part of the buffer, so no warp waits for another. (One thread issuing a block's copies
 * through the whole buffer measured 0.60-0.87x of the SM copy, 8 CTAs, 1-64 MiB, H100: one
 * thread's bulk stores moved ~31 GB/s; many warps' concurrent ones do better.) */
static __device__ __noinline__ void rshmemi_bulk_copy_block(void *d, const void *s, size_t n, int tid) {
    if ((tid & 31) != 0) return;
    const unsigned w = (unsigned)tid / 32, nw = rshmemi_block_warps();
    const size_t per = ((n + nw - 1) / nw + 15) & ~(size_t)15, off = (size_t)w * per;
    if (off < n) rshmemi_bulk_pipe((char *)d + off, (const char *)s + off, n - off < per ? n - off : per, w);
}
#else
#define RSHMEMI_BULK_ON 0
#endif

#endif /* RSHMEM_BULK_CUH */
