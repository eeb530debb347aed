/* rshmem-cuda-test: pes=2
 * Block and warp put/get, blocking and _nbi (+ quiet), at sizes and offsets that take the
 * bulk-copy path of sm_90 (block scope; 16-byte aligned, large) and the SM copy (unaligned
 * ends, sizes not a multiple of 16, mismatched alignment, small, warp scope): every byte of the
 * destination is checked, and the 64 bytes on either side of it must be untouched. Also: warps
 * putting their slices around a block put of another region, and a source written by the
 * kernel's own threads just before the block put that sends it (the copy engine reads it). */
/* Bulk path from 4 KiB per warp of a block, gets included (the defaults: 256 KiB per warp,
 * puts only), so that the block rows below take both paths. Warp scope is always the SM copy. */
#define RSHMEM_BULK 1 /* the bulk path is opt-in */
#define RSHMEM_BULK_MIN_WARP 4096
#define RSHMEM_BULK_GET 1
#include <vector>
#include "cuda_test.h"

#define PAD 64
__host__ __device__ static inline unsigned char pat(int pe, int seed, size_t i) {
    return (unsigned char)(i * 7 + (size_t)pe * 13 + (size_t)seed * 29 + (i >> 12));
}

__global__ void fill(unsigned char *p, size_t n, int pe, int seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = pat(pe, seed, i);
}

enum { OP_PUT, OP_PUT_NBI, OP_GET, OP_GET_NBI };
static const char *op_name[] = {"put", "put_nbi", "get", "get_nbi"};

/* Unit u (a block, or a warp) moves its slice [u*slice, min((u+1)*slice, n)). */
__device__ static inline bool slice_of(long u, long units, size_t n, size_t slice, size_t *off, size_t *len) {
    *off = (size_t)u * slice;
    if (u >= units || *off >= n) return false;
    *len = n - *off < slice ? n - *off : slice;
    return true;
}

__global__ void by_block(unsigned char *d, const unsigned char *s, size_t n, size_t slice, int pe, int op) {
    size_t off, len;
    if (!slice_of(blockIdx.x, gridDim.x, n, slice, &off, &len)) return;
    switch (op) {
        case OP_PUT: nvshmemx_putmem_block(d + off, s + off, len, pe); break;
        case OP_PUT_NBI: nvshmemx_putmem_nbi_block(d + off, s + off, len, pe); break;
        case OP_GET: nvshmemx_getmem_block(d + off, s + off, len, pe); break;
        default: nvshmemx_getmem_nbi_block(d + off, s + off, len, pe); break;
    }
    __syncthreads();
    if (threadIdx.x == 0 && (op == OP_PUT_NBI || op == OP_GET_NBI)) nvshmem_quiet();
}

__global__ void by_warp(unsigned char *d, const unsigned char *s, size_t n, size_t slice, int pe, int op) {
    long w = ((long)blockIdx.x * blockDim.x + threadIdx.x) / 32, nw = (long)gridDim.x * blockDim.x / 32;
    size_t off, len;
    if (!slice_of(w, nw, n, slice, &off, &len)) return;
    switch (op) {
        case OP_PUT: nvshmemx_putmem_warp(d + off, s + off, len, pe); break;
        case OP_PUT_NBI: nvshmemx_putmem_nbi_warp(d + off, s + off, len, pe); break;
        case OP_GET: nvshmemx_getmem_warp(d + off, s + off, len, pe); break;
        default: nvshmemx_getmem_nbi_warp(d + off, s + off, len, pe); break;
    }
    __syncwarp();
    if ((threadIdx.x & 31) == 0 && (op == OP_PUT_NBI || op == OP_GET_NBI)) nvshmem_quiet();
}

/* Each warp puts its `wslice` of region a, then the whole block puts region b (one block). */
__global__ void warps_then_block(unsigned char *da, const unsigned char *sa, size_t wslice, unsigned char *db,
                                 const unsigned char *sb, size_t nb, int pe) {
    int w = threadIdx.x / 32;
    nvshmemx_putmem_nbi_warp(da + (size_t)w * wslice, sa + (size_t)w * wslice, wslice, pe);
    nvshmemx_putmem_nbi_block(db, sb, nb, pe);
    nvshmemx_putmem_nbi_warp(da + (size_t)w * wslice, sa + (size_t)w * wslice, wslice, pe);
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}

/* The block writes its source, then puts it at once. */
__global__ void write_then_put(unsigned char *d, unsigned char *s, size_t n, int me, int seed, int pe) {
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) s[i] = pat(me, seed, i);
    __syncthreads();
    nvshmemx_putmem_block(d, s, n, pe);
}

static unsigned char *src, *dst;
static std::vector<unsigned char> host;
static int me, npes, right, left;

