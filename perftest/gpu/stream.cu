// Host-issued operations on a CUDA stream, timed with CUDA events around `iters` calls enqueued
// back to back on one stream.
//   stream_put       GB/s, PE 0 -> PE 1: putmem_nbi_on_stream x iters + quiet_on_stream,
//                    putmem_on_stream x iters, getmem_nbi_on_stream x iters + quiet_on_stream
//   stream_put_lat   µs per (putmem_on_stream + quiet_on_stream)
//   stream_sync      µs per call, both PEs: barrier_all_on_stream, barrier_on_stream(WORLD),
//                    sync_all_on_stream, team_sync_on_stream(WORLD); value = the slower PE
//   stream_coll      µs per call vs size, both PEs: reduce (int32 sum/max, float sum, bf16 sum),
//                    alltoall, fcollect, broadcast (int32); sizes as in coll.cu; each case checked
//                    once per size against the expected data
// NVSHMEM sends the on-stream collectives to NCCL when it has NCCL; the harness runs this program
// twice for NVSHMEM (NVSHMEM_DISABLE_NCCL=1 and default) and labels the two.
// Floors: floor_ce (cudaMemcpyAsync to the peer pointer), floor_kernel_flag_sync (a 1-thread
// kernel per call doing a flag exchange with the peer), floor_empty_kernel (an empty kernel per call).
#include "bench.cuh"
#include "floors.cuh"

#include <cuda_bf16.h>

using namespace bench;

__global__ void empty_kernel() {}

__global__ void flag_sync_kernel(unsigned long long *mine, unsigned long long *theirs, unsigned long long v) {
    floors::flag_sync(mine, theirs, v);
}

enum SKind { S_SUM_I32, S_MAX_I32, S_SUM_F32, S_SUM_BF16, S_ALLTOALL, S_FCOLLECT, S_BCAST };
struct SCase { const char *variant; SKind kind; size_t elem; };
static const SCase scases[] = {
    {"reduce_int32_sum", S_SUM_I32, 4}, {"reduce_int32_max", S_MAX_I32, 4}, {"reduce_float_sum", S_SUM_F32, 4},
    {"reduce_bf16_sum", S_SUM_BF16, 2}, {"alltoall_int32", S_ALLTOALL, 4},  {"fcollect_int32", S_FCOLLECT, 4},
    {"broadcast_int32", S_BCAST, 4},
};

static void enqueue(const SCase &c, void *dst, const void *src, size_t n) {
    nvshmem_team_t w = NVSHMEM_TEAM_WORLD;
    switch (c.kind) {
        case S_SUM_I32: nvshmemx_int32_sum_reduce_on_stream(w, (int32_t *)dst, (const int32_t *)src, n, stream); break;
        case S_MAX_I32: nvshmemx_int32_max_reduce_on_stream(w, (int32_t *)dst, (const int32_t *)src, n, stream); break;
        case S_SUM_F32: nvshmemx_float_sum_reduce_on_stream(w, (float *)dst, (const float *)src, n, stream); break;
        case S_SUM_BF16:
            nvshmemx_bfloat16_sum_reduce_on_stream(w, (__nv_bfloat16 *)dst, (const __nv_bfloat16 *)src, n, stream);
            break;
        case S_ALLTOALL: nvshmemx_int32_alltoall_on_stream(w, (int32_t *)dst, (const int32_t *)src, n, stream); break;
        case S_FCOLLECT: nvshmemx_int32_fcollect_on_stream(w, (int32_t *)dst, (const int32_t *)src, n, stream); break;
        case S_BCAST: nvshmemx_int32_broadcast_on_stream(w, (int32_t *)dst, (const int32_t *)src, n, 0, stream); break;
    }
}

static int pattern(int pe, size_t k) { return (int)((pe * 7 + k) % 13); }

