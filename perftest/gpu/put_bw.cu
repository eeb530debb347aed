// Device put bandwidth, PE 0 -> PE 1 (uni) or both ways at once (bidir, value = sum).
//
// Every unit of work (a CTA for _block, a warp for _warp, a thread for _thread) owns one slice
// of the message and puts it `iters` times in a row; one quiet per unit at the end. So a row is
// the streaming rate of back-to-back puts of `size` bytes split over the grid, with completion
// (quiet) included. Iteration i writes message slot i mod (128 MiB / size) of the destination,
// so the same bytes are not rewritten back to back (a first run that rewrote one slot showed
// rates above the NVLink limit at 256 KiB x 132 CTAs: repeated stores to the same lines were
// merged before they crossed the link). No grid-wide barrier between iterations (NVSHMEM's shmem_put_bw has one, which
// makes its small-size rows a barrier benchmark). Sizes below 8 B per unit use fewer units.
//
// Floors: floor_sm_push = the same grid copying the same slices with plain 16-byte stores to the
// peer pointer; floor_ce = cudaMemcpyAsync to the peer pointer (copy engine).
#include "bench.cuh"
#include "floors.cuh"

using namespace bench;

enum { SC_THREAD = 0, SC_WARP = 1, SC_BLOCK = 2 };

__device__ __forceinline__ long unit_id(int sc) {
    if (sc == SC_BLOCK) return blockIdx.x;
    long g = (long)blockIdx.x * blockDim.x + threadIdx.x;
    return sc == SC_WARP ? g / 32 : g;
}

__host__ __device__ inline size_t slice_bytes(size_t size, long active) {
    size_t c = size / (size_t)active;
    return c >= 16 ? (c & ~(size_t)15) : (c & ~(size_t)7);
}

static const size_t DST_WINDOW = 128ull << 20;

__host__ __device__ inline size_t slot_bytes(size_t size) { return (size + 255) & ~(size_t)255; }
__host__ __device__ inline int nslots(size_t size) { return (int)(DST_WINDOW / slot_bytes(size)); }

template <int SC, bool NBI>
__global__ void put_kernel(char *dst0, const char *src, size_t size, int iters, int pe, long active) {
    long u = unit_id(SC);
    if (u < active) {
        size_t chunk = slice_bytes(size, active);
        size_t off = (size_t)u * chunk;
        size_t len = (u == active - 1) ? size - off : chunk;
        const size_t slot = slot_bytes(size);
        const int ns = nslots(size);
        for (int i = 0; i < iters; i++) {
            char *dst = dst0 + (size_t)(i % ns) * slot;
            if (SC == SC_BLOCK) {
                if (NBI) nvshmemx_putmem_nbi_block(dst + off, src + off, len, pe);
                else nvshmemx_putmem_block(dst + off, src + off, len, pe);
            } else if (SC == SC_WARP) {
                if (NBI) nvshmemx_putmem_nbi_warp(dst + off, src + off, len, pe);
                else nvshmemx_putmem_warp(dst + off, src + off, len, pe);
            } else {
                if (NBI) nvshmem_putmem_nbi(dst + off, src + off, len, pe);
                else nvshmem_putmem(dst + off, src + off, len, pe);
            }
        }
    }
    if (SC == SC_BLOCK) {
        __syncthreads();
        if (threadIdx.x == 0) nvshmem_quiet();
    } else if (SC == SC_WARP) {
        __syncwarp();
        if ((threadIdx.x & 31) == 0) nvshmem_quiet();
    } else {
        nvshmem_quiet();
    }
}

// Bare-CUDA floor: the block-scope slices, copied with plain stores to the peer pointer.
__global__ void floor_push_kernel(char *peer_dst, const char *src, size_t size, int iters, long active) {
    long u = blockIdx.x;
    if (u < active) {
        size_t chunk = slice_bytes(size, active);
        size_t off = (size_t)u * chunk;
        size_t len = (u == active - 1) ? size - off : chunk;
        const size_t slot = slot_bytes(size);
        const int ns = nslots(size);
        for (int i = 0; i < iters; i++)
            floors::group_copy(peer_dst + (size_t)(i % ns) * slot + off, src + off, len, threadIdx.x, blockDim.x);
    }
    __syncthreads();
    if (threadIdx.x == 0) __threadfence_system();
}

typedef void (*put_fn)(char *, const char *, size_t, int, int, long);

struct Variant {
    const char *name;
    put_fn fn;
    int scope;
};

static const Variant variants[] = {
    {"put_nbi_block", put_kernel<SC_BLOCK, true>, SC_BLOCK},  {"put_block", put_kernel<SC_BLOCK, false>, SC_BLOCK},
    {"put_nbi_warp", put_kernel<SC_WARP, true>, SC_WARP},     {"put_warp", put_kernel<SC_WARP, false>, SC_WARP},
    {"put_nbi_thread", put_kernel<SC_THREAD, true>, SC_THREAD}, {"put_thread", put_kernel<SC_THREAD, false>, SC_THREAD},
};

