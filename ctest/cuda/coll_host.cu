/* rshmem-cuda-test: pes=2
 * Collectives called from the host, on a stream (nvshmemx_*_on_stream) and blocking
 * (nvshmem_*): barriers order earlier stream work before later on every PE; broadcast,
 * fcollect, alltoall (typed and mem forms, aligned and not); reduce for every operator over a
 * spread of NVSHMEM's types, sizes from 1 element to 4 MiB, in place and not; reducescatter;
 * status codes of bad calls; small ones back to back with device-initiated ones on the same
 * teams. Every result is compared element by element with a CPU
 * reference. Then timings (printed, not asserted): barrier, reduce, fcollect, alltoall,
 * broadcast on a stream (COLL_HOST_NO_TIMING=1 skips them). */
#include <math.h>
#include <string.h>
#include <vector>
#include "cuda_test.h"

static int me, npes;
static cudaStream_t stream;

/* ---- host views of the element types ------------------------------------------------------ */
template <typename T> static double as_double(T v) { return (double)v; }
template <> double as_double<half>(half v) { return (double)__half2float(v); }
template <> double as_double<__nv_bfloat16>(__nv_bfloat16 v) { return (double)__bfloat162float(v); }
template <typename T> static bool same(T a, T b) { return memcmp(&a, &b, sizeof(T)) == 0; }

/* Host operators, applied in member order like the kernels (half and bfloat16 in float). */
template <typename T, typename F> static T apply(T a, T b, F f) { return f(a, b); }
template <typename F> static half apply(half a, half b, F f) { return __float2half(f(__half2float(a), __half2float(b))); }
template <typename F> static __nv_bfloat16 apply(__nv_bfloat16 a, __nv_bfloat16 b, F f) {
    return __float2bfloat16(f(__bfloat162float(a), __bfloat162float(b)));
}

template <typename T> static T *sym_alloc(size_t n) {
    T *p = (T *)nvshmem_malloc(n * sizeof(T) + 16);
    CHECK(p != NULL, "nvshmem_malloc(%zu)", n * sizeof(T));
    return p;
}

template <typename T> static void upload(T *dst, const std::vector<T> &v) {
    CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}
