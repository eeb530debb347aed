/* rshmem's own on-stream collective kernels: shared definitions.
 *
 * Compiled to PTX by scripts/gen_ptx.sh (nvcc 13.0, -arch=compute_75) and committed next to
 * this file; the library embeds the PTX and the driver compiles it for the GPU at hand, so
 * building rshmem needs no CUDA compiler. The argument structs are mirrored in
 * src/cuda/coll.rs (#[repr(C)]); a unit test there checks their sizes against the PTX.
 *
 * Synchronisation. Every PE's runtime area holds one 32-bit flag word per world PE
 * (`flags`); PE j writes into word [j] of PE i. Next to them, one 32-bit count per world PE
 * (`steps`, only this PE's kernels touch it) of the synchronisation steps this PE has taken
 * with that PE (both sides count the same steps, because both run the same collectives in the
 * same order). A kernel reads the counts when it starts (base[k] for member k); its step s
 * with member k stores base[k] + s into k's word for this PE and waits until this PE's word
 * for k reaches base[k] + s; its last block adds the kernel's steps to the counts when it
 * ends. Counts only grow (compared modulo 2^32), so nothing is ever reset, and one pair of
 * words serves every team the pair shares. The counts live on the device, not in the launch
 * arguments, so a kernel captured in a CUDA graph takes new steps at every replay; hence
 * collectives that share a pair of PEs must run in one order on every PE (one stream, or
 * streams ordered with each other), as NVSHMEM requires.
 *
 * Every kernel: block 0 announces "my inputs are ready" (step 1) and every block waits for the
 * members' announcements; then the blocks move data, reading the members' buffers directly
 * through the mapped heap window (pull: each PE writes only its own memory); the last block
 * to finish (a ticket counter) announces "done reading you" and waits for the others', so
 * when the kernel ends no member still reads this PE's buffers. Large reductions and broadcasts
 * on more than two PEs push instead (each PE stores its slice into every member's dest; the
 * entry step tells it their dests are free) and announce "done" with a release store, so a
 * member that has taken every announcement sees every slice.
 *
 * Why pushing and not two phases with flagged data. Two phases meeting through a flag per chunk
 * (rk_two_phase, still used by large in-place reductions) cost ~8 µs over a direct kernel at 4
 * PEs (4×H100); replacing the flag's system-scope release by a GPU-scope fence (a measurement
 * only: by the PTX memory model a GPU-scope release does not synchronise with a thread of
 * another GPU) saved just 1.2-1.9 µs of it: the rest is the chain flag -> poll -> second read
 * round trip. NCCL's LL protocol carries the flag inside the data word so the reader needs no
 * release/acquire pair; by the PTX memory model only a scalar access of at most 64 bits is
 * single-copy atomic (a vector access is a set of scalar accesses performed in no set order), so
 * an 8-byte store of 4 bytes of data and a 4-byte flag, read by one 8-byte load, is sound, while
 * 16-byte v4.u32 LL and LL128 (a 128-byte line written by a warp) rest on hardware behaviour the
 * model does not promise. LL halves the payload of every store and still pays one trip per
 * chunk; pushing the results with plain stores and releasing once at the exit step, which
 * every kernel takes anyway, pays neither. */
#ifndef RSHMEM_KERNELS_COMMON_CUH
#define RSHMEM_KERNELS_COMMON_CUH

#include <stdint.h>

/* Largest team an on-stream collective supports (one flag count per member in the args). */
#define RK_MAX_TEAM 128
/* Threads per block of the data kernels. */
#define RK_THREADS 512
/* Chunk flag words per world PE (two-phase kernels: rk_two_phase). */
#define RK_CHUNKS 128

struct rk_sync {
    unsigned long long flags;    /* this PE's flag words (u32 per world PE) */
    unsigned long long steps;    /* this PE's step counts (u32 per world PE) */
    long long heap_stride;       /* distance between consecutive PEs' heaps in the window */
    unsigned long long tickets;  /* two u32 ticket counters of this launch (zero between uses) */
    unsigned long long chunks;   /* this PE's chunk flags: RK_CHUNKS u32 per world PE, [pe][c] written by pe */
    int mype;                    /* world PE number of this PE */
    int start, stride, size, my; /* the team: members start + i * stride, this PE is i = my */
    int total;                   /* steps this launch takes with every member */
};

