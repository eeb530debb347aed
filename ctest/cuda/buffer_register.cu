/* rshmem-cuda-test: pes=2
 * nvshmemx_buffer_register / _unregister / _unregister_all: the bookkeeping holds (a buffer is
 * registered once, its range may not overlap another's, unregister takes the registered
 * address), misuse returns an error status and says why on stderr, naming the routine, and a
 * registered cudaMalloc buffer serves as the local side of host puts and gets. */
#include <string.h>
#include <vector>
#include "cuda_test.h"

/* A routine's status, and what it printed on stderr. */
struct said_t {
    int rc;
    char *text;
};
static said_t call_said(int (*fn)(void *, size_t), void *a, size_t n) {
    capture_stderr_begin();
    said_t r;
    r.rc = fn(a, n);
    r.text = capture_end();
    return r;
}
static int do_register(void *a, size_t n) { return nvshmemx_buffer_register(a, n); }
static int do_unregister(void *a, size_t) { return nvshmemx_buffer_unregister(a); }

static void expect_error(const char *what, said_t r, const char *routine, const char *hint) {
    CHECK(r.rc != 0, "%s: returned 0", what);
    CHECK(strstr(r.text, routine) && strstr(r.text, hint), "%s: the message lacks \"%s\" / \"%s\": \"%s\"", what, routine, hint, r.text);
    free(r.text);
}
static void expect_ok(const char *what, said_t r) {
    CHECK(r.rc == 0, "%s: returned %d: \"%s\"", what, r.rc, r.text);
    CHECK(r.text[0] == '\0', "%s: printed \"%s\"", what, r.text);
    free(r.text);
}

int main(void) {
    test_init();
    const int npes = nvshmem_n_pes(), peer = (test_pe + 1) % npes;
    const size_t n = 1 << 16;
    char *local = nullptr;
    CUDA_CHECK(cudaMalloc(&local, 2 * n));
    char *sym = (char *)nvshmem_malloc(n);
    CHECK(sym != nullptr, "nvshmem_malloc failed");

    expect_error("NULL address", call_said(do_register, nullptr, 64), "nvshmemx_buffer_register", "non-NULL address");
    expect_error("zero length", call_said(do_register, local, 0), "nvshmemx_buffer_register", "length > 0");
    expect_ok("first registration", call_said(do_register, local, n));
    expect_error("overlapping registration", call_said(do_register, local + n / 2, n), "nvshmemx_buffer_register",
                 "overlaps the registered buffer");
    expect_ok("adjacent registration", call_said(do_register, local + n, n));
    expect_error("unregister inside a buffer", call_said(do_unregister, local + 1, 0), "nvshmemx_buffer_unregister",
                 "is not a registered buffer");

    /* The registered buffer as the local side of a blocking put and get. */
    std::vector<char> pattern(n), back(n);
    for (size_t i = 0; i < n; i++) pattern[i] = (char)(i * 7 + test_pe);
    CUDA_CHECK(cudaMemcpy(local, pattern.data(), n, cudaMemcpyHostToDevice));
    ready();
    nvshmem_putmem(sym, local, n, peer);
    nvshmem_barrier_all();
    nvshmem_getmem(local + n, sym, n, test_pe);
    CUDA_CHECK(cudaMemcpy(back.data(), local + n, n, cudaMemcpyDeviceToHost));
    const int from = (test_pe + npes - 1) % npes;
    for (size_t i = 0; i < n; i++) CHECK(back[i] == (char)(i * 7 + from), "byte %zu from PE %d: got %d", i, from, back[i]);

    expect_ok("unregister", call_said(do_unregister, local, 0));
    expect_error("unregister twice", call_said(do_unregister, local, 0), "nvshmemx_buffer_unregister",
                 "is not a registered buffer");
    expect_ok("register again after unregister", call_said(do_register, local + n / 2, n / 2));
    nvshmemx_buffer_unregister_all();
    expect_error("unregister after unregister_all", call_said(do_unregister, local + n, 0),
                 "nvshmemx_buffer_unregister", "is not a registered buffer");
    expect_ok("register after unregister_all", call_said(do_register, local, 2 * n));
    nvshmemx_buffer_unregister_all();

    nvshmem_barrier_all();
    nvshmem_free(sym);
    CUDA_CHECK(cudaFree(local));
    if (test_pe == 0) printf("PASS buffer_register\n");
    nvshmem_finalize();
    return 0;
}
