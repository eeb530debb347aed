/* rshmem-test: pes=1,2,4,7
 * The non-blocking fetching AMOs (OpenSHMEM 1.5): fetch, swap, compare_swap, fetch_inc,
 * fetch_add, fetch_and/or/xor _nbi for every type of their tables, plain and ctx forms. The old
 * value lands in a local `fetch` object, read after shmem_quiet (and, where another PE's update
 * matters, a barrier). */
#include <stdint.h>
#include <string.h>
#include "check.h"

#define ROUNDS 16

static int me, npes;
static long long *report; /* symmetric, npes * ROUNDS slots; gathered on PE 0 */

static void gather(const long long *mine, int count) {
    shmem_barrier_all();
    shmem_putmem(report + (size_t)me * ROUNDS, mine, (size_t)count * sizeof(long long), 0);
    shmem_barrier_all();
}

static void check_permutation(int count, const char *what) {
    if (me != 0) return;
    int total = npes * count;
    char *seen = calloc((size_t)total, 1);
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < count; i++) {
            long long v = report[p * ROUNDS + i];
            CHECK(v >= 0 && v < total, "%s: PE %d fetched %lld", what, p, v);
            CHECK(!seen[v], "%s: value %lld fetched twice", what, v);
            seen[v] = 1;
        }
    free(seen);
}