/* Data movement of broadcast, fcollect and alltoall: for every member k (or only member
 * `only` when it is >= 0), `nbytes` from k's src + src_off to dest + k * dest_step. push != 0 (a
 * broadcast, `only` its root): pushed by the non-roots, see rk_broadcast_push. */
struct rk_gather_args {
    rk_sync s;
    unsigned long long dest, src, nbytes, dest_step, src_off;
    int only, push;
};

/* Reductions: dest[i] = OP over the members of src_k[src_off + i], i < n, the same bits on
 * every PE. mode 0: every PE reduces all n elements itself, in member order. mode 3 (push, not
 * in place): PE k reduces slice k in member order from member k + 1 on (wrapping around) and
 * stores each result into every member's dest. mode 1 (two
 * phases of `chunks` chunks per slice, any overlap of dest with src allowed only when they are
 * the same array): PE k reduces slice k into its own dest (in member order from member k + 1
 * on, wrapping around), flagging each chunk as it is done, and copies the other slices' chunks
 * from the members' dests as their flags arrive (rk_two_phase). mode 2 (in place and small, one
 * block): every PE first copies its source to `stage` (its own staging area, the same offset on
 * every PE), then reduces the members' staged copies into dest like mode 0. */
struct rk_reduce_args {
    rk_sync s;
    unsigned long long dest, src, n, src_off, stage;
    int mode, chunks;
};

/* Address of symmetric `p` (this PE's heap) on world PE `pe`. */
template <typename T>
__device__ __forceinline__ T *rk_peer(T *p, const rk_sync &s, int pe) {
    return (T *)((char *)p + (long long)(pe - s.mype) * s.heap_stride);
}

