// Scalar put rate, PE 0 -> PE 1: every thread of CTAs x 1024 threads issues nvshmem_<T>_p to
// consecutive elements of a `size`-byte window, `iters` passes, one quiet per CTA at the end.
// Value = operations per second (Gop/s); GB/s = Gop/s x element size.
//
// Floor: the same kernel with plain (volatile) stores through the peer pointer.
// --offset SIZE moves the window SIZE bytes into the buffer (p and floor alike): whether a row
// depends on where in the heap its bytes lie rather than on the library's p.
#include "bench.cuh"
#include "floors.cuh"

using namespace bench;

__device__ __forceinline__ void put_scalar(uint32_t *d, uint32_t v, int pe) { nvshmem_uint32_p(d, v, pe); }
__device__ __forceinline__ void put_scalar(uint64_t *d, uint64_t v, int pe) { nvshmem_uint64_p(d, v, pe); }

template <class T>
__global__ void p_kernel(T *dst, size_t n, int iters, int pe) {
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, nth = (size_t)gridDim.x * blockDim.x;
    for (int i = 0; i < iters; i++)
        for (size_t k = tid; k < n; k += nth) put_scalar(dst + k, (T)(k + (size_t)i), pe);
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}

template <class T>
__global__ void floor_store_kernel(T *peer_dst, size_t n, int iters) {
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, nth = (size_t)gridDim.x * blockDim.x;
    volatile T *d = peer_dst;
    for (int i = 0; i < iters; i++)
        for (size_t k = tid; k < n; k += nth) d[k] = (T)(k + (size_t)i);
    __syncthreads();
    if (threadIdx.x == 0) __threadfence_system();
}

template <class T>
static void sweep(const char *variant, const char *floor_variant, T *dst, T *pdst,
                  const std::vector<size_t> &sz, const std::vector<int> &ctas, int threads) {
    for (int c : ctas) {
        for (size_t s : sz) {
            size_t n = s / sizeof(T);
            int guess = clamp_iters(4.0e6 / (double)n, 2, 4000);
            if (want("p_bw", variant)) {
                double ms = events_per_iter_ms([&](int it) { p_kernel<T><<<c, threads, 0, stream>>>(dst, n, it, peer); },
                                               mype == 0, guess, 2, 100000);
                emit("p_bw", variant, s, c, threads, mype == 0 ? (double)n / (ms * 1e-3) / 1e9 : 0, "Gop/s");
            }
            if (pdst && want("p_bw", floor_variant)) {
                double ms = events_per_iter_ms([&](int it) { floor_store_kernel<T><<<c, threads, 0, stream>>>(pdst, n, it); },
                                               mype == 0, guess, 2, 100000);
                emit("p_bw", floor_variant, s, c, threads, mype == 0 ? (double)n / (ms * 1e-3) / 1e9 : 0, "Gop/s");
            }
        }
    }
}

int main(int argc, char **argv) {
    start(argc, argv, "p_bw");
    const size_t max_size = 16ull << 20;
    const size_t off = (opt.offset + 15) & ~(size_t)15;
    void *buf = nvshmem_malloc(max_size + off);
    if (!buf) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(buf, 0, max_size + off));
    bool fl = floors_possible(buf);
    char *win = (char *)buf + off;
    void *pbuf = fl ? (void *)((char *)peer_ptr(buf) + off) : nullptr;
    note("p_bw: window at offset %s of its buffer, %s bytes past a 2 MiB boundary", std::to_string(off).c_str(),
         std::to_string(((uintptr_t)buf + off) & ((2u << 20) - 1)).c_str());
    nvshmem_barrier_all();

    const int threads = opt.threads.empty() ? 1024 : opt.threads[0];
    std::vector<size_t> sz = sizes(4096, max_size, 4);
    std::vector<int> ctas = list_or(opt.ctas, {1, 2, 4, 8, 16, 32, 64, 132}, {1, 8, 32, 132});
    sweep<uint32_t>("p_4B", "floor_store_4B", (uint32_t *)win, (uint32_t *)pbuf, sz, ctas, threads);
    sweep<uint64_t>("p_8B", "floor_store_8B", (uint64_t *)win, (uint64_t *)pbuf, sz, ctas, threads);

    // Data check: one pass of 4-byte p from PE 0 lands at PE 1 (value = index).
    size_t n = max_size / 4;
    nvshmem_barrier_all();
    if (mype == 0) {
        p_kernel<uint32_t><<<32, threads, 0, stream>>>((uint32_t *)buf, n, 1, peer);
        CKLAUNCH();
        CK(cudaStreamSynchronize(stream));
    }
    nvshmem_barrier_all();
    if (mype == 1) {
        std::vector<uint32_t> h(n);
        CK(cudaMemcpy(h.data(), buf, max_size, cudaMemcpyDeviceToHost));
        bool ok = true;
        for (size_t k = 0; k < n; k += 997) ok &= h[k] == (uint32_t)k;
        check(ok && h[n - 1] == (uint32_t)(n - 1), "p_bw: uint32 p data at PE 1", max_size);
    }
    nvshmem_barrier_all();
    nvshmem_free(buf);
    return finish();
}