static void fill(const SCase &c, void *src, size_t count) {
    std::vector<char> h(count * c.elem);
    for (size_t k = 0; k < count; k++) {
        int v = pattern(mype, k);
        if (c.kind == S_SUM_F32) ((float *)h.data())[k] = (float)v;
        else if (c.kind == S_SUM_BF16) ((__nv_bfloat16 *)h.data())[k] = __float2bfloat16((float)v);
        else ((int32_t *)h.data())[k] = v;
    }
    CK(cudaMemcpy(src, h.data(), h.size(), cudaMemcpyHostToDevice));
}

static bool verify(const SCase &c, const void *dst, size_t n) {
    size_t dn = (c.kind == S_ALLTOALL || c.kind == S_FCOLLECT) ? n * (size_t)npes : n;
    std::vector<char> h(dn * c.elem);
    CK(cudaMemcpy(h.data(), dst, h.size(), cudaMemcpyDeviceToHost));
    if (c.kind == S_BCAST && mype == 0) return true;
    for (size_t k = 0; k < dn; k++) {
        double got = c.kind == S_SUM_F32 ? ((float *)h.data())[k]
                     : c.kind == S_SUM_BF16 ? __bfloat162float(((__nv_bfloat16 *)h.data())[k])
                                            : ((int32_t *)h.data())[k];
        double want_v = 0;
        switch (c.kind) {
            case S_SUM_I32: case S_SUM_F32: case S_SUM_BF16:
                for (int p = 0; p < npes; p++) want_v += pattern(p, k);
                break;
            case S_MAX_I32:
                for (int p = 0; p < npes; p++) want_v = std::max<double>(want_v, pattern(p, k));
                break;
            case S_ALLTOALL: want_v = pattern((int)(k / n), (size_t)mype * n + k % n); break;
            case S_FCOLLECT: want_v = pattern((int)(k / n), k % n); break;
            case S_BCAST: want_v = pattern(0, k); break;
        }
        if (got != want_v) return false;
    }
    return true;
}

