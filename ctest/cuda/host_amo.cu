/* rshmem-cuda-test: pes=2
 * Host-initiated atomics on GPU memory: every PE's host hammers PE 0's words with every AMO
 * family (32- and 64-bit, signed, unsigned, floating point), and the results add up. */
#include "cuda_test.h"

struct Words {
    int i;
    unsigned int u;
    long long ll;
    uint64_t u64;
    int32_t cas;
    float f;
    double d;
    size_t sz;
    ptrdiff_t pd;
};

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    Words *w = (Words *)nvshmem_calloc(1, sizeof(Words));
    const int K = 200;
    long long fetched_sum = 0;
    for (int k = 0; k < K; k++) {
        fetched_sum += nvshmem_longlong_atomic_fetch_add(&w->ll, 3, 0);
        nvshmem_int_atomic_inc(&w->i, 0);
        nvshmem_int_atomic_add(&w->i, -2, 0);
        nvshmem_size_atomic_fetch_inc(&w->sz, 0);
        nvshmem_ptrdiff_atomic_add(&w->pd, -1, 0);
    }
    nvshmem_uint_atomic_or(&w->u, 1u << me, 0);
    nvshmem_uint64_atomic_xor(&w->u64, 0xff00ull << (8 * me), 0);
    int32_t old = nvshmem_int32_atomic_compare_swap(&w->cas, 0, me + 1, 0);
    CHECK(old == 0 || (old >= 1 && old <= n), "compare_swap returned %d", old);
    nvshmem_barrier_all();
    /* Fetches by PE: each PE's fetch_add results were multiples of 3, all different. */
    CHECK(fetched_sum % 3 == 0, "fetched sum %lld", fetched_sum);
    if (me == 0) {
        CHECK_EQ(nvshmem_longlong_atomic_fetch(&w->ll, 0), 3LL * K * n);
        CHECK_EQ(nvshmem_int_atomic_fetch(&w->i, 0), -K * n);
        CHECK_EQ(nvshmem_size_atomic_fetch(&w->sz, 0), (size_t)K * n);
        CHECK_EQ(nvshmem_ptrdiff_atomic_fetch(&w->pd, 0), -(ptrdiff_t)K * n);
        CHECK_EQ(nvshmem_uint_atomic_fetch(&w->u, 0), (1u << n) - 1);
        uint64_t x = 0;
        for (int pe = 0; pe < n; pe++) x ^= 0xff00ull << (8 * pe);
        CHECK_EQ(nvshmem_uint64_atomic_fetch(&w->u64, 0), x);
        int32_t winner = nvshmem_int32_atomic_fetch(&w->cas, 0);
        CHECK(winner >= 1 && winner <= n, "compare_swap winner %d", winner);
        /* Floating point swap/set/fetch, and the bitwise fetching forms. */
        nvshmem_float_atomic_set(&w->f, 1.5f, 1 % n);
        CHECK(nvshmem_float_atomic_swap(&w->f, 2.5f, 1 % n) == 1.5f, "float swap");
        CHECK(nvshmem_float_atomic_fetch(&w->f, 1 % n) == 2.5f, "float fetch");
        CHECK(nvshmem_double_atomic_swap(&w->d, 3.25, 0) == 0.0, "double swap");
        CHECK(nvshmem_double_atomic_fetch(&w->d, 0) == 3.25, "double fetch");
        CHECK_EQ(nvshmem_uint_atomic_fetch_and(&w->u, 1u, 0), (1u << n) - 1);
        CHECK_EQ(nvshmem_uint_atomic_fetch_xor(&w->u, 3u, 0), 1u);
        CHECK_EQ(nvshmem_uint_atomic_fetch_or(&w->u, 8u, 0), 2u);
        CHECK_EQ(nvshmem_uint_atomic_fetch(&w->u, 0), 10u);
        CHECK_EQ(nvshmem_uint64_atomic_swap(&w->u64, 5, 0), x);
        nvshmem_int32_atomic_set(&w->cas, -7, 0);
        CHECK_EQ(nvshmem_int32_atomic_fetch(&w->cas, 0), -7);
        /* The same word read by a plain copy agrees. */
        Words h;
        CUDA_CHECK(cudaMemcpy(&h, w, sizeof h, cudaMemcpyDeviceToHost));
        CHECK(h.d == 3.25 && h.u == 10u && h.u64 == 5 && h.cas == -7, "plain copy disagrees");
    }
    return test_pass("host_amo");
}
