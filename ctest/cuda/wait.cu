/* rshmem-cuda-test: pes=2
 * Device point-to-point synchronization, for a 2-, a 4- and an 8-byte wait type: wait_until
 * and the all / any / some families (scalar and vector comparison values, with and without
 * status masks), the test family, and signal_wait_until. One thread per PE writes a step's
 * variables on the right-hand PE, then waits for its own step's variables, which the left-hand
 * PE sets: every wait is satisfied by the peer's stores, and whatever the timing, the result
 * is the one asserted (a masked variable the peer sets first never counts). */
#include "cuda_test.h"

#define N 8      /* variables per step */
#define STEPS 10 /* v[step * N ...] */

/* The API by overloading on the type, so that one kernel template tests every type. */
#define WRAP(NAME, T)                                                                                                    \
    __device__ void wait_until(T *v, int c, T x) { nvshmem_##NAME##_wait_until(v, c, x); }                               \
    __device__ void wait_until_all(T *v, size_t n, const int *s, int c, T x) { nvshmem_##NAME##_wait_until_all(v, n, s, c, x); } \
    __device__ size_t wait_until_any(T *v, size_t n, const int *s, int c, T x) {                                         \
        return nvshmem_##NAME##_wait_until_any(v, n, s, c, x);                                                           \
    }                                                                                                                    \
    __device__ size_t wait_until_some(T *v, size_t n, size_t *i, const int *s, int c, T x) {                             \
        return nvshmem_##NAME##_wait_until_some(v, n, i, s, c, x);                                                       \
    }                                                                                                                    \
    __device__ void wait_until_all_vector(T *v, size_t n, const int *s, int c, T *x) {                                   \
        nvshmem_##NAME##_wait_until_all_vector(v, n, s, c, x);                                                           \
    }                                                                                                                    \
    __device__ size_t wait_until_any_vector(T *v, size_t n, const int *s, int c, T *x) {                                 \
        return nvshmem_##NAME##_wait_until_any_vector(v, n, s, c, x);                                                    \
    }                                                                                                                    \
    __device__ size_t wait_until_some_vector(T *v, size_t n, size_t *i, const int *s, int c, T *x) {                     \
        return nvshmem_##NAME##_wait_until_some_vector(v, n, i, s, c, x);                                                \
    }                                                                                                                    \
    __device__ int test(T *v, int c, T x) { return nvshmem_##NAME##_test(v, c, x); }                                     \
    __device__ int test_all(T *v, size_t n, const int *s, int c, T x) { return nvshmem_##NAME##_test_all(v, n, s, c, x); } \
    __device__ size_t test_any(T *v, size_t n, const int *s, int c, T x) { return nvshmem_##NAME##_test_any(v, n, s, c, x); } \
    __device__ size_t test_some(T *v, size_t n, size_t *i, const int *s, int c, T x) {                                   \
        return nvshmem_##NAME##_test_some(v, n, i, s, c, x);                                                             \
    }                                                                                                                    \
    __device__ int test_all_vector(T *v, size_t n, const int *s, int c, T *x) {                                          \
        return nvshmem_##NAME##_test_all_vector(v, n, s, c, x);                                                          \
    }                                                                                                                    \
    __device__ size_t test_any_vector(T *v, size_t n, const int *s, int c, T *x) {                                       \
        return nvshmem_##NAME##_test_any_vector(v, n, s, c, x);                                                          \
    }                                                                                                                    \
    __device__ size_t test_some_vector(T *v, size_t n, size_t *i, const int *s, int c, T *x) {                           \
        return nvshmem_##NAME##_test_some_vector(v, n, i, s, c, x);                                                      \
    }                                                                                                                    \
    __device__ void put1(T *v, T x, int pe) { nvshmem_##NAME##_p(v, x, pe); }
WRAP(short, short)
WRAP(int, int)
WRAP(uint64, uint64_t)
#undef WRAP

#define NONE ((size_t)-1)
/* A failed expectation: counted, and the first one's line kept. */
#define EXPECT(c)                                         \
    do {                                                  \
        if (!(c)) {                                       \
            if (atomicAdd(&err[0], 1) == 0) err[1] = __LINE__; \
        }                                                 \
    } while (0)

/* Done flag of a step on PE pe: set after the step's values (fence between). */
__device__ void publish(int *done, int step, int pe) {
    nvshmem_fence();
    nvshmem_int_p(&done[step], 1, pe);
}

template <typename T>
__global__ void wait_kernel(T *v, int *done, uint64_t *sig, int *err) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    int st[N] = {0};
    T cmpv[N];
    size_t idx[N];
    T *s;

    /* 1. wait_until: one variable. */
    s = v + 1 * N;
    put1(&s[0], (T)42, right);
    wait_until(&s[0], NVSHMEM_CMP_EQ, (T)42);
    EXPECT(s[0] == (T)42);

    /* 2. wait_until_all: every variable, set in reverse order. */
    s = v + 2 * N;
    for (int i = N - 1; i >= 0; i--) put1(&s[i], (T)(i + 1), right);
    wait_until_all(s, N, NULL, NVSHMEM_CMP_GE, (T)1);
    for (int i = 0; i < N; i++) EXPECT(s[i] == (T)(i + 1));

    /* 3. wait_until_all with a mask: variable 3 is never set. */
    s = v + 3 * N;
    for (int i = 0; i < N; i++)
        if (i != 3) put1(&s[i], (T)5, right);
    st[3] = 1;
    wait_until_all(s, N, st, NVSHMEM_CMP_EQ, (T)5);
    for (int i = 0; i < N; i++) EXPECT(s[i] == (T)(i == 3 ? 0 : 5));
    st[3] = 0;

    /* 4. wait_until_any: variable 1 (masked) is set first, then 6: the answer is 6. */
    s = v + 4 * N;
    put1(&s[1], (T)9, right);
    nvshmem_fence();
    put1(&s[6], (T)9, right);
    st[1] = 1;
    EXPECT(wait_until_any(s, N, st, NVSHMEM_CMP_EQ, (T)9) == 6);
    st[1] = 0;
    EXPECT(wait_until_any(s, N, NULL, NVSHMEM_CMP_EQ, (T)9) == 1); /* both set now: the first */
    for (int i = 0; i < N; i++) st[i] = 1;
    EXPECT(wait_until_any(s, N, st, NVSHMEM_CMP_EQ, (T)9) == NONE); /* nothing to wait for */
    EXPECT(wait_until_any(s, 0, NULL, NVSHMEM_CMP_EQ, (T)9) == NONE);
    EXPECT(wait_until_some(s, N, idx, st, NVSHMEM_CMP_EQ, (T)9) == 0);
    for (int i = 0; i < N; i++) st[i] = 0;

    /* 5. wait_until_some: 2 and 7 are set; once both are, exactly those, in order. */
    s = v + 5 * N;
    put1(&s[7], (T)3, right);
    put1(&s[2], (T)3, right);
    publish(done, 5, right);
    size_t got = wait_until_some(s, N, idx, NULL, NVSHMEM_CMP_EQ, (T)3);
    EXPECT(got >= 1 && got <= 2);
    for (size_t k = 0; k < got; k++) EXPECT(idx[k] == 2 || idx[k] == 7);
    nvshmem_int_wait_until(&done[5], NVSHMEM_CMP_EQ, 1);
    EXPECT(wait_until_some(s, N, idx, NULL, NVSHMEM_CMP_EQ, (T)3) == 2);
    EXPECT(idx[0] == 2 && idx[1] == 7);
    st[2] = 1;
    EXPECT(wait_until_some(s, N, idx, st, NVSHMEM_CMP_EQ, (T)3) == 1);
    EXPECT(idx[0] == 7);
    st[2] = 0;

    /* 6. wait_until_all_vector: variable i waits for 100 + i. */
    s = v + 6 * N;
    for (int i = 0; i < N; i++) put1(&s[i], (T)(100 + i), right);
    for (int i = 0; i < N; i++) cmpv[i] = (T)(100 + i);
    wait_until_all_vector(s, N, NULL, NVSHMEM_CMP_EQ, cmpv);
    for (int i = 0; i < N; i++) EXPECT(s[i] == (T)(100 + i));

    /* 7. wait_until_any_vector: 5 gets a value that is not its own, 3 gets its own. */
    s = v + 7 * N;
    for (int i = 0; i < N; i++) cmpv[i] = (T)(10 + i);
    put1(&s[5], (T)13, right);
    nvshmem_fence();
    put1(&s[3], (T)13, right);
    EXPECT(wait_until_any_vector(s, N, NULL, NVSHMEM_CMP_EQ, cmpv) == 3);
    EXPECT(s[5] == (T)13);

    /* 8. wait_until_some_vector: s[i] = i everywhere; the even ones match, 4 is masked. */
    s = v + 8 * N;
    for (int i = 0; i < N; i++) put1(&s[i], (T)i, right);
    publish(done, 8, right);
    for (int i = 0; i < N; i++) cmpv[i] = (T)(i % 2 ? 99 : i);
    st[4] = 1;
    got = wait_until_some_vector(s, N, idx, st, NVSHMEM_CMP_EQ, cmpv);
    EXPECT(got >= 1 && got <= 3);
    nvshmem_int_wait_until(&done[8], NVSHMEM_CMP_EQ, 1);
    EXPECT(wait_until_some_vector(s, N, idx, st, NVSHMEM_CMP_EQ, cmpv) == 3);
    EXPECT(idx[0] == 0 && idx[1] == 2 && idx[2] == 6);
    st[4] = 0;

    /* 9. the test family on values the peer set: s[i] = 10 * i. */
    s = v + 9 * N;
    for (int i = 0; i < N; i++) put1(&s[i], (T)(10 * i), right);
    publish(done, 9, right);
    nvshmem_int_wait_until(&done[9], NVSHMEM_CMP_EQ, 1);
    EXPECT(test(&s[3], NVSHMEM_CMP_EQ, (T)30) == 1);
    EXPECT(test(&s[3], NVSHMEM_CMP_NE, (T)30) == 0);
    EXPECT(test(&s[3], NVSHMEM_CMP_LT, (T)31) == 1);
    EXPECT(test(&s[3], NVSHMEM_CMP_GT, (T)30) == 0);
    EXPECT(test(&s[3], NVSHMEM_CMP_LE, (T)30) == 1);
    EXPECT(test_all(s, N, NULL, NVSHMEM_CMP_GE, (T)0) == 1);
    EXPECT(test_all(s, N, NULL, NVSHMEM_CMP_GT, (T)0) == 0);
    st[0] = 1;
    EXPECT(test_all(s, N, st, NVSHMEM_CMP_GT, (T)0) == 1);
    EXPECT(test_any(s, N, NULL, NVSHMEM_CMP_GE, (T)50) == 5);
    st[5] = 1;
    EXPECT(test_any(s, N, st, NVSHMEM_CMP_GE, (T)50) == 6);
    EXPECT(test_some(s, N, idx, st, NVSHMEM_CMP_GE, (T)50) == 2);
    EXPECT(idx[0] == 6 && idx[1] == 7);
    st[0] = st[5] = 0;
    EXPECT(test_any(s, N, NULL, NVSHMEM_CMP_GT, (T)100) == NONE);
    EXPECT(test_some(s, N, idx, NULL, NVSHMEM_CMP_GT, (T)100) == 0);
    EXPECT(test_all(s, 0, NULL, NVSHMEM_CMP_EQ, (T)1) == 1);
    EXPECT(test_any(s, 0, NULL, NVSHMEM_CMP_EQ, (T)0) == NONE);
    for (int i = 0; i < N; i++) cmpv[i] = (T)(i % 2 ? 10 * i + 1 : 10 * i);
    EXPECT(test_all_vector(s, N, NULL, NVSHMEM_CMP_EQ, cmpv) == 0);
    for (int i = 1; i < N; i += 2) st[i] = 1;
    EXPECT(test_all_vector(s, N, st, NVSHMEM_CMP_EQ, cmpv) == 1);
    for (int i = 0; i < N; i++) st[i] = !st[i]; /* now only the odd ones count */
    EXPECT(test_any_vector(s, N, st, NVSHMEM_CMP_EQ, cmpv) == NONE);
    EXPECT(test_any_vector(s, N, st, NVSHMEM_CMP_LT, cmpv) == 1);
    EXPECT(test_some_vector(s, N, idx, NULL, NVSHMEM_CMP_EQ, cmpv) == 4);
    EXPECT(idx[0] == 0 && idx[1] == 2 && idx[2] == 4 && idx[3] == 6);

    /* signal_wait_until: two adds from the left make 5; the value seen comes back. */
    nvshmemx_signal_op(sig, 2, NVSHMEM_SIGNAL_ADD, right);
    nvshmemx_signal_op(sig, 3, NVSHMEM_SIGNAL_ADD, right);
    EXPECT(nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 5) == 5);
    EXPECT(nvshmem_signal_fetch(sig) == 5);
}

template <typename T>
static void run(const char *name) {
    T *v = (T *)nvshmem_calloc(STEPS * N, sizeof(T));
    int *done = (int *)nvshmem_calloc(STEPS, sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    int *err;
    CUDA_CHECK(cudaMalloc(&err, 2 * sizeof(int)));
    CUDA_CHECK(cudaMemset(err, 0, 2 * sizeof(int)));
    ready();
    wait_kernel<T><<<1, 1>>>(v, done, sig, err);
    step_done();
    int h[2];
    CUDA_CHECK(cudaMemcpy(h, err, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(h[0] == 0, "%s: %d failed expectations, the first at wait.cu:%d", name, h[0], h[1]);
    CUDA_CHECK(cudaFree(err));
    nvshmem_free(sig);
    nvshmem_free(done);
    nvshmem_free(v);
}

int main(void) {
    test_init();
    run<short>("short");
    run<int>("int");
    run<uint64_t>("uint64");
    return test_pass("wait");
}
