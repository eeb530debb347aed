// Latency of one-sided operations with their completion, PE 0 -> PE 1, one CTA, µs per op:
//   p_quiet          nvshmem_int_p + nvshmem_quiet, one thread
//   put_quiet_*      putmem_nbi (thread / warp / block scope) + quiet, per size
//   get_*            getmem (thread / warp / block scope), per size; each get's source offset
//                    depends on the data the previous get returned, and the offsets walk a
//                    128 MiB window (more than the L2), so consecutive gets can neither overlap
//                    nor hit a cache.
// Floors: floor_store_fence (one peer store + __threadfence_system), floor_copy_fence_* (the
// same group copying the same bytes with plain stores, then one fence as the library rows do),
// floor_load_* (the same group loading the same bytes over NVLink with the same dependency).
#include "bench.cuh"
#include "floors.cuh"

using namespace bench;

enum { SC_THREAD = 0, SC_WARP = 1, SC_BLOCK = 2 };
static const char *scope_name[] = {"thread", "warp", "block"};
static const int scope_threads[] = {1, 32, 1024};

__global__ void p_quiet_kernel(int *dst, int iters, int pe) {
    for (int i = 0; i < iters; i++) {
        nvshmem_int_p(dst, i, pe);
        nvshmem_quiet();
    }
}

__global__ void floor_store_fence_kernel(int *pdst, int iters) {
    volatile int *d = pdst;
    for (int i = 0; i < iters; i++) {
        *d = i;
        __threadfence_system();
    }
}

__device__ __forceinline__ void group_sync(int sc) {
    if (sc == SC_BLOCK) __syncthreads();
    else if (sc == SC_WARP) __syncwarp();
}

template <int SC>
__global__ void put_quiet_kernel(char *dst, const char *src, size_t size, int iters, int pe) {
    for (int i = 0; i < iters; i++) {
        if (SC == SC_BLOCK) nvshmemx_putmem_nbi_block(dst, src, size, pe);
        else if (SC == SC_WARP) nvshmemx_putmem_nbi_warp(dst, src, size, pe);
        else nvshmem_putmem_nbi(dst, src, size, pe);
        group_sync(SC);
        if (threadIdx.x == 0) nvshmem_quiet();
        group_sync(SC);
    }
}

// The same completion pattern as the library rows: the group copies, syncs, one thread fences.
template <int SC>
__global__ void floor_copy_fence_kernel(char *pdst, const char *src, size_t size, int iters) {
    for (int i = 0; i < iters; i++) {
        floors::group_copy(pdst, src, size, threadIdx.x, blockDim.x);
        group_sync(SC);
        if (threadIdx.x == 0) __threadfence_system();
        group_sync(SC);
    }
}

template <int SC>
__global__ void get_kernel(char *local, const char *src, size_t size, size_t stride, size_t window,
                           int iters, int pe, int zero) {
    size_t off = 0;
    for (int i = 0; i < iters; i++) {
        if (SC == SC_BLOCK) nvshmemx_getmem_block(local, src + off, size, pe);
        else if (SC == SC_WARP) nvshmemx_getmem_warp(local, src + off, size, pe);
        else nvshmem_getmem(local, src + off, size, pe);
        group_sync(SC);
        int dep = ((volatile char *)local)[size - 1] * zero;  // the next address needs this data
        off = (off + stride + (size_t)dep) % window;
    }
}

template <int SC>
__global__ void floor_load_kernel(char *local, const char *psrc, size_t size, size_t stride,
                                  size_t window, int iters, int zero) {
    size_t off = 0;
    for (int i = 0; i < iters; i++) {
        floors::group_load(local, psrc + off, size, threadIdx.x, blockDim.x);
        group_sync(SC);
        int dep = ((volatile char *)local)[size - 1] * zero;
        off = (off + stride + (size_t)dep) % window;
    }
}

static void row(const char *bench, const std::string &v, size_t size, int threads, double ms) {
    emit(bench, v, size, 1, threads, mype == 0 ? ms * 1e3 : 0, "us");
}

template <class L>
static double one_sided(L &&launch, int guess) {
    return events_per_iter_ms(launch, mype == 0, guess, 10, 200000);
}

