/* rshmem-cuda-test: pes=2
 * Typed host RMA of NVSHMEM's host API on symmetric GPU memory, called from the host:
 *   1. blocking nvshmem_<T>_iput / _iget and sized iput / iget, the local side in device memory
 *      or in plain host memory;
 *   2. on a user stream: typed and sized put / put_nbi / get / get_nbi / iput / iget;
 *   3. p_on_stream (1, 2, 4, 8 bytes), g_on_stream (returns the value);
 *   4. put_signal_on_stream (SET) and put_signal_nbi_on_stream (ADD);
 *   5. wait_until / wait_until_all (status mask) / wait_until_all_vector on a stream, satisfied
 *      by the peer's host stores after a delay;
 *   6. nvshmemx_mc_ptr, buffer_register / unregister, set_attr_mpi_comm_args.
 * Each PE writes to its right-hand neighbour and reads from it. Transfers land one element into
 * a zeroed destination: every byte is checked, those that must have moved and those that must
 * not (before the first element, the gaps of strided forms, after the last). */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vector>
#include "cuda_test.h"

#define NEL 37                            /* elements per transfer */
#define DST 3                             /* destination stride of strided forms */
#define SST 2                             /* source stride */
#define MAXE 16                           /* largest element (iput128) */
#define BUF_BYTES ((1 + NEL * DST) * MAXE) /* the widest destination, one element in */

static int me, npes, right, left;
static unsigned char *sym_src, *sym_dst; /* symmetric, BUF_BYTES each */
static unsigned char *dev_buf;           /* cudaMalloc: local device memory */
static unsigned char *host_buf;          /* malloc: plain (pageable) host memory */
static unsigned char *pinned;            /* cudaMallocHost: what a stream copies back */
static cudaStream_t stream;              /* the user stream of every *_on_stream call */
static int salt;                         /* a new data pattern for each step */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- data patterns and checks ------------------------------------------------------------ */

/* Byte i of PE pe's data in step s: never 0, which is the background of every destination. */
__host__ __device__ static inline unsigned char pattern(int pe, int s, size_t i) {
    return (unsigned char)(1 + ((size_t)pe * 131 + (size_t)s * 29 + i * 7) % 251);
}

__global__ void fill_kernel(unsigned char *p, size_t bytes, int pe, int s) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < bytes; i += (size_t)gridDim.x * blockDim.x)
        p[i] = pattern(pe, s, i);
}

static void fill_host(unsigned char *p, size_t bytes, int pe, int s) {
    for (size_t i = 0; i < bytes; i++) p[i] = pattern(pe, s, i);
}

/* Through the legacy stream: in place at the next ready(). */
static void fill_device(void *d, size_t bytes, int pe, int s) {
    std::vector<unsigned char> h(bytes);
    fill_host(h.data(), bytes, pe, s);
    CUDA_CHECK(cudaMemcpy(d, h.data(), bytes, cudaMemcpyHostToDevice));
}

/* `got` holds `total` elements of `esize` bytes. Elements first, first + dst, ... (nelems of
 * them) must hold source elements 0, sst, 2 sst, ... of PE from's pattern; all other bytes 0. */
static void check_elements(const char *what, const unsigned char *got, size_t total, int esize, size_t first,
                           size_t dst, size_t sst, size_t nelems, int from) {
    int bad = 0;
    for (size_t k = 0; k < total; k++) {
        bool moved = k >= first && (k - first) % dst == 0 && (k - first) / dst < nelems;
        size_t j = moved ? (k - first) / dst * sst : 0;
        for (int b = 0; b < esize; b++) {
            unsigned char want = moved ? pattern(from, salt, j * esize + b) : 0;
            if (got[k * esize + b] != want && bad++ < 4)
                fprintf(stderr, "PE %d %s: element %zu byte %d is %d, want %d (%s)\n", me, what, k, b,
                        got[k * esize + b], want, moved ? "transferred" : "must be untouched");
        }
    }
    CHECK(bad == 0, "%s: %d wrong bytes", what, bad);
}

