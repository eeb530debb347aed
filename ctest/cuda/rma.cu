/* rshmem-cuda-test: pes=2
 * Device RMA: putmem/getmem at thread, warp and block scope (blocking and _nbi), across
 * alignments and sizes that exercise the byte, word and 16-byte vector paths; typed p/g by
 * many threads; typed and sized put/get. Every check reads the bytes that arrived. */
#include <string.h>
#include "cuda_test.h"

enum { PUT, PUT_NBI, GET, GET_NBI };
enum { THREAD, WARP, BLOCK };
#define BUF 65536

__global__ void mem_kernel(char *dst, const char *src, size_t bytes, int pe, int op, int scope) {
    /* THREAD: one thread of the block acts; WARP: warp 0; BLOCK: every thread. */
    int tid = threadIdx.x;
    if (scope == THREAD && tid != 0) return;
    if (scope == WARP && tid >= 32) return;
    switch (op * 3 + scope) {
        case PUT * 3 + THREAD: nvshmem_putmem(dst, src, bytes, pe); break;
        case PUT * 3 + WARP: nvshmemx_putmem_warp(dst, src, bytes, pe); break;
        case PUT * 3 + BLOCK: nvshmemx_putmem_block(dst, src, bytes, pe); break;
        case PUT_NBI * 3 + THREAD: nvshmem_putmem_nbi(dst, src, bytes, pe); nvshmem_quiet(); break;
        case PUT_NBI * 3 + WARP: nvshmemx_putmem_nbi_warp(dst, src, bytes, pe); nvshmem_quiet(); break;
        case PUT_NBI * 3 + BLOCK: nvshmemx_putmem_nbi_block(dst, src, bytes, pe); nvshmem_quiet(); break;
        case GET * 3 + THREAD: nvshmem_getmem(dst, src, bytes, pe); break;
        case GET * 3 + WARP: nvshmemx_getmem_warp(dst, src, bytes, pe); break;
        case GET * 3 + BLOCK: nvshmemx_getmem_block(dst, src, bytes, pe); break;
        case GET_NBI * 3 + THREAD: nvshmem_getmem_nbi(dst, src, bytes, pe); nvshmem_quiet(); break;
        case GET_NBI * 3 + WARP: nvshmemx_getmem_nbi_warp(dst, src, bytes, pe); nvshmem_quiet(); break;
        case GET_NBI * 3 + BLOCK: nvshmemx_getmem_nbi_block(dst, src, bytes, pe); nvshmem_quiet(); break;
    }
}

/* Every thread of the grid puts (or gets) its own `chunk`-byte slice at once, as put_bw's
 * thread-scope rows do: small puts from many threads, each slice's bytes checked. */
__global__ void slices_kernel(char *dst, const char *src, size_t chunk, int pe, int get) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (get) nvshmem_getmem(dst + t * chunk, src + t * chunk, chunk, pe);
    else nvshmem_putmem_nbi(dst + t * chunk, src + t * chunk, chunk, pe);
    nvshmem_quiet();
}

/* One CTA of 1024 threads using every scope at once: the block puts [0, 16 KiB), each warp 512
 * bytes of [16, 32 KiB), each thread 8 bytes of [32, 40 KiB). Launching it at all checks that
 * the routines leave a 1024-thread kernel within 64 registers per thread. */
#define WIDE_BYTES 40960
__global__ void wide_kernel(char *dst, const char *src, int pe) {
    size_t w = threadIdx.x / 32, t = threadIdx.x;
    nvshmemx_putmem_nbi_block(dst, src, 16384, pe);
    nvshmemx_putmem_nbi_warp(dst + 16384 + w * 512, src + 16384 + w * 512, 512, pe);
    nvshmem_putmem_nbi(dst + 32768 + t * 8, src + 32768 + t * 8, 8, pe);
    nvshmem_quiet();
}

