/* rshmem-test: pes=1,2,4,7 */
/* Team reductions: every operation on every type of its table (OpenSHMEM 1.5 Table 10, plus
 * complexf/complexd for SUM and PROD), with values chosen so results are exact; out of place
 * and in place (dest == source); a long reduction (several internal chunks); on the world
 * team and concurrently on the even and odd PEs' teams. No synchronisation around the calls:
 * the reductions must order themselves, and every member's dest is final once any returns. */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <shmem.h>
#include "check.h"

#define MAXPE 64
#define NMAX 5000

static long double sbuf[NMAX], dbuf[NMAX];
static int pes[MAXPE];

#define OPS_and(a, b) ((a) & (b))
#define OPS_or(a, b) ((a) | (b))
#define OPS_xor(a, b) ((a) ^ (b))
#define OPS_max(a, b) ((b) > (a) ? (b) : (a))
#define OPS_min(a, b) ((b) < (a) ? (b) : (a))
#define OPS_sum(a, b) ((a) + (b))
#define OPS_prod(a, b) ((a) * (b))

#define VAL_and(p, i) ((0x55 ^ ((p) * 37 + (i) * 11)) & 0x7f)
#define VAL_or(p, i) VAL_and(p, i)
#define VAL_xor(p, i) VAL_and(p, i)
#define VAL_max(p, i) (((p) * 7 + (i) * 3) % 11 - 5)
#define VAL_min(p, i) VAL_max(p, i)
#define VAL_sum(p, i) (((p) + (i)) % 5 - 2)
#define VAL_prod(p, i) (((p) + (i)) % 4 == 0 ? 2 : ((p) + (i)) % 4 == 1 ? -1 : 1)

/* Complex values: small Gaussian integers, so sums and products are exact. */
#define CVAL_sum(p, i) (((p) + (i)) % 5 - 2 + ((p) - (i)) % 3 * I)
#define CVAL_prod(p, i) (((p) + (i)) % 4 == 0 ? 1 + 1 * I : ((p) + (i)) % 4 == 1 ? 1 * I : ((p) + (i)) % 4 == 2 ? -1 : 1)

static int team_size(shmem_team_t team) {
    int n = shmem_team_n_pes(team);
    for (int k = 0; k < n; k++) pes[k] = shmem_team_translate_pe(team, k, SHMEM_TEAM_WORLD);
    return n;
}

#define DEFINE_TEST(TN, T, OP, VAL)                                                                    \
    static void test_##TN##_##OP(shmem_team_t team, int n, int inplace) {                              \
        T *src = (T *)sbuf, *dst = inplace ? (T *)sbuf : (T *)dbuf;                                    \
        int me = shmem_my_pe(), tn = team_size(team);                                                  \
        for (int i = 0; i < n; i++) src[i] = (T)VAL(me, i);                                            \
        if (!inplace)                                                                                  \
            for (int i = 0; i < n + (n < NMAX); i++) dst[i] = (T)99;                                   \
        CHECK_EQ_LONG(shmem_##TN##_##OP##_reduce(team, dst, src, n), 0);                              \
        for (int i = 0; i < n; i++) {                                                                  \
            T want = (T)VAL(pes[0], i);                                                                \
            for (int k = 1; k < tn; k++) {                                                             \
                T b = (T)VAL(pes[k], i);                                                               \
                want = (T)OPS_##OP(want, b);                                                           \
            }                                                                                          \
            CHECK(dst[i] == want, "shmem_%s_%s_reduce n=%d inplace=%d: element %d wrong", #TN, #OP, n, \
                  inplace, i);                                                                         \
            if (!inplace) CHECK(src[i] == (T)VAL(me, i), "shmem_%s_%s_reduce changed source", #TN, #OP); \
        }                                                                                              \
        if (!inplace) CHECK(n == NMAX || dst[n] == (T)99, "shmem_%s_%s_reduce wrote past nreduce", #TN, #OP); \
    }

#define DEF(TN, T, OP) DEFINE_TEST(TN, T, OP, VAL_##OP)
#define RUN(TN, T, OP) test_##TN##_##OP(team, n, inplace);

#define BITWISE_TYPES(X, OP)                                                                           \
    X(uchar, unsigned char, OP) X(ushort, unsigned short, OP) X(uint, unsigned int, OP)               \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP)              \
    X(int16, int16_t, OP) X(int32, int32_t, OP) X(int64, int64_t, OP) X(uint8, uint8_t, OP)           \
    X(uint16, uint16_t, OP) X(uint32, uint32_t, OP) X(uint64, uint64_t, OP) X(size, size_t, OP)

#ifdef NO_LONGDOUBLE
#define LONGDOUBLE_TYPE(X, OP)
#else
#define LONGDOUBLE_TYPE(X, OP) X(longdouble, long double, OP)
#endif

#define COMPARE_TYPES(X, OP)                                                                           \
    X(char, char, OP) X(schar, signed char, OP) X(short, short, OP) X(int, int, OP) X(long, long, OP) \
    X(longlong, long long, OP) X(ptrdiff, ptrdiff_t, OP) X(uchar, unsigned char, OP)                  \
    X(ushort, unsigned short, OP) X(uint, unsigned int, OP) X(ulong, unsigned long, OP)               \
    X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP) X(int16, int16_t, OP)                    \
    X(int32, int32_t, OP) X(int64, int64_t, OP) X(uint8, uint8_t, OP) X(uint16, uint16_t, OP)         \
    X(uint32, uint32_t, OP) X(uint64, uint64_t, OP) X(size, size_t, OP) X(float, float, OP)           \
    X(double, double, OP) LONGDOUBLE_TYPE(X, OP)

