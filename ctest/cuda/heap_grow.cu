/* rshmem-cuda-test: pes=2
 * Growths of the GPU heap with the default settings (CUMEM_GRANULARITY 512 MiB, chunk ahead on),
 * each checked across the PEs, and timed (issue 20's nvshmem_malloc rows; PE 0 prints them):
 *   malloc_256MiB   right after init: inside the chunk init mapped, no growth
 *   malloc_1GiB     after the 256 MiB block is freed: 512 MiB past init's chunk (the row of
 *                   perftest/gpu/init.cu and of NVSHMEM's comparison)
 *   malloc_64MiB    past the end of the 1 GiB block: a growth of one chunk
 *   malloc_2MiB     after a filler block that leaves less than 2 MiB mapped: one chunk more
 * Every timed block's first and last 4 KiB (the last lie in memory the growth mapped) get a put
 * from the left neighbour, read back here from the GPU, and a get from the right neighbour of
 * what this PE put there: a chunk mapped at the wrong place or not at all fails loudly. Host
 * API only (nvshmem_putmem/getmem), so the program runs with any rshmem library of the same
 * ABI (results/gpu-compare-2026-11-29b-malloc/ab.sh runs one build with two libraries).
 * Lines `heap_grow,<row>,<value>,<unit>`; mem_* rows: drop of the device's free memory since
 * before init (every PE on that GPU together). Argument: pause in ms between allocations (default
 * 20: the program's work between them, during which the heap's background threads run). */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cuda_test.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double free_mib(void) {
    size_t f = 0, t = 0;
    CUDA_CHECK(cudaMemGetInfo(&f, &t));
    return (double)f / (1024.0 * 1024.0);
}

static void row(const char *name, double value, const char *unit) {
    if (test_pe == 0) {
        printf("heap_grow,%s,%.4f,%s\n", name, value, unit);
        fflush(stdout);
    }
}

/* Every PE enters the allocation together, so the time is the allocation's, not a wait. */
static void *timed_malloc(size_t bytes, double *ms) {
    nvshmem_barrier_all();
    double t = now_ms();
    void *p = nvshmem_malloc(bytes);
    *ms = now_ms() - t;
    return p;
}

enum { WORDS = 1024 };

static uint32_t word(uint32_t tag, int pe, int at, int i) { return tag * 2654435761u + (uint32_t)pe * 40503u + (uint32_t)at * 7919u + (uint32_t)i; }

/* 4 KiB at `off` of `block`: put by the left neighbour (`put`: now; else earlier), read locally;
 * got back from the right. */
static void check_words(char *block, size_t off, uint32_t tag, int at, int put) {
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    uint32_t mine[WORDS], got[WORDS];
    for (int i = 0; i < WORDS; i++) mine[i] = word(tag, me, at, i);
    if (put) nvshmem_putmem(block + off, mine, sizeof mine, right);
    nvshmem_quiet();
    nvshmem_barrier_all();
    CUDA_CHECK(cudaMemcpy(got, block + off, sizeof got, cudaMemcpyDeviceToHost));
    for (int i = 0; i < WORDS; i++)
        CHECK(got[i] == word(tag, left, at, i), "block tag %u, offset %zu, word %d: %u, want %u (put by PE %d)", tag, off, i, got[i],
              word(tag, left, at, i), left);
    memset(got, 0, sizeof got);
    nvshmem_getmem(got, block + off, sizeof got, right);
    for (int i = 0; i < WORDS; i++)
        CHECK(got[i] == mine[i], "block tag %u, offset %zu, word %d read from PE %d: %u, want %u", tag, off, i, right, got[i], mine[i]);
    nvshmem_barrier_all();
}

static void check_block(void *block, size_t bytes, uint32_t tag) {
    CHECK(block != NULL, "nvshmem_malloc(%zu) (tag %u) returned NULL", bytes, tag);
    check_words((char *)block, 0, tag, 0, 1);
    check_words((char *)block, bytes - sizeof(uint32_t) * WORDS, tag, 1, 1);
}

int main(int argc, char **argv) {
    unsetenv("NVSHMEM_SYMMETRIC_SIZE");
    unsetenv("NVSHMEM_CUMEM_GRANULARITY");
    int pause_ms = argc > 1 ? atoi(argv[1]) : 20;
    const size_t mib = (size_t)1 << 20;
    /* The device before init (the launcher's rank on this host picks it, as test_init does
     * after init), for the footprint rows. */
    const char *rank = getenv("RSHMEM_RANK");
    double free0 = -1;
    int ndev = 0;
    if (rank && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
        CUDA_CHECK(cudaSetDevice(atoi(rank) % ndev));
        CUDA_CHECK(cudaFree(0));
        free0 = free_mib();
    }
    double t0 = now_ms();
    test_init();
    row("init", now_ms() - t0, "ms");
    usleep(pause_ms * 1000);
    nvshmem_barrier_all();
    if (free0 >= 0) row("mem_after_init", free0 - free_mib(), "MiB");
    double ms = 0;

    void *a = timed_malloc(256 * mib, &ms);
    row("malloc_256MiB", ms, "ms");
    check_block(a, 256 * mib, 1);
    nvshmem_free(a);
    usleep(pause_ms * 1000);

    void *g = timed_malloc(1024 * mib, &ms);
    row("malloc_1GiB", ms, "ms");
    check_block(g, 1024 * mib, 2);
    if (free0 >= 0) row("mem_after_1GiB", free0 - free_mib(), "MiB");
    usleep(pause_ms * 1000);

    void *m = timed_malloc(64 * mib, &ms);
    row("malloc_64MiB", ms, "ms");
    check_block(m, 64 * mib, 3);
    usleep(pause_ms * 1000);

    /* Init maps 514 MiB (2 MiB of runtime area, under 1 MiB of it used, and one chunk), the two
     * growths above one chunk each: after 1 GiB + 64 MiB from the area's end, 449 MiB leave
     * under 1 MiB mapped, so the 2 MiB block grows the heap (NVSHMEM_DEBUG=INFO shows it). */
    void *filler = nvshmem_malloc(449 * mib);
    check_block(filler, 449 * mib, 4);
    usleep(pause_ms * 1000);
    void *s = timed_malloc(2 * mib, &ms);
    row("malloc_2MiB", ms, "ms");
    check_block(s, 2 * mib, 5);
    /* The first blocks still hold what was put there, past the later growths. */
    check_words((char *)g, 1024 * mib - sizeof(uint32_t) * WORDS, 2, 1, 0);
    if (free0 >= 0) row("mem_at_end", free0 - free_mib(), "MiB");

    nvshmem_free(s);
    nvshmem_free(filler);
    nvshmem_free(m);
    nvshmem_free(g);
    return test_pass("heap_grow");
}
