/* Device point-to-point synchronization: wait_until and test, on one variable or a set of them
 * (all / any / some, with one comparison value or a vector of them), for every NVSHMEM wait
 * type; nvshmem_signal_wait_until. Called by one thread. A set's `status` may be NULL; where
 * given, a non-zero status[i] leaves ivars[i] out. Results follow OpenSHMEM 1.5: "any" gives
 * the index of a satisfied variable or SIZE_MAX when none can be (empty or fully masked set);
 * "some" fills indices[] and gives how many; test_all of an empty set is 1. A search starts at
 * index 0 every time, so a program that keeps a satisfied variable unmasked gets it again.
 * Every routine that reports success ends with an acquire fence, so later loads see the data the
 * writer published before its store to the variable. */
#ifndef RSHMEM_WAIT_CUH
#define RSHMEM_WAIT_CUH

#include "rshmem/device/rshmem_p2p.cuh"

#define RSHMEMI_NONE ((size_t)-1) /* SIZE_MAX without <stdint.h> (NVRTC) */

/* The comparison value of variable i: one for all, or a vector. */
template <typename T>
struct rshmemi_same_ref {
    T v;
    __device__ T operator[](size_t) const { return v; }
};

RSHMEMI_DEV bool rshmemi_in_set(const int *status, size_t i) { return !status || !status[i]; }
RSHMEMI_DEV bool rshmemi_set_empty(size_t n, const int *status) {
    for (size_t i = 0; i < n; i++)
        if (rshmemi_in_set(status, i)) return false;
    return true;
}
template <typename T, typename REF>
RSHMEMI_DEV bool rshmemi_holds(T *ivars, size_t i, int cmp, const REF &ref) {
    return rshmemi_compare(rshmemi_load(&ivars[i]), cmp, (T)ref[i]);
}

template <typename T, typename REF>
RSHMEMI_DEV int rshmemi_test_all(T *ivars, size_t n, const int *status, int cmp, const REF &ref) {
    for (size_t i = 0; i < n; i++)
        if (rshmemi_in_set(status, i) && !rshmemi_holds(ivars, i, cmp, ref)) return 0;
    rshmemi_acquire_fence();
    return 1;
}
template <typename T, typename REF>
RSHMEMI_DEV size_t rshmemi_test_any(T *ivars, size_t n, const int *status, int cmp, const REF &ref) {
    for (size_t i = 0; i < n; i++)
        if (rshmemi_in_set(status, i) && rshmemi_holds(ivars, i, cmp, ref)) {
            rshmemi_acquire_fence();
            return i;
        }
    return RSHMEMI_NONE;
}
template <typename T, typename REF>
RSHMEMI_DEV size_t rshmemi_test_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, const REF &ref) {
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        if (rshmemi_in_set(status, i) && rshmemi_holds(ivars, i, cmp, ref)) indices[found++] = i;
    if (found) rshmemi_acquire_fence();
    return found;
}
template <typename T, typename REF>
RSHMEMI_DEV void rshmemi_wait_all(T *ivars, size_t n, const int *status, int cmp, const REF &ref) {
    for (size_t i = 0; i < n; i++)
        if (rshmemi_in_set(status, i)) rshmemi_wait_until(&ivars[i], cmp, (T)ref[i]);
}
template <typename T, typename REF>
RSHMEMI_DEV size_t rshmemi_wait_any(T *ivars, size_t n, const int *status, int cmp, const REF &ref) {
    if (rshmemi_set_empty(n, status)) return RSHMEMI_NONE;
    rshmemi_proxy_look look;
    for (;; look()) {
        size_t i = rshmemi_test_any(ivars, n, status, cmp, ref);
        if (i != RSHMEMI_NONE) return i;
    }
}
template <typename T, typename REF>
RSHMEMI_DEV size_t rshmemi_wait_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, const REF &ref) {
    if (rshmemi_set_empty(n, status)) return 0;
    rshmemi_proxy_look look;
    for (;; look()) {
        size_t found = rshmemi_test_some(ivars, n, indices, status, cmp, ref);
        if (found) return found;
    }
}

RSHMEMI_EXTERN_C_BEGIN

