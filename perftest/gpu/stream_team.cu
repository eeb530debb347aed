// Team-based host operations on a CUDA stream (separate from stream.cu so that a library without
// them still gets stream.cu's rows), timed with CUDA events around `iters` calls enqueued back to
// back on one stream; both PEs call; value = the slower PE, µs per call.
//   stream_sync      barrier_on_stream(WORLD), team_sync_on_stream(WORLD)
//   stream_coll      reduce (int32 sum/max, float sum, bf16 sum), alltoall, fcollect, broadcast
//                    (int32), 8 B...4 MiB, sizes as in coll.cu; each case checked once per size
//                    against the expected data
// NVSHMEM sends the on-stream collectives to NCCL when it has NCCL; the harness runs this program
// twice for NVSHMEM (NVSHMEM_DISABLE_NCCL=1 and default) and labels the two.
#include "bench.cuh"

#include <cuda_bf16.h>

using namespace bench;

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
    start(argc, argv, "stream_team");
    const size_t max_size = 4u << 20;
    char *src = (char *)nvshmem_malloc(max_size);
    char *dst = (char *)nvshmem_malloc(max_size);
    if (!src || !dst) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(src, 0, max_size));
    CK(cudaMemset(dst, 0, max_size));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();

    // ---- barriers on a stream (both PEs; value = the slower PE) ----
    auto both = [&](const char *bench, const std::string &v, size_t size, auto &&launch, int lo, int hi) {
        if (!want(bench, v)) return;
        double ms = events_per_iter_ms(launch, true, 100, lo, hi);
        emit(bench, v, size, 0, 0, max_over_pes(ms) * 1e3, "us");
    };
    nvshmem_team_t world = NVSHMEM_TEAM_WORLD;
    both("stream_sync", "barrier_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_barrier_on_stream(world, stream); }, 50, 5000);
    both("stream_sync", "team_sync_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_team_sync_on_stream(world, stream); }, 50, 5000);

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
    nvshmem_free(dst);
    nvshmem_free(src);
    return finish();
}
