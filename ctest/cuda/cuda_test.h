/* Helpers for the CUDA tests: failures name the PE, file and line, then end the job. */
#ifndef RSHMEM_CUDA_TEST_H
#define RSHMEM_CUDA_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <nvshmem.h>
#include <nvshmemx.h>

static int test_pe = -1;

/* Ends the job: every PE if initialized, else this process. */
static inline void test_abort(void) {
    if (nvshmemx_init_status() >= NVSHMEM_STATUS_IS_INITIALIZED) nvshmem_global_exit(1);
    exit(1);
}

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "FAIL PE %d %s:%d: ", test_pe, __FILE__, __LINE__);    \
        fprintf(stderr, __VA_ARGS__);                                          \
        fprintf(stderr, "\n");                                                 \
        test_abort();                                                          \
    } while (0)

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "FAIL PE %d %s:%d: %s: ", test_pe, __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
            test_abort();                                                                    \
        }                                                                                    \
    } while (0)

#define CHECK_EQ(got, want)                                                                    \
    do {                                                                                       \
        long long g_ = (long long)(got), w_ = (long long)(want);                               \
        if (g_ != w_) FAIL("%s == %s: got %lld, want %lld", #got, #want, g_, w_);              \
    } while (0)

#define CUDA_CHECK(call)                                                                  \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) FAIL("%s: %s", #call, cudaGetErrorString(e_));             \
    } while (0)

/* Whether PE `pe` shares this PE's host, as the team layout says (NVSHMEMX_TEAM_NODE is this
 * host's PEs): only such a peer's memory is mapped here (nvshmem_ptr non-NULL). */
static inline int test_same_host(int pe) {
    return nvshmem_team_translate_pe(NVSHMEM_TEAM_WORLD, pe, NVSHMEMX_TEAM_NODE) >= 0;
}

/* Kernels finished, then every PE's: the usual end of a step. */
static inline void step_done(void) {
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
}

/* This PE's copies and fills (cudaMemcpy/cudaMemset: the legacy stream; a pageable cudaMemcpy
 * may even return before its data lands) are complete, then every PE's: what the other PEs,
 * and streams other than the legacy one, read next is in place. */
static inline void ready(void) {
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
}

/* What the device prints (printf in a kernel reaches the process's stdout when the host
 * synchronizes): capture_begin() sends stdout (capture_stderr_begin(): stderr) to an anonymous
 * memory file, capture_end() restores it, echoes the text and returns it (malloc'd, NUL-terminated). */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static int capture_fd = -1, capture_saved = -1, capture_target = 1;
static inline void capture_fd_begin(int target) {
    fflush(stdout);
    fflush(stderr);
    capture_target = target;
    capture_fd = memfd_create("rshmem-test-capture", 0);
    capture_saved = dup(target);
    CHECK(capture_fd >= 0 && capture_saved >= 0 && dup2(capture_fd, target) == target, "cannot redirect fd %d", target);
}
static inline void capture_begin(void) { capture_fd_begin(1); }
/* The library's warnings (routines that return an error status) go to stderr. */
static inline void capture_stderr_begin(void) { capture_fd_begin(2); }
static inline char *capture_end(void) {
    fflush(stdout);
    fflush(stderr);
    dup2(capture_saved, capture_target);
    close(capture_saved);
    off_t n = lseek(capture_fd, 0, SEEK_END);
    char *text = (char *)calloc((size_t)n + 1, 1);
    CHECK(text && pread(capture_fd, text, (size_t)n, 0) == n, "cannot read the captured output");
    close(capture_fd);
    FILE *echo = capture_target == 2 ? stderr : stdout;
    fputs(text, echo);
    fflush(echo);
    return text;
}

#ifdef __cplusplus
/* A driver API entry point, found through the runtime: tests need no libcuda at link time.
 * DRIVER(cuMemCreate)(...) calls one by its name, typed from cuda.h's declaration. */
template <typename F>
static F driver_entry(const char *name) {
    void *p = NULL;
    cudaDriverEntryPointQueryResult q;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q));
    CHECK(p != NULL && q == cudaDriverEntryPointSuccess, "driver entry point %s", name);
    return (F)p;
}
#define DRIVER(fn) driver_entry<decltype(&fn)>(#fn)
#endif

static inline void test_init(void) {
    nvshmem_init();
    test_pe = nvshmem_my_pe();
    /* The usual NVSHMEM idiom: the device of this PE is the node-local rank's. */
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % count));
}

static inline int test_pass(const char *name) {
    nvshmem_barrier_all();
    if (test_pe == 0) printf("PASS %s (%d PEs)\n", name, nvshmem_n_pes());
    nvshmem_finalize();
    return 0;
}
#endif
