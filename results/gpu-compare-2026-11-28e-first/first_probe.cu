// nvbench, session 23: where the first on-stream collectives' time goes, per PE, on one clock.
// Built against rshmem and against NVSHMEM from this one source (build.sh); host API only.
// Every PE prints CSV lines `probe,PE,label,start_s,ms`: start_s is CLOCK_MONOTONIC (one clock
// for every process of the host), so the PEs' starts and ends line up across the lines.
//   mode "seq": as perftest/gpu/init: broadcast 64 B, broadcast 64 KiB, int sum reduce of 16,
//               each to its stream's end (the rows of the issue), after init and a barrier;
//   mode "big": the 64 KiB broadcast first (nothing before it but init and the barrier).
// Then, in both modes, idle gaps: barrier, every PE sleeps G ms, a 64 KiB broadcast to its end,
// for G = 0, 0.2, 1, 10, 100 ms, twice each: a cost that comes back after idle time is the
// hardware's (links, clocks), not a first call's.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "first_probe: %s: %s\n", #x, cudaGetErrorString(e_));                \
            exit(2);                                                                             \
        }                                                                                        \
    } while (0)

static double now_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int me = 0;
static void line(const char *label, double start, double end) {
    printf("probe,%d,%s,%.6f,%.4f\n", me, label, start, (end - start) * 1e3);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "seq";
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lr) lr = getenv("RSHMEM_RANK");
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (lr && ndev > 0) {
        CK(cudaSetDevice(atoi(lr) % ndev));
        CK(cudaFree(0));
    }
    double i0 = now_s();
    nvshmem_init();
    double i1 = now_s();
    me = nvshmem_my_pe();
    line("init", i0, i1);
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    char *b = (char *)nvshmem_malloc(1 << 20);
    if (!b) {
        fprintf(stderr, "first_probe: nvshmem_malloc(1 MiB) failed\n");
        return 2;
    }
    nvshmem_barrier_all();
    CK(cudaDeviceSynchronize());
    double b0 = now_s();
    nvshmem_barrier_all();
    line("barrier_exit", b0, now_s());
    auto bcast64 = [&] { nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b, b + 4096, 64, 0, st); };
    auto bcast64k = [&] { nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b, b + 65536, 65536, 0, st); };
    auto reduce16 = [&] { nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (int *)b, (int *)(b + 8192), 16, st); };
    auto timed = [&](const char *label, auto call) {
        double t = now_s();
        call();
        double l = now_s();
        CK(cudaStreamSynchronize(st));
        double e = now_s();
        line(label, t, e);
        char launch[64];
        snprintf(launch, sizeof launch, "%s.launch", label);
        line(launch, t, l);
    };
    if (strcmp(mode, "big") == 0) {
        timed("first_bcast_64KiB", bcast64k);
        timed("then_bcast_64B", bcast64);
        timed("then_reduce_int16", reduce16);
    } else {
        timed("first_bcast_64B", bcast64);
        timed("first_bcast_64KiB", bcast64k);
        timed("first_reduce_int16", reduce16);
    }
    timed("again_bcast_64KiB", bcast64k);
    timed("again_reduce_int16", reduce16);
    const double gaps_ms[] = {0, 0.2, 1, 10, 100};
    for (double g : gaps_ms) {
        for (int r = 0; r < 2; r++) {
            nvshmem_barrier_all();
            if (g > 0) {
                timespec ts = {(time_t)(g / 1000), (long)((g - 1000 * (long)(g / 1000)) * 1e6)};
                nanosleep(&ts, nullptr);
            }
            char label[64];
            snprintf(label, sizeof label, "idle_%gms_bcast_64KiB", g);
            timed(label, bcast64k);
        }
    }
    nvshmem_barrier_all();
    nvshmem_free(b);
    CK(cudaStreamDestroy(st));
    fflush(stdout);
    nvshmem_finalize();
    return 0;
}
