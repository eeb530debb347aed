// Remote atomic rate, PE 0 -> PE 1, CTAs x threads each issuing `iters` 64-bit atomics; one quiet
// per CTA at the end. Gop/s.
//   contiguous: the threads of a warp hit 32 consecutive 8-byte words (as NVSHMEM's
//               shmem_atomic_bw does; the hardware may combine them)
//   scattered:  every operation hits its own 128-byte line, chosen by a bijective hash over the
//               lines of a 64 MiB window (no two operations of one pass share a line)
// Ops: add (nvshmem_uint64_atomic_add), fetch_add (result summed into a per-thread value that is
// stored at the end, so it is really fetched; operations are not serialized by it).
// Floors: atomicAdd_system through the peer pointer, same patterns (floor_red_* discards the
// result, floor_fetch_add_* uses it).
#include "bench.cuh"
#include "floors.cuh"

using namespace bench;

static const size_t WINDOW = 64ull << 20;
static const size_t WORDS = WINDOW / 8, LINES = WINDOW / 128;

__device__ __forceinline__ size_t target_word(size_t k, bool scattered) {
    if (!scattered) return k & (WORDS - 1);
    // Odd multiplier then an xor-shift, both bijective modulo 2^n: distinct k of one pass
    // (fewer than LINES threads) land on distinct lines, far apart.
    size_t line = (k * 0x9E3779B97F4A7C15ull) & (LINES - 1);
    line ^= line >> 9;
    return line * 16;
}

// MODE: 0 = add, 1 = fetch_add, 2 = floor red, 3 = floor fetch_add
template <int MODE, bool SCATTERED>
__global__ void amo_kernel(uint64_t *buf, int iters, int pe, uint64_t *sink) {
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x, nth = (size_t)gridDim.x * blockDim.x;
    uint64_t acc = 0;
    for (int i = 0; i < iters; i++) {
        uint64_t *p = buf + target_word((size_t)i * nth + tid, SCATTERED);
        if (MODE == 0) nvshmem_uint64_atomic_add(p, 1, pe);
        else if (MODE == 1) acc += nvshmem_uint64_atomic_fetch_add(p, 1, pe);
        else if (MODE == 2) atomicAdd_system((unsigned long long *)p, 1ull);
        else acc += atomicAdd_system((unsigned long long *)p, 1ull);
    }
    if (MODE == 1 || MODE == 3) sink[tid & 1023] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        if (MODE < 2) nvshmem_quiet();
        else __threadfence_system();
    }
}

typedef void (*amo_fn)(uint64_t *, int, int, uint64_t *);

int main(int argc, char **argv) {
    start(argc, argv, "amo_bw");
    uint64_t *buf = (uint64_t *)nvshmem_malloc(WINDOW);
    uint64_t *sink = nullptr;
    if (!buf) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMalloc(&sink, 1024 * sizeof(uint64_t)));
    CK(cudaMemset(buf, 0, WINDOW));
    bool fl = floors_possible(buf);
    uint64_t *pbuf = fl ? peer_ptr(buf) : nullptr;
    nvshmem_barrier_all();

    struct V { const char *name; amo_fn fn; bool floor; };
    const V vs[] = {
        {"add_contiguous", amo_kernel<0, false>, false},          {"add_scattered", amo_kernel<0, true>, false},
        {"fetch_add_contiguous", amo_kernel<1, false>, false},    {"fetch_add_scattered", amo_kernel<1, true>, false},
        {"floor_red_contiguous", amo_kernel<2, false>, true},     {"floor_red_scattered", amo_kernel<2, true>, true},
        {"floor_fetch_add_contiguous", amo_kernel<3, false>, true}, {"floor_fetch_add_scattered", amo_kernel<3, true>, true},
    };
    std::vector<int> ctas = list_or(opt.ctas, {1, 4, 16, 32, 132}, {1, 32, 132});
    std::vector<int> thr = list_or(opt.threads, {1024}, {1024});
    for (int t : thr)
        for (int c : ctas)
            for (const V &v : vs) {
                if (v.floor && !fl) continue;
                if (!want("amo_bw", v.name)) continue;
                uint64_t *target = v.floor ? pbuf : buf;
                double ms = events_per_iter_ms([&](int it) { v.fn<<<c, t, 0, stream>>>(target, it, peer, sink); },
                                               mype == 0, 16, 2, 100000);
                double ops = (double)c * t;
                emit("amo_bw", v.name, 8, c, t, mype == 0 ? ops / (ms * 1e-3) / 1e9 : 0, "Gop/s");
            }

    // Data check: one contiguous pass of adds from 1 CTA of 1024 threads adds 1 to each of the
    // first 1024 words at PE 1.
    CK(cudaMemset(buf, 0, WINDOW));
    nvshmem_barrier_all();
    if (mype == 0) {
        amo_kernel<0, false><<<1, 1024, 0, stream>>>(buf, 1, peer, sink);
        CKLAUNCH();
        CK(cudaStreamSynchronize(stream));
    }
    nvshmem_barrier_all();
    if (mype == 1) {
        std::vector<uint64_t> h(2048);
        CK(cudaMemcpy(h.data(), buf, h.size() * 8, cudaMemcpyDeviceToHost));
        bool ok = true;
        for (size_t k = 0; k < h.size(); k++) ok &= h[k] == (k < 1024 ? 1u : 0u);
        check(ok, "amo_bw: atomic_add results at PE 1", 8);
    }
    nvshmem_barrier_all();
    CK(cudaFree(sink));
    nvshmem_free(buf);
    return finish();
}
