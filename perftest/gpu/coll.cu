// Device collectives on NVSHMEM_TEAM_WORLD, one CTA per PE, µs per call vs size (window inside
// the kernel after warm-up calls; plain launches of one CTA).
//   coll_alltoall      int32                      size = total bytes of dest (nelems*4*npes)
//   coll_fcollect      int32                      size = total bytes of dest
//   coll_broadcast     int32, root 0              size = bytes broadcast
//   coll_reduce        sum/max x int32/float/bf16 size = bytes per PE
//   coll_reducescatter sum x int32/float/bf16     size = bytes of source per PE (dest = size/npes)
// Scopes: block (256 / 1024 threads) for every case; warp (32) and thread (1) for the int32 cases
// up to 16 KiB / 2 KiB. Every case is checked once per size against the expected data.
// Floors (block scope): floor_push = the CTA pushes the bytes one PE must send with plain stores,
// then a flag exchange; floor_pull_add = the CTA loads the peer's int32 over NVLink, adds its own,
// writes dest, then a flag exchange.
#include "bench.cuh"
#include "floors.cuh"

#include <cuda_bf16.h>

using namespace bench;

enum { SC_THREAD = 0, SC_WARP = 1, SC_BLOCK = 2 };
static const char *scope_name[] = {"thread", "warp", "block"};

typedef void (*coll_fn)(void *, const void *, size_t, int, int, unsigned long long *);

#define ROOT0 , 0
#define COLL_KERNEL(KN, T, STEM, EXTRA)                                                          \
    template <int SC>                                                                            \
    __global__ void KN(void *dv, const void *sv, size_t n, int warm, int iters,                  \
                       unsigned long long *slot) {                                               \
        T *dst = (T *)dv;                                                                        \
        const T *src = (const T *)sv;                                                            \
        unsigned long long t0 = 0;                                                               \
        for (int i = 0; i < warm + iters; i++) {                                                 \
            if (i == warm) {                                                                     \
                if (SC == SC_BLOCK) __syncthreads();                                                \
                if (threadIdx.x == 0) t0 = gtimer();                                             \
            }                                                                                    \
            if (SC == SC_THREAD) nvshmem_##STEM(NVSHMEM_TEAM_WORLD, dst, src, n EXTRA);             \
            else if (SC == SC_WARP) nvshmemx_##STEM##_warp(NVSHMEM_TEAM_WORLD, dst, src, n EXTRA);  \
            else nvshmemx_##STEM##_block(NVSHMEM_TEAM_WORLD, dst, src, n EXTRA);                 \
        }                                                                                        \
        if (SC == SC_BLOCK) __syncthreads();                                                        \
        if (threadIdx.x == 0) *slot = gtimer() - t0;                                             \
    }

COLL_KERNEL(k_alltoall_i32, int32_t, int32_alltoall, )
COLL_KERNEL(k_fcollect_i32, int32_t, int32_fcollect, )
COLL_KERNEL(k_bcast_i32, int32_t, int32_broadcast, ROOT0)
COLL_KERNEL(k_sum_i32, int32_t, int32_sum_reduce, )
COLL_KERNEL(k_max_i32, int32_t, int32_max_reduce, )
COLL_KERNEL(k_sum_f32, float, float_sum_reduce, )
COLL_KERNEL(k_max_f32, float, float_max_reduce, )
COLL_KERNEL(k_sum_bf16, __nv_bfloat16, bfloat16_sum_reduce, )
COLL_KERNEL(k_max_bf16, __nv_bfloat16, bfloat16_max_reduce, )
COLL_KERNEL(k_rs_sum_i32, int32_t, int32_sum_reducescatter, )
COLL_KERNEL(k_rs_sum_f32, float, float_sum_reducescatter, )
COLL_KERNEL(k_rs_sum_bf16, __nv_bfloat16, bfloat16_sum_reducescatter, )

#define FNS(KN) {KN<SC_THREAD>, KN<SC_WARP>, KN<SC_BLOCK>}

enum Kind { K_ALLTOALL, K_FCOLLECT, K_BCAST, K_REDUCE_SUM, K_REDUCE_MAX, K_RS_SUM };
enum Type { T_I32, T_F32, T_BF16 };

struct Case {
    const char *bench, *variant;
    Kind kind;
    Type type;
    coll_fn fn[3];
    bool small_scopes;  // also thread and warp scope
};