/* Polls like NVSHMEM 3.4.5's (relaxed loads of the word) and, unlike it, ends with the acquire
 * fence (fence.acquire.sys: one L1 invalidation per wait, not per poll). The poll loops' SASS
 * is alike, so that fence is the difference in the signal ping-pong, 1.04-1.11x NVSHMEM's round
 * trip on NVLink (its cost alone not measured; results/gpu-compare-2026-11-28g-rma). Kept because g is a weak load the L1
 * may serve (rshmem_rma.cuh, at g): a consumer that waits for a put_signal's signal and then
 * reads the data with g, or a plain load of its own heap that an earlier read cached, must see
 * the data, which only an acquire after the poll guarantees (the data of a
 * put-with-signal is delivered before its signal; ctest/cuda/g_visibility.cu). */
RSHMEMI_API uint64_t nvshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) {
    return rshmemi_wait_until(sig_addr, cmp, cmp_value);
}

#define RSHMEMI_DEF_WAIT(NAME, TYPE)                                                                                 \
    RSHMEMI_API void nvshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value) {                              \
        rshmemi_wait_until(ivar, cmp, cmp_value);                                                                    \
    }                                                                                                                \
    RSHMEMI_API int nvshmem_##NAME##_test(TYPE *ivar, int cmp, TYPE cmp_value) {                                     \
        int ok = rshmemi_compare(rshmemi_load(ivar), cmp, cmp_value);                                                \
        if (ok) rshmemi_acquire_fence();                                                                             \
        return ok;                                                                                                   \
    }                                                                                                                \
    RSHMEMI_API void nvshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems, const int *status, int cmp,         \
                                                     TYPE cmp_value) {                                               \
        rshmemi_wait_all(ivars, nelems, status, cmp, rshmemi_same_ref<TYPE>{cmp_value});                             \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems, const int *status, int cmp,       \
                                                       TYPE cmp_value) {                                             \
        return rshmemi_wait_any(ivars, nelems, status, cmp, rshmemi_same_ref<TYPE>{cmp_value});                      \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems, size_t *indices,                 \
                                                        const int *status, int cmp, TYPE cmp_value) {                \
        return rshmemi_wait_some(ivars, nelems, indices, status, cmp, rshmemi_same_ref<TYPE>{cmp_value});            \
    }                                                                                                                \
    RSHMEMI_API void nvshmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,  \
                                                            TYPE *cmp_values) {                                      \
        rshmemi_wait_all(ivars, nelems, status, cmp, (const TYPE *)cmp_values);                                      \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems, const int *status,         \
                                                              int cmp, TYPE *cmp_values) {                           \
        return rshmemi_wait_any(ivars, nelems, status, cmp, (const TYPE *)cmp_values);                               \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, size_t *indices,          \
                                                               const int *status, int cmp, TYPE *cmp_values) {       \
        return rshmemi_wait_some(ivars, nelems, indices, status, cmp, (const TYPE *)cmp_values);                     \
    }                                                                                                                \
    RSHMEMI_API int nvshmem_##NAME##_test_all(TYPE *ivars, size_t nelems, const int *status, int cmp,                \
                                              TYPE cmp_value) {                                                      \
        return rshmemi_test_all(ivars, nelems, status, cmp, rshmemi_same_ref<TYPE>{cmp_value});                      \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status, int cmp,             \
                                                 TYPE cmp_value) {                                                   \
        return rshmemi_test_any(ivars, nelems, status, cmp, rshmemi_same_ref<TYPE>{cmp_value});                      \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_test_some(TYPE *ivars, size_t nelems, size_t *indices, const int *status,    \
                                                  int cmp, TYPE cmp_value) {                                         \
        return rshmemi_test_some(ivars, nelems, indices, status, cmp, rshmemi_same_ref<TYPE>{cmp_value});            \
    }                                                                                                                \
    RSHMEMI_API int nvshmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,         \
                                                     TYPE *cmp_values) {                                             \
        return rshmemi_test_all(ivars, nelems, status, cmp, (const TYPE *)cmp_values);                               \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems, const int *status, int cmp,      \
                                                        TYPE *cmp_values) {                                          \
        return rshmemi_test_any(ivars, nelems, status, cmp, (const TYPE *)cmp_values);                               \
    }                                                                                                                \
    RSHMEMI_API size_t nvshmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems, size_t *indices,                \
                                                         const int *status, int cmp, TYPE *cmp_values) {             \
        return rshmemi_test_some(ivars, nelems, indices, status, cmp, (const TYPE *)cmp_values);                     \
    }
RSHMEMI_REPT_WAIT_TYPES(RSHMEMI_DEF_WAIT)
#undef RSHMEMI_DEF_WAIT

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_WAIT_CUH */