static long units_of(int scope, int ctas, int threads) {
    if (scope == SC_BLOCK) return ctas;
    if (scope == SC_WARP) return (long)ctas * threads / 32;
    return (long)ctas * threads;
}

static int iters_guess(size_t size) { return clamp_iters(4.0 * 1024 * 1024 / (double)size, 2, 1000); }

// One row: value = GB/s (uni: PE 0's; bidir: sum of both PEs').
template <class L>
static void measure(const char *bench, const std::string &v, size_t size, int ctas, int threads,
                    bool bidir, L &&launch) {
    bool active = bidir || mype == 0;
    double ms = events_per_iter_ms(launch, active, iters_guess(size), 2, 200000);
    double gbs = active ? (double)size / (ms * 1e-3) / 1e9 : 0.0;
    std::vector<double> all = allgather(gbs);
    double value = bidir ? all[0] + all[1] : all[0];
    emit(bench, v, size, ctas, threads, value, "GB/s");
}

int main(int argc, char **argv) {
    start(argc, argv, "put_bw");
    const size_t max_size = 64ull << 20;
    char *src = (char *)nvshmem_malloc(max_size);
    char *dst = (char *)nvshmem_malloc(DST_WINDOW);
    if (!src || !dst) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(src, 0x5a + mype, max_size));
    CK(cudaMemset(dst, 0, DST_WINDOW));
    char *pdst = peer_ptr(dst);
    bool fl = floors_possible(dst);
    nvshmem_barrier_all();

    const int threads = opt.threads.empty() ? 1024 : opt.threads[0];
    std::vector<size_t> sz = sizes(8, max_size, 3);

    struct Plan { const Variant *v; std::vector<int> ctas; bool bidir; };
    std::vector<Plan> plans;
    plans.push_back({&variants[0], list_or(opt.ctas, {1, 2, 4, 8, 16, 32, 64, 132}, {1, 8, 32, 132}), false});
    plans.push_back({&variants[0], list_or(opt.ctas, {4, 32, 132}, {32}), true});
    plans.push_back({&variants[1], list_or(opt.ctas, {1, 32}, {32}), false});
    plans.push_back({&variants[2], list_or(opt.ctas, {1, 32}, {32}), false});
    plans.push_back({&variants[3], list_or(opt.ctas, {32}, {32}), false});
    plans.push_back({&variants[4], list_or(opt.ctas, {1, 32}, {32}), false});
    plans.push_back({&variants[5], list_or(opt.ctas, {32}, {32}), false});

    for (const Plan &p : plans) {
        const char *bench = p.bidir ? "put_bw_bidir" : "put_bw";
        for (int c : p.ctas) {
            for (size_t s : sz) {
                long active = std::min<long>(units_of(p.v->scope, c, threads), (long)(s / 8));
                if (want(bench, p.v->name) && fits(p.v->fn, threads, p.v->name)) {
                    measure(bench, p.v->name, s, c, threads, p.bidir, [&](int it) {
                        p.v->fn<<<c, threads, 0, stream>>>(dst, src, s, it, peer, active);
                    });
                }
                // Floors for the block-scope nbi sweep only (same grid, same slices).
                if (fl && p.v == &variants[0] && want(bench, "floor_sm_push")) {
                    long ab = std::min<long>(c, (long)(s / 8));
                    measure(bench, "floor_sm_push", s, c, threads, p.bidir, [&](int it) {
                        floor_push_kernel<<<c, threads, 0, stream>>>(pdst, src, s, it, ab);
                    });
                }
            }
        }
        if (fl && p.v == &variants[0] && want(bench, "floor_ce")) {
            for (size_t s : sz)
                measure(bench, "floor_ce", s, 0, 0, p.bidir, [&](int it) {
                    for (int i = 0; i < it; i++)
                        CK(cudaMemcpyAsync(pdst + (size_t)(i % nslots(s)) * slot_bytes(s), src, s,
                                           cudaMemcpyDeviceToDevice, stream));
                });
        }
    }

    // Data check: the last put of every byte arrived (PE 1 holds PE 0's pattern).
    nvshmem_barrier_all();
    if (mype == 0) {
        put_kernel<SC_BLOCK, true><<<4, threads, 0, stream>>>(dst, src, max_size, 1, peer, 4);
        CKLAUNCH();
        CK(cudaStreamSynchronize(stream));
    }
    nvshmem_barrier_all();
    if (mype == 1) {
        std::vector<unsigned char> h(max_size);
        CK(cudaMemcpy(h.data(), dst, max_size, cudaMemcpyDeviceToHost));
        bool ok = true;
        for (size_t k = 0; k < max_size; k += 4093) ok &= h[k] == 0x5a;
        ok &= h[max_size - 1] == 0x5a;
        check(ok, "put_bw: data at PE 1", max_size);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
    return finish();
}
