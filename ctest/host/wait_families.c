/* rshmem-test: pes=1,2,4,7
 * Point-to-point synchronization for every type of Table 9: wait_until, _all, _any, _some and
 * their _vector forms, test and its families, with status arrays that exclude elements, empty
 * sets (SIZE_MAX / 0 / 1 returns), every comparison operator, and peers updating PE 0's ivars in
 * an order that exercises any/some/all. Plus the deprecated shmem_wait forms. */
#include <stdint.h>
#include <string.h>
#include "check.h"

#define MAXPES 64

static int me, npes;
static long token; /* symmetric: peers pass a token down a chain (see chain_put) */
static long round_no;

/* Peers npes-1, npes-2, .., 1 in turn put value(p) into PE 0's ivars[p]: the highest first, so
 * a wait on all of them finishes with the lowest index. */
#define CHAIN_PUT(T, ivars, value_of_p)                                                                \
    do {                                                                                               \
        round_no++;                                                                                    \
        if (me > 0) {                                                                                  \
            if (me < npes - 1) shmem_long_wait_until(&token, SHMEM_CMP_GE, round_no);                  \
            T v_ = (T)(value_of_p);                                                                    \
            shmem_putmem(&(ivars)[me], &v_, sizeof(T), 0);                                             \
            if (me > 1) shmem_long_atomic_set(&token, round_no, me - 1);                               \
        }                                                                                              \
    } while (0)

#define PUT(T, addr, value, pe)                                                                        \
    do {                                                                                               \
        T v_ = (T)(value);                                                                             \
        shmem_putmem((addr), &v_, sizeof(T), (pe));                                                   \
    } while (0)

