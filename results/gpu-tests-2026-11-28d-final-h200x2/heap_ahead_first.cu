/* rshmem-cuda-test: pes=2
 * The GPU heap maps its next chunk ahead of need (RSHMEM_HEAP_MAP_AHEAD, default 1): init maps
 * the first CUMEM_GRANULARITY chunk past the runtime area itself, and a background thread maps
 * every local PE's next chunk after each growth, which the growth that needs it only publishes.
 * Here, with and without it: allocations that take the chunk mapped ahead (256 MiB after init,
 * then 512 MiB more) hold what the neighbour's kernel writes
 * at their ends, and a block that frees and reallocates there too, and a last 512 MiB that takes
 * the chunk whose mapping started after the previous allocation's closing barrier, and 1536 MiB
 * past that chunk (mapped now beside the spare chunk the background thread created). Prints each allocation's time
 * and nvshmem_init's on PE 0 (right after init, after a pause that lets the background mapping finish, and the
 * growth after that); the data checks are the test, the times the measurement (issue 20). */
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "cuda_test.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Each PE writes (its number + tag) into the last word of `block` on its right neighbour. */
__global__ void mark_right_end(uint64_t *last, uint64_t tag) {
    int me = nvshmem_my_pe(), right = (me + 1) % nvshmem_n_pes();
    nvshmem_uint64_p(last, tag + me, right);
    nvshmem_quiet();
}

static double timed_malloc(void **p, size_t bytes) {
    double t = now_ms();
    *p = nvshmem_malloc(bytes);
    return now_ms() - t;
}

/* The block's last word, written by the left neighbour's kernel, reads back here. */
static void check_end(void *block, size_t bytes, uint64_t tag) {
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), left = (me + npes - 1) % npes;
    uint64_t *last = (uint64_t *)((char *)block + bytes) - 1;
    mark_right_end<<<1, 1>>>(last, tag);
    step_done();
    uint64_t got = 0;
    CUDA_CHECK(cudaMemcpy(&got, last, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(got == tag + (uint64_t)left, "last word of a %zu-byte block: %llu, want %llu", bytes, (unsigned long long)got,
          (unsigned long long)(tag + left));
}

static void run(const char *ahead, int pause_ms) {
    setenv("RSHMEM_HEAP_MAP_AHEAD", ahead, 1);
    double t0 = now_ms();
    test_init();
    double tinit = now_ms() - t0;
    if (pause_ms) usleep(pause_ms * 1000);
    nvshmem_barrier_all();
    const size_t mib = (size_t)1 << 20;
    void *a = NULL, *b = NULL, *c = NULL;
    double ta = timed_malloc(&a, 256 * mib);
    CHECK(a != NULL, "nvshmem_malloc(256 MiB) with RSHMEM_HEAP_MAP_AHEAD=%s", ahead);
    check_end(a, 256 * mib, 100);
    if (pause_ms) usleep(pause_ms * 1000);
    nvshmem_barrier_all();
    double tb = timed_malloc(&b, 512 * mib);
    CHECK(b != NULL, "nvshmem_malloc(512 MiB) after 256 MiB with RSHMEM_HEAP_MAP_AHEAD=%s", ahead);
    check_end(b, 512 * mib, 200);
    nvshmem_free(a);
    double tc = timed_malloc(&c, 128 * mib);
    CHECK(c != NULL, "nvshmem_malloc(128 MiB) in the freed space");
    check_end(c, 128 * mib, 300);
    void *d = NULL;
    double td = timed_malloc(&d, 512 * mib);
    CHECK(d != NULL, "nvshmem_malloc(512 MiB) past the last growth with RSHMEM_HEAP_MAP_AHEAD=%s", ahead);
    check_end(d, 512 * mib, 400);
    /* Past the chunk mapped ahead: 1 GiB of it is mapped now, beside the spare chunk the
     * background thread made for the one after. */
    void *e = NULL;
    double te = timed_malloc(&e, 1536 * mib);
    CHECK(e != NULL, "nvshmem_malloc(1536 MiB) past the chunk mapped ahead with RSHMEM_HEAP_MAP_AHEAD=%s", ahead);
    check_end(e, 1536 * mib, 500);
    check_end(d, 512 * mib, 600);
    if (nvshmem_my_pe() == 0)
        printf("heap_ahead: RSHMEM_HEAP_MAP_AHEAD=%s, pause %d ms, %d PEs: init %.1f ms, malloc 256 MiB %.3f ms, then 512 MiB "
               "%.3f ms, 128 MiB in freed space %.3f ms, 512 MiB more %.3f ms, 1536 MiB more %.3f ms\n",
               ahead, pause_ms, nvshmem_n_pes(), tinit, ta, tb, tc, td, te);
    nvshmem_free(e);
    nvshmem_free(d);
    nvshmem_free(c);
    nvshmem_free(b);
    nvshmem_finalize();
}

int main(void) {
    unsetenv("NVSHMEM_SYMMETRIC_SIZE");
    unsetenv("NVSHMEM_CUMEM_GRANULARITY");
    if (!getenv("HA_ZERO_FIRST")) { run("1", 0); run("1", 200); } else { run("0", 0); run("1", 0); }



    /* test_pass needs a running job. */
    unsetenv("RSHMEM_HEAP_MAP_AHEAD");
    test_init();
    return test_pass("heap_ahead");
}