template <typename T> static std::vector<T> download(const T *src, size_t n) {
    std::vector<T> v(n);
    CUDA_CHECK(cudaMemcpy(v.data(), src, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}
template <typename T> static void expect(const char *what, const std::vector<T> &got, const std::vector<T> &want) {
    for (size_t i = 0; i < want.size(); i++)
        if (!same(got[i], want[i])) FAIL("%s: element %zu of %zu: got %g, want %g", what, i, want.size(), as_double(got[i]), as_double(want[i]));
}

/* ---- reductions ------------------------------------------------------------------------------ */
template <typename T> using OnStream = int (*)(nvshmem_team_t, T *, const T *, size_t, cudaStream_t);
template <typename T> using Blocking = int (*)(nvshmem_team_t, T *, const T *, size_t);

/* value(pe, i): PE pe's source element i. op: the host operator. */
template <typename T, typename V, typename OP>
static void check_reduce(const char *name, OnStream<T> on_stream, Blocking<T> blocking, V value, OP op, size_t n, bool in_place) {
    T *src = sym_alloc<T>(n), *dest = in_place ? src : sym_alloc<T>(n);
    std::vector<T> want(n), mine(n), junk(n);
    for (size_t i = 0; i < n; i++) {
        T acc = (T)value(0, i);
        for (int pe = 1; pe < npes; pe++) acc = apply(acc, (T)value(pe, i), op);
        want[i] = acc;
        mine[i] = (T)value(me, i);
        memset((void *)&junk[i], 0xA5, sizeof(T));
    }
    char what[160];
    for (int form = 0; form < 2; form++) {
        upload(src, mine);
        if (!in_place) upload(dest, junk);
        ready(); /* every PE's source is in place before anyone reads it */
        int rc = form == 0 ? on_stream(NVSHMEM_TEAM_WORLD, dest, src, n, stream) : blocking(NVSHMEM_TEAM_WORLD, dest, src, n);
        snprintf(what, sizeof what, "%s %s n=%zu%s", name, form == 0 ? "on stream" : "blocking", n, in_place ? " in place" : "");
        CHECK(rc == 0, "%s returned %d", what, rc);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        expect(what, download(dest, n), want);
    }
    nvshmem_barrier_all();
    if (!in_place) nvshmem_free(dest);
    nvshmem_free(src);
}

template <typename T, typename V, typename OP>
static void check_reducescatter(const char *name, OnStream<T> on_stream, Blocking<T> blocking, V value, OP op, size_t n) {
    T *src = sym_alloc<T>(n * npes), *dest = sym_alloc<T>(n);
    std::vector<T> want(n), mine(n * npes), junk(n);
    for (size_t i = 0; i < n; i++) {
        T acc = (T)value(0, me * n + i);
        for (int pe = 1; pe < npes; pe++) acc = apply(acc, (T)value(pe, me * n + i), op);
        want[i] = acc;
        memset((void *)&junk[i], 0x5A, sizeof(T));
    }
    for (size_t j = 0; j < n * npes; j++) mine[j] = (T)value(me, j);
    char what[160];
    for (int form = 0; form < 2; form++) {
        upload(src, mine);
        upload(dest, junk);
        ready();
        int rc = form == 0 ? on_stream(NVSHMEM_TEAM_WORLD, dest, src, n, stream) : blocking(NVSHMEM_TEAM_WORLD, dest, src, n);
        snprintf(what, sizeof what, "%s reducescatter %s n=%zu", name, form == 0 ? "on stream" : "blocking", n);
        CHECK(rc == 0, "%s returned %d", what, rc);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        expect(what, download(dest, n), want);
    }
    nvshmem_barrier_all();
    nvshmem_free(dest);
    nvshmem_free(src);
}

#define SUM [](auto a, auto b) { return a + b; }
#define PROD [](auto a, auto b) { return a * b; }
#define MAX [](auto a, auto b) { return a > b ? a : b; }
#define MIN [](auto a, auto b) { return a < b ? a : b; }
#define AND [](auto a, auto b) { return a & b; }
#define OR [](auto a, auto b) { return a | b; }
#define XOR [](auto a, auto b) { return a ^ b; }
#define R(T, NAME, OP) nvshmemx_##NAME##_##OP##_reduce_on_stream, nvshmem_##NAME##_##OP##_reduce
#define RS(T, NAME, OP) nvshmemx_##NAME##_##OP##_reducescatter_on_stream, nvshmem_##NAME##_##OP##_reducescatter

static void reductions(void) {
    const size_t sizes[] = {1, 7, 1000, 65537, 1 << 20};
    for (size_t n : sizes) {
        auto ival = [](int pe, size_t i) { return (int)(pe * 7 + (int)(i % 13) - 5); };
        check_reduce<int>("int sum", R(int, int, sum), ival, SUM, n, false);
        check_reduce<int>("int sum", R(int, int, sum), ival, SUM, n, true);
        auto fval = [](int pe, size_t i) { return (float)((pe + 1) * (int)(i % 17)); };
        check_reduce<float>("float sum", R(float, float, sum), fval, SUM, n, false);
    }
    for (size_t n : {(size_t)3, (size_t)4099}) {
        check_reduce<double>("double max", R(double, double, max), [](int pe, size_t i) { return (double)((int)(i % 11) - 3 * pe) * 0.5; }, MAX, n, false);
        check_reduce<double>("double min", R(double, double, min), [](int pe, size_t i) { return (double)((int)(i % 11) - 3 * pe) * 0.5; }, MIN, n, true);
        check_reduce<float>("float prod", R(float, float, prod), [](int pe, size_t i) { return (i + pe) % 3 == 0 ? -2.0f : 0.5f; }, PROD, n, false);
        check_reduce<half>("half sum", R(half, half, sum), [](int pe, size_t i) { return __float2half((float)((pe + 1) * (int)(i % 5))); }, SUM, n, false);
        check_reduce<half>("half max", R(half, half, max), [](int pe, size_t i) { return __float2half((float)((int)(i % 9) - 4 * pe)); }, MAX, n, true);
        check_reduce<__nv_bfloat16>("bfloat16 prod", R(__nv_bfloat16, bfloat16, prod),
                                    [](int pe, size_t i) { return __float2bfloat16((i + pe) % 2 ? 2.0f : -0.5f); }, PROD, n, false);
        check_reduce<__nv_bfloat16>("bfloat16 min", R(__nv_bfloat16, bfloat16, min),
                                    [](int pe, size_t i) { return __float2bfloat16((float)((int)(i % 7) - pe)); }, MIN, n, false);
        check_reduce<char>("char max", R(char, char, max), [](int pe, size_t i) { return (char)((int)(i % 200) - 100 + pe); }, MAX, n, false);
        check_reduce<signed char>("schar min", R(signed char, schar, min), [](int pe, size_t i) { return (signed char)((int)(i % 250) - 125 - pe); }, MIN, n, false);
        check_reduce<short>("short min", R(short, short, min), [](int pe, size_t i) { return (short)((int)(i * 37 % 1000) - 500 * pe); }, MIN, n, false);
        check_reduce<unsigned short>("ushort max", R(unsigned short, ushort, max), [](int pe, size_t i) { return (unsigned short)(i * 37 + 40000 * pe); }, MAX, n, false);
        check_reduce<unsigned char>("uchar xor", R(unsigned char, uchar, xor), [](int pe, size_t i) { return (unsigned char)(i * 31 + pe * 77); }, XOR, n, false);
        check_reduce<unsigned char>("uchar and", R(unsigned char, uchar, and), [](int pe, size_t i) { return (unsigned char)(0xF0 | (i + pe)); }, AND, n, true);
        check_reduce<uint8_t>("uint8 or", R(uint8_t, uint8, or), [](int pe, size_t i) { return (uint8_t)(1u << ((i + pe) % 8)); }, OR, n, false);
        check_reduce<int16_t>("int16 sum", R(int16_t, int16, sum), [](int pe, size_t i) { return (int16_t)((int)(i % 300) * (pe + 1) - 100); }, SUM, n, false);
        check_reduce<long long>("longlong prod", R(long long, longlong, prod), [](int pe, size_t i) { return (long long)((i % 5) + 1) * (pe % 2 ? -3 : 1); }, PROD, n, false);
        check_reduce<long>("long max", R(long, long, max), [](int pe, size_t i) { return (long)i * (pe % 2 ? -1 : 1) - pe; }, MAX, n, false);
        check_reduce<uint64_t>("uint64 sum", R(uint64_t, uint64, sum), [](int pe, size_t i) { return (uint64_t)i * 0x100000001ull + pe; }, SUM, n, false);
        check_reduce<uint32_t>("uint32 min", R(uint32_t, uint32, min), [](int pe, size_t i) { return (uint32_t)(0xFFFFFFF0u - i - pe); }, MIN, n, false);
        check_reduce<int64_t>("int64 min", R(int64_t, int64, min), [](int pe, size_t i) { return -(int64_t)i * 1000000007LL + pe; }, MIN, n, false);
        check_reduce<size_t>("size xor", R(size_t, size, xor), [](int pe, size_t i) { return (size_t)(i << 40) ^ (size_t)(pe + 1); }, XOR, n, false);
        check_reduce<unsigned long long>("ulonglong and", R(unsigned long long, ulonglong, and), [](int pe, size_t i) { return ~(1ull << ((i + pe) % 64)); }, AND, n, false);
    }
    auto ival = [](int pe, size_t j) { return (int)(j % 1001) * (pe + 1); };
    check_reducescatter<int>("int sum", RS(int, int, sum), ival, SUM, 1);
    check_reducescatter<int>("int sum", RS(int, int, sum), ival, SUM, 3001);
    check_reducescatter<float>("float max", RS(float, float, max), [](int pe, size_t j) { return (float)((int)(j % 77) - 10 * pe); }, MAX, 1 << 18);
    check_reducescatter<half>("half sum", RS(half, half, sum), [](int pe, size_t j) { return __float2half((float)((int)(j % 3) + pe)); }, SUM, 999);
    if (me == 0) printf("reductions: ok\n");
}

/* ---- broadcast, fcollect, alltoall ------------------------------------------------------------- */
static unsigned char byte_of(int pe, size_t i) { return (unsigned char)(i * 13 + pe * 101 + (i >> 8)); }

/* Mem forms over bytes, at offsets that make every pointer unaligned when `skew`. */
static void gathers(size_t n, int skew) {
    unsigned char *src = sym_alloc<unsigned char>(n * npes + 64), *dest = sym_alloc<unsigned char>(n * npes + 64);
    unsigned char *s = src + skew, *d = dest + 2 * skew;
    std::vector<unsigned char> mine(n * npes), want;
    for (size_t j = 0; j < n * npes; j++) mine[j] = byte_of(me, j);
    char what[128];
    for (int form = 0; form < 2; form++) {
        const char *how = form == 0 ? "on stream" : "blocking";
        for (int root = 0; root < npes; root++) {
            upload(s, mine);
            CUDA_CHECK(cudaMemset(d, 0xEE, n));
            ready();
            int rc = form == 0 ? nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, d, s, n, root, stream)
                               : nvshmem_broadcastmem(NVSHMEM_TEAM_WORLD, d, s, n, root);
            snprintf(what, sizeof what, "broadcastmem %s n=%zu skew=%d root=%d", how, n, skew, root);
            CHECK(rc == 0, "%s returned %d", what, rc);
            CUDA_CHECK(cudaStreamSynchronize(stream));
            want.assign(n, 0);
            for (size_t i = 0; i < n; i++) want[i] = byte_of(root, i);
            expect(what, download(d, n), want);
        }
        upload(s, mine);
        CUDA_CHECK(cudaMemset(d, 0xEE, n * npes));
        ready();
        int rc = form == 0 ? nvshmemx_fcollectmem_on_stream(NVSHMEM_TEAM_WORLD, d, s, n, stream) : nvshmem_fcollectmem(NVSHMEM_TEAM_WORLD, d, s, n);
        snprintf(what, sizeof what, "fcollectmem %s n=%zu skew=%d", how, n, skew);
        CHECK(rc == 0, "%s returned %d", what, rc);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        want.assign(n * npes, 0);
        for (int k = 0; k < npes; k++)
            for (size_t i = 0; i < n; i++) want[k * n + i] = byte_of(k, i);
        expect(what, download(d, n * npes), want);

        CUDA_CHECK(cudaMemset(d, 0xEE, n * npes));
        ready();
        rc = form == 0 ? nvshmemx_alltoallmem_on_stream(NVSHMEM_TEAM_WORLD, d, s, n, stream) : nvshmem_alltoallmem(NVSHMEM_TEAM_WORLD, d, s, n);
        snprintf(what, sizeof what, "alltoallmem %s n=%zu skew=%d", how, n, skew);
        CHECK(rc == 0, "%s returned %d", what, rc);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int k = 0; k < npes; k++)
            for (size_t i = 0; i < n; i++) want[k * n + i] = byte_of(k, me * n + i);
        expect(what, download(d, n * npes), want);
    }
    nvshmem_barrier_all();
    nvshmem_free(dest);
    nvshmem_free(src);
}

