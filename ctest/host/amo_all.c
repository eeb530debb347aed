/* rshmem-test: pes=1,2,4,7
 * Every blocking AMO for every type of its table, plain and ctx forms, plus the deprecated names:
 * contended fetch_add/fetch_inc (the fetched values must be a permutation), inc/add totals,
 * compare_swap with exactly one winner, swap chains, fetch/set across PEs, bitwise ops with a
 * distinct bit per PE, exact float/double bit patterns through fetch/set/swap, and AMOs through a
 * created context and a team context (team-relative PE numbers). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define ROUNDS 24

static int me, npes;
static long long *report; /* symmetric, npes * ROUNDS slots; gathered on PE 0 */

/* Every PE's `count` values land in PE 0's report (PE p at slot p * ROUNDS). */
static void gather(const long long *mine, int count) {
    shmem_barrier_all();
    shmem_putmem(report + (size_t)me * ROUNDS, mine, (size_t)count * sizeof(long long), 0);
    shmem_barrier_all();
}

/* On PE 0: the gathered values are exactly lo .. lo + npes * count - 1, each once. */
static void check_permutation(int count, long long lo, const char *what) {
    if (me != 0) return;
    int total = npes * count;
    char *seen = calloc((size_t)total, 1);
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < count; i++) {
            long long v = report[p * ROUNDS + i] - lo;
            CHECK(v >= 0 && v < total, "%s: PE %d fetched %lld, outside [%lld, %lld)", what, p, v + lo, lo, lo + total);
            CHECK(!seen[v], "%s: value %lld fetched twice", what, v + lo);
            seen[v] = 1;
        }
    free(seen);
}