__device__ __forceinline__ void rk_store_release(unsigned int *p, unsigned int v) {
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned int rk_load_acquire(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void rk_store_relaxed(unsigned int *p, unsigned int v) {
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Steps this PE took with world PE `pe` before this launch (its last block advances the count
 * only after every block is past its last use: rk_finish). */
__device__ __forceinline__ unsigned int rk_base(const rk_sync &s, int pe) { return __ldcg((const unsigned int *)s.steps + pe); }

/* Step `step` with every other member: thread t < size speaks for member t. Released: what
 * the block read and wrote before is performed first (a system fence, about a NVLink round
 * trip); relaxed: an announcement that needs no ordering of this kernel's own accesses. */
__device__ __noinline__ void rk_signal(const rk_sync &s, unsigned int step, bool release = true) {
    int t = threadIdx.x;
    if (t < s.size && t != s.my) {
        int pe = s.start + t * s.stride;
        unsigned int *word = rk_peer((unsigned int *)s.flags, s, pe) + s.mype;
        unsigned int v = rk_base(s, pe) + step;
        if (release) rk_store_release(word, v);
        else rk_store_relaxed(word, v);
    }
}
__device__ __noinline__ void rk_wait(const rk_sync &s, unsigned int step) {
    int t = threadIdx.x;
    if (t < s.size && t != s.my) {
        int pe = s.start + t * s.stride;
        const unsigned int *word = (const unsigned int *)s.flags + pe;
        unsigned int want = rk_base(s, pe) + step;
        while ((int)(rk_load_acquire(word) - want) < 0) {
        }
    }
    __syncthreads();
}

/* The launch's last step is taken (by the last block, every other block done): the counts
 * advance by the launch's steps for the next kernel on the stream. */
__device__ __forceinline__ void rk_finish(const rk_sync &s) {
    int t = threadIdx.x;
    if (t < s.size && t != s.my) {
        unsigned int *count = (unsigned int *)s.steps + s.start + t * s.stride;
        *count = rk_base(s, s.start + t * s.stride) + (unsigned int)s.total;
    }
}

/* Entry: block 0 announces, every block waits (step 1). The inputs were written by earlier
 * work on the stream (complete, and performed at its end) or, for staged reductions, before a
 * system fence: the announcement itself needs no release. */
__device__ __forceinline__ void rk_enter(const rk_sync &s) {
    if (blockIdx.x == 0) rk_signal(s, 1, false);
    rk_wait(s, 1);
}

/* Adds 1 to a block ticket, acquire and release at GPU scope; returns the old value. */
__device__ __forceinline__ unsigned int rk_ticket_add(unsigned int *p) {
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
    return old;
}

/* True in the last block of the grid to get here (ticket `which`); that block resets it. Every
 * block's accesses (its threads', through the CTA barrier) happen before the last block learns
 * it is last: the ticket is a release by each block and an acquire by the last one, at GPU
 * scope, which holds every block. The release store the last block then signals with (system
 * scope) is cumulative, so a member that acquires the signal sees them too; a system fence in
 * every block and another in the last one added nothing to that but about 3 µs per launch
 * (4×H100, 2 PEs: broadcast 64 KiB, two blocks, 12.6 -> 9.8 µs; reduce 64 KiB 14.5 -> 11.5).
 * The next launch that takes this ticket runs after this one ends. */
__device__ __noinline__ bool rk_last_block(const rk_sync &s, int which) {
    __shared__ bool last;
    __syncthreads();
    if (gridDim.x == 1) return true; /* the block's accesses precede its release through the barrier */
    if (threadIdx.x == 0) {
        unsigned int *ticket = (unsigned int *)s.tickets + which;
        last = rk_ticket_add(ticket) == gridDim.x - 1;
        if (last) atomicExch(ticket, 0u);
    }
    __syncthreads();
    return last;
}

/* Whether the exit announcement is a release store (see rk_exit). */
#ifndef RK_EXIT_RELEASE
#define RK_EXIT_RELEASE 0
#endif

/* Exit (step `step`, the launch's last): the last block announces "done", waits for every
 * member's and advances the counts. The announcement only says "I am done reading your
 * buffers" (what a member must know before it overwrites them): every load of the launch has
 * returned its value before it (each block's loads feed its stores, which precede its ticket,
 * which the last block acquires), and a load that has returned cannot take a value stored
 * later, so it needs no release; what this PE wrote is for its own stream, which sees it when
 * the kernel ends. A release store fenced the block's stores to its own memory at system scope
 * first, for nobody. Kernels that push (store into the members' dests: rk_fan_part) exit with a
 * release (`release`): the members' stores into this PE's dest are then visible to it once it
 * has acquired their announcements, and every block's stores precede the last block's release
 * (the ticket chain above), so one system fence per launch covers the whole grid's pushes. */
__device__ __forceinline__ void rk_exit(const rk_sync &s, unsigned int step, int ticket, bool release = RK_EXIT_RELEASE) {
    if (rk_last_block(s, ticket)) {
        rk_signal(s, step, release);
        rk_wait(s, step);
        rk_finish(s);
    }
}

/* Global thread index and count of the grid. */
__device__ __forceinline__ size_t rk_tid() { return (size_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t rk_nthreads() { return (size_t)gridDim.x * blockDim.x; }

/* n words from s to d by threads tid of nth (the grid's, or a part's: rk_parts), U loads in
 * flight per thread; loads bypass L1 (.cg: the members' buffers change between launches). */
template <typename W>
__device__ __forceinline__ void rk_copy_words(W *d, const W *s, size_t n, size_t i, size_t nth) {
    const int U = 4;
    for (; i + (U - 1) * nth < n; i += U * nth) {
        W v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldcg(s + i + u * nth);
#pragma unroll
        for (int u = 0; u < U; u++) d[i + u * nth] = v[u];
    }
    for (; i < n; i += nth) d[i] = __ldcg(s + i);
}

/* nbytes from s to d by threads tid of nth, in the widest words both addresses allow. */
__device__ __noinline__ void rk_copy_part(void *d, const void *s, size_t nbytes, size_t tid, size_t nth) {
    uintptr_t x = (uintptr_t)d | (uintptr_t)s;
    size_t done = 0;
    if ((x & 15) == 0) {
        rk_copy_words((int4 *)d, (const int4 *)s, nbytes / 16, tid, nth);
        done = nbytes / 16 * 16;
    } else if ((x & 7) == 0) {
        rk_copy_words((unsigned long long *)d, (const unsigned long long *)s, nbytes / 8, tid, nth);
        done = nbytes / 8 * 8;
    } else if ((x & 3) == 0) {
        rk_copy_words((unsigned int *)d, (const unsigned int *)s, nbytes / 4, tid, nth);
        done = nbytes / 4 * 4;
    }
    rk_copy_words((unsigned char *)d + done, (const unsigned char *)s + done, nbytes - done, tid, nth);
}

/* Push: n words from s to d on every member of the team but member `skip` (d is this PE's address
 * of a symmetric array; each member's copy through the window), by threads tid of nth, U loads
 * in flight per thread, each loaded word stored to every member before the next loads. Members
 * in turn from this PE's successor on, so that the PEs do not all store to one member at once. */
template <typename W>
__device__ __forceinline__ void rk_fan_words(W *d, const W *src, size_t n, size_t i, size_t nth, const rk_sync &s, int skip) {
    const int U = 4;
    for (; i < n; i += U * nth) {
        W v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i + u * nth < n) v[u] = __ldcg(src + i + u * nth);
        for (int x = 1; x <= s.size; x++) {
            int k = (s.my + x) % s.size;
            if (k == skip) continue;
            W *dk = rk_peer(d, s, s.start + k * s.stride);
#pragma unroll
            for (int u = 0; u < U; u++)
                if (i + u * nth < n) dk[i + u * nth] = v[u];
        }
    }
}

/* rk_fan_words in the widest words both addresses allow. */
__device__ __noinline__ void rk_fan_part(void *d, const void *src, size_t nbytes, size_t tid, size_t nth, const rk_sync &s, int skip) {
    uintptr_t x = (uintptr_t)d | (uintptr_t)src;
    size_t done = 0;
    if ((x & 15) == 0) {
        rk_fan_words((int4 *)d, (const int4 *)src, nbytes / 16, tid, nth, s, skip);
        done = nbytes / 16 * 16;
    } else if ((x & 7) == 0) {
        rk_fan_words((unsigned long long *)d, (const unsigned long long *)src, nbytes / 8, tid, nth, s, skip);
        done = nbytes / 8 * 8;
    } else if ((x & 3) == 0) {
        rk_fan_words((unsigned int *)d, (const unsigned int *)src, nbytes / 4, tid, nth, s, skip);
        done = nbytes / 4 * 4;
    }
    rk_fan_words((unsigned char *)d + done, (const unsigned char *)src + done, nbytes - done, tid, nth, s, skip);
}

/* nbytes from s to d by the whole grid. */
__device__ __forceinline__ void rk_copy(void *d, const void *s, size_t nbytes) { rk_copy_part(d, s, nbytes, rk_tid(), rk_nthreads()); }

/* The grid as `count` parts that run at once (one per member a kernel reads from, so that the
 * loads from every member are in flight together instead of one member after the other): with
 * at least `count` blocks, blocks b, b + count, ... form part b % count; with fewer, block b
 * takes parts b, b + gridDim.x, ... in turn. Loop: for (c = p.first; c < count; c += p.step). */
struct rk_part {
    int first, step;
    size_t tid, nth;
};
__device__ __forceinline__ rk_part rk_parts(int count) {
    rk_part p;
    if ((int)gridDim.x >= count) {
        p.first = blockIdx.x % count;
        p.step = count;
        p.tid = (size_t)(blockIdx.x / count) * blockDim.x + threadIdx.x;
        p.nth = (size_t)((gridDim.x - p.first + count - 1) / count) * blockDim.x;
    } else {
        p.first = blockIdx.x;
        p.step = gridDim.x;
        p.tid = threadIdx.x;
        p.nth = blockDim.x;
    }
    return p;
}

/* Slice k of n elements in two-phase mode (reductions, large broadcasts): whole 16-byte
 * vectors, the last slices may be empty. */
__device__ __forceinline__ void rk_slice(size_t n, int size, int k, int lanes, size_t *lo, size_t *hi) {
    size_t chunk = (n + size - 1) / size;
    chunk = (chunk + lanes - 1) / lanes * lanes;
    size_t a = (size_t)k * chunk;
    *lo = a < n ? a : n;
    *hi = a + chunk < n ? a + chunk : n;
}

/* The block as `count` parts of whole warps that run at once (rk_parts within one block). */
__device__ __forceinline__ rk_part rk_block_parts(int count) {
    int w = threadIdx.x / 32, nw = blockDim.x / 32, lane = threadIdx.x % 32;
    rk_part p;
    if (nw >= count) {
        p.first = w % count;
        p.step = count;
        p.tid = (size_t)(w / count) * 32 + lane;
        p.nth = (size_t)((nw - p.first + count - 1) / count) * 32;
    } else {
        p.first = w;
        p.step = nw;
        p.tid = lane;
        p.nth = 32;
    }
    return p;
}

/* Two phases with a flag per chunk instead of a step between them. n elements of `elem` bytes
 * in `count` slices; slice j belongs to member (first + j) % size and is cut into `chunks`
 * chunks. Phase 1 (`produce(lo, hi)`, by one block: my slice's elements lo..hi into my dest):
 * the block that made chunk c of my slice flags it to every other owner (a release store into
 * their chunk word [me][c]: the chunk's stores are performed first) with the value of step 2 of
 * this launch. Phase 2 (owners only): the same block, for each of its chunks c, waits for chunk
 * c's flag from every other owner and copies their chunk c from their dests, the owners read at
 * once (warps split among them). Chunk c is made and fetched by block c % grid on every PE, so
 * the second phase of one chunk overlaps the first of the next ones and no block waits for the
 * whole grid; blocks do all their phase 1 chunks before their phase 2 ones, and phase 1 waits
 * for nothing, so no wait is part of a cycle. Flags are never reset: step values only grow, and
 * a member writes this launch's chunk flags only after this PE has entered it (step 1), that is
 * after this PE's previous launch ended. Exit: step 3. */
template <typename F>
__device__ __noinline__ void rk_two_phase(const rk_sync &s, char *dest, size_t n, int elem, int count, int first, int chunks,
                                             bool fetch, F produce) {
    const int lanes = 16 / elem;
    const int mine = (s.my - first + s.size) % s.size; /* my slice, if < count */
    size_t lo, hi, a, b;
    for (int c = blockIdx.x; c < chunks; c += gridDim.x) {
        if (mine < count) {
            rk_slice(n, count, mine, lanes, &lo, &hi);
            rk_slice(hi - lo, chunks, c, lanes, &a, &b);
            if (b > a) produce(lo + a, lo + b);
        }
        __syncthreads();
        int t = threadIdx.x;
        if (mine < count && t < s.size && t != s.my && (t - first + s.size) % s.size < count) {
            int pe = s.start + t * s.stride;
            unsigned int *word = rk_peer((unsigned int *)s.chunks, s, pe) + (size_t)s.mype * RK_CHUNKS + c;
            rk_store_release(word, rk_base(s, pe) + 2);
        }
    }
    for (int c = blockIdx.x; fetch && c < chunks; c += gridDim.x) {
        int t = threadIdx.x;
        if (t < s.size && t != s.my && (t - first + s.size) % s.size < count) {
            int pe = s.start + t * s.stride;
            const unsigned int *word = (const unsigned int *)s.chunks + (size_t)pe * RK_CHUNKS + c;
            unsigned int want = rk_base(s, pe) + 2;
            while ((int)(rk_load_acquire(word) - want) < 0) {
            }
        }
        __syncthreads();
        /* The other owners' chunks c, one part of the block each. */
        int others = mine < count ? count - 1 : count;
        if (others == 0) break;
        rk_part p = rk_block_parts(others);
        for (int o = p.first; o < others; o += p.step) {
            int j = mine < count ? (mine + 1 + o) % count : o;
            int k = (first + j) % s.size;
            rk_slice(n, count, j, lanes, &lo, &hi);
            rk_slice(hi - lo, chunks, c, lanes, &a, &b);
            if (b > a) {
                char *d = dest + (lo + a) * elem;
                rk_copy_part(d, rk_peer(d, s, s.start + k * s.stride), (b - a) * elem, p.tid, p.nth);
            }
        }
    }
    rk_exit(s, 3, 0);
}

#endif /* RSHMEM_KERNELS_COMMON_CUH */