/* Typed forms: long long fcollect and alltoall, double broadcast (root 1 when there is one). */
static void typed_gathers(size_t n) {
    long long *src = sym_alloc<long long>(n * npes), *dest = sym_alloc<long long>(n * npes);
    std::vector<long long> mine(n * npes), want(n * npes);
    for (size_t j = 0; j < n * npes; j++) mine[j] = (long long)me * 1000000007LL + (long long)j;
    upload(src, mine);
    ready();
    CHECK_EQ(nvshmemx_longlong_fcollect_on_stream(NVSHMEM_TEAM_WORLD, dest, src, n, stream), 0);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int k = 0; k < npes; k++)
        for (size_t i = 0; i < n; i++) want[k * n + i] = (long long)k * 1000000007LL + (long long)i;
    expect("longlong_fcollect_on_stream", download(dest, n * npes), want);
    CHECK_EQ(nvshmem_longlong_alltoall(NVSHMEM_TEAM_WORLD, dest, src, n), 0);
    for (int k = 0; k < npes; k++)
        for (size_t i = 0; i < n; i++) want[k * n + i] = (long long)k * 1000000007LL + (long long)(me * n + i);
    expect("longlong_alltoall", download(dest, n * npes), want);
    int root = npes > 1 ? 1 : 0;
    double *ds = (double *)src, *dd = (double *)dest;
    std::vector<double> dv(n), dw(n);
    for (size_t i = 0; i < n; i++) {
        dv[i] = me * 0.25 + i;
        dw[i] = root * 0.25 + i;
    }
    upload(ds, dv);
    ready();
    CHECK_EQ(nvshmemx_double_broadcast_on_stream(NVSHMEM_TEAM_WORLD, dd, ds, n, root, stream), 0);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    expect("double_broadcast_on_stream", download(dd, n), dw);
    nvshmem_barrier_all();
    nvshmem_free(dest);
    nvshmem_free(src);
}

