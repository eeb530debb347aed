// First-use cost of the library's kernels: the first small on-stream broadcast (ll.ptx JIT),
// the first large one (coll.ptx), the first int sum reduction (reduce_i32.ptx), then again.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <chrono>
#include <cstdio>
static double ms(std::chrono::steady_clock::time_point a) { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count(); }
int main() {
    nvshmem_init();
    cudaSetDevice(0);
    cudaStream_t s; cudaStreamCreate(&s);
    char *b = (char *)nvshmem_malloc(1 << 20);
    nvshmem_barrier_all();
    for (int round = 0; round < 2; round++) {
        auto t = std::chrono::steady_clock::now();
        nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b, b + 4096, 64, 0, s); cudaStreamSynchronize(s);
        double small = ms(t); t = std::chrono::steady_clock::now();
        nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, b, b + 65536, 65536, 0, s); cudaStreamSynchronize(s);
        double large = ms(t); t = std::chrono::steady_clock::now();
        nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (int *)b, (int *)(b + 8192), 16, s); cudaStreamSynchronize(s);
        double red = ms(t);
        if (nvshmem_my_pe() == 0) printf("round %d: small broadcast %.2f ms, large broadcast %.2f ms, int sum reduce %.2f ms\n", round, small, large, red);
    }
    nvshmem_finalize();
    return 0;
}