int main(int argc, char **argv) {
    start(argc, argv, "lat");
    const size_t window = 128ull << 20;
    char *src = (char *)nvshmem_malloc(window + (1 << 20));
    char *dst = (char *)nvshmem_malloc(2u << 20);  // [0, 1 MiB): lat_put's target; [1 MiB, 2 MiB): get's local dest
    if (!src || !dst) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(src, 1 + mype, window + (1 << 20)));
    CK(cudaMemset(dst, 0, 2u << 20));
    bool fl = floors_possible(dst);
    char *pdst = fl ? peer_ptr(dst) : nullptr;
    char *psrc = fl ? peer_ptr(src) : nullptr;
    nvshmem_barrier_all();

    if (want("lat_p_quiet", "p_quiet"))
        row("lat_p_quiet", "p_quiet", 4, 1,
            one_sided([&](int it) { p_quiet_kernel<<<1, 1, 0, stream>>>((int *)dst, it, peer); }, 1000));
    if (fl && want("lat_p_quiet", "floor_store_fence"))
        row("lat_p_quiet", "floor_store_fence", 4, 1,
            one_sided([&](int it) { floor_store_fence_kernel<<<1, 1, 0, stream>>>((int *)pdst, it); }, 1000));

    typedef void (*put_fn)(char *, const char *, size_t, int, int);
    typedef void (*pfloor_fn)(char *, const char *, size_t, int);
    typedef void (*get_fn)(char *, const char *, size_t, size_t, size_t, int, int, int);
    typedef void (*gfloor_fn)(char *, const char *, size_t, size_t, size_t, int, int);
    put_fn puts[] = {put_quiet_kernel<SC_THREAD>, put_quiet_kernel<SC_WARP>, put_quiet_kernel<SC_BLOCK>};
    pfloor_fn pfloors[] = {floor_copy_fence_kernel<SC_THREAD>, floor_copy_fence_kernel<SC_WARP>, floor_copy_fence_kernel<SC_BLOCK>};
    get_fn gets[] = {get_kernel<SC_THREAD>, get_kernel<SC_WARP>, get_kernel<SC_BLOCK>};
    gfloor_fn gfloors[] = {floor_load_kernel<SC_THREAD>, floor_load_kernel<SC_WARP>, floor_load_kernel<SC_BLOCK>};

    for (int sc = SC_THREAD; sc <= SC_BLOCK; sc++) {
        int thr = scope_threads[sc];
        std::string pv = std::string("put_quiet_") + scope_name[sc], fv = std::string("floor_copy_fence_") + scope_name[sc];
        for (size_t s : sizes(8, sc == SC_BLOCK ? (1u << 20) : (64u << 10), 3)) {
            int guess = clamp_iters(2e6 / (double)s, 10, 1000);
            if (want("lat_put", pv))
                row("lat_put", pv, s, thr,
                    one_sided([&](int it) { puts[sc]<<<1, thr, 0, stream>>>(dst, src, s, it, peer); }, guess));
            if (fl && want("lat_put", fv))
                row("lat_put", fv, s, thr,
                    one_sided([&](int it) { pfloors[sc]<<<1, thr, 0, stream>>>(pdst, src, s, it); }, guess));
        }
    }

    for (int sc = SC_THREAD; sc <= SC_BLOCK; sc++) {
        int thr = scope_threads[sc];
        std::string gv = std::string("get_") + scope_name[sc], fv = std::string("floor_load_") + scope_name[sc];
        for (size_t s : sizes(8, sc == SC_BLOCK ? (1u << 20) : (64u << 10), 3)) {
            size_t stride = (s + 255) & ~(size_t)255;
            size_t win = std::max(window / stride, (size_t)1) * stride;
            int guess = clamp_iters(2e6 / (double)s, 10, 1000);
            char *local = dst + (1 << 20);  // past the part that lat_put writes
            if (want("lat_get", gv))
                row("lat_get", gv, s, thr,
                    one_sided([&](int it) { gets[sc]<<<1, thr, 0, stream>>>(local, src, s, stride, win, it, peer, 0); }, guess));
            if (fl && want("lat_get", fv))
                row("lat_get", fv, s, thr,
                    one_sided([&](int it) { gfloors[sc]<<<1, thr, 0, stream>>>(local, psrc, s, stride, win, it, 0); }, guess));
        }
    }

    // Data check: a block get brings PE 1's bytes (value 2).
    nvshmem_barrier_all();
    if (mype == 0) {
        get_kernel<SC_BLOCK><<<1, 1024, 0, stream>>>(dst + (1 << 20), src, 1 << 20, 1 << 20, window, 1, peer, 0);
        CKLAUNCH();
        CK(cudaStreamSynchronize(stream));
        std::vector<unsigned char> h(1 << 20);
        CK(cudaMemcpy(h.data(), dst + (1 << 20), 1 << 20, cudaMemcpyDeviceToHost));
        bool ok = true;
        for (size_t k = 0; k < h.size(); k += 511) ok &= h[k] == 2;
        check(ok && h.back() == 2, "lat: getmem_block data from PE 1", 1 << 20);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
    return finish();
}