/* ---- small ones back to back, mixed with device-initiated ones -----------------------------------
 * Small on-stream broadcasts, fcollects and alltoalls take the device library's low-latency
 * mailboxes, which device-initiated collectives of the same team use too (one call count per
 * team): 48 calls with no barrier or host wait between them, alternating on-stream and kernel
 * forms, TEAM_WORLD and TEAM_NODE, sizes from 1 byte to past the mailbox (2 KiB per member,
 * where the on-stream forms take the other kernel), each into its own dest; checked at the end. */
__global__ void device_gather(int what, nvshmem_team_t team, void *d, const void *s, size_t n, int root) {
    if (what == 0) nvshmemx_broadcastmem_block(team, d, s, n, root);
    else if (what == 1) nvshmemx_fcollectmem_block(team, d, s, n);
    else nvshmemx_alltoallmem_block(team, d, s, n);
}

static void back_to_back(void) {
    const int calls = 48;
    const size_t max_n = 3000;
    unsigned char *src = sym_alloc<unsigned char>(max_n * npes), *dest = sym_alloc<unsigned char>((size_t)calls * max_n * npes);
    std::vector<unsigned char> mine(max_n * npes);
    for (size_t j = 0; j < mine.size(); j++) mine[j] = byte_of(me, j);
    upload(src, mine);
    CUDA_CHECK(cudaMemset(dest, 0xEE, (size_t)calls * max_n * npes));
    CUDA_CHECK(cudaDeviceSynchronize());
    ready();
    for (int c = 0; c < calls; c++) {
        int what = c % 3, root = (c / 3) % npes;
        /* NODE is the world only when every PE shares this host (the checks assume the world). */
        nvshmem_team_t team = c % 2 && nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE) == npes ? NVSHMEMX_TEAM_NODE : NVSHMEM_TEAM_WORLD;
        size_t n = c == 20 || c == 41 ? max_n : 1 + (size_t)c * 97 % 2048;
        unsigned char *d = dest + (size_t)c * max_n * npes;
        if ((c / 2) % 2 == 0) {
            device_gather<<<1, 128, 0, stream>>>(what, team, d, src, n, root);
            CUDA_CHECK(cudaGetLastError());
        } else {
            int rc = what == 0 ? nvshmemx_broadcastmem_on_stream(team, d, src, n, root, stream)
                     : what == 1 ? nvshmemx_fcollectmem_on_stream(team, d, src, n, stream)
                                 : nvshmemx_alltoallmem_on_stream(team, d, src, n, stream);
            CHECK(rc == 0, "back to back call %d returned %d", c, rc);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<unsigned char> got = download(dest, (size_t)calls * max_n * npes);
    for (int c = 0; c < calls; c++) {
        int what = c % 3, root = (c / 3) % npes;
        size_t n = c == 20 || c == 41 ? max_n : 1 + (size_t)c * 97 % 2048;
        size_t count = what == 0 ? n : n * npes;
        for (size_t i = 0; i < count; i++) {
            size_t k = i / n, j = i % n;
            unsigned char want = what == 0 ? byte_of(root, i) : what == 1 ? byte_of((int)k, j) : byte_of((int)k, me * n + j);
            unsigned char have = got[(size_t)c * max_n * npes + i];
            if (have != want)
                FAIL("back to back call %d (%s, %s, %s, n=%zu): byte %zu: got %u, want %u", c, what == 0 ? "broadcast" : what == 1 ? "fcollect" : "alltoall",
                     (c / 2) % 2 == 0 ? "kernel" : "on stream", c % 2 ? "TEAM_NODE" : "TEAM_WORLD", n, i, have, want);
        }
    }
    nvshmem_barrier_all();
    nvshmem_free(dest);
    nvshmem_free(src);
    if (me == 0) printf("back to back: ok\n");
}

/* ---- barriers ------------------------------------------------------------------------------------ */
__global__ void delay_then_put(int *box, int value, int peer, long long spin) {
    long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
    nvshmem_int_p(box, value, peer);
}
__global__ void expect_box(const int *box, int value, int *errors) {
    if (*(volatile const int *)box != value) atomicAdd(errors, 1);
}

static void barriers(void) {
    int *box = (int *)nvshmem_calloc(1, sizeof(int));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    int left = (me + npes - 1) % npes, right = (me + 1) % npes;
    ready();
    const int ROUNDS = 200;
    for (int r = 1; r <= ROUNDS; r++) {
        /* The PE whose turn it is writes late: without a real barrier its peer reads the old value. */
        delay_then_put<<<1, 1, 0, stream>>>(box, r * 10 + me, right, (r % npes) == me ? 200000 : 0);
        switch (r % 4) {
            case 0: nvshmemx_barrier_all_on_stream(stream); break;
            case 1: CHECK_EQ(nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, stream), 0); break;
            case 2: nvshmemx_sync_all_on_stream(stream); break;
            /* NODE holds the peer only when every PE shares this host. */
            default: CHECK_EQ(nvshmemx_team_sync_on_stream(nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE) == npes ? NVSHMEMX_TEAM_NODE : NVSHMEM_TEAM_WORLD, stream), 0); break;
        }
        expect_box<<<1, 1, 0, stream>>>(box, r * 10 + left, errors);
        /* The next round's put must not overtake this round's check on the peer. */
        nvshmemx_barrier_all_on_stream(stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int bad = -1;
    CUDA_CHECK(cudaMemcpy(&bad, errors, sizeof bad, cudaMemcpyDeviceToHost));
    CHECK(bad == 0, "%d of %d rounds saw the peer's value before the on-stream barrier delivered it", bad, ROUNDS);
    /* Host barriers over teams. */
    CHECK_EQ(nvshmem_barrier(NVSHMEM_TEAM_WORLD), 0);
    CHECK_EQ(nvshmem_team_sync(NVSHMEM_TEAM_SHARED), 0);
    nvshmem_sync(NVSHMEMX_TEAM_NODE);
    nvshmem_sync_all();
    CUDA_CHECK(cudaFree(errors));
    nvshmem_free(box);
    if (me == 0) printf("barriers: ok (%d rounds)\n", ROUNDS);
}

/* ---- status codes ---------------------------------------------------------------------------------- */
static void bad_calls(void) {
    int *a = (int *)nvshmem_malloc(64 * sizeof(int));
    int *not_symmetric;
    CUDA_CHECK(cudaMalloc(&not_symmetric, 64 * sizeof(int)));
    CHECK_EQ(nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_INVALID, a, a + 32, 8, stream), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, a, a + 32, 8, npes), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, not_symmetric, a, 8), NVSHMEMX_ERROR_SYMMETRY);
    CHECK_EQ(nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, a + 1, a, 8, stream), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(nvshmemx_int_fcollect_on_stream(NVSHMEM_TEAM_WORLD, a, a, 8, stream), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(nvshmemx_barrier_on_stream(77, stream), NVSHMEMX_ERROR_INVALID_VALUE);
    CHECK_EQ(nvshmem_barrier(NVSHMEM_TEAM_INVALID), NVSHMEMX_ERROR_INVALID_VALUE);
    /* Zero elements: nothing to do, success. */
    CHECK_EQ(nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, a, a + 32, 0, stream), 0);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaFree(not_symmetric));
    nvshmem_barrier_all();
    nvshmem_free(a);
    if (me == 0) printf("status codes: ok\n");
}

