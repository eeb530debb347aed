/* Proxy transport benchmark (issue 19 item 5): device operations to a PE on another host, which
 * rshmem hands to its host proxy. Run with 2 PEs on 2 hosts (perftest/proxy/run.sh: namespaced
 * hosts on one GPU machine); PE 0 measures against PE 1, PE 1 serves and answers ping-pongs.
 * Prints, one line each:
 *   post   CTAS  M ops/s      8-byte nvshmem_long_p per thread 0 of CTAS blocks, then one quiet
 *   putq         us/op        8-byte p + quiet, one thread (the full hand-off and completion)
 *   pingpong     us/rtt       p to the peer, wait for its p back (one thread on each side)
 *   bw     BYTES MB/s         nvshmemx_putmem_nbi_block from one block, then quiet
 *   floor-gpu-cpu-gpu us/rtt  a kernel writes a flag in pinned host memory, a CPU thread
 *                             echoes it into another, the kernel waits for it (no library)
 * Built with -DRSHMEM_PROXY_ROUTE (the proxy route is compiled into device code only then). */
#include <stdio.h>
#include <stdlib.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <nvshmem.h>
#include <nvshmemx.h>

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "proxy_bench: %s: %s\n", #call, cudaGetErrorString(e_));      \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__global__ void post_kernel(long *dst, int iters, int peer) {
    if (threadIdx.x == 0)
        for (int i = 0; i < iters; i++) nvshmem_long_p(dst + blockIdx.x, i, peer);
    __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x == 0) nvshmem_quiet();
}

__global__ void putq_kernel(long *dst, int iters, int peer) {
    for (int i = 0; i < iters; i++) {
        nvshmem_long_p(dst, i, peer);
        nvshmem_quiet();
    }
}

/* PE 0 sends i, PE 1 answers i; each waits for the other's value. */
__global__ void pingpong_kernel(long *flag, int iters, int peer, int me) {
    for (int i = 1; i <= iters; i++) {
        if (me == 0) {
            nvshmem_long_p(flag, i, peer);
            nvshmem_long_wait_until(flag, NVSHMEM_CMP_GE, i);
        } else {
            nvshmem_long_wait_until(flag, NVSHMEM_CMP_GE, i);
            nvshmem_long_p(flag, i, peer);
        }
    }
}

__global__ void bw_kernel(char *dst, const char *src, size_t bytes, int iters, int peer) {
    for (int i = 0; i < iters; i++) nvshmemx_putmem_nbi_block(dst, src, bytes, peer);
    if (threadIdx.x == 0) nvshmem_quiet();
}

__global__ void flag_kernel(volatile unsigned *to_cpu, volatile unsigned *from_cpu, int iters) {
    for (unsigned i = 1; i <= (unsigned)iters; i++) {
        *to_cpu = i;
        __threadfence_system();
        while (*from_cpu < i) {
        }
    }
}

/* Times `launch` (a kernel on the default stream) from launch to synchronize, in µs. */
template <typename F>
static double timed(F launch) {
    CK(cudaDeviceSynchronize());
    double t = now_us();
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return now_us() - t;
}

int main(void) {
    nvshmem_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    CK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE)));
    if (n != 2) {
        if (me == 0) fprintf(stderr, "proxy_bench: run with 2 PEs on 2 hosts (got %d PEs)\n", n);
        nvshmem_finalize();
        return 1;
    }
    int peer = 1 - me;
    if (nvshmem_ptr(nvshmem_malloc(8), peer) != NULL && me == 0)
        printf("note: PE 1 is on this host (mapped): these are NOT proxy numbers\n");
    const int scale = getenv("PROXY_BENCH_SCALE") ? atoi(getenv("PROXY_BENCH_SCALE")) : 1;
    long *words = (long *)nvshmem_calloc(64, sizeof(long));
    size_t max_bytes = 4 << 20;
    char *buf = (char *)nvshmem_malloc(2 * max_bytes);
    nvshmem_barrier_all();

    if (me == 0) {
        const int post_iters = 200 * scale;
        for (int ctas = 1; ctas <= 32; ctas *= 2) {
            double us = timed([&] { post_kernel<<<ctas, 32>>>(words, post_iters, peer); });
            printf("post %2d CTAs: %.4f M ops/s (%d 8-byte puts in %.0f us)\n", ctas, ctas * post_iters / us, ctas * post_iters, us);
        }
        const int q_iters = 100 * scale;
        double us = timed([&] { putq_kernel<<<1, 1>>>(words, q_iters, peer); });
        printf("putq: %.1f us per 8-byte put + quiet\n", us / q_iters);
        fflush(stdout);
    }
    nvshmem_barrier_all();
    CK(cudaMemset(words, 0, 64 * sizeof(long)));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    const int pp_iters = 100 * scale;
    double pp = timed([&] { pingpong_kernel<<<1, 1>>>(words + 32, pp_iters, peer, me); });
    if (me == 0) printf("pingpong: %.1f us per round trip\n", pp / pp_iters);
    nvshmem_barrier_all();
    if (me == 0) {
        for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
            int iters = bytes >= (1 << 20) ? 2 * scale : 8 * scale;
            double us = timed([&] { bw_kernel<<<1, 256>>>(buf, buf + max_bytes, bytes, iters, peer); });
            printf("bw %8zu bytes: %.1f MB/s\n", bytes, (double)bytes * iters / us);
        }
        /* The floor of any proxy: GPU -> CPU -> GPU through pinned host memory. */
        unsigned *flags;
        CK(cudaHostAlloc(&flags, 2 * sizeof(unsigned), cudaHostAllocMapped));
        flags[0] = flags[1] = 0;
        const int f_iters = 10000;
        std::atomic<bool> done{false};
        std::thread echo([&] {
            volatile unsigned *f = flags;
            unsigned seen = 0;
            while (!done.load(std::memory_order_relaxed))
                if (f[0] != seen) f[1] = seen = f[0];
        });
        double us = timed([&] { flag_kernel<<<1, 1>>>(flags, flags + 1, f_iters); });
        done = true;
        echo.join();
        printf("floor-gpu-cpu-gpu: %.2f us per round trip\n", us / f_iters);
        fflush(stdout);
    }
    nvshmem_barrier_all();
    nvshmem_finalize();
    return 0;
}