int main(int argc, char **argv) {
    start(argc, argv, "stream");
    const size_t max_size = 128ull << 20;
    char *src = (char *)nvshmem_malloc(max_size);
    char *dst = (char *)nvshmem_malloc(max_size);
    unsigned long long *ctr = (unsigned long long *)nvshmem_malloc(256);
    if (!src || !dst || !ctr) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(src, 0x33 + mype, max_size));
    CK(cudaMemset(dst, 0, max_size));
    CK(cudaMemset(ctr, 0, 256));
    bool fl = floors_possible(dst);
    char *pdst = fl ? peer_ptr(dst) : nullptr;
    unsigned long long *pctr = fl ? peer_ptr(ctr) : nullptr;
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();

    // ---- putmem / getmem on a stream: bandwidth ----
    for (size_t s : sizes(4096, max_size, 4)) {
        int guess = clamp_iters(32.0 * 1024 * 1024 / (double)s, 2, 200);
        auto bw = [&](const char *v, auto &&launch) {
            if (!want("stream_put", v)) return;
            double ms = events_per_iter_ms(launch, mype == 0, guess, 2, 2000);
            emit("stream_put", v, s, 0, 0, mype == 0 ? (double)s / (ms * 1e-3) / 1e9 : 0, "GB/s");
        };
        bw("put_nbi", [&](int it) {
            for (int i = 0; i < it; i++) nvshmemx_putmem_nbi_on_stream(dst, src, s, peer, stream);
            nvshmemx_quiet_on_stream(stream);
        });
        bw("put", [&](int it) {
            for (int i = 0; i < it; i++) nvshmemx_putmem_on_stream(dst, src, s, peer, stream);
        });
        bw("get_nbi", [&](int it) {
            for (int i = 0; i < it; i++) nvshmemx_getmem_nbi_on_stream(dst, src, s, peer, stream);
            nvshmemx_quiet_on_stream(stream);
        });
        if (fl)
            bw("floor_ce", [&](int it) {
                for (int i = 0; i < it; i++) CK(cudaMemcpyAsync(pdst, src, s, cudaMemcpyDeviceToDevice, stream));
            });
    }
    nvshmem_barrier_all();
    if (mype == 1) {  // PE 0's last puts (pattern 0x33) are in PE 1's dst.
        std::vector<unsigned char> h(1 << 20);
        CK(cudaMemcpy(h.data(), dst, h.size(), cudaMemcpyDeviceToHost));
        bool ok = true;
        for (size_t k = 0; k < h.size(); k += 313) ok &= h[k] == 0x33;
        check(ok, "stream_put: data at PE 1", h.size());
    }
    nvshmem_barrier_all();

    // ---- latency of one put + quiet on a stream ----
    for (size_t s : sizes(8, 64 << 10, 3)) {
        if (!want("stream_put_lat", "put_quiet")) break;
        double ms = events_per_iter_ms(
            [&](int it) {
                for (int i = 0; i < it; i++) {
                    nvshmemx_putmem_on_stream(dst, src, s, peer, stream);
                    nvshmemx_quiet_on_stream(stream);
                }
            },
            mype == 0, 100, 20, 2000);
        emit("stream_put_lat", "put_quiet", s, 0, 0, mype == 0 ? ms * 1e3 : 0, "us");
    }

    // ---- barriers on a stream (both PEs; value = the slower PE) ----
    auto both = [&](const char *bench, const std::string &v, size_t size, auto &&launch, int lo, int hi) {
        if (!want(bench, v)) return;
        double ms = events_per_iter_ms(launch, true, 100, lo, hi);
        emit(bench, v, size, 0, 0, max_over_pes(ms) * 1e3, "us");
    };
    nvshmem_team_t world = NVSHMEM_TEAM_WORLD;
    both("stream_sync", "barrier_all_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_barrier_all_on_stream(stream); }, 50, 5000);
    both("stream_sync", "barrier_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_barrier_on_stream(world, stream); }, 50, 5000);
    both("stream_sync", "sync_all_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_sync_all_on_stream(stream); }, 50, 5000);
    both("stream_sync", "team_sync_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_team_sync_on_stream(world, stream); }, 50, 5000);
    if (fl) {
        both("stream_sync", "floor_kernel_flag_sync", 0, [&](int it) {
            unsigned long long base = floors::next_base(0, it);
            for (int i = 1; i <= it; i++) flag_sync_kernel<<<1, 1, 0, stream>>>(ctr, pctr, base + (unsigned long long)i);
        }, 50, 5000);
    }
    both("stream_sync", "floor_empty_kernel", 0, [&](int it) { for (int i = 0; i < it; i++) empty_kernel<<<1, 1, 0, stream>>>(); }, 50, 5000);

    // ---- collectives on a stream ----
    for (const SCase &c : scases) {
        for (size_t s : sizes(8, 4u << 20, 4)) {
            bool per_pe_block = c.kind == S_ALLTOALL || c.kind == S_FCOLLECT;
            size_t n = per_pe_block ? s / (c.elem * (size_t)npes) : s / c.elem;
            if (n == 0 || !want("stream_coll", c.variant)) continue;
            size_t src_n = c.kind == S_ALLTOALL ? n * (size_t)npes : n;
            fill(c, src, src_n);
            CK(cudaMemset(dst, 0xff, s));
            CK(cudaDeviceSynchronize());
            nvshmem_barrier_all();
            enqueue(c, dst, src, n);
            CK(cudaStreamSynchronize(stream));
            nvshmem_barrier_all();
            check(verify(c, dst, n), (std::string("stream_coll/") + c.variant).c_str(), s);
            int guess = clamp_iters(100.0 * 65536 / (double)std::max<size_t>(s, 65536), 5, 100);
            double ms = events_per_iter_ms([&](int it) { for (int i = 0; i < it; i++) enqueue(c, dst, src, n); }, true, guess, 5, 2000);
            emit("stream_coll", c.variant, s, 0, 0, max_over_pes(ms) * 1e3, "us");
        }
    }

    nvshmem_barrier_all();
    nvshmem_free(ctr);
    nvshmem_free(dst);
    nvshmem_free(src);
    return finish();
}
