// CUDA side of the NVSHMEM project: a kernel that puts into the next PE's symmetric buffer.
// Compiled and linked in CI without -rdc (run only on a GPU machine).
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdio>

__global__ void ring(int *dest) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(dest, me, (me + 1) % n);
}

int main() {
    nvshmem_init();
    int *dest = static_cast<int *>(nvshmem_malloc(sizeof(int)));
    ring<<<1, 1>>>(dest);
    nvshmemx_barrier_all_on_stream(0);
    int got = -1;
    cudaMemcpy(&got, dest, sizeof got, cudaMemcpyDeviceToHost);
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    std::printf("PE %d: got %d %s\n", me, got, got == (me + n - 1) % n ? "ok" : "WRONG");
    nvshmem_free(dest);
    nvshmem_finalize();
    return got == (me + n - 1) % n ? 0 : 1;
}