/* The stream reaches its end within `seconds` (else the test fails instead of hanging). */
static void stream_finish(const char *what, double seconds) {
    double t0 = now_ms();
    cudaError_t q;
    while ((q = cudaStreamQuery(stream)) == cudaErrorNotReady) {
        if (now_ms() - t0 > seconds * 1e3) FAIL("%s: the stream is still waiting after %.0f s", what, seconds);
        usleep(1000);
    }
    CUDA_CHECK(q);
}

/* ---- 1 and 2: transfers, blocking and on the stream ------------------------------------- */

typedef void (*strided_fn)(void *, const void *, ptrdiff_t, ptrdiff_t, size_t, int);
typedef void (*strided_stream_fn)(void *, const void *, ptrdiff_t, ptrdiff_t, size_t, int, cudaStream_t);
typedef void (*contig_stream_fn)(void *, const void *, size_t, int, cudaStream_t);

/* The typed routines behind one untyped pointer type, so that one table drives them all. */
#define W_STRIDED(NAME, T, OP)                                                           \
    static void w_##NAME##_##OP(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
        nvshmem_##NAME##_##OP((T *)d, (const T *)s, dst, sst, n, pe);                   \
    }
#define W_STRIDED_ON_STREAM(NAME, T, OP)                                                                   \
    static void w_##NAME##_##OP##_on_stream(void *d, const void *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, \
                                            int pe, cudaStream_t st) {                                     \
        nvshmemx_##NAME##_##OP##_on_stream((T *)d, (const T *)s, dst, sst, n, pe, st);                    \
    }
#define W_CONTIG_ON_STREAM(NAME, T, OP)                                                                      \
    static void w_##NAME##_##OP##_on_stream(void *d, const void *s, size_t n, int pe, cudaStream_t st) {     \
        nvshmemx_##NAME##_##OP##_on_stream((T *)d, (const T *)s, n, pe, st);                                \
    }
W_STRIDED(int, int, iput)
W_STRIDED(int, int, iget)
W_STRIDED(double, double, iput)
W_STRIDED(double, double, iget)
W_STRIDED(char, char, iput)
W_STRIDED(char, char, iget)
W_STRIDED(short, short, iput)
W_STRIDED(short, short, iget)
W_STRIDED_ON_STREAM(int, int, iput)
W_STRIDED_ON_STREAM(short, short, iput)
W_STRIDED_ON_STREAM(double, double, iget)
W_STRIDED_ON_STREAM(char, char, iget)
W_CONTIG_ON_STREAM(int, int, put)
W_CONTIG_ON_STREAM(double, double, put_nbi)
W_CONTIG_ON_STREAM(short, short, put_nbi)
W_CONTIG_ON_STREAM(float, float, get)
W_CONTIG_ON_STREAM(char, char, get_nbi)
W_CONTIG_ON_STREAM(longlong, long long, get)

enum Dir { PUT, GET };
enum Side { DEVICE_MEM, HOST_MEM };

/* One transfer: exactly one of the three routine pointers is set. */
struct Xfer {
    const char *name;
    int esize;
    Dir dir;
    Side local; /* the local side: the put's source, the get's destination */
    bool nbi;   /* completed by quiet_on_stream */
    strided_fn blocking;
    strided_stream_fn strided;
    contig_stream_fn contig;
};
static Xfer blocking(const char *name, int esize, Dir dir, Side local, strided_fn f) {
    return Xfer{name, esize, dir, local, false, f, NULL, NULL};
}
static Xfer strided_on_stream(const char *name, int esize, Dir dir, strided_stream_fn f) {
    return Xfer{name, esize, dir, DEVICE_MEM, false, NULL, f, NULL};
}
static Xfer contig_on_stream(const char *name, int esize, Dir dir, bool nbi, contig_stream_fn f) {
    return Xfer{name, esize, dir, DEVICE_MEM, nbi, NULL, NULL, f};
}

/* A put sends my pattern from the local side into the right PE's zeroed sym_dst; a get brings
 * the right PE's sym_src into my zeroed local side. On the stream, the put's source is written
 * by a kernel queued just before it and the get's destination copied out by a copy queued just
 * after it: the routine takes its place in stream order. */
