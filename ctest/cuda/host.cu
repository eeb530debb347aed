/* rshmem-cuda-test: pes=2
 * Host API in GPU mode: queries, teams, the heap (malloc/calloc/align/free, growth past the
 * first chunk, nvshmem_ptr), blocking host putmem/getmem and typed/sized p/g/put/get with host
 * and device buffers, signal fetch/set, and the library's own GPU memory report. */
#include <string.h>
#include <time.h>
#include "cuda_test.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__global__ void read_ptr_kernel(int *peer_ptr, int *out) { *out = *(volatile int *)peer_ptr; }

int main(void) {
    double t0 = now_ms();
    test_init();
    double init_ms = now_ms() - t0;
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK_EQ(nvshmemx_init_status(), NVSHMEM_STATUS_IS_INITIALIZED);
    CHECK_EQ(nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD), me);
    /* NODE is this host's PEs: all of them on one host, fewer when the job spans hosts
     * (ctest/cuda/crosshost.sh), where a PE outside it is not mapped here. */
    int node = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE);
    CHECK(node >= 1 && node <= n, "NODE team has %d PEs of %d", node, n);
    void *probe = nvshmem_malloc(8);
    for (int p = 0; p < n; p++)
        CHECK((nvshmem_ptr(probe, p) != NULL) == test_same_host(p), "nvshmem_ptr to PE %d is %s, but it is on %s host", p,
              nvshmem_ptr(probe, p) ? "non-NULL" : "NULL", test_same_host(p) ? "this" : "another");
    int major = 0, minor = 0, patch = 0;
    nvshmem_info_get_version(&major, &minor);
    CHECK(major == NVSHMEM_MAJOR_VERSION && minor == NVSHMEM_MINOR_VERSION, "version %d.%d", major, minor);
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    CHECK_EQ(major, 3);
    char name[NVSHMEM_MAX_NAME_LEN];
    nvshmem_info_get_name(name);
    CHECK(strstr(name, "rshmem") != NULL, "name %s", name);

    size_t mapped = 0, area = 0, measured = 0;
    CHECK_EQ(rshmem_gpu_memory_usage(&mapped, &area, &measured), 0);
    if (me == 0) printf("host: nvshmem_init (with the CUDA context) took %.1f ms on PE 0\n", init_ms);
    if (me == 0) printf("host: GPU memory used by rshmem after init: heap %zu bytes (runtime area %zu), driver-measured %zu\n", mapped, area, measured);
    /* Init maps the runtime area and, with RSHMEM_HEAP_MAP_AHEAD on (the default), one chunk of
     * CUMEM_GRANULARITY (default 512 MiB) ahead of the first allocation; nothing more. */
    const char *ahead = getenv("RSHMEM_HEAP_MAP_AHEAD");
    size_t init_limit = ((size_t)64 << 20) + (ahead && strcmp(ahead, "0") == 0 ? 0 : ((size_t)512 << 20));
    CHECK(mapped > 0 && mapped <= init_limit, "heap mapped at init %zu (at most %zu)", mapped, init_limit);

    /* Allocation: alignment, zeroing, symmetric offsets, growth beyond the first chunk. */
    int *a = (int *)nvshmem_malloc(1000 * sizeof(int));
    char *al = (char *)nvshmem_align(4096, 100);
    CHECK(((uintptr_t)al & 4095) == 0, "align 4096 gave %p", al);
    int *z = (int *)nvshmem_calloc(1 << 20, sizeof(int));
    int *hz = (int *)malloc((1 << 20) * sizeof(int));
    CUDA_CHECK(cudaMemcpy(hz, z, (1 << 20) * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < (1 << 20); i++) CHECK_EQ(hz[i], 0);
    size_t big_bytes = (size_t)600 << 20; /* more than the first chunk: the heap grows */
    char *big = (char *)nvshmem_malloc(big_bytes);
    CHECK(big != NULL, "600 MiB allocation");
    CUDA_CHECK(cudaMemset(big + big_bytes - 4096, me + 1, 4096));
    nvshmem_barrier_all();
    char tail[4096];
    nvshmem_getmem(tail, big + big_bytes - 4096, sizeof tail, right);
    for (int i = 0; i < 4096; i++) CHECK_EQ(tail[i], right + 1);
    size_t mapped_after = 0;
    rshmem_gpu_memory_usage(&mapped_after, NULL, NULL);
    CHECK(mapped_after >= big_bytes, "heap did not grow: %zu", mapped_after);

    /* nvshmem_ptr: my own address for me, a device pointer into the peer's heap otherwise. */
    CHECK(nvshmem_ptr(a, me) == a, "nvshmem_ptr(a, me)");
    /* Across hosts only a peer on this host is mapped here. */
    int *pa = (int *)nvshmem_ptr(a, right);
    CHECK((pa != NULL) == test_same_host(right), "nvshmem_ptr to the peer");
    int marker = 4242 + me;
    CUDA_CHECK(cudaMemcpy(a, &marker, sizeof marker, cudaMemcpyHostToDevice));
    nvshmem_barrier_all();
    int *out;
    CUDA_CHECK(cudaMalloc(&out, sizeof(int)));
    if (pa != NULL) {
        read_ptr_kernel<<<1, 1>>>(pa, out);
        CUDA_CHECK(cudaDeviceSynchronize());
        int got = 0;
        CUDA_CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        CHECK_EQ(got, 4242 + right);
    }
    int local = 0;
    CHECK(nvshmem_ptr(&local, right) == NULL, "nvshmem_ptr of a non-symmetric address");
    nvshmem_barrier_all();

    /* Host RMA from host memory and from device memory. */
    int hv[1000];
    for (int i = 0; i < 1000; i++) hv[i] = me * 1000000 + i;
    nvshmem_int_put(a, hv, 1000, right);
    nvshmem_barrier_all();
    int back[1000];
    CUDA_CHECK(cudaMemcpy(back, a, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 1000; i++) CHECK_EQ(back[i], left * 1000000 + i);
    nvshmem_barrier_all();
    nvshmem_int_get(back, a, 1000, right); /* right's a holds what I put */
    for (int i = 0; i < 1000; i++) CHECK_EQ(back[i], me * 1000000 + i);
    int *dev;
    CUDA_CHECK(cudaMalloc(&dev, 1000 * sizeof(int)));
    nvshmem_getmem(dev, a, 1000 * sizeof(int), right); /* into device memory */
    CUDA_CHECK(cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 1000; i++) CHECK_EQ(back[i], me * 1000000 + i);
    nvshmem_barrier_all();
    nvshmem_putmem_nbi(a + 10, dev, 5 * sizeof(int), right); /* from device memory */
    nvshmem_quiet();
    nvshmem_double_p((double *)al, 2.5 + me, right);
    nvshmem_put64(al + 8, hv, 2, right);
    nvshmem_barrier_all();
    CHECK(nvshmem_double_g((double *)al, me) == 2.5 + left, "double p/g");
    CHECK_EQ(nvshmem_int_g(a + 10, me), left * 1000000 + 0);
    CHECK_EQ(nvshmem_int_g(a + 14, me), left * 1000000 + 4);
    long long two[2];
    nvshmem_get64(two, al + 8, 1, me);
    CHECK_EQ(((int *)two)[0], left * 1000000);

    /* Signals from the host. */
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    nvshmemx_signal_op(sig, 77 + me, NVSHMEM_SIGNAL_SET, right);
    nvshmem_barrier_all();
    CHECK_EQ(nvshmem_signal_fetch(sig), 77 + left);

    nvshmem_free(big);
    nvshmem_free(z);
    nvshmem_free(al);
    nvshmem_free(a);
    nvshmem_free(sig);
    nvshmem_free(NULL);
    return test_pass("host");
}
