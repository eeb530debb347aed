// Host-issued operations on a CUDA stream, timed with CUDA events around `iters` calls enqueued
// back to back on one stream.
//   stream_put       GB/s, PE 0 -> PE 1: putmem_nbi_on_stream x iters + quiet_on_stream,
//                    putmem_on_stream x iters, getmem_nbi_on_stream x iters + quiet_on_stream
//   stream_put_lat   µs per (putmem_on_stream + quiet_on_stream)
//   host_put         GB/s, PE 0 -> PE 1: nvshmem_putmem / getmem x iters (blocking, from the
//                    host), putmem_nbi x iters + quiet
//   stream_sync      µs per call, both PEs: barrier_all_on_stream, sync_all_on_stream; value =
//                    the slower PE (the team forms and the collectives are in stream_team.cu)
// Floors: floor_ce (cudaMemcpyAsync to the peer pointer), floor_kernel_flag_sync (a 1-thread
// kernel per call doing a flag exchange with the peer), floor_empty_kernel (an empty kernel per call).
#include "bench.cuh"
#include "floors.cuh"

using namespace bench;

__global__ void empty_kernel() {}

__global__ void flag_sync_kernel(unsigned long long *mine, unsigned long long *theirs, unsigned long long v) {
    floors::flag_sync(mine, theirs, v);
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
    // One bandwidth row of `s` bytes per iteration (PE 0's rate).
    auto rate = [&](const char *bench, const char *v, size_t s, auto &&launch) {
        if (!want(bench, v)) return;
        int guess = clamp_iters(32.0 * 1024 * 1024 / (double)s, 2, 200);
        double ms = events_per_iter_ms(launch, mype == 0, guess, 2, 2000);
        emit(bench, v, s, 0, 0, mype == 0 ? (double)s / (ms * 1e-3) / 1e9 : 0, "GB/s");
    };
    for (size_t s : sizes(4096, max_size, 4)) {
        auto bw = [&](const char *v, auto &&launch) { rate("stream_put", v, s, launch); };
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
    // ---- host-initiated putmem / getmem (blocking, and nbi + quiet): bandwidth ----
    // The host waits for each call (or for quiet), so the events on the idle `stream` around the
    // loop measure its wall time. floor_ce_sync: cudaMemcpyAsync to the peer pointer, each copy
    // waited for (cudaStreamSynchronize), as a blocking put must.
    for (size_t s : sizes(64 << 10, 64 << 20, 2)) {
        auto bw = [&](const char *v, auto &&launch) { rate("host_put", v, s, launch); };
        bw("putmem", [&](int it) {
            for (int i = 0; i < it; i++) nvshmem_putmem(dst, src, s, peer);
        });
        bw("putmem_nbi", [&](int it) {
            for (int i = 0; i < it; i++) nvshmem_putmem_nbi(dst, src, s, peer);
            nvshmem_quiet();
        });
        bw("getmem", [&](int it) {
            for (int i = 0; i < it; i++) nvshmem_getmem(dst, src, s, peer);
        });
        if (fl)
            bw("floor_ce_sync", [&](int it) {
                for (int i = 0; i < it; i++) {
                    CK(cudaMemcpyAsync(pdst, src, s, cudaMemcpyDeviceToDevice, stream));
                    CK(cudaStreamSynchronize(stream));
                }
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
    both("stream_sync", "barrier_all_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_barrier_all_on_stream(stream); }, 50, 5000);
    both("stream_sync", "sync_all_on_stream", 0, [&](int it) { for (int i = 0; i < it; i++) nvshmemx_sync_all_on_stream(stream); }, 50, 5000);
    if (fl) {
        both("stream_sync", "floor_kernel_flag_sync", 0, [&](int it) {
            unsigned long long base = floors::next_base(0, it);
            for (int i = 1; i <= it; i++) flag_sync_kernel<<<1, 1, 0, stream>>>(ctr, pctr, base + (unsigned long long)i);
        }, 50, 5000);
    }
    both("stream_sync", "floor_empty_kernel", 0, [&](int it) { for (int i = 0; i < it; i++) empty_kernel<<<1, 1, 0, stream>>>(); }, 50, 5000);

    nvshmem_barrier_all();
    nvshmem_free(ctr);
    nvshmem_free(dst);
    nvshmem_free(src);
    return finish();
}