/* Blocks of 48 threads: warp 1 has 16 lanes, a partial warp (its barrier takes the lanes' mask
 * where a whole warp's takes the constant one). Each warp gets its slice from the left
 * neighbour (blocking), every lane then reads a byte of the slice that another lane fetched (what
 * the blocking form's barrier promises), and the warp puts the slice on to the right. Sizes:
 * 2064 (the out-of-line copy), 256 (a word per lane of the 16-lane warp: the inline get) and 272
 * (one word more than it has lanes: the copy; the 32-lane warp still inline). */
__global__ void partial_warp_kernel(char *dst, char *mid, const char *src, unsigned char *echo, int left, int right,
                                    size_t bytes) {
    size_t w = threadIdx.x / 32, lane = threadIdx.x % 32, off = w * 4096;
    nvshmemx_getmem_warp(mid + off, src + off, bytes, left);
    echo[threadIdx.x] = (unsigned char)mid[off + (lane * 67 + 61) % bytes];
    nvshmemx_putmem_warp(dst + off, mid + off, bytes, right);
    nvshmem_quiet();
}

static unsigned char pattern(int pe, size_t i) { return (unsigned char)(pe * 37 + i * 7 + 1); }

__global__ void typed_p_kernel(int *dst, double *ddst, int pe, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        nvshmem_int_p(dst + i, 1000 * nvshmem_my_pe() + i, pe);
        nvshmem_double_p(ddst + i, 0.5 * i + nvshmem_my_pe(), pe);
    }
}

__global__ void typed_g_kernel(const int *src, int *out, int pe, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = nvshmem_int_g(src + i, pe);
}