static void run_xfer(const Xfer &x) {
    salt++;
    bool on_stream = x.blocking == NULL;
    size_t dst = x.contig ? 1 : DST, sst = x.contig ? 1 : SST;
    unsigned char *local = x.local == HOST_MEM ? host_buf : dev_buf;
    if (x.dir == PUT) {
        if (x.local == HOST_MEM) fill_host(local, BUF_BYTES, me, salt);
        else if (!on_stream) fill_device(local, BUF_BYTES, me, salt);
        else CUDA_CHECK(cudaMemset(local, 0, BUF_BYTES));
        CUDA_CHECK(cudaMemset(sym_dst, 0, BUF_BYTES));
    } else {
        fill_device(sym_src, BUF_BYTES, me, salt);
        if (x.local == HOST_MEM) memset(local, 0, BUF_BYTES);
        else CUDA_CHECK(cudaMemset(local, 0, BUF_BYTES));
    }
    ready();

    void *dest = x.dir == PUT ? sym_dst + x.esize : local + x.esize;
    const void *src = x.dir == PUT ? (const void *)local : (const void *)sym_src;
    if (x.dir == PUT && on_stream) fill_kernel<<<4, 256, 0, stream>>>(local, BUF_BYTES, me, salt);
    if (x.blocking) x.blocking(dest, src, (ptrdiff_t)dst, (ptrdiff_t)sst, NEL, right);
    if (x.strided) x.strided(dest, src, (ptrdiff_t)dst, (ptrdiff_t)sst, NEL, right, stream);
    if (x.contig) x.contig(dest, src, NEL, right, stream);
    if (x.nbi) nvshmemx_quiet_on_stream(stream);
    if (x.dir == GET && on_stream) CUDA_CHECK(cudaMemcpyAsync(pinned, local, BUF_BYTES, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all(); /* puts have landed; the peers' gets are done before sources change */

    std::vector<unsigned char> h(BUF_BYTES);
    if (x.dir == PUT) CUDA_CHECK(cudaMemcpy(h.data(), sym_dst, BUF_BYTES, cudaMemcpyDeviceToHost));
    else if (on_stream) memcpy(h.data(), pinned, BUF_BYTES);
    else if (x.local == HOST_MEM) memcpy(h.data(), local, BUF_BYTES);
    else CUDA_CHECK(cudaMemcpy(h.data(), local, BUF_BYTES, cudaMemcpyDeviceToHost));
    check_elements(x.name, h.data(), BUF_BYTES / x.esize, x.esize, 1, dst, sst, NEL, x.dir == PUT ? left : right);
}

static void test_transfers(void) {
    const Xfer xfers[] = {
        /* 1. blocking strided, from / into device and plain host memory */
        blocking("int_iput, device source", 4, PUT, DEVICE_MEM, w_int_iput),
        blocking("int_iput, host source", 4, PUT, HOST_MEM, w_int_iput),
        blocking("double_iput, host source", 8, PUT, HOST_MEM, w_double_iput),
        blocking("char_iput, device source", 1, PUT, DEVICE_MEM, w_char_iput),
        blocking("short_iput, host source", 2, PUT, HOST_MEM, w_short_iput),
        blocking("iput32, host source", 4, PUT, HOST_MEM, nvshmem_iput32),
        blocking("iput128, device source", 16, PUT, DEVICE_MEM, nvshmem_iput128),
        blocking("int_iget, device dest", 4, GET, DEVICE_MEM, w_int_iget),
        blocking("int_iget, host dest", 4, GET, HOST_MEM, w_int_iget),
        blocking("double_iget, device dest", 8, GET, DEVICE_MEM, w_double_iget),
        blocking("char_iget, host dest", 1, GET, HOST_MEM, w_char_iget),
        blocking("short_iget, device dest", 2, GET, DEVICE_MEM, w_short_iget),
        blocking("iget64, host dest", 8, GET, HOST_MEM, nvshmem_iget64),
        blocking("iget64, device dest", 8, GET, DEVICE_MEM, nvshmem_iget64),
        /* 2. on the stream, device memory on both sides */
        strided_on_stream("int_iput_on_stream", 4, PUT, w_int_iput_on_stream),
        strided_on_stream("short_iput_on_stream", 2, PUT, w_short_iput_on_stream),
        strided_on_stream("iput64_on_stream", 8, PUT, nvshmemx_iput64_on_stream),
        strided_on_stream("double_iget_on_stream", 8, GET, w_double_iget_on_stream),
        strided_on_stream("char_iget_on_stream", 1, GET, w_char_iget_on_stream),
        strided_on_stream("iget128_on_stream", 16, GET, nvshmemx_iget128_on_stream),
        contig_on_stream("int_put_on_stream", 4, PUT, false, w_int_put_on_stream),
        contig_on_stream("double_put_nbi_on_stream", 8, PUT, true, w_double_put_nbi_on_stream),
        contig_on_stream("short_put_nbi_on_stream", 2, PUT, true, w_short_put_nbi_on_stream),
        contig_on_stream("put64_on_stream", 8, PUT, false, nvshmemx_put64_on_stream),
        contig_on_stream("float_get_on_stream", 4, GET, false, w_float_get_on_stream),
        contig_on_stream("char_get_nbi_on_stream", 1, GET, true, w_char_get_nbi_on_stream),
        contig_on_stream("longlong_get_on_stream", 8, GET, false, w_longlong_get_on_stream),
        contig_on_stream("get32_nbi_on_stream", 4, GET, true, nvshmemx_get32_nbi_on_stream),
    };
    for (size_t i = 0; i < sizeof xfers / sizeof xfers[0]; i++) run_xfer(xfers[i]);
}

/* ---- 3: single values on the stream ------------------------------------------------------ */

/* p_on_stream of a char (offset 1), short (2), float (4) and long (8) into the right PE's 32-byte
 * cell, background 0xA5: exactly those bytes change.
 * g_on_stream reads them back from the right PE (they are mine) and returns them. Then on one
 * stream a p, quiet_on_stream and g of the same word: the g sees the p. */
static void test_p_g(void) {
    unsigned char *cells = (unsigned char *)nvshmem_malloc(32);
    CUDA_CHECK(cudaMemset(cells, 0xA5, 32));
    ready();
    char c = (char)('a' + me);
    short sh = (short)(0x1234 + me);
    float f = 1.5f + me;
    long l = 0x0102030405060708L + me;
    nvshmemx_char_p_on_stream((char *)(cells + 1), c, right, stream);
    nvshmemx_short_p_on_stream((short *)(cells + 2), sh, right, stream);
    nvshmemx_float_p_on_stream((float *)(cells + 4), f, right, stream);
    nvshmemx_long_p_on_stream((long *)(cells + 8), l, right, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();

    unsigned char got[32], want[32];
    CUDA_CHECK(cudaMemcpy(got, cells, sizeof got, cudaMemcpyDeviceToHost));
    char lc = (char)('a' + left);
    short lsh = (short)(0x1234 + left);
    float lf = 1.5f + left;
    long ll = 0x0102030405060708L + left;
    memset(want, 0xA5, sizeof want);
    memcpy(want + 1, &lc, 1);
    memcpy(want + 2, &lsh, 2);
    memcpy(want + 4, &lf, 4);
    memcpy(want + 8, &ll, 8);
    for (int i = 0; i < 32; i++) CHECK(got[i] == want[i], "p_on_stream: cell byte %d is 0x%02x, want 0x%02x", i, got[i], want[i]);

    CHECK_EQ(nvshmemx_char_g_on_stream((const char *)(cells + 1), right, stream), 'a' + me);
    CHECK_EQ(nvshmemx_short_g_on_stream((const short *)(cells + 2), right, stream), 0x1234 + me);
    float gf = nvshmemx_float_g_on_stream((const float *)(cells + 4), right, stream);
    CHECK(gf == 1.5f + me, "float_g_on_stream: %g, want %g", gf, 1.5f + me);
    CHECK_EQ(nvshmemx_long_g_on_stream((const long *)(cells + 8), right, stream), 0x0102030405060708L + me);
    nvshmem_barrier_all();

    nvshmemx_int_p_on_stream((int *)(cells + 16), 777 + me, right, stream);
    nvshmemx_quiet_on_stream(stream);
    CHECK_EQ(nvshmemx_int_g_on_stream((const int *)(cells + 16), right, stream), 777 + me);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();
    nvshmem_free(cells);
}

/* ---- 4: put with signal on the stream ---------------------------------------------------- */

/* NEL ints with put_signal_on_stream (SET to 1000 + PE) and NEL doubles twice with
 * put_signal_nbi_on_stream (ADD 7, from 5) into the right PE. As the target, the stream waits
 * for both signal values, then copies the data out: it was there before its signal. */
static void test_put_signal(void) {
    salt++;
    const size_t dbl = 512; /* byte offset of the double region in sym_dst */
    uint64_t *sig = (uint64_t *)nvshmem_malloc(2 * sizeof(uint64_t));
    uint64_t five[2] = {5, 5};
    CUDA_CHECK(cudaMemcpy(sig, five, sizeof five, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(sym_dst, 0, BUF_BYTES));
    ready();
    fill_kernel<<<4, 256, 0, stream>>>(dev_buf, BUF_BYTES, me, salt);
    nvshmemx_int_put_signal_on_stream((int *)sym_dst + 1, (const int *)dev_buf, NEL, &sig[0], 1000 + me,
                                      NVSHMEM_SIGNAL_SET, right, stream);
    for (int k = 0; k < 2; k++)
        nvshmemx_double_put_signal_nbi_on_stream((double *)(sym_dst + dbl) + 1, (const double *)dev_buf, NEL, &sig[1], 7,
                                                 NVSHMEM_SIGNAL_ADD, right, stream);
    nvshmemx_signal_wait_until_on_stream(&sig[0], NVSHMEM_CMP_EQ, (uint64_t)(1000 + left), stream);
    nvshmemx_signal_wait_until_on_stream(&sig[1], NVSHMEM_CMP_EQ, 5 + 7 + 7, stream);
    CUDA_CHECK(cudaMemcpyAsync(pinned, sym_dst, BUF_BYTES, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaGetLastError());
    stream_finish("put_signal_on_stream", 10);
    nvshmem_barrier_all();
    check_elements("int_put_signal_on_stream", pinned, dbl / 4, 4, 1, 1, 1, NEL, left);
    check_elements("double_put_signal_nbi_on_stream", pinned + dbl, (BUF_BYTES - dbl) / 8, 8, 1, 1, 1, NEL, left);
    CHECK_EQ(nvshmem_signal_fetch(&sig[0]), 1000 + left);
    CHECK_EQ(nvshmem_signal_fetch(&sig[1]), 5 + 7 + 7);
    nvshmem_barrier_all();
    nvshmem_free(sig);
}

/* ---- 5: waits on the stream -------------------------------------------------------------- */
/* Status masks and compare values come from host arrays and from device arrays. (NVSHMEM hands
 * both pointers to its wait kernel as they are, so there a host array must be one the GPU can
 * read; rshmem copies them in stream order, so any host array will do.) */

#define NV 6         /* variables of the _all forms */
#define PAYLOAD 1024 /* ints written before the variables */
static const int status_host[NV] = {0, 0, 1, 0, 1, 0}; /* nonzero: skipped (entries 2 and 4) */
static int *status_dev;                                 /* a device copy */
static long vec_long[NV];                               /* compare values: a host array */
static unsigned short vec_us[NV];                       /* compare values, copied to vec_us_dev */
static unsigned short *vec_us_dev;
static int *w_int, *w_all_int, *payload, *snap;
static long long *w_ll;
static unsigned short *w_us, *w_vec_us;
static unsigned long long *w_all_ull;
static long *w_vec_long;
static const long long BIG = 1LL << 40; /* its low 32 bits are 0, as the variable's start value */

/* The waiter's side (queued on the stream) and the writer's (host stores into PE pe) of a case.
 * Skipped entries are never written: they stay 0, which does not satisfy their comparison. */
static void wait_int(void) { nvshmemx_int_wait_until_on_stream(w_int, NVSHMEM_CMP_EQ, 42, stream); }
static void set_int(int pe) { nvshmem_int_p(w_int, 42, pe); }
static void wait_ll(void) { nvshmemx_longlong_wait_until_on_stream(w_ll, NVSHMEM_CMP_GE, BIG, stream); }
static void set_ll(int pe) { nvshmem_longlong_p(w_ll, BIG, pe); }
static void wait_us(void) { nvshmemx_ushort_wait_until_on_stream(w_us, NVSHMEM_CMP_GT, (unsigned short)0x7fff, stream); }
static void set_us(int pe) { nvshmem_ushort_p(w_us, (unsigned short)0x8001, pe); }
static void wait_all_int(void) { nvshmemx_int_wait_until_all_on_stream(w_all_int, NV, status_host, NVSHMEM_CMP_EQ, 7, stream); }
static void set_all_int(int pe) {
    for (int i = 0; i < NV; i++)
        if (!status_host[i]) nvshmem_int_p(&w_all_int[i], 7, pe);
}
static void wait_all_ull(void) {
    nvshmemx_ulonglong_wait_until_all_on_stream(w_all_ull, NV, status_dev, NVSHMEM_CMP_NE, 0ULL, stream);
}
static void set_all_ull(int pe) {
    for (int i = 0; i < NV; i++)
        if (!status_host[i]) nvshmem_ulonglong_p(&w_all_ull[i], 1ULL << (33 + i), pe);
}
static void wait_vec_long(void) {
    nvshmemx_long_wait_until_all_vector_on_stream(w_vec_long, NV, status_host, NVSHMEM_CMP_EQ, vec_long, stream);
}
static void set_vec_long(int pe) {
    for (int i = 0; i < NV; i++)
        if (!status_host[i]) nvshmem_long_p(&w_vec_long[i], vec_long[i], pe);
}
static void wait_vec_us(void) {
    nvshmemx_ushort_wait_until_all_vector_on_stream(w_vec_us, NV, status_dev, NVSHMEM_CMP_GE, vec_us_dev, stream);
}
static void set_vec_us(int pe) {
    for (int i = 0; i < NV; i++)
        if (!status_host[i]) nvshmem_ushort_p(&w_vec_us[i], (unsigned short)(vec_us[i] + i % 2), pe);
}

__global__ void copy_kernel(int *dest, const int *src, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dest[i] = src[i];
}

struct WaitCase {
    const char *name;
    void (*wait)(void);
    void (*set)(int pe);
    bool kernel; /* what follows the wait: a kernel, else a cudaMemcpyAsync */
};

/* Every PE queues its wait, then a copy of the payload, on the stream. The stream must not get
 * past the wait yet: nothing has been written (the peers write only after the barrier). Then,
 * after a delay (the wait is really waiting on the GPU), each PE puts the payload into its right
 * neighbour, quiets, and stores the variables. The stream finishes and the copy it made after
 * the wait holds the whole payload. */
static void run_wait(const WaitCase &w, int step) {
    CUDA_CHECK(cudaMemset(w_int, 0, sizeof(int)));
    CUDA_CHECK(cudaMemset(w_ll, 0, sizeof(long long)));
    CUDA_CHECK(cudaMemset(w_us, 0, sizeof(unsigned short)));
    CUDA_CHECK(cudaMemset(w_all_int, 0, NV * sizeof(int)));
    CUDA_CHECK(cudaMemset(w_all_ull, 0, NV * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(w_vec_long, 0, NV * sizeof(long)));
    CUDA_CHECK(cudaMemset(w_vec_us, 0, NV * sizeof(unsigned short)));
    CUDA_CHECK(cudaMemset(payload, 0, PAYLOAD * sizeof(int)));
    CUDA_CHECK(cudaMemset(snap, 0, PAYLOAD * sizeof(int)));
    ready();

    w.wait();
    if (w.kernel) copy_kernel<<<4, 256, 0, stream>>>(snap, payload, PAYLOAD);
    else CUDA_CHECK(cudaMemcpyAsync(snap, payload, PAYLOAD * sizeof(int), cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaGetLastError());
    usleep(20000);
    cudaError_t q = cudaStreamQuery(stream);
    CHECK(q == cudaErrorNotReady, "%s: the stream went past the wait before anything was written (%s)", w.name,
          cudaGetErrorString(q));
    nvshmem_barrier_all();

    usleep(100000);
    std::vector<int> data(PAYLOAD);
    for (int i = 0; i < PAYLOAD; i++) data[i] = me * 1000000 + step * 10000 + i;
    nvshmem_int_put(payload, data.data(), PAYLOAD, right);
    nvshmem_quiet();
    w.set(right);
    stream_finish(w.name, 10);
    nvshmem_barrier_all();

    CUDA_CHECK(cudaMemcpy(data.data(), snap, PAYLOAD * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < PAYLOAD; i++)
        if (data[i] != left * 1000000 + step * 10000 + i && bad++ < 4)
            fprintf(stderr, "PE %d %s: payload[%d] read after the wait is %d\n", me, w.name, i, data[i]);
    CHECK(bad == 0, "%s: %d payload words were not there after the wait", w.name, bad);
}

static void test_waits(void) {
    w_int = (int *)nvshmem_malloc(sizeof(int));
    w_ll = (long long *)nvshmem_malloc(sizeof(long long));
    w_us = (unsigned short *)nvshmem_malloc(sizeof(unsigned short));
    w_all_int = (int *)nvshmem_malloc(NV * sizeof(int));
    w_all_ull = (unsigned long long *)nvshmem_malloc(NV * sizeof(unsigned long long));
    w_vec_long = (long *)nvshmem_malloc(NV * sizeof(long));
    w_vec_us = (unsigned short *)nvshmem_malloc(NV * sizeof(unsigned short));
    payload = (int *)nvshmem_malloc(PAYLOAD * sizeof(int));
    CUDA_CHECK(cudaMalloc(&snap, PAYLOAD * sizeof(int)));
    /* copy_kernel's first launch, before any wait: with lazy loading (CUDA's default) a first
     * launch loads the kernel, which may synchronize the context, i.e. wait for a pending wait
     * kernel, whose peer would then wait in turn. */
    copy_kernel<<<1, 32, 0, stream>>>(snap, snap, 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    /* Status and compare values, in host memory and (copies) in device memory. Distinct,
     * negative compare values: each variable is compared with its own value, signed. */
    for (int i = 0; i < NV; i++) {
        vec_long[i] = -(100L + i);
        vec_us[i] = (unsigned short)(1000 * (i + 1));
    }
    CUDA_CHECK(cudaMalloc(&status_dev, sizeof status_host));
    CUDA_CHECK(cudaMemcpy(status_dev, status_host, sizeof status_host, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&vec_us_dev, sizeof vec_us));
    CUDA_CHECK(cudaMemcpy(vec_us_dev, vec_us, sizeof vec_us, cudaMemcpyHostToDevice));

    const WaitCase cases[] = {
        {"int_wait_until_on_stream EQ", wait_int, set_int, true},
        {"longlong_wait_until_on_stream GE 2^40", wait_ll, set_ll, false},
        {"ushort_wait_until_on_stream GT 0x7fff (unsigned)", wait_us, set_us, true},
        {"int_wait_until_all_on_stream, host status", wait_all_int, set_all_int, false},
        {"ulonglong_wait_until_all_on_stream, device status", wait_all_ull, set_all_ull, true},
        {"long_wait_until_all_vector_on_stream, host status and values", wait_vec_long, set_vec_long, true},
        {"ushort_wait_until_all_vector_on_stream, device status and values", wait_vec_us, set_vec_us, false},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) run_wait(cases[i], i);

    /* After the last case: its skipped entries were never written, the others hold their values. */
    unsigned short last[NV];
    CUDA_CHECK(cudaMemcpy(last, w_vec_us, sizeof last, cudaMemcpyDeviceToHost));
    for (int i = 0; i < NV; i++) CHECK_EQ(last[i], status_host[i] ? 0 : vec_us[i] + i % 2);
    nvshmem_barrier_all();
    CUDA_CHECK(cudaFree(snap));
    CUDA_CHECK(cudaFree(status_dev));
    CUDA_CHECK(cudaFree(vec_us_dev));
    nvshmem_free(payload);
    nvshmem_free(w_vec_us);
    nvshmem_free(w_vec_long);
    nvshmem_free(w_all_ull);
    nvshmem_free(w_all_int);
    nvshmem_free(w_us);
    nvshmem_free(w_ll);
    nvshmem_free(w_int);
}

/* ---- 6: multicast pointer, buffer registration, MPI communicator attribute --------------- */

/* mc_ptr from the host: NULL (no multicast; rshmem always) or a device address. */
static void test_mc_ptr(void) {
    void *mc = nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, sym_dst);
    if (mc == NULL) {
        if (me == 0) printf("host_typed: nvshmemx_mc_ptr: NULL (no multicast)\n");
        return;
    }
    cudaPointerAttributes a;
    CUDA_CHECK(cudaPointerGetAttributes(&a, mc));
    CHECK(a.type == cudaMemoryTypeDevice, "nvshmemx_mc_ptr gave %p, of memory type %d", mc, (int)a.type);
}

/* A registered host buffer as a blocking put's source, a registered device buffer as a get's
 * destination; unregistering them returns 0, unregistering what was never registered (or what
 * unregister_all dropped) does not. */
static void test_buffer_register(void) {
    salt++;
    const size_t len = 64 << 10;
    unsigned char *sym = (unsigned char *)nvshmem_malloc(len);
    unsigned char *hreg = (unsigned char *)malloc(len), *dreg, *never = (unsigned char *)malloc(64);
    CUDA_CHECK(cudaMalloc(&dreg, len));
    CHECK_EQ(nvshmemx_buffer_register(hreg, len), 0);
    CHECK_EQ(nvshmemx_buffer_register(dreg, len), 0);
    fill_host(hreg, len, me, salt);
    nvshmem_putmem(sym, hreg, len, right);
    nvshmem_barrier_all();
    nvshmem_getmem(dreg, sym, len, right); /* right's copy: mine */
    std::vector<unsigned char> h(len);
    CUDA_CHECK(cudaMemcpy(h.data(), dreg, len, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < len; i++) CHECK(h[i] == pattern(me, salt, i), "registered buffers: byte %zu", i);
    CUDA_CHECK(cudaMemcpy(h.data(), sym, len, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < len; i++) CHECK(h[i] == pattern(left, salt, i), "put from a registered buffer: byte %zu", i);
    CHECK_EQ(nvshmemx_buffer_unregister(hreg), 0);
    CHECK_EQ(nvshmemx_buffer_unregister(dreg), 0);
    CHECK(nvshmemx_buffer_unregister(never) != 0, "unregistering a buffer never registered returned 0");
    CHECK_EQ(nvshmemx_buffer_register(hreg, len), 0);
    nvshmemx_buffer_unregister_all();
    CHECK(nvshmemx_buffer_unregister(hreg) != 0, "unregistering after unregister_all returned 0");
    nvshmem_barrier_all();
    CUDA_CHECK(cudaFree(dreg));
    free(never);
    free(hreg);
    nvshmem_free(sym);
}

/* set_attr_mpi_comm_args records the communicator's address in attr.mpi_comm (the field
 * nvshmemx_init_attr reads with NVSHMEMX_INIT_WITH_MPI_COMM); it needs no MPI to do that. */
static void test_set_attr_mpi_comm(void) {
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    long fake_comm = 0; /* stands for an MPI_Comm */
    void *comm = &fake_comm;
    CHECK_EQ(nvshmemx_set_attr_mpi_comm_args(comm, &attr), 0);
    CHECK(attr.mpi_comm == comm, "attr.mpi_comm is %p, want %p", attr.mpi_comm, comm);
}

int main(void) {
    test_init();
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    sym_src = (unsigned char *)nvshmem_malloc(BUF_BYTES);
    sym_dst = (unsigned char *)nvshmem_malloc(BUF_BYTES);
    CUDA_CHECK(cudaMalloc(&dev_buf, BUF_BYTES));
    host_buf = (unsigned char *)malloc(BUF_BYTES);
    CUDA_CHECK(cudaMallocHost(&pinned, BUF_BYTES));
    /* Non-blocking: the legacy-stream copies and fills of the test run while it waits. */
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    const struct {
        const char *name;
        void (*run)(void);
    } sections[] = {{"iput/iget, put/get on stream", test_transfers},
                    {"p/g on stream", test_p_g},
                    {"put_signal on stream", test_put_signal},
                    {"waits on stream", test_waits},
                    {"mc_ptr", test_mc_ptr},
                    {"buffer_register", test_buffer_register},
                    {"set_attr_mpi_comm_args", test_set_attr_mpi_comm}};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        sections[i].run();
        if (me == 0) printf("host_typed: %s: ok\n", sections[i].name);
        fflush(stdout);
    }

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFreeHost(pinned));
    free(host_buf);
    CUDA_CHECK(cudaFree(dev_buf));
    nvshmem_free(sym_dst);
    nvshmem_free(sym_src);
    return test_pass("host_typed");
}