/* dst of this PE: bytes [doff, doff+n) hold pat(from, seed, soff + i), PAD bytes either side 0. */
static void expect(const char *what, size_t doff, size_t soff, size_t n, int from, int seed) {
    CUDA_CHECK(cudaMemcpy(host.data(), dst + doff - PAD, n + 2 * PAD, cudaMemcpyDeviceToHost));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n + 2 * PAD; i++) {
        unsigned char want = (i < PAD || i >= n + PAD) ? 0 : pat(from, seed, soff + i - PAD);
        if (host[i] != want && bad++ == 0) first = i;
    }
    CHECK(bad == 0, "%s: %zu wrong bytes, first at dst offset %lld (got %u, want %u)", what, bad, (long long)first - PAD,
          host[first], (first < PAD || first >= n + PAD) ? 0u : (unsigned)pat(from, seed, soff + first - PAD));
}

int main(void) {
    test_init();
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    const size_t CAP = (4u << 20) + 4096;
    src = (unsigned char *)nvshmem_malloc(CAP);
    dst = (unsigned char *)nvshmem_malloc(CAP);
    CHECK(src && dst, "nvshmem_malloc of %zu bytes failed", CAP);
    host.resize(CAP);

    struct Case { size_t n, soff, doff; };
    /* Blocks: 3 of 16 warps, bulk where a warp's share is >= 4 KiB and aligned; warps: 12. */
    const Case cases[] = {
        {1u << 20, PAD, PAD},                      /* aligned: bulk */
        {(1u << 20) + 16 * 7, PAD + 16, PAD + 48}, /* aligned, not a whole number of stages */
        {(3u << 20) + 32, PAD + 32, PAD},          /* large */
        {98320, PAD, PAD},                         /* 96 KiB + 16: a warp's share of a block below 4 KiB */
        {(1u << 20) + 5, PAD, PAD},                /* size not a multiple of 16: SM copy */
        {1u << 20, PAD + 4, PAD + 4},              /* 4-byte aligned alike: SM copy with ends */
        {1u << 20, PAD, PAD + 8},                  /* alignments differ: narrow SM copy */
        {16368, PAD, PAD},                         /* below the threshold */
        {65536, PAD, PAD},                         /* the same */
        {16, PAD, PAD},
        {3, PAD + 1, PAD + 2},
    };
    int seed = 1;
    for (const Case &c : cases) {
        for (int scope = 0; scope < 2; scope++) {
            for (int op = 0; op < 4; op++, seed++) {
                const bool get = op >= OP_GET;
                /* units: 3 blocks of 512 threads, or 12 warps (4 blocks of 96 threads); slices
                 * rounded up to 16 bytes, so every slice keeps its start's alignment */
                const long units = scope == 0 ? 3 : 12;
                size_t slice = (c.n + units - 1) / units;
                slice = (slice + 15) & ~(size_t)15;
                fill<<<64, 256>>>(src, CAP, me, seed);
                CUDA_CHECK(cudaMemset(dst, 0, CAP));
                ready();
                /* a put writes the right neighbour's dst; a get reads its src into this PE's dst */
                if (scope == 0) by_block<<<3, 512>>>(dst + c.doff, src + c.soff, c.n, slice, right, op);
                else by_warp<<<4, 96>>>(dst + c.doff, src + c.soff, c.n, slice, right, op);
                step_done();
                char what[128];
                snprintf(what, sizeof what, "%s_%s %zu B (src +%zu, dst +%zu)", op_name[op], scope == 0 ? "block" : "warp", c.n,
                         c.soff, c.doff);
                expect(what, c.doff, c.soff, c.n, get ? right : left, seed);
            }
        }
    }

    /* Warp-scope bulk copies next to a block-scope one in the same block. */
    {
        const size_t wslice = 32768, na = 32 * wslice, nb = (1u << 20) + 4096;
        fill<<<64, 256>>>(src, CAP, me, ++seed);
        CUDA_CHECK(cudaMemset(dst, 0, CAP));
        ready();
        warps_then_block<<<1, 1024>>>(dst + PAD, src + PAD, wslice, dst + PAD + na + 2 * PAD, src + PAD + na + 2 * PAD, nb, right);
        step_done();
        expect("warps_then_block: the warps' region", PAD, PAD, na, left, seed);
        expect("warps_then_block: the block's region", PAD + na + 2 * PAD, PAD + na + 2 * PAD, nb, left, seed);
    }
    /* The source written by the same block just before the put. */
    {
        const size_t n = 1u << 20;
        CUDA_CHECK(cudaMemset(dst, 0, CAP));
        ready();
        write_then_put<<<1, 1024>>>(dst + PAD, src, n, me, ++seed, right);
        step_done();
        expect("write_then_put", PAD, 0, n, left, seed);
    }
    nvshmem_free(dst);
    nvshmem_free(src);
    return test_pass("tma_put");
}