static const Case cases[] = {
    {"coll_alltoall", "int32", K_ALLTOALL, T_I32, FNS(k_alltoall_i32), true},
    {"coll_fcollect", "int32", K_FCOLLECT, T_I32, FNS(k_fcollect_i32), true},
    {"coll_broadcast", "int32", K_BCAST, T_I32, FNS(k_bcast_i32), true},
    {"coll_reduce", "int32_sum", K_REDUCE_SUM, T_I32, FNS(k_sum_i32), true},
    {"coll_reduce", "int32_max", K_REDUCE_MAX, T_I32, FNS(k_max_i32), false},
    {"coll_reduce", "float_sum", K_REDUCE_SUM, T_F32, FNS(k_sum_f32), false},
    {"coll_reduce", "float_max", K_REDUCE_MAX, T_F32, FNS(k_max_f32), false},
    {"coll_reduce", "bf16_sum", K_REDUCE_SUM, T_BF16, FNS(k_sum_bf16), false},
    {"coll_reduce", "bf16_max", K_REDUCE_MAX, T_BF16, FNS(k_max_bf16), false},
    {"coll_reducescatter", "int32_sum", K_RS_SUM, T_I32, FNS(k_rs_sum_i32), true},
    {"coll_reducescatter", "float_sum", K_RS_SUM, T_F32, FNS(k_rs_sum_f32), false},
    {"coll_reducescatter", "bf16_sum", K_RS_SUM, T_BF16, FNS(k_rs_sum_bf16), false},
};

static size_t elem_size(Type t) { return t == T_BF16 ? 2 : 4; }

// Elements per call argument for a row of `size` bytes.
static size_t nelems(const Case &c, size_t size) {
    size_t e = elem_size(c.type);
    switch (c.kind) {
        case K_ALLTOALL: case K_FCOLLECT: case K_RS_SUM: return size / (e * (size_t)npes);
        default: return size / e;
    }
}

// Small integers, exact in every type (sums of npes of them too).
static int pattern(int pe, size_t k) { return (int)((pe * 7 + k) % 13); }

static void fill_src(const Case &c, void *src, size_t count) {
    std::vector<char> h(count * elem_size(c.type));
    for (size_t k = 0; k < count; k++) {
        int v = pattern(mype, k);
        if (c.type == T_I32) ((int32_t *)h.data())[k] = v;
        else if (c.type == T_F32) ((float *)h.data())[k] = (float)v;
        else ((__nv_bfloat16 *)h.data())[k] = __float2bfloat16((float)v);
    }
    CK(cudaMemcpy(src, h.data(), h.size(), cudaMemcpyHostToDevice));
}

static double as_double(const Case &c, const char *p, size_t k) {
    if (c.type == T_I32) return ((const int32_t *)p)[k];
    if (c.type == T_F32) return ((const float *)p)[k];
    return __bfloat162float(((const __nv_bfloat16 *)p)[k]);
}

// Expected dest element k on this PE.
static double expected(const Case &c, size_t n, size_t k) {
    switch (c.kind) {
        case K_ALLTOALL: return pattern((int)(k / n), (size_t)mype * n + k % n);
        case K_FCOLLECT: return pattern((int)(k / n), k % n);
        case K_BCAST: return pattern(0, k);
        case K_REDUCE_SUM: { double s = 0; for (int p = 0; p < npes; p++) s += pattern(p, k); return s; }
        case K_REDUCE_MAX: { double m = -1; for (int p = 0; p < npes; p++) m = std::max<double>(m, pattern(p, k)); return m; }
        case K_RS_SUM: { double s = 0; for (int p = 0; p < npes; p++) s += pattern(p, (size_t)mype * n + k); return s; }
    }
    return 0;
}

static size_t dest_count(const Case &c, size_t n) {
    return (c.kind == K_ALLTOALL || c.kind == K_FCOLLECT) ? n * (size_t)npes : n;
}
static size_t src_count(const Case &c, size_t n) {
    return (c.kind == K_ALLTOALL || c.kind == K_RS_SUM) ? n * (size_t)npes : n;
}