BITWISE_TYPES(DEF, and)
BITWISE_TYPES(DEF, or)
BITWISE_TYPES(DEF, xor)
COMPARE_TYPES(DEF, max)
COMPARE_TYPES(DEF, min)
COMPARE_TYPES(DEF, sum)
COMPARE_TYPES(DEF, prod)
DEFINE_TEST(complexf, float _Complex, sum, CVAL_sum)
DEFINE_TEST(complexd, double _Complex, sum, CVAL_sum)
DEFINE_TEST(complexf, float _Complex, prod, CVAL_prod)
DEFINE_TEST(complexd, double _Complex, prod, CVAL_prod)

static void run_all(shmem_team_t team, int n, int inplace) {
    BITWISE_TYPES(RUN, and)
    BITWISE_TYPES(RUN, or)
    BITWISE_TYPES(RUN, xor)
    COMPARE_TYPES(RUN, max)
    COMPARE_TYPES(RUN, min)
    COMPARE_TYPES(RUN, sum)
    COMPARE_TYPES(RUN, prod)
    test_complexf_sum(team, n, inplace);
    test_complexd_sum(team, n, inplace);
    test_complexf_prod(team, n, inplace);
    test_complexd_prod(team, n, inplace);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs");

    run_all(SHMEM_TEAM_WORLD, 37, 0);
    run_all(SHMEM_TEAM_WORLD, 37, 1);
    run_all(SHMEM_TEAM_WORLD, 1, 0);
    run_all(SHMEM_TEAM_WORLD, 0, 0);
    /* Long reductions: several passes of the internal chunking. */
    test_int_sum(SHMEM_TEAM_WORLD, NMAX, 0);
    test_double_max(SHMEM_TEAM_WORLD, NMAX, 1);
    test_uint64_xor(SHMEM_TEAM_WORLD, NMAX, 0);
    test_complexd_prod(SHMEM_TEAM_WORLD, NMAX / 2, 1);

    /* Even and odd PEs reduce on their own teams at the same time. */
    shmem_team_t evens, odds = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens);
    if (npes > 1) shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odds);
    shmem_team_t half = me % 2 ? odds : evens;
    run_all(half, 19, 0);
    run_all(half, 19, 1);
    test_long_sum(half, NMAX, 1);
    /* When any member has returned, every member's dest holds the result (in place too):
     * read the peers' copies at once, with no synchronisation. */
    {
        long *r = (long *)sbuf;
        int tn = team_size(half);
        for (int k = 0; k < tn; k++)
            for (int i = NMAX - 3; i < NMAX; i++) CHECK_EQ_LONG(shmem_long_g(&r[i], pes[k]), r[i]);
    }

    shmem_barrier_all();
    if (me == 0) printf("coll_reduce: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