#define SYNC_TEST(T, N)                                                                                \
    static void local_##N(void) {                                                                      \
        T *iv = shmem_calloc(4, sizeof(T));                                                            \
        size_t idx[4];                                                                                 \
        int status[4] = {0, 0, 0, 0};                                                                  \
        /* every comparison operator, on signed and unsigned values */                                 \
        iv[0] = (T)5;                                                                                  \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_EQ, (T)5) == 1, #N " EQ");                                \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_NE, (T)5) == 0, #N " NE");                                \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_GT, (T)4) == 1, #N " GT");                                \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_GT, (T)5) == 0, #N " GT equal");                          \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_LE, (T)5) == 1, #N " LE");                                \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_LE, (T)4) == 0, #N " LE less");                           \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_LT, (T)5) == 0, #N " LT equal");                          \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_LT, (T)6) == 1, #N " LT");                                \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_GE, (T)6) == 0, #N " GE");                                \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_GE, (T)5) == 1, #N " GE equal");                          \
        volatile T neg = (T)-3, zero = (T)0;                                                           \
        iv[0] = neg;                                                                                   \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_LT, zero) == (neg < zero), #N " signedness of LT");       \
        CHECK(shmem_##N##_test(iv, SHMEM_CMP_GT, zero) == (neg > zero), #N " signedness of GT");       \
        shmem_##N##_wait_until(iv, SHMEM_CMP_NE, (T)0); /* already true: returns */                    \
        /* empty sets */                                                                               \
        CHECK(shmem_##N##_test_all(iv, 0, NULL, SHMEM_CMP_EQ, (T)1) == 1, #N " test_all nelems 0");    \
        CHECK(shmem_##N##_test_any(iv, 0, NULL, SHMEM_CMP_EQ, (T)1) == SIZE_MAX, #N " test_any nelems 0"); \
        CHECK(shmem_##N##_test_some(iv, 0, idx, NULL, SHMEM_CMP_EQ, (T)1) == 0, #N " test_some nelems 0"); \
        CHECK(shmem_##N##_wait_until_any(iv, 0, NULL, SHMEM_CMP_EQ, (T)1) == SIZE_MAX, #N " wait_until_any nelems 0"); \
        CHECK(shmem_##N##_wait_until_some(iv, 0, idx, NULL, SHMEM_CMP_EQ, (T)1) == 0, #N " wait_until_some nelems 0"); \
        shmem_##N##_wait_until_all(iv, 0, NULL, SHMEM_CMP_EQ, (T)1);                                   \
        int none[4] = {1, 1, 1, 1};                                                                    \
        T cv[4] = {(T)9, (T)9, (T)9, (T)9};                                                            \
        CHECK(shmem_##N##_wait_until_any(iv, 4, none, SHMEM_CMP_EQ, (T)9) == SIZE_MAX, #N " all excluded: any"); \
        CHECK(shmem_##N##_wait_until_some(iv, 4, idx, none, SHMEM_CMP_EQ, (T)9) == 0, #N " all excluded: some"); \
        shmem_##N##_wait_until_all(iv, 4, none, SHMEM_CMP_EQ, (T)9);                                   \
        shmem_##N##_wait_until_all_vector(iv, 4, none, SHMEM_CMP_EQ, cv);                              \
        CHECK(shmem_##N##_wait_until_any_vector(iv, 4, none, SHMEM_CMP_EQ, cv) == SIZE_MAX, #N " all excluded: any_vector"); \
        CHECK(shmem_##N##_wait_until_some_vector(iv, 4, idx, none, SHMEM_CMP_EQ, cv) == 0, #N " all excluded: some_vector"); \
        CHECK(shmem_##N##_test_any(iv, 4, none, SHMEM_CMP_EQ, (T)9) == SIZE_MAX, #N " all excluded: test_any"); \
        CHECK(shmem_##N##_test_some_vector(iv, 4, idx, none, SHMEM_CMP_EQ, cv) == 0, #N " all excluded: test_some_vector"); \
        /* mixed values {1, 2, 3, 4} */                                                                \
        for (int i = 0; i < 4; i++) iv[i] = (T)(i + 1);                                                \
        CHECK(shmem_##N##_test_all(iv, 4, NULL, SHMEM_CMP_GE, (T)3) == 0, #N " test_all GE 3");        \
        size_t a = shmem_##N##_test_any(iv, 4, NULL, SHMEM_CMP_GE, (T)3);                              \
        CHECK(a == 2 || a == 3, #N " test_any GE 3 gave %zu", a);                                      \
        CHECK(shmem_##N##_test_any(iv, 4, NULL, SHMEM_CMP_GT, (T)4) == SIZE_MAX, #N " test_any none"); \
        CHECK(shmem_##N##_test_some(iv, 4, idx, NULL, SHMEM_CMP_GT, (T)4) == 0, #N " test_some none"); \
        CHECK(shmem_##N##_test_some(iv, 4, idx, NULL, SHMEM_CMP_GE, (T)3) == 2, #N " test_some GE 3"); \
        CHECK((idx[0] == 2 && idx[1] == 3) || (idx[0] == 3 && idx[1] == 2), #N " test_some indices");   \
        status[0] = status[1] = 1;                                                                     \
        CHECK(shmem_##N##_test_all(iv, 4, status, SHMEM_CMP_GE, (T)3) == 1, #N " test_all with status"); \
        shmem_##N##_wait_until_all(iv, 4, status, SHMEM_CMP_GE, (T)3);                                \
        CHECK(shmem_##N##_wait_until_some(iv, 4, idx, status, SHMEM_CMP_GE, (T)3) == 2, #N " wait_until_some"); \
        status[3] = 1;                                                                                 \
        CHECK(shmem_##N##_wait_until_any(iv, 4, status, SHMEM_CMP_GE, (T)3) == 2, #N " wait_until_any with status"); \
        /* vectors: {1, 2, 3, 4} against {1, 0, 3, 9} with EQ */                                       \
        T want[4] = {(T)1, (T)0, (T)3, (T)9};                                                          \
        int skip13[4] = {0, 1, 0, 1};                                                                  \
        CHECK(shmem_##N##_test_all_vector(iv, 4, NULL, SHMEM_CMP_EQ, want) == 0, #N " test_all_vector"); \
        CHECK(shmem_##N##_test_all_vector(iv, 4, skip13, SHMEM_CMP_EQ, want) == 1, #N " test_all_vector status"); \
        a = shmem_##N##_test_any_vector(iv, 4, NULL, SHMEM_CMP_EQ, want);                              \
        CHECK(a == 0 || a == 2, #N " test_any_vector gave %zu", a);                                    \
        CHECK(shmem_##N##_test_some_vector(iv, 4, idx, NULL, SHMEM_CMP_EQ, want) == 2, #N " test_some_vector"); \
        CHECK((idx[0] == 0 && idx[1] == 2) || (idx[0] == 2 && idx[1] == 0), #N " test_some_vector indices"); \
        shmem_##N##_wait_until_all_vector(iv, 4, skip13, SHMEM_CMP_EQ, want);                          \
        CHECK(shmem_##N##_wait_until_some_vector(iv, 4, idx, NULL, SHMEM_CMP_LE, want) == 3, #N " wait_until_some_vector LE"); \
        CHECK(shmem_##N##_wait_until_any_vector(iv, 4, skip13, SHMEM_CMP_NE, cv) != SIZE_MAX, #N " wait_until_any_vector"); \
        /* a series of _any calls reaches every satisfied element */                                   \
        char seen[4] = {0};                                                                            \
        for (int i = 0; i < 8; i++) seen[shmem_##N##_test_any(iv, 4, NULL, SHMEM_CMP_GT, (T)0)] = 1;   \
        CHECK(seen[0] && seen[1] && seen[2] && seen[3], #N " test_any series missed an element");       \
        memset(seen, 0, sizeof seen);                                                                  \
        for (int i = 0; i < 8; i++) seen[shmem_##N##_wait_until_any(iv, 4, NULL, SHMEM_CMP_GT, (T)0)] = 1; \
        CHECK(seen[0] && seen[1] && seen[2] && seen[3], #N " wait_until_any series missed an element"); \
        shmem_barrier_all();                                                                           \
        shmem_free(iv);                                                                                \
    }                                                                                                  \
                                                                                                       \
    static void remote_##N(void) {                                                                     \
        T *iv = shmem_calloc((size_t)npes, sizeof(T));                                                 \
        int status[MAXPES] = {0};                                                                      \
        size_t idx[MAXPES];                                                                            \
        T cv[MAXPES];                                                                                  \
        if (npes < 2) {                                                                                \
            shmem_free(iv);                                                                            \
            return;                                                                                    \
        }                                                                                              \
        /* any: index 0 satisfies the test but is excluded; only the last peer's entry counts */       \
        iv[0] = (T)1;                                                                                  \
        status[0] = 1;                                                                                 \
        shmem_barrier_all();                                                                           \
        if (me == npes - 1) PUT(T, &iv[me], 1, 0);                                                     \
        if (me == 0) {                                                                                 \
            size_t got = shmem_##N##_wait_until_any(iv, (size_t)npes, status, SHMEM_CMP_EQ, (T)1);     \
            CHECK(got == (size_t)npes - 1, #N " wait_until_any returned %zu", got);                    \
            status[got] = 1;                                                                           \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        /* some: the other peers arrive in any order; each index is reported exactly once */           \
        if (me > 0 && me < npes - 1) PUT(T, &iv[me], 1, 0);                                            \
        if (me == 0) {                                                                                 \
            int left = npes - 2;                                                                       \
            while (left > 0) {                                                                         \
                size_t k = shmem_##N##_wait_until_some(iv, (size_t)npes, idx, status, SHMEM_CMP_EQ, (T)1); \
                CHECK(k >= 1 && (int)k <= left, #N " wait_until_some returned %zu with %d left", k, left); \
                for (size_t j = 0; j < k; j++) {                                                       \
                    CHECK(idx[j] >= 1 && idx[j] < (size_t)npes - 1 && !status[idx[j]], #N " wait_until_some index %zu", idx[j]); \
                    status[idx[j]] = 1;                                                                \
                    left--;                                                                            \
                }                                                                                      \
            }                                                                                          \
            CHECK(shmem_##N##_wait_until_some(iv, (size_t)npes, idx, status, SHMEM_CMP_EQ, (T)1) == 0, #N " emptied set: some"); \
            CHECK(shmem_##N##_wait_until_any(iv, (size_t)npes, status, SHMEM_CMP_EQ, (T)1) == SIZE_MAX, #N " emptied set: any"); \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        /* all: peers set 2 one after another, highest first */                                        \
        memset(status, 0, sizeof status);                                                              \
        status[0] = 1;                                                                                 \
        CHAIN_PUT(T, iv, 2);                                                                           \
        if (me == 0) {                                                                                 \
            shmem_##N##_wait_until_all(iv, (size_t)npes, status, SHMEM_CMP_EQ, (T)2);                  \
            for (int p = 1; p < npes; p++) CHECK(iv[p] == (T)2, #N " wait_until_all returned early (entry %d)", p); \
            CHECK(shmem_##N##_test_all(iv, (size_t)npes, status, SHMEM_CMP_EQ, (T)2) == 1, #N " test_all after"); \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        /* all_vector: peer p sets 10 + p */                                                           \
        for (int p = 0; p < npes; p++) cv[p] = (T)(10 + p);                                            \
        CHAIN_PUT(T, iv, 10 + me);                                                                     \
        if (me == 0) {                                                                                 \
            shmem_##N##_wait_until_all_vector(iv, (size_t)npes, status, SHMEM_CMP_EQ, cv);             \
            for (int p = 1; p < npes; p++) CHECK(iv[p] == (T)(10 + p), #N " wait_until_all_vector returned early (entry %d)", p); \
            CHECK(shmem_##N##_test_all_vector(iv, (size_t)npes, status, SHMEM_CMP_EQ, cv) == 1, #N " test_all_vector after"); \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        /* any_vector and some_vector: wait for entries to reach 20 + p */                             \
        for (int p = 0; p < npes; p++) cv[p] = (T)(20 + p);                                            \
        if (me == 1) PUT(T, &iv[1], 21, 0);                                                            \
        if (me == 0) {                                                                                 \
            size_t got = shmem_##N##_wait_until_any_vector(iv, (size_t)npes, status, SHMEM_CMP_GE, cv); \
            CHECK(got == 1, #N " wait_until_any_vector returned %zu", got);                            \
            status[1] = 1;                                                                             \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        if (me >= 2) PUT(T, &iv[me], 20 + me, 0);                                                      \
        if (me == 0) {                                                                                 \
            int left = npes - 2;                                                                       \
            while (left > 0) {                                                                         \
                size_t k = shmem_##N##_wait_until_some_vector(iv, (size_t)npes, idx, status, SHMEM_CMP_EQ, cv); \
                CHECK(k >= 1 && (int)k <= left, #N " wait_until_some_vector returned %zu", k);         \
                for (size_t j = 0; j < k; j++) {                                                       \
                    CHECK(idx[j] >= 2 && !status[idx[j]], #N " wait_until_some_vector index %zu", idx[j]); \
                    status[idx[j]] = 1;                                                                \
                    left--;                                                                            \
                }                                                                                      \
            }                                                                                          \
            CHECK(shmem_##N##_test_some_vector(iv, (size_t)npes, idx, NULL, SHMEM_CMP_EQ, cv) == (size_t)npes - 1, #N " test_some_vector after"); \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        /* one variable: wait for a value greater than 99 */                                           \
        if (me == npes - 1) PUT(T, &iv[0], 100, 0);                                                    \
        if (me == 0) {                                                                                 \
            shmem_##N##_wait_until(&iv[0], SHMEM_CMP_GT, (T)99);                                       \
            CHECK(iv[0] == (T)100, #N " wait_until value");                                            \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        shmem_free(iv);                                                                                \
    }

#define SYNC_TYPES(X)                                                                                  \
    X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned short, ushort)         \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)   \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

SYNC_TYPES(SYNC_TEST)

/* shmem_wait (until != value), shmem_wait_until on long, shmem_TYPENAME_wait. */
static void deprecated(void) {
    static long lv;
    static short sv;
    static int iv;
    static long long llv;
    int from = npes - 1; /* with one PE, the values are set before the wait */
    shmem_barrier_all();
    if (me == from) {
        long l = 5;
        short s = 6;
        int i = 7;
        long long ll = 8;
        shmem_putmem(&sv, &s, sizeof s, 0);
        shmem_putmem(&iv, &i, sizeof i, 0);
        shmem_putmem(&llv, &ll, sizeof ll, 0);
        shmem_putmem(&lv, &l, sizeof l, 0);
    }
    if (me == 0) {
        shmem_wait(&lv, 0);
        CHECK_EQ_LONG(lv, 5);
        shmem_short_wait(&sv, 0);
        shmem_int_wait(&iv, 0);
        shmem_longlong_wait(&llv, 0);
        CHECK(sv == 6 && iv == 7 && llv == 8, "shmem_TYPENAME_wait values");
        shmem_long_wait(&lv, 0);
    }
    shmem_barrier_all();
    if (me == from) shmem_long_atomic_add(&lv, 10, 0);
    if (me == 0) {
        (shmem_wait_until)(&lv, SHMEM_CMP_GE, 15); /* the deprecated function, not the C11 generic */
        CHECK_EQ_LONG(lv, 15);
    }
    shmem_barrier_all();
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    CHECK(npes <= MAXPES, "at most %d PEs", MAXPES);
#define RUN(T, N) local_##N(); remote_##N();
    SYNC_TYPES(RUN)
#undef RUN
    deprecated();
    if (me == 0) printf("wait_families: %d PEs ok\n", npes);
    shmem_finalize();
    return 0;
}