int main(int argc, char **argv) {
    start(argc, argv, "coll");
    const size_t max_size = 4u << 20;
    void *src = nvshmem_malloc(max_size);
    void *dst = nvshmem_malloc(max_size);
    unsigned long long *ctr = (unsigned long long *)nvshmem_malloc(256);
    if (!src || !dst || !ctr) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(ctr, 0, 256));
    bool fl = floors_possible(dst);
    char *pdst = fl ? (char *)peer_ptr(dst) : nullptr;
    const int *psrc = fl ? (const int *)peer_ptr(src) : nullptr;
    nvshmem_barrier_all();

    std::vector<int> block_threads = list_or(opt.threads, {256, 1024}, {256});
    std::vector<size_t> sz = sizes(8, max_size, 4);
    std::vector<char> h(max_size);

    for (const Case &c : cases) {
        for (int sc = SC_THREAD; sc <= SC_BLOCK; sc++) {
            if (sc != SC_BLOCK && !c.small_scopes) continue;
            size_t limit = sc == SC_THREAD ? 2048 : sc == SC_WARP ? 16384 : max_size;
            std::vector<int> thr = sc == SC_THREAD ? std::vector<int>{1} : sc == SC_WARP ? std::vector<int>{32} : block_threads;
            std::string v = std::string(c.variant) + "_" + scope_name[sc];
            for (int t : thr) {
                for (size_t s : sz) {
                    size_t n = nelems(c, s);
                    if (s > limit || n == 0) continue;
                    if (want(c.bench, v) && fits(c.fn[sc], t, (std::string(c.bench) + "/" + v).c_str())) {
                        fill_src(c, src, src_count(c, n));
                        CK(cudaMemset(dst, 0xff, max_size));
                        // The fill and the poison run on the legacy stream, the collectives on a
                        // non-blocking one: finish them before any PE may write into dst.
                        CK(cudaDeviceSynchronize());
                        nvshmem_barrier_all();
                        // Data check first (one call), then the timing.
                        {
                            unsigned long long *slot = window_slot();
                            c.fn[sc]<<<1, t, 0, stream>>>(dst, src, n, 0, 1, slot);
                            CKLAUNCH();
                            CK(cudaStreamSynchronize(stream));
                            nvshmem_barrier_all();
                            size_t dn = dest_count(c, n);
                            CK(cudaMemcpy(h.data(), dst, dn * elem_size(c.type), cudaMemcpyDeviceToHost));
                            bool ok = true;
                            if (!(c.kind == K_BCAST && mype == 0))
                                for (size_t k = 0; k < dn && ok; k++) ok = as_double(c, h.data(), k) == expected(c, n, k);
                            check(ok, (std::string(c.bench) + "/" + v).c_str(), s);
                        }
                        int guess = clamp_iters(200.0 * 4096 / (double)std::max<size_t>(s, 4096), 3, 200);
                        double us = window_per_iter_us(
                            [&](int w, int it, unsigned long long *slot) { c.fn[sc]<<<1, t, 0, stream>>>(dst, src, n, w, it, slot); },
                            guess, 3, 20000);
                        emit(c.bench, v, s, 1, t, us, "us");
                    }
                    // Floors once per bench and size (block scope only).
                    bool first_of_bench = &c == &cases[0] || strcmp(c.bench, (&c - 1)->bench) != 0;
                    if (!fl || sc != SC_BLOCK || !first_of_bench) continue;
                    bool reduce = c.kind == K_REDUCE_SUM || c.kind == K_REDUCE_MAX || c.kind == K_RS_SUM;
                    std::string fv = std::string(reduce ? "floor_pull_add_" : "floor_push_") + scope_name[sc];
                    if (!want(c.bench, fv)) continue;
                    size_t bytes = c.kind == K_BCAST ? (mype == 0 ? s : 0) : c.kind == K_RS_SUM ? s / (size_t)npes
                                                                                           : reduce ? s : s / (size_t)npes;
                    if (bytes) bytes = (bytes + 7) & ~(size_t)7;
                    int guess = clamp_iters(200.0 * 4096 / (double)std::max<size_t>(s, 4096), 3, 200);
                    double us = window_per_iter_us(
                        [&](int w, int it, unsigned long long *slot) {
                            unsigned long long base = floors::next_base(w, it);
                            if (reduce)
                                floors::pull_add_sync<<<1, t, 0, stream>>>((int *)dst, (const int *)src, psrc, bytes / 4,
                                                                           ctr, (unsigned long long *)peer_ptr(ctr), base, w, it, slot);
                            else
                                floors::push_sync<<<1, t, 0, stream>>>(pdst, (const char *)src, bytes, ctr,
                                                                       (unsigned long long *)peer_ptr(ctr), base, w, it, slot);
                        },
                        guess, 3, 20000);
                    emit(c.bench, fv, s, 1, t, us, "us");
                }
            }
        }
    }
    nvshmem_barrier_all();
    nvshmem_free(ctr);
    nvshmem_free(dst);
    nvshmem_free(src);
    return finish();
}
