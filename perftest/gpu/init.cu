// Start-up and shut-down cost, and the GPU memory the library takes (PE 0's view; CLOCK_MONOTONIC):
//   init/ctx                 cudaSetDevice + cudaFree(0) (the CUDA context, before the library)
//   init/nvshmem_init        nvshmem_init()
//   init/first_barrier       the first nvshmem_barrier_all() + cudaDeviceSynchronize()
//   init/init_to_first_barrier   the two above together
//   init/malloc_256MiB, init/free_256MiB
//   init/malloc_1GiB         nvshmem_malloc(1 GiB) after the first collectives (the heap grows
//                            past what init and the 256 MiB call left mapped); not printed when
//                            the library refuses it
//   init/first_bcast_64B, init/first_bcast_64KiB, init/first_sum_reduce_int
//                            the job's first on-stream broadcast of 64 B and of 64 KiB, and its
//                            first int sum reduction (16 ints), each to its stream's end: what
//                            loading (or JIT-compiling) the library's own kernels costs. Run with
//                            CUDA_CACHE_DISABLE=1 for a fresh container's driver cache.
//   init/finalize            nvshmem_finalize()
//   mem/after_init, mem/after_first_barrier, mem/after_malloc_256MiB, mem/after_malloc_1GiB
//                            device memory gone from cudaMemGetInfo's free count since the CUDA
//                            context existed (MiB): what the library took (the last one shows
//                            whether the 1 GiB call created memory at all, or found it already
//                            there)
// Also printed by the harness: launch/wall = the whole launch (launcher + both processes), s.
#include "bench.cuh"

using namespace bench;

__global__ void touch_kernel(char *p, size_t n) {
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (size_t)gridDim.x * blockDim.x) p[k] = 1;
}

static double free_mib() {
    size_t f = 0, t = 0;
    CK(cudaMemGetInfo(&f, &t));
    return (double)f / (1024.0 * 1024.0);
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    double t0 = now_s();
    int dev = select_device();
    double t1 = now_s();
    if (dev < 0) fprintf(stderr, "init: launcher gave no local rank; the CUDA context is made by the library\n");
    double free0 = dev >= 0 ? free_mib() : 0;

    double t2 = now_s();
    nvshmem_init();
    double t3 = now_s();
    double free1 = free_mib();
    mype = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    double t4 = now_s();
    nvshmem_barrier_all();
    CK(cudaDeviceSynchronize());
    double t5 = now_s();
    double free2 = free_mib();
    if (mype == 0) {
        printf("# init: %d PEs\n", npes);
        printf("bench,variant,size,ctas,threads,value,unit\n");
    }

    const size_t big = 256ull << 20;
    double t6 = now_s();
    char *p = (char *)nvshmem_malloc(big);
    double t7 = now_s();
    if (!p) { fprintf(stderr, "init: nvshmem_malloc(256 MiB) failed\n"); return 2; }
    touch_kernel<<<132, 1024>>>(p, big);
    CKLAUNCH();
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    double free3 = free_mib();
    double t8 = now_s();
    nvshmem_free(p);
    double t9 = now_s();
    nvshmem_barrier_all();

    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    char *b = (char *)nvshmem_malloc(1 << 20);
    if (!b) { fprintf(stderr, "init: nvshmem_malloc(1 MiB) failed\n"); return 2; }
    nvshmem_barrier_all();
    double first[3];
    for (int k = 0; k < 3; k++) {
        double t = now_s();
        if (k == 0) nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b, b + 4096, 64, 0, stream);
        if (k == 1) nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b, b + 65536, 65536, 0, stream);
        if (k == 2) nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (int *)b, (int *)(b + 8192), 16, stream);
        CK(cudaStreamSynchronize(stream));
        first[k] = now_s() - t;
    }
    nvshmem_barrier_all();
    nvshmem_free(b);
    CK(cudaStreamDestroy(stream));
    nvshmem_barrier_all();
    double t12 = now_s();
    char *huge = (char *)nvshmem_malloc(1ull << 30);
    double t13 = now_s();
    double free4 = dev >= 0 && huge ? free_mib() : 0;
    if (!huge && mype == 0) fprintf(stderr, "init: nvshmem_malloc(1 GiB) failed; no malloc_1GiB row\n");
    nvshmem_barrier_all();
    if (huge) nvshmem_free(huge);

    if (dev >= 0) emit("init", "ctx", 0, 0, 0, (t1 - t0) * 1e3, "ms");
    emit("init", "nvshmem_init", 0, 0, 0, (t3 - t2) * 1e3, "ms");
    emit("init", "first_barrier", 0, 0, 0, (t5 - t4) * 1e3, "ms");
    emit("init", "init_to_first_barrier", 0, 0, 0, (t5 - t2) * 1e3, "ms");
    emit("init", "malloc_256MiB", 0, 0, 0, (t7 - t6) * 1e3, "ms");
    emit("init", "free_256MiB", 0, 0, 0, (t9 - t8) * 1e3, "ms");
    if (huge) emit("init", "malloc_1GiB", 0, 0, 0, (t13 - t12) * 1e3, "ms");
    emit("init", "first_bcast_64B", 0, 0, 0, first[0] * 1e3, "ms");
    emit("init", "first_bcast_64KiB", 0, 0, 0, first[1] * 1e3, "ms");
    emit("init", "first_sum_reduce_int", 0, 0, 0, first[2] * 1e3, "ms");
    if (dev >= 0) {
        emit("mem", "after_init", 0, 0, 0, free0 - free1, "MiB");
        emit("mem", "after_first_barrier", 0, 0, 0, free0 - free2, "MiB");
        emit("mem", "after_malloc_256MiB", 0, 0, 0, free0 - free3, "MiB");
        if (huge) emit("mem", "after_malloc_1GiB", 0, 0, 0, free0 - free4, "MiB");
    }
    fflush(stdout);

    double t10 = now_s();
    nvshmem_finalize();
    double t11 = now_s();
    emit("init", "finalize", 0, 0, 0, (t11 - t10) * 1e3, "ms");
    return 0;
}
