// Device barriers and syncs, one CTA per PE, µs per call (window inside the kernel after warm-up
// calls): barrier_all, sync_all, team_sync(TEAM_WORLD), barrier(TEAM_WORLD), at thread scope
// (1-thread kernel), warp scope (32 threads) and block scope (256 / 1024 threads).
// Floor: floor_flag_sync = fence + store to the peer's counter + spin on the own counter (one
// thread; bracketed by __syncthreads for a block): what any 2-PE barrier has to do.
#include "bench.cuh"
#include "floors.cuh"

using namespace bench;

// sync_all last: NVSHMEM 3.4.5's own sync_latency hung there (anchors), so the other rows come first.
enum { BARRIER_ALL = 0, BARRIER, TEAM_SYNC, SYNC_ALL };
static const char *op_name[] = {"barrier_all", "barrier", "team_sync", "sync_all"};
enum { SC_THREAD = 0, SC_WARP = 1, SC_BLOCK = 2 };
static const char *scope_name[] = {"thread", "warp", "block"};

template <int OP, int SC>
__device__ __forceinline__ void call() {
    if (OP == BARRIER_ALL) {
        if (SC == SC_THREAD) nvshmem_barrier_all();
        else if (SC == SC_WARP) nvshmemx_barrier_all_warp();
        else nvshmemx_barrier_all_block();
    } else if (OP == SYNC_ALL) {
        if (SC == SC_THREAD) nvshmem_sync_all();
        else if (SC == SC_WARP) nvshmemx_sync_all_warp();
        else nvshmemx_sync_all_block();
    } else if (OP == TEAM_SYNC) {
        if (SC == SC_THREAD) nvshmem_team_sync(NVSHMEM_TEAM_WORLD);
        else if (SC == SC_WARP) nvshmemx_team_sync_warp(NVSHMEM_TEAM_WORLD);
        else nvshmemx_team_sync_block(NVSHMEM_TEAM_WORLD);
    } else {
        if (SC == SC_THREAD) nvshmem_barrier(NVSHMEM_TEAM_WORLD);
        else if (SC == SC_WARP) nvshmemx_barrier_warp(NVSHMEM_TEAM_WORLD);
        else nvshmemx_barrier_block(NVSHMEM_TEAM_WORLD);
    }
}

template <int OP, int SC>
__global__ void sync_kernel(int warm, int iters, unsigned long long *slot) {
    unsigned long long t0 = 0;
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm) {
            if (SC == SC_BLOCK) __syncthreads();
            if (threadIdx.x == 0) t0 = gtimer();
        }
        call<OP, SC>();
    }
    if (SC == SC_BLOCK) __syncthreads();
    if (threadIdx.x == 0) *slot = gtimer() - t0;
}

typedef void (*sync_fn)(int, int, unsigned long long *);
#define ROW3(OP) {sync_kernel<OP, SC_THREAD>, sync_kernel<OP, SC_WARP>, sync_kernel<OP, SC_BLOCK>}
static const sync_fn kernels[4][3] = {ROW3(BARRIER_ALL), ROW3(BARRIER), ROW3(TEAM_SYNC), ROW3(SYNC_ALL)};

int main(int argc, char **argv) {
    start(argc, argv, "sync");
    unsigned long long *ctr = (unsigned long long *)nvshmem_malloc(256);
    if (!ctr) { fprintf(stderr, "nvshmem_malloc failed\n"); return 2; }
    CK(cudaMemset(ctr, 0, 256));
    bool fl = floors_possible(ctr);
    unsigned long long *pctr = fl ? peer_ptr(ctr) : nullptr;
    nvshmem_barrier_all();

    std::vector<int> block_threads = list_or(opt.threads, {256, 1024}, {256});
    for (int sc = SC_THREAD; sc <= SC_BLOCK; sc++) {
        std::vector<int> thr = sc == SC_THREAD ? std::vector<int>{1} : sc == SC_WARP ? std::vector<int>{32} : block_threads;
        for (int t : thr) {
            for (int op = BARRIER_ALL; op <= SYNC_ALL; op++) {
                std::string v = std::string(op_name[op]) + "_" + scope_name[sc];
                if (!want("sync", v) || !fits(kernels[op][sc], t, v.c_str())) continue;
                double us = window_per_iter_us(
                    [&](int w, int it, unsigned long long *slot) { kernels[op][sc]<<<1, t, 0, stream>>>(w, it, slot); },
                    500, 50, 100000);
                emit("sync", v, 0, 1, t, us, "us");
            }
            if (fl && sc != SC_WARP && want("sync", std::string("floor_flag_sync_") + scope_name[sc])) {
                double us = window_per_iter_us(
                    [&](int w, int it, unsigned long long *slot) {
                        floors::sync_pair<<<1, t, 0, stream>>>(ctr, pctr, floors::next_base(w, it), w, it, slot);
                    },
                    500, 50, 100000);
                emit("sync", std::string("floor_flag_sync_") + scope_name[sc], 0, 1, t, us, "us");
            }
        }
    }
    nvshmem_barrier_all();
    nvshmem_free(ctr);
    return finish();
}