/* Table 6: fetch_add, fetch_inc, add, inc, compare_swap. */
#define STANDARD_TEST(T, N)                                                                            \
    static void standard_##N(void) {                                                                   \
        T *x = shmem_malloc(2 * sizeof(T));                                                            \
        long long got[ROUNDS];                                                                         \
        x[0] = 0;                                                                                      \
        x[1] = 0;                                                                                      \
        shmem_barrier_all();                                                                           \
        for (int i = 0; i < ROUNDS; i++) {                                                             \
            switch (i % 4) {                                                                           \
            case 0: got[i] = (long long)shmem_##N##_atomic_fetch_add(x, (T)1, 0); break;               \
            case 1: got[i] = (long long)shmem_##N##_atomic_fetch_inc(x, 0); break;                     \
            case 2: got[i] = (long long)shmem_ctx_##N##_atomic_fetch_add(SHMEM_CTX_DEFAULT, x, (T)1, 0); break; \
            default: got[i] = (long long)shmem_ctx_##N##_atomic_fetch_inc(SHMEM_CTX_DEFAULT, x, 0); break; \
            }                                                                                          \
        }                                                                                              \
        gather(got, ROUNDS);                                                                           \
        check_permutation(ROUNDS, 0, #N " fetch_add/fetch_inc");                                       \
        for (int i = 0; i < ROUNDS; i++) {                                                             \
            if (i % 2) shmem_##N##_atomic_inc(x, 0);                                                   \
            else shmem_ctx_##N##_atomic_inc(SHMEM_CTX_DEFAULT, x, 0);                                  \
        }                                                                                              \
        shmem_##N##_atomic_add(x, (T)(me + 1), 0);                                                     \
        shmem_ctx_##N##_atomic_add(SHMEM_CTX_DEFAULT, x, (T)(2 * (me + 1)), 0);                        \
        shmem_barrier_all();                                                                           \
        if (me == 0)                                                                                   \
            CHECK_EQ_LONG(x[0], 2LL * npes * ROUNDS + 3LL * npes * (npes + 1) / 2);                    \
        /* compare_swap contention: exactly one PE swaps 0 -> me + 1 */                                \
        long long old = (long long)(me % 2 ? shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, x + 1, (T)0, (T)(me + 1), 0) \
                                           : shmem_##N##_atomic_compare_swap(x + 1, (T)0, (T)(me + 1), 0));  \
        gather(&old, 1);                                                                               \
        if (me == 0) {                                                                                 \
            int winners = 0, winner = -1;                                                              \
            for (int p = 0; p < npes; p++)                                                             \
                if (report[p * ROUNDS] == 0) winners++, winner = p;                                    \
            CHECK(winners == 1, #N " compare_swap: %d PEs saw the old value 0", winners);              \
            for (int p = 0; p < npes; p++)                                                             \
                if (p != winner) CHECK_EQ_LONG(report[p * ROUNDS], winner + 1);                        \
            CHECK_EQ_LONG(x[1], winner + 1);                                                           \
        }                                                                                              \
        /* wrap-around: add (T)-1 to 0, then fetch_inc back to 0 (remote when npes > 1) */             \
        shmem_barrier_all();                                                                           \
        if (me == 0) {                                                                                 \
            int far = npes - 1;                                                                        \
            shmem_##N##_atomic_set(x + 1, (T)0, far);                                                  \
            CHECK(shmem_##N##_atomic_fetch_add(x + 1, (T)-1, far) == (T)0, #N " fetch_add old");      \
            CHECK(shmem_##N##_atomic_fetch_inc(x + 1, far) == (T)-1, #N " wrapped value");            \
            CHECK(shmem_##N##_atomic_fetch(x + 1, far) == (T)0, #N " fetch_inc wraps to 0");          \
            CHECK(shmem_##N##_atomic_compare_swap(x + 1, (T)5, (T)9, far) == (T)0, #N " failed cswap returns old"); \
            CHECK(shmem_##N##_atomic_fetch(x + 1, far) == (T)0, #N " failed cswap leaves value");     \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

/* Table 7: fetch, set, swap. */
#define EXTENDED_TEST(T, N)                                                                            \
    static void extended_##N(void) {                                                                   \
        T *x = shmem_malloc(2 * sizeof(T));                                                            \
        x[0] = (T)1000;                                                                                \
        x[1] = (T)0;                                                                                   \
        shmem_barrier_all();                                                                           \
        /* swap chain: the old values plus the final value are {1000, 0, .., npes - 1} */             \
        long long old = (long long)(me % 2 ? shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, x, (T)me, 0) \
                                           : shmem_##N##_atomic_swap(x, (T)me, 0));                    \
        gather(&old, 1);                                                                               \
        if (me == 0) {                                                                                 \
            char seen[64] = {0};                                                                       \
            for (int p = 0; p <= npes; p++) {                                                          \
                long long v = p < npes ? report[p * ROUNDS] : (long long)x[0];                         \
                int k = v == 1000 ? npes : (int)v;                                                     \
                CHECK(v == 1000 || (v >= 0 && v < npes), #N " swap chain value %lld", v);              \
                CHECK(!seen[k], #N " swap chain value %lld seen twice", v);                            \
                seen[k] = 1;                                                                           \
            }                                                                                          \
        }                                                                                              \
        /* set on the next PE, fetch it back from there and from the previous PE here */               \
        int next = (me + 1) % npes, prev = (me + npes - 1) % npes;                                     \
        if (me % 2) shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, x + 1, (T)(3 * me + 7), next);       \
        else shmem_##N##_atomic_set(x + 1, (T)(3 * me + 7), next);                                     \
        shmem_barrier_all();                                                                           \
        CHECK(shmem_##N##_atomic_fetch(x + 1, next) == (T)(3 * me + 7), #N " fetch from next");       \
        CHECK(shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, x + 1, me) == (T)(3 * prev + 7), #N " ctx fetch of own"); \
        CHECK(x[1] == (T)(3 * prev + 7), #N " set arrived");                                          \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

/* Table 8: and, or, xor and their fetching forms, one bit per PE. */
#define BITWISE_TEST(T, N)                                                                             \
    static void bitwise_##N(void) {                                                                    \
        T *x = shmem_malloc(sizeof(T));                                                                \
        T bit = (T)1 << me, hibit = (T)1 << (me + 8);                                                  \
        T low = (T)(((T)1 << npes) - 1), high = (T)(low << 8);                                         \
        *x = 0;                                                                                        \
        shmem_barrier_all();                                                                           \
        T old = shmem_##N##_atomic_fetch_or(x, bit, 0);                                                \
        CHECK(!(old & bit), #N " fetch_or: own bit already set");                                     \
        shmem_ctx_##N##_atomic_or(SHMEM_CTX_DEFAULT, x, hibit, 0);                                     \
        shmem_barrier_all();                                                                           \
        if (me == 0) CHECK(*x == (T)(low | high), #N " or: %llx", (unsigned long long)*x);            \
        shmem_barrier_all();                                                                           \
        old = shmem_ctx_##N##_atomic_fetch_and(SHMEM_CTX_DEFAULT, x, (T)~bit, 0);                      \
        CHECK(old & bit, #N " fetch_and: own bit already clear");                                     \
        shmem_##N##_atomic_and(x, (T)~hibit, 0);                                                       \
        shmem_barrier_all();                                                                           \
        if (me == 0) CHECK(*x == 0, #N " and: %llx", (unsigned long long)*x);                         \
        shmem_barrier_all();                                                                           \
        old = shmem_##N##_atomic_fetch_xor(x, bit, 0);                                                 \
        CHECK(!(old & bit), #N " first fetch_xor: own bit set");                                      \
        old = shmem_ctx_##N##_atomic_fetch_xor(SHMEM_CTX_DEFAULT, x, bit, 0);                          \
        CHECK(old & bit, #N " second fetch_xor: own bit clear");                                      \
        shmem_##N##_atomic_xor(x, hibit, 0);                                                           \
        shmem_ctx_##N##_atomic_xor(SHMEM_CTX_DEFAULT, x, (T)(hibit | bit), 0);                         \
        shmem_barrier_all();                                                                           \
        if (me == 0) CHECK(*x == low, #N " xor: %llx", (unsigned long long)*x);                       \
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

/* float/double through fetch/set/swap keep every bit: NaN payloads, -0, denormals, infinities. */
static void float_bits(void) {
    static const uint32_t fpat[] = {0x7fc00123u, 0x7f800001u, 0x80000000u, 0x00000001u, 0x7f800000u, 0xff7fffffu};
    static const uint64_t dpat[] = {0x7ff8000000abcdefull, 0x7ff0000000000001ull, 0x8000000000000000ull,
                                    0x0000000000000001ull, 0xfff0000000000000ull, 0x3ff0000000000001ull};
    float *f = shmem_malloc(sizeof(float));
    double *d = shmem_malloc(sizeof(double));
    int next = (me + 1) % npes;
    for (size_t k = 0; k < sizeof fpat / sizeof fpat[0]; k++) {
        float fv, fo;
        double dv, dd;
        memcpy(&fv, &fpat[k], 4);
        memcpy(&dv, &dpat[k], 8);
        shmem_barrier_all();
        shmem_float_atomic_set(f, fv, next);
        shmem_ctx_double_atomic_set(SHMEM_CTX_DEFAULT, d, dv, next);
        shmem_barrier_all();
        CHECK(memcmp(f, &fpat[k], 4) == 0, "float set: bits of pattern %zu changed", k);
        CHECK(memcmp(d, &dpat[k], 8) == 0, "double set: bits of pattern %zu changed", k);
        fo = shmem_float_atomic_fetch(f, next);
        dd = shmem_double_atomic_fetch(d, next);
        CHECK(memcmp(&fo, &fpat[k], 4) == 0, "float fetch: bits of pattern %zu changed", k);
        CHECK(memcmp(&dd, &dpat[k], 8) == 0, "double fetch: bits of pattern %zu changed", k);
        shmem_barrier_all();
        size_t j = (k + 1) % (sizeof fpat / sizeof fpat[0]);
        memcpy(&fv, &fpat[j], 4);
        memcpy(&dv, &dpat[j], 8);
        fo = shmem_ctx_float_atomic_swap(SHMEM_CTX_DEFAULT, f, fv, next);
        dd = shmem_double_atomic_swap(d, dv, next);
        CHECK(memcmp(&fo, &fpat[k], 4) == 0, "float swap: old bits of pattern %zu changed", k);
        CHECK(memcmp(&dd, &dpat[k], 8) == 0, "double swap: old bits of pattern %zu changed", k);
        shmem_barrier_all();
        CHECK(memcmp(f, &fpat[j], 4) == 0, "float swap: new bits of pattern %zu changed", j);
        CHECK(memcmp(d, &dpat[j], 8) == 0, "double swap: new bits of pattern %zu changed", j);
    }
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(f);
}

/* OpenSHMEM 1.3 names: fetch/set/swap (int, long, longlong, float, double) and
 * cswap/finc/inc/fadd/add (int, long, longlong). */
#define DEPRECATED_INT(T, N)                                                                           \
    static void deprecated_##N(void) {                                                                 \
        T *x = shmem_malloc(2 * sizeof(T));                                                            \
        x[0] = 0;                                                                                      \
        x[1] = 0;                                                                                      \
        shmem_barrier_all();                                                                           \
        long long got[2];                                                                              \
        got[0] = shmem_##N##_finc(x, 0);                                                               \
        got[1] = shmem_##N##_fadd(x, 1, 0);                                                            \
        gather(got, 2);                                                                                \
        check_permutation(2, 0, #N " finc/fadd");                                                      \
        shmem_##N##_inc(x, 0);                                                                         \
        shmem_##N##_add(x, (T)(me + 1), 0);                                                            \
        shmem_barrier_all();                                                                           \
        if (me == 0) CHECK_EQ_LONG(x[0], 3LL * npes + (long long)npes * (npes + 1) / 2);               \
        long long old = shmem_##N##_cswap(x + 1, 0, (T)(me + 1), 0);                                   \
        gather(&old, 1);                                                                               \
        if (me == 0) {                                                                                 \
            int winners = 0;                                                                           \
            for (int p = 0; p < npes; p++) winners += report[p * ROUNDS] == 0;                         \
            CHECK(winners == 1, #N " cswap: %d winners", winners);                                     \
        }                                                                                              \
        int next = (me + 1) % npes;                                                                    \
        shmem_barrier_all();                                                                           \
        shmem_##N##_set(x, (T)(me + 40), next);                                                        \
        shmem_barrier_all();                                                                           \
        CHECK(shmem_##N##_fetch(x, next) == (T)(me + 40), #N " fetch");                               \
        shmem_barrier_all();                                                                           \
        CHECK(shmem_##N##_swap(x, (T)(me + 50), next) == (T)(me + 40), #N " swap old");               \
        shmem_barrier_all();                                                                           \
        CHECK(x[0] == (T)((me + npes - 1) % npes + 50), #N " swap new");                               \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

#define DEPRECATED_FLOAT(T, N)                                                                         \
    static void deprecated_##N(void) {                                                                 \
        T *x = shmem_malloc(sizeof(T));                                                                \
        int next = (me + 1) % npes;                                                                    \
        shmem_##N##_set(x, (T)me + (T)0.25, next);                                                     \
        shmem_barrier_all();                                                                           \
        CHECK(shmem_##N##_fetch(x, next) == (T)me + (T)0.25, #N " fetch");                            \
        shmem_barrier_all();                                                                           \
        CHECK(shmem_##N##_swap(x, (T)me - (T)0.5, next) == (T)me + (T)0.25, #N " swap old");          \
        shmem_barrier_all();                                                                           \
        CHECK(*x == (T)((me + npes - 1) % npes) - (T)0.5, #N " swap new");                            \
        shmem_barrier_all();                                                                           \
        shmem_free(x);                                                                                 \
    }

DEPRECATED_INT(int, int)
DEPRECATED_INT(long, long)
DEPRECATED_INT(long long, longlong)
DEPRECATED_FLOAT(float, float)
DEPRECATED_FLOAT(double, double)

/* The C11 generic names resolve to the typed routines (with and without a context). */
static void generics(void) {
    long *l = shmem_calloc(2, sizeof(long));
    double *d = shmem_calloc(1, sizeof(double));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    long fetched = -1;
    shmem_barrier_all(); /* l is zero everywhere before anyone adds */
    long old = shmem_atomic_fetch_add(l, 2L, 0);
    CHECK(old % 2 == 0 && old >= 0 && old < 2L * npes, "generic fetch_add: %ld", old);
    shmem_barrier_all();
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, l, 0);
    shmem_atomic_fetch_inc_nbi(&fetched, l, 0);
    shmem_atomic_set(d, 0.5 + me, next);
    long mine = 100 + me;
    shmem_put_signal(&l[1], &mine, 1, sig, 1, SHMEM_SIGNAL_ADD, next);
    shmem_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)1);
    CHECK_EQ_LONG(l[1], 100 + prev);
    shmem_barrier_all();
    CHECK(fetched >= 0 && fetched < 4L * npes, "generic fetch_inc_nbi: %ld", fetched);
    if (me == 0) CHECK_EQ_LONG(l[0], 4L * npes);
    CHECK(shmem_atomic_fetch(d, next) == 0.5 + me, "generic set/fetch on double");
    CHECK(shmem_test(sig, SHMEM_CMP_EQ, (uint64_t)1) == 1, "generic test");
    CHECK(shmem_test_any(&l[1], 1, NULL, SHMEM_CMP_GE, 100L) == 0, "generic test_any");
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(d);
    shmem_free(l);
}

/* AMOs through contexts: one created on the world team, and one on a strided team, where PE
 * arguments are team-relative. */

static void contexts(void) {
    long *x = shmem_calloc(2, sizeof(long));
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    long old = shmem_ctx_long_atomic_fetch_add(ctx, &x[0], 1, 0);
    CHECK(old >= 0 && old < npes, "fetch_add through a created context: %ld", old);
    shmem_ctx_uint64_atomic_or(ctx, (uint64_t *)&x[1], (uint64_t)1 << me, 0);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    if (me == 0) {
        CHECK_EQ_LONG(x[0], npes);
        CHECK_EQ_LONG(x[1], (1L << npes) - 1);
    }
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();

    if (npes < 2) {
        shmem_free(x);
        return;
    }
    /* The odd PEs: team PE i is world PE 2i + 1. Each adds its world number + 1 to team PE 0
     * (world PE 1) and swaps into its team-right neighbour. */
    int size = npes / 2;
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, size, NULL, 0, &odd);
    x[0] = x[1] = 0;
    shmem_barrier_all();
    if (me % 2 == 1) {
        shmem_ctx_t tctx;
        CHECK(shmem_team_create_ctx(odd, 0, &tctx) == 0, "team context creation failed");
        int ti = me / 2, tright = (ti + 1) % size;
        shmem_ctx_long_atomic_add(tctx, &x[0], me + 1, 0);
        long prev = shmem_ctx_long_atomic_swap(tctx, &x[1], me, tright);
        (void)prev;
        shmem_ctx_destroy(tctx);
    }
    shmem_barrier_all();
    if (me == 1) {
        long want = 0;
        for (int p = 1; p < npes; p += 2) want += p + 1;
        CHECK_EQ_LONG(x[0], want);
    }
    if (me % 2 == 1) {
        int ti = me / 2, tleft = (ti + size - 1) % size;
        CHECK_EQ_LONG(x[1], 2 * tleft + 1); /* swapped in by the world PE of team-left */
    } else {
        CHECK(x[0] == 0 && x[1] == 0, "even PE %d was written through the odd team's context", me);
    }
    shmem_barrier_all();
    if (me % 2 == 1) shmem_team_destroy(odd);
    shmem_free(x);
}

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
    float_bits();
    deprecated_int();
    deprecated_long();
    deprecated_longlong();
    deprecated_float();
    deprecated_double();
    contexts();
    generics();

    shmem_free(report);
    if (me == 0) printf("amo_all: %d PEs ok\n", npes);
    shmem_finalize();
    return 0;
}