#define STANDARD_TEST(T, N)                                                                            \
    static void standard_##N(void) {                                                                   \
        T *x = shmem_malloc(2 * sizeof(T));                                                            \
        T fetched[ROUNDS];                                                                             \
        long long got[ROUNDS];                                                                         \
        x[0] = 0;                                                                                      \
        x[1] = 0;                                                                                      \
        memset(fetched, 0xa5, sizeof fetched);                                                         \
        shmem_barrier_all();                                                                           \
        for (int i = 0; i < ROUNDS; i++) {                                                             \
            switch (i % 4) {                                                                           \
            case 0: shmem_##N##_atomic_fetch_add_nbi(&fetched[i], x, (T)1, 0); break;                  \
            case 1: shmem_##N##_atomic_fetch_inc_nbi(&fetched[i], x, 0); break;                        \
            case 2: shmem_ctx_##N##_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &fetched[i], x, (T)1, 0); break; \
            default: shmem_ctx_##N##_atomic_fetch_inc_nbi(SHMEM_CTX_DEFAULT, &fetched[i], x, 0); break; \
            }                                                                                          \
        }                                                                                              \
        shmem_quiet(); /* completes the nbi operations */                                              \
        shmem_barrier_all();                                                                           \
        for (int i = 0; i < ROUNDS; i++) got[i] = (long long)fetched[i];                               \
        gather(got, ROUNDS);                                                                           \
        check_permutation(ROUNDS, #N " fetch_add_nbi/fetch_inc_nbi");                                  \
        if (me == 0) CHECK_EQ_LONG(x[0], (long long)npes * ROUNDS);                                    \
        T old = (T)77;                                                                                 \
        if (me % 2) shmem_ctx_##N##_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, &old, x + 1, (T)0, (T)(me + 1), 0); \
        else shmem_##N##_atomic_compare_swap_nbi(&old, x + 1, (T)0, (T)(me + 1), 0);                   \
        shmem_quiet();                                                                                 \
        got[0] = (long long)old;                                                                       \
        gather(got, 1);                                                                                \
        if (me == 0) {                                                                                 \
            int winners = 0, winner = -1;                                                              \
            for (int p = 0; p < npes; p++)                                                             \
                if (report[p * ROUNDS] == 0) winners++, winner = p;                                    \
            CHECK(winners == 1, #N " compare_swap_nbi: %d winners", winners);                          \
            for (int p = 0; p < npes; p++)                                                             \
                if (p != winner) CHECK_EQ_LONG(report[p * ROUNDS], winner + 1);                        \
            CHECK_EQ_LONG(x[1], winner + 1);                                                           \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

#define EXTENDED_TEST(T, N)                                                                            \
    static void extended_##N(void) {                                                                   \
        T *x = shmem_malloc(sizeof(T));                                                                \
        T old = (T)-5, seen_next = (T)-5;                                                              \
        int next = (me + 1) % npes, prev = (me + npes - 1) % npes;                                     \
        *x = (T)(me + 100);                                                                            \
        shmem_barrier_all();                                                                           \
        if (me % 2) shmem_ctx_##N##_atomic_swap_nbi(SHMEM_CTX_DEFAULT, &old, x, (T)(me + 200), next); \
        else shmem_##N##_atomic_swap_nbi(&old, x, (T)(me + 200), next);                                \
        shmem_quiet();                                                                                 \
        shmem_barrier_all();                                                                           \
        CHECK(old == (T)(next + 100), #N " swap_nbi old value");                                      \
        CHECK(*x == (T)(prev + 200), #N " swap_nbi new value");                                       \
        if (me % 2) shmem_##N##_atomic_fetch_nbi(&seen_next, x, next);                                 \
        else shmem_ctx_##N##_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &seen_next, x, next);                 \
        shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                                            \
        CHECK(seen_next == (T)(me + 200), #N " fetch_nbi");                                           \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

#define BITWISE_TEST(T, N)                                                                             \
    static void bitwise_##N(void) {                                                                    \
        T *x = shmem_malloc(sizeof(T));                                                                \
        T bit = (T)1 << me, low = (T)(((T)1 << npes) - 1);                                             \
        T o1 = 0, o2 = 0, o3 = 0, o4 = 0;                                                              \
        *x = 0;                                                                                        \
        shmem_barrier_all();                                                                           \
        shmem_##N##_atomic_fetch_or_nbi(&o1, x, bit, 0);                                               \
        shmem_quiet();                                                                                 \
        shmem_barrier_all();                                                                           \
        CHECK(!(o1 & bit), #N " fetch_or_nbi: own bit already set");                                  \
        if (me == 0) CHECK(*x == low, #N " or result");                                               \
        shmem_barrier_all();                                                                           \
        shmem_ctx_##N##_atomic_fetch_and_nbi(SHMEM_CTX_DEFAULT, &o2, x, (T)~bit, 0);                   \
        shmem_quiet();                                                                                 \
        shmem_barrier_all();                                                                           \
        CHECK(o2 & bit, #N " fetch_and_nbi: own bit already clear");                                  \
        if (me == 0) CHECK(*x == 0, #N " and result");                                                \
        shmem_barrier_all();                                                                           \
        shmem_##N##_atomic_fetch_xor_nbi(&o3, x, bit, 0);                                              \
        shmem_quiet();                                                                                 \
        shmem_barrier_all();                                                                           \
        shmem_ctx_##N##_atomic_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &o4, x, (T)(bit << 8), 0);             \
        shmem_ctx_##N##_atomic_fetch_or_nbi(SHMEM_CTX_DEFAULT, &o1, x, 0, 0);                          \
        shmem_##N##_atomic_fetch_and_nbi(&o2, x, (T)~0, 0);                                            \
        shmem_quiet();                                                                                 \
        shmem_barrier_all();                                                                           \
        CHECK(!(o3 & bit), #N " fetch_xor_nbi: own bit set");                                         \
        CHECK(o4 & bit, #N " fetch_xor_nbi: low bits missing");                                       \
        if (me == 0) CHECK(*x == (T)(low | (low << 8)), #N " xor result");                            \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

#define STANDARD_TYPES(X)                                                                              \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong)     \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)           \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define BITWISE_TYPES(X)                                                                               \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)   \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)

STANDARD_TYPES(STANDARD_TEST)
STANDARD_TYPES(EXTENDED_TEST)
EXTENDED_TEST(float, float)
EXTENDED_TEST(double, double)
BITWISE_TYPES(BITWISE_TEST)

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    report = shmem_malloc((size_t)npes * ROUNDS * sizeof(long long));

#define RUN(T, N) standard_##N();
    STANDARD_TYPES(RUN)
#undef RUN
#define RUN(T, N) extended_##N();
    STANDARD_TYPES(RUN)
    RUN(float, float)
    RUN(double, double)
#undef RUN
#define RUN(T, N) bitwise_##N();
    BITWISE_TYPES(RUN)
#undef RUN

    shmem_free(report);
    if (me == 0) printf("amo_nbi: %d PEs ok\n", npes);
    shmem_finalize();
    return 0;
}