__global__ void typed_block_kernel(long long *dst, const long long *src, size_t n, int pe, float *fdst, const float *fsrc,
                                   uint32_t *s32dst, const uint32_t *s32src) {
    nvshmemx_longlong_put_block(dst, src, n, pe);
    if (threadIdx.x < 32) nvshmemx_float_put_nbi_warp(fdst, fsrc, n, pe);
    if (threadIdx.x == 0) nvshmem_put32(s32dst, s32src, n, pe);
    nvshmem_quiet();
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    char *src = (char *)nvshmem_malloc(BUF);
    char *dst = (char *)nvshmem_malloc(BUF);
    CHECK(src && dst, "nvshmem_malloc returned NULL");
    CHECK(((uintptr_t)src & 15) == 0, "allocations are 16-byte aligned");
    unsigned char *host = (unsigned char *)malloc(BUF), *seen = (unsigned char *)malloc(BUF);
    for (size_t i = 0; i < BUF; i++) host[i] = pattern(me, i);
    CUDA_CHECK(cudaMemcpy(src, host, BUF, cudaMemcpyHostToDevice));

    /* Sizes and offsets reach every copy path: 16- and 8-byte words inline (ends and length
     * aligned), and the general one (heads and tails in 1/2/4/8-byte pieces around 16-, 8-, 4-,
     * 2- or 1-byte words). 2048 and 2064: a word per thread of the 128-thread block exactly
     * (the block put's inline path) and one word more (the out-of-line copy); 512 and 528 the
     * same for a warp's get (inline up to a word per lane). */
    const size_t sizes[] = {1, 8, 15, 16, 24, 33, 64, 512, 528, 2048, 2064, 4096 + 5, 40000};
    const size_t offs[][2] = {{0, 0}, {1, 1}, {1, 3}, {8, 0}, {4, 12}, {8, 8}, {2, 2}, {6, 14}};
    int cases = 0;
    for (int op = PUT; op <= GET_NBI; op++)
        for (int scope = THREAD; scope <= BLOCK; scope++)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (size_t oi = 0; oi < sizeof offs / sizeof *offs; oi++) {
                    size_t bytes = sizes[si], doff = offs[oi][0], soff = offs[oi][1];
                    CUDA_CHECK(cudaMemset(dst, 0, BUF));
                    nvshmem_barrier_all();
                    int put = op == PUT || op == PUT_NBI;
                    /* put: I write my src into right's dst. get: I read left's src into my dst. */
                    mem_kernel<<<1, 128>>>(dst + doff, src + soff, bytes, put ? right : left, op, scope);
                    step_done();
                    CUDA_CHECK(cudaMemcpy(seen, dst, BUF, cudaMemcpyDeviceToHost));
                    for (size_t i = 0; i < BUF; i++) {
                        unsigned char want = (i >= doff && i < doff + bytes) ? pattern(left, soff + i - doff) : 0;
                        if (seen[i] != want)
                            FAIL("op %d scope %d bytes %zu doff %zu soff %zu: byte %zu is %d, want %d", op, scope, bytes, doff,
                                 soff, i, seen[i], want);
                    }
                    cases++;
                }

    /* Slices of 8, 16, 24 and 40 bytes from up to 64 CTAs x 32 threads, put and get. */
    const size_t chunks[] = {8, 16, 24, 40};
    for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++)
        for (int get = 0; get < 2; get++) {
            size_t chunk = chunks[ci];
            int blocks = (int)(BUF / (chunk * 32));
            if (blocks > 64) blocks = 64;
            size_t total = (size_t)blocks * 32 * chunk;
            CUDA_CHECK(cudaMemset(dst, 0, BUF));
            ready();
            slices_kernel<<<blocks, 32>>>(dst, src, chunk, get ? left : right, get);
            step_done();
            CUDA_CHECK(cudaMemcpy(seen, dst, BUF, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < BUF; i++) {
                unsigned char want = i < total ? pattern(left, i) : 0;
                if (seen[i] != want) FAIL("slices of %zu bytes (get %d): byte %zu is %d, want %d", chunk, get, i, seen[i], want);
            }
            cases++;
        }

    /* Built with the IBGDA device route (-DRSHMEM_IBGDA_ROUTE), the routines need more than 64
     * registers: a 1024-thread CTA does not launch, as ibgda_device.cuh says. P2P builds must. */
    cudaFuncAttributes wide;
    CUDA_CHECK(cudaFuncGetAttributes(&wide, (const void *)wide_kernel));
#if defined(RSHMEM_IBGDA_ROUTE)
    const bool run_wide = wide.numRegs <= 64;
    if (!run_wide) printf("rma: 1024-thread CTA skipped: with the IBGDA route the kernel needs %d registers per thread\n", wide.numRegs);
#else
    CHECK(wide.numRegs <= 64, "a P2P kernel calling every scope's put needs %d registers per thread (at most 64 for 1024 threads)", wide.numRegs);
    const bool run_wide = true;
#endif
    if (run_wide) {
        CUDA_CHECK(cudaMemset(dst, 0, BUF));
        ready();
        wide_kernel<<<1, 1024>>>(dst, src, right);
        step_done();
        CUDA_CHECK(cudaMemcpy(seen, dst, BUF, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < BUF; i++) {
            unsigned char want = i < WIDE_BYTES ? pattern(left, i) : 0;
            if (seen[i] != want) FAIL("1024-thread CTA, every scope: byte %zu is %d, want %d", i, seen[i], want);
        }
    }

    /* Whole and partial warps: blocking get, reads across lanes, blocking put. */
    const size_t pw_sizes[] = {2064, 256, 272};
    for (size_t pi = 0; pi < sizeof pw_sizes / sizeof *pw_sizes; pi++) {
        const size_t pw = pw_sizes[pi];
        char *mid = (char *)nvshmem_calloc(BUF, 1);
        unsigned char *echo;
        CUDA_CHECK(cudaMalloc(&echo, 48));
        CUDA_CHECK(cudaMemset(dst, 0, BUF));
        ready();
        partial_warp_kernel<<<1, 48>>>(dst, mid, src, echo, left, right, pw);
        step_done();
        unsigned char he[48];
        CUDA_CHECK(cudaMemcpy(he, echo, 48, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(seen, dst, BUF, cudaMemcpyDeviceToHost));
        int left2 = (left + n - 1) % n; /* my dst holds what left fetched from its left */
        for (size_t i = 0; i < BUF; i++) {
            size_t w = i / 4096, k = i % 4096;
            unsigned char want = w < 2 && k < pw ? pattern(left2, i) : 0;
            if (seen[i] != want) FAIL("warps of 32 and 16 lanes, %zu bytes: byte %zu is %d, want %d", pw, i, seen[i], want);
        }
        for (int t = 0; t < 48; t++) {
            size_t at = (size_t)(t / 32) * 4096 + (size_t)(t % 32 * 67 + 61) % pw;
            CHECK(he[t] == pattern(left, at), "warps of 32 and 16 lanes, %zu bytes: lane %d read %d after the get, want %d", pw, t,
                  he[t], pattern(left, at));
        }
        CUDA_CHECK(cudaFree(echo));
        nvshmem_free(mid);
    }

    /* Typed p by 1000 threads, then g by 1000 threads. */
    const int N = 1000;
    int *ibuf = (int *)nvshmem_calloc(N, sizeof(int));
    double *dbuf = (double *)nvshmem_calloc(N, sizeof(double));
    int *out;
    CUDA_CHECK(cudaMalloc(&out, N * sizeof(int)));
    typed_p_kernel<<<(N + 255) / 256, 256>>>(ibuf, dbuf, right, N);
    step_done();
    int *hi = (int *)malloc(N * sizeof(int));
    double *hd = (double *)malloc(N * sizeof(double));
    CUDA_CHECK(cudaMemcpy(hi, ibuf, N * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hd, dbuf, N * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        CHECK_EQ(hi[i], 1000 * left + i);
        CHECK(hd[i] == 0.5 * i + left, "double p %d: %f", i, hd[i]);
    }
    typed_g_kernel<<<(N + 255) / 256, 256>>>(ibuf, out, right, N);
    step_done();
    CUDA_CHECK(cudaMemcpy(hi, out, N * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) CHECK_EQ(hi[i], 1000 * me + i); /* right's ibuf holds what I put there */

    /* Typed block/warp puts and a sized put. */
    const size_t M = 777;
    long long *ls = (long long *)nvshmem_malloc(M * 8), *ld = (long long *)nvshmem_calloc(M, 8);
    float *fs = (float *)nvshmem_malloc(M * 4), *fd = (float *)nvshmem_calloc(M, 4);
    uint32_t *us = (uint32_t *)nvshmem_malloc(M * 4), *ud = (uint32_t *)nvshmem_calloc(M, 4);
    long long *hl = (long long *)malloc(M * 8);
    float *hf = (float *)malloc(M * 4);
    uint32_t *hu = (uint32_t *)malloc(M * 4);
    for (size_t i = 0; i < M; i++) {
        hl[i] = (long long)me << 40 | i;
        hf[i] = me + i * 0.25f;
        hu[i] = 0xabc00000u + me * 4096 + i;
    }
    CUDA_CHECK(cudaMemcpy(ls, hl, M * 8, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(fs, hf, M * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(us, hu, M * 4, cudaMemcpyHostToDevice));
    nvshmem_barrier_all();
    typed_block_kernel<<<1, 256>>>(ld, ls, M, right, fd, fs, ud, us);
    step_done();
    CUDA_CHECK(cudaMemcpy(hl, ld, M * 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hf, fd, M * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hu, ud, M * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < M; i++) {
        CHECK_EQ(hl[i], (long long)left << 40 | i);
        CHECK(hf[i] == left + i * 0.25f, "float %zu: %f", i, hf[i]);
        CHECK_EQ(hu[i], 0xabc00000u + left * 4096 + i);
    }
    if (me == 0) printf("rma: %d putmem/getmem cases checked\n", cases);
    return test_pass("rma");
}