/* ---- timings ------------------------------------------------------------------------------------- */
static double time_us(int iters, void (*op)(void *), void *arg) {
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 10; i++) op(arg);
    nvshmemx_barrier_all_on_stream(stream);
    CUDA_CHECK(cudaEventRecord(a, stream));
    for (int i = 0; i < iters; i++) op(arg);
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    nvshmem_barrier_all();
    return ms * 1000.0 / iters;
}

struct Bench {
    void *dest, *src;
    size_t bytes;
};
static void b_barrier(void *) { nvshmemx_barrier_all_on_stream(stream); }
static void b_int_sum(void *p) {
    Bench *b = (Bench *)p;
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (int *)b->dest, (const int *)b->src, b->bytes / 4, stream);
}
static void b_float_sum(void *p) {
    Bench *b = (Bench *)p;
    nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float *)b->dest, (const float *)b->src, b->bytes / 4, stream);
}
static void b_int_sum_in_place(void *p) {
    Bench *b = (Bench *)p;
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (int *)b->dest, (const int *)b->dest, b->bytes / 4, stream);
}
static void b_fcollect(void *p) {
    Bench *b = (Bench *)p;
    nvshmemx_fcollectmem_on_stream(NVSHMEM_TEAM_WORLD, b->dest, b->src, b->bytes / npes, stream);
}
static void b_alltoall(void *p) {
    Bench *b = (Bench *)p;
    nvshmemx_alltoallmem_on_stream(NVSHMEM_TEAM_WORLD, b->dest, b->src, b->bytes / npes, stream);
}
static void b_broadcast(void *p) {
    Bench *b = (Bench *)p;
    nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b->dest, b->src, b->bytes, 0, stream);
}

