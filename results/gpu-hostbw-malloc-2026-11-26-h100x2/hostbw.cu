// Host-initiated put bandwidth, PE 0 -> PE 1, as NVSHMEM's host/pt-to-pt/bw measures it
// (putmem_nbi in a loop, one quiet, wall clock), plus blocking putmem, getmem_nbi, and the
// floor: the same copies by cudaMemcpyAsync to the peer's address (nvshmem_ptr).
// Built against NVSHMEM (-rdc) or rshmem from this one source.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

static double now_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

int main(void) {
    // One GPU per PE, chosen by the launcher's local rank (as NVSHMEM's perftests do).
    const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lr) lr = getenv("RSHMEM_RANK");
    int ndev = 1;
    cudaGetDeviceCount(&ndev);
    if (lr) cudaSetDevice(atoi(lr) % ndev);
    nvshmem_init();
    int me = nvshmem_my_pe();
    const size_t max = 64 << 20;
    char *dst = (char *)nvshmem_malloc(max), *src = (char *)nvshmem_malloc(max);
    cudaMemset(src, 1, max);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    if (me == 0) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        void *peer = nvshmem_ptr(dst, 1);
        printf("bytes,iters,putmem_nbi_GBs,putmem_GBs,getmem_nbi_GBs,memcpy_peer_GBs\n");
        for (size_t b = 64 << 10; b <= max; b *= 4) {
            int iters = b >= (16 << 20) ? 40 : 200;
            double best[4] = {1e9, 1e9, 1e9, 1e9};
            for (int rep = 0; rep < 5; rep++) {
                double t = now_s();
                for (int i = 0; i < iters; i++) nvshmem_putmem_nbi(dst, src, b, 1);
                nvshmem_quiet();
                double d0 = now_s() - t; t = now_s();
                for (int i = 0; i < iters; i++) nvshmem_putmem(dst, src, b, 1);
                double d1 = now_s() - t; t = now_s();
                for (int i = 0; i < iters; i++) nvshmem_getmem_nbi(src, dst, b, 1);
                nvshmem_quiet();
                double d2 = now_s() - t; t = now_s();
                for (int i = 0; i < iters; i++) cudaMemcpyAsync(peer, src, b, cudaMemcpyDefault, s);
                cudaStreamSynchronize(s);
                double d3 = now_s() - t;
                double d[4] = {d0, d1, d2, d3};
                for (int k = 0; k < 4; k++) if (d[k] < best[k]) best[k] = d[k];
            }
            double v = (double)b * iters / 1e9;
            printf("%zu,%d,%.1f,%.1f,%.1f,%.1f\n", b, iters, v / best[0], v / best[1], v / best[2], v / best[3]);
        }
        cudaStreamDestroy(s);
    }
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
    nvshmem_finalize();
    return 0;
}
