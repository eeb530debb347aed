/* rshmem-cuda-test: pes=2
 * nvshmemx_buffer_register_symmetric (NVSHMEM's examples/user-buffer.cu): every PE creates its
 * own exportable cuMem allocation and registers it collectively; the returned address is
 * symmetric. Checked: a device put into the neighbour's copy and a device get back, host
 * nvshmem_putmem / nvshmem_ptr on it, an on-stream sum reduction over it (the example's use),
 * two registrations at once, unregistering (then the address is refused), and the errors: a
 * cudaMalloc'd buffer and a size that is not a multiple of the granularity. Across hosts (ctest/
 * cuda/crosshost.sh) the neighbour's copy is reached through the proxy (nvshmem_ptr is NULL for
 * it, as for its heap), and a local buffer named by nvshmemx_buffer_register is put from. */
#include <string.h>
#include <vector>
#include "cuda_test.h"

#define CU_CHECK(call)                                                          \
    do {                                                                        \
        CUresult r_ = (call);                                                   \
        const char *s_ = "?";                                                   \
        if (r_ != CUDA_SUCCESS) {                                               \
            DRIVER(cuGetErrorString)(r_, &s_);                                          \
            FAIL("%s: %s", #call, s_);                                          \
        }                                                                       \
    } while (0)

struct UserAlloc {
    CUmemGenericAllocationHandle handle;
    CUdeviceptr va;
    size_t size;
};

static size_t granularity(const CUmemAllocationProp &prop) {
    size_t g = 0;
    CU_CHECK(DRIVER(cuMemGetAllocationGranularity)(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    return g;
}

static CUmemAllocationProp exportable_prop(int dev) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

static UserAlloc user_alloc(size_t size, const CUmemAllocationProp &prop) {
    UserAlloc a = {0, 0, size};
    CU_CHECK(DRIVER(cuMemCreate)(&a.handle, size, &prop, 0));
    CU_CHECK(DRIVER(cuMemAddressReserve)(&a.va, size, 0, 0, 0));
    CU_CHECK(DRIVER(cuMemMap)(a.va, size, 0, a.handle, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(DRIVER(cuMemSetAccess)(a.va, size, &access, 1));
    return a;
}

static void user_free(UserAlloc &a) {
    CU_CHECK(DRIVER(cuMemUnmap)(a.va, a.size));
    CU_CHECK(DRIVER(cuMemAddressFree)(a.va, a.size));
    CU_CHECK(DRIVER(cuMemRelease)(a.handle));
}

__global__ void fill(int *p, size_t n, int base) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = base + (int)(i % 1000);
}
__global__ void put_get(int *dst, const int *src, int *back, size_t n, int peer) {
    nvshmemx_int_put_block(dst, src, n, peer); /* into the neighbour's registered copy */
    nvshmemx_int_get_block(back, src, n, peer); /* the neighbour's source, from its copy */
}

__global__ void put_from(int *dst, const int *src, size_t n, int peer) {
    nvshmemx_int_put_block(dst, src, n, peer);
    nvshmem_quiet();
}

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes(), right = (me + 1) % npes, left = (me + npes - 1) % npes;
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUmemAllocationProp prop = exportable_prop(dev);
    const size_t gran = granularity(prop), size = 2 * gran; /* the example uses 512 MiB; 2 granules suffice */
    UserAlloc a = user_alloc(size, prop), b = user_alloc(gran, prop);

    int *sym = (int *)nvshmemx_buffer_register_symmetric((void *)a.va, size, 0);
    CHECK(sym != NULL, "registering %zu bytes at %#llx failed", size, (unsigned long long)a.va);
    int *sym_b = (int *)nvshmemx_buffer_register_symmetric((void *)b.va, gran, 0);
    CHECK(sym_b != NULL && sym_b != sym, "a second registration gave %p (first %p)", (void *)sym_b, (void *)sym);
    /* Mapped exactly where the neighbour's heap is (not across hosts). */
    int *probe = (int *)nvshmem_malloc(sizeof(int));
    const bool mapped = nvshmem_ptr(probe, right) != NULL;
    CHECK((nvshmem_ptr(sym, right) != NULL) == mapped, "nvshmem_ptr of a registered address: %p, of the heap: %p",
          nvshmem_ptr(sym, right), nvshmem_ptr(probe, right));

    /* The registered address is the user's memory: what is written through one shows in the other. */
    const size_t n = size / sizeof(int) / 4;
    int *src = sym, *dst = sym + n, *back = sym + 2 * n;
    fill<<<64, 256>>>(src, n, 1000 * me);
    CUDA_CHECK(cudaMemset(dst, 0xff, n * sizeof(int)));
    int first = -1;
    CUDA_CHECK(cudaMemcpy(&first, (void *)a.va, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK_EQ(first, 1000 * me);
    ready();
    put_get<<<1, 512>>>(dst, src, back, n, right);
    step_done();
    std::vector<int> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), dst, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if (h[i] != 1000 * left + (int)(i % 1000)) FAIL("dst[%zu] = %d, want %d (PE %d's put)", i, h[i], 1000 * left + (int)(i % 1000), left);
    CUDA_CHECK(cudaMemcpy(h.data(), back, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        if (h[i] != 1000 * right + (int)(i % 1000)) FAIL("back[%zu] = %d, want %d (PE %d's source)", i, h[i], 1000 * right + (int)(i % 1000), right);

    /* Host put into the second registration, and the example's on-stream reduction. */
    int word = 7 + me;
    nvshmem_putmem(sym_b + me, &word, sizeof word, right);
    nvshmem_barrier_all();
    CUDA_CHECK(cudaMemcpy(&word, sym_b + left, sizeof word, cudaMemcpyDeviceToHost));
    CHECK_EQ(word, 7 + left);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    fill<<<64, 256, 0, stream>>>(src, 4096, 0);
    nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, stream);
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, dst, src, 4096, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(h.data(), dst, 4096 * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 4096; i++)
        if (h[i] != npes * (i % 1000)) FAIL("sum[%d] = %d, want %d", i, h[i], npes * (i % 1000));
    CUDA_CHECK(cudaStreamDestroy(stream));

    /* A local buffer named by nvshmemx_buffer_register as the source of a device put. */
    void *plain = NULL;
    CUDA_CHECK(cudaMalloc(&plain, gran));
    CHECK_EQ(nvshmemx_buffer_register(plain, gran), 0);
    fill<<<8, 256>>>((int *)plain, 2048, 500 + me);
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all(); /* the reduction's readers of dst are done */
    put_from<<<1, 256>>>(dst, (const int *)plain, 2048, right);
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    CUDA_CHECK(cudaMemcpy(h.data(), dst, 2048 * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 2048; i++)
        if (h[i] != 500 + left + i % 1000) FAIL("dst[%d] = %d after the put from PE %d's registered buffer, want %d", i, h[i], left, 500 + left + i % 1000);
    CHECK_EQ(nvshmemx_buffer_unregister(plain), 0);

    /* Errors: memory that is not an exportable cuMem allocation; a size off the granularity. */
    capture_stderr_begin();
    void *bad = nvshmemx_buffer_register_symmetric(plain, gran, 0);
    void *odd = nvshmemx_buffer_register_symmetric((void *)b.va, gran / 2, 0);
    char *said = capture_end();
    CHECK(bad == NULL && odd == NULL, "bad registrations returned %p / %p", bad, odd);
    CHECK(strstr(said, "nvshmemx_buffer_register_symmetric") && strstr(said, "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR"),
          "no message naming the handle type: [%s]", said);
    CHECK(strstr(said, "multiple of the allocation granularity"), "no message about the granularity: [%s]", said);
    free(said);
    CUDA_CHECK(cudaFree(plain));

    /* Unregister (collective), then the address is no longer symmetric. */
    CHECK_EQ(nvshmemx_buffer_unregister_symmetric(sym_b, gran), 0);
    CHECK_EQ(nvshmemx_buffer_unregister_symmetric(sym, size), 0);
    CHECK(nvshmem_ptr(sym, right) == NULL, "nvshmem_ptr still maps an unregistered address");
    capture_stderr_begin();
    int rc = nvshmemx_buffer_unregister_symmetric(sym, size);
    said = capture_end();
    CHECK(rc != 0 && strstr(said, "is not an address returned by nvshmemx_buffer_register_symmetric"), "second unregister: rc %d [%s]", rc, said);
    free(said);
    /* The space is free again: the same size registers at the same address. */
    int *again = (int *)nvshmemx_buffer_register_symmetric((void *)a.va, size, 0);
    CHECK(again == sym, "re-registration at %p, first at %p", (void *)again, (void *)sym);
    CHECK_EQ(nvshmemx_buffer_unregister_symmetric(again, size), 0);
    nvshmem_free(probe);
    nvshmem_barrier_all();
    int rcp = test_pass("user_buffer");
    user_free(b);
    user_free(a);
    return rcp;
}