/* Two-phase kernels (more than two members, 1 MiB) on a team that does not start at world PE 0
 * (the chunk flags are indexed by world PE): a float sum whose rounding depends on the order
 * the members are combined in, which every member must get bit for bit (each slice is reduced
 * by one member); an int sum in place; a broadcast from the team's member 1. */
static void two_phase_subteam(void) {
    if (npes < 4) return;
    nvshmem_team_t t;
    CHECK_EQ(nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &t), 0);
    const size_t n = 1 << 18;
    float *src = sym_alloc<float>(n), *dest = sym_alloc<float>(n);
    int *acc = sym_alloc<int>(n);
    unsigned char *bytes = sym_alloc<unsigned char>(4 * n);
    const int member = me - 1, tn = npes - 1;
    auto fval = [](int m, size_t i) { return 1.0f / (float)(i % 97 + 3) * (float)(m + 1) + (float)(i % 5) * 1e3f * (m % 2 ? 1.0f : -1.0f); };
    auto ival = [](int m, size_t i) { return (int)(i * 7 + (size_t)m * 1000003); };
    if (t != NVSHMEM_TEAM_INVALID) {
        CHECK_EQ(nvshmem_team_my_pe(t), member);
        std::vector<float> mine(n);
        std::vector<int> imine(n), iwant(n, 0);
        std::vector<unsigned char> bmine(4 * n), bwant(4 * n);
        for (size_t i = 0; i < n; i++) {
            mine[i] = fval(member, i);
            imine[i] = ival(member, i);
            for (int m = 0; m < tn; m++) iwant[i] += ival(m, i);
        }
        for (size_t i = 0; i < 4 * n; i++) bmine[i] = byte_of(member, i), bwant[i] = byte_of(1, i);
        upload(src, mine);
        upload(acc, imine);
        upload(bytes, bmine);
        CUDA_CHECK(cudaDeviceSynchronize());
        CHECK_EQ(nvshmemx_team_sync_on_stream(t, stream), 0);
        CHECK_EQ(nvshmemx_float_sum_reduce_on_stream(t, dest, src, n, stream), 0);
        CHECK_EQ(nvshmemx_int_sum_reduce_on_stream(t, acc, acc, n, stream), 0);
        CHECK_EQ(nvshmemx_broadcastmem_on_stream(t, bytes, bytes, 4 * n, 1, stream), 0);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<float> got = download(dest, n);
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int m = 0; m < tn; m++) want += fval(m, i);
            if (fabs(got[i] - want) > 1e-5 * (fabs(want) + 1e3))
                FAIL("float sum over PEs 1..%d: element %zu: got %.9g, want %.9g", npes - 1, i, got[i], want);
        }
        expect("int sum in place over PEs 1..", download(acc, n), iwant);
        expect("broadcastmem from member 1 over PEs 1..", download(bytes, 4 * n), bwant);
    }
    nvshmem_barrier_all();
    if (t != NVSHMEM_TEAM_INVALID) {
        /* Bit for bit what the team's first member (world PE 1) got. */
        std::vector<float> got = download(dest, n), first(n);
        nvshmem_getmem(first.data(), dest, n * sizeof(float), 1);
        for (size_t i = 0; i < n; i++)
            if (!same(got[i], first[i])) FAIL("float sum over PEs 1..%d: element %zu differs from PE 1's: %.9g vs %.9g", npes - 1, i, got[i], first[i]);
        nvshmem_team_destroy(t);
    }
    nvshmem_barrier_all();
    nvshmem_free(bytes);
    nvshmem_free(acc);
    nvshmem_free(dest);
    nvshmem_free(src);
    if (me == 0) printf("two phases on PEs 1..%d: ok\n", npes - 1);
}

static void timings(void) {
    const size_t MAXB = 4 << 20;
    Bench b = {nvshmem_calloc(MAXB, 1), nvshmem_calloc(MAXB, 1), 0};
    double t = time_us(1000, b_barrier, NULL);
    if (me == 0) printf("TIME barrier_all_on_stream: %.2f us\n", t);
    if (me == 0) printf("TIME %-9s %12s %12s %12s %14s %12s %12s %12s\n", "bytes", "int_sum us", "GB/s", "float_sum us", "in-place us", "fcollect us", "alltoall us", "bcast us");
    for (size_t bytes = 4; bytes <= MAXB; bytes *= 4) {
        b.bytes = bytes;
        double ri = time_us(100, b_int_sum, &b), rf = time_us(100, b_float_sum, &b), rp = time_us(100, b_int_sum_in_place, &b);
        double fc = bytes >= (size_t)4 * npes ? time_us(100, b_fcollect, &b) : 0, aa = bytes >= (size_t)4 * npes ? time_us(100, b_alltoall, &b) : 0;
        double bc = time_us(100, b_broadcast, &b);
        if (me == 0) printf("TIME %-9zu %12.2f %12.2f %12.2f %14.2f %12.2f %12.2f %12.2f\n", bytes, ri, bytes / ri / 1000.0, rf, rp, fc, aa, bc);
    }
    nvshmem_free(b.dest);
    nvshmem_free(b.src);
}

int main(void) {
    test_init();
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    barriers();
    gathers(1, 0);
    gathers(1001, 0);
    gathers(1001, 1);
    gathers(1 << 20, 0);
    gathers((4 << 20) + 3, 1); /* two phases (more than two PEs, >= 4 MiB), unaligned */
    typed_gathers(7);
    typed_gathers(100003);
    back_to_back();
    if (me == 0) printf("broadcast/fcollect/alltoall: ok\n");
    reductions();
    two_phase_subteam();
    bad_calls();
    if (!getenv("COLL_HOST_NO_TIMING")) timings();
    CUDA_CHECK(cudaStreamDestroy(stream));
    return test_pass("coll_host");
}
