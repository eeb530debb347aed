/* rshmem-test: pes=1,2,4,7
 * Contiguous RMA for every standard RMA type: put, get, p, g, their nbi forms and their ctx_
 * forms (default and created contexts). Each PE writes a pattern naming itself into its right
 * neighbour, then checks what its left neighbour wrote and reads its own pattern back. */
#include <shmem.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define N 9

/* Distinct value per (PE, index, family): every byte of an integer differs between PEs, and
 * floating values are not integers (long double ones not even doubles). */
#define MAKE_INT(T, b) ((T)((uint64_t)(b) * 0x0101010101010101ULL))
#define MAKE_FLT(T, b) ((T)(b) / (T)3)
#define BASE(pe, i, fam) ((pe) * 4 * N + (fam) * N + (i) + 1)

static int me, npes, right, left;
static shmem_ctx_t ctx; /* a created context */

#define DEF_TEST(NAME, T, MAKE)                                                              \
    static void test_##NAME(void) {                                                          \
        /* families: 0 put, 1 p, 2 put_nbi, 3 ctx put/p */                                   \
        T *put_dst = shmem_malloc(4 * N * sizeof(T));                                       \
        T *p_dst = put_dst + N, *nbi_dst = put_dst + 2 * N, *ctx_dst = put_dst + 3 * N;      \
        T src[N], got[N];                                                                    \
        CHECK(put_dst != NULL, "shmem_malloc failed for " #NAME);                            \
        for (int i = 0; i < N; i++) src[i] = MAKE(T, BASE(me, i, 0));                        \
        shmem_##NAME##_put(put_dst, src, N, right);                                          \
        for (int i = 0; i < N; i++) shmem_##NAME##_p(&p_dst[i], MAKE(T, BASE(me, i, 1)), right); \
        T nsrc[N];                                                                           \
        for (int i = 0; i < N; i++) nsrc[i] = MAKE(T, BASE(me, i, 2));                       \
        shmem_##NAME##_put_nbi(nbi_dst, nsrc, N, right);                                     \
        for (int i = 0; i < N; i++) src[i] = MAKE(T, BASE(me, i, 3));                        \
        shmem_ctx_##NAME##_put(ctx, ctx_dst, src, N / 2, right);                             \
        shmem_ctx_##NAME##_put_nbi(SHMEM_CTX_DEFAULT, ctx_dst + N / 2, src + N / 2, 1, right); \
        for (int i = N / 2 + 1; i < N; i++) shmem_ctx_##NAME##_p(ctx, &ctx_dst[i], src[i], right); \
        shmem_ctx_quiet(ctx);                                                                \
        shmem_quiet();                                                                       \
        shmem_barrier_all();                                                                 \
        for (int f = 0; f < 4; f++)                                                          \
            for (int i = 0; i < N; i++)                                                      \
                CHECK(put_dst[f * N + i] == MAKE(T, BASE(left, i, f)),                       \
                      #NAME " family %d element %d from PE %d is wrong", f, i, left);        \
        /* Read back what this PE wrote into its right neighbour, four ways. */              \
        memset(got, 0, sizeof got);                                                          \
        shmem_##NAME##_get(got, put_dst, N, right);                                          \
        for (int i = 0; i < N; i++)                                                          \
            CHECK(got[i] == MAKE(T, BASE(me, i, 0)), #NAME "_get element %d", i);            \
        for (int i = 0; i < N; i++)                                                          \
            CHECK(shmem_##NAME##_g(&p_dst[i], right) == MAKE(T, BASE(me, i, 1)), #NAME "_g element %d", i); \
        memset(got, 0, sizeof got);                                                          \
        shmem_##NAME##_get_nbi(got, nbi_dst, N, right);                                      \
        shmem_quiet();                                                                       \
        for (int i = 0; i < N; i++)                                                          \
            CHECK(got[i] == MAKE(T, BASE(me, i, 2)), #NAME "_get_nbi element %d", i);        \
        memset(got, 0, sizeof got);                                                          \
        shmem_ctx_##NAME##_get(ctx, got, ctx_dst, 3, right);                                 \
        shmem_ctx_##NAME##_get_nbi(ctx, got + 3, ctx_dst + 3, N - 4, right);                 \
        shmem_ctx_quiet(ctx);                                                                \
        got[N - 1] = shmem_ctx_##NAME##_g(SHMEM_CTX_DEFAULT, &ctx_dst[N - 1], right);        \
        for (int i = 0; i < N; i++)                                                          \
            CHECK(got[i] == MAKE(T, BASE(me, i, 3)), #NAME " ctx get element %d", i);        \
        /* Zero-length transfers are allowed and touch nothing. */                           \
        shmem_##NAME##_put(put_dst, src, 0, right);                                          \
        shmem_##NAME##_get(got, put_dst, 0, right);                                          \
        shmem_barrier_all();                                                                 \
        shmem_free(put_dst);                                                                 \
    }

DEF_TEST(float, float, MAKE_FLT)
DEF_TEST(double, double, MAKE_FLT)
DEF_TEST(longdouble, long double, MAKE_FLT)
DEF_TEST(char, char, MAKE_INT)
DEF_TEST(schar, signed char, MAKE_INT)
DEF_TEST(short, short, MAKE_INT)
DEF_TEST(int, int, MAKE_INT)
DEF_TEST(long, long, MAKE_INT)
DEF_TEST(longlong, long long, MAKE_INT)
DEF_TEST(uchar, unsigned char, MAKE_INT)
DEF_TEST(ushort, unsigned short, MAKE_INT)
DEF_TEST(uint, unsigned int, MAKE_INT)
DEF_TEST(ulong, unsigned long, MAKE_INT)
DEF_TEST(ulonglong, unsigned long long, MAKE_INT)
DEF_TEST(int8, int8_t, MAKE_INT)
DEF_TEST(int16, int16_t, MAKE_INT)
DEF_TEST(int32, int32_t, MAKE_INT)
DEF_TEST(int64, int64_t, MAKE_INT)
DEF_TEST(uint8, uint8_t, MAKE_INT)
DEF_TEST(uint16, uint16_t, MAKE_INT)
DEF_TEST(uint32, uint32_t, MAKE_INT)
DEF_TEST(uint64, uint64_t, MAKE_INT)
DEF_TEST(size, size_t, MAKE_INT)
DEF_TEST(ptrdiff, ptrdiff_t, MAKE_INT)

/* long double p/g pass and return the x87 value itself: check values a double cannot hold. */
static void test_longdouble_abi(void) {
    long double *x = shmem_malloc(4 * sizeof(long double));
    const long double third = 1.0L / 3.0L;
    CHECK((long double)(double)third != third, "1/3 must need more than double precision");
    shmem_longdouble_p(&x[0], third * (me + 1), right);
    shmem_ctx_longdouble_p(ctx, &x[1], -third / (me + 2), right);
    shmem_ctx_longdouble_p(SHMEM_CTX_DEFAULT, &x[2], 0x1.fffffffffffffffep+16383L, right); /* LDBL_MAX */
    shmem_longdouble_p(&x[3], 0x1p-16445L, right); /* smallest subnormal */
    shmem_barrier_all();
    CHECK(x[0] == third * (left + 1), "long double p from PE %d: got %La", left, x[0]);
    CHECK(x[1] == -third / (left + 2), "ctx long double p: got %La", x[1]);
    CHECK(x[2] == 0x1.fffffffffffffffep+16383L, "LDBL_MAX: got %La", x[2]);
    CHECK(x[3] == 0x1p-16445L, "subnormal: got %La", x[3]);
    /* g returns in st(0): use the value in arithmetic straight away. */
    long double a = shmem_longdouble_g(&x[0], right) * 3.0L;
    long double b = shmem_ctx_longdouble_g(ctx, &x[1], right) + shmem_ctx_longdouble_g(SHMEM_CTX_DEFAULT, &x[1], right);
    CHECK(a == third * (me + 1) * 3.0L, "long double g: got %La", a);
    CHECK(b == 2 * (-third / (me + 2)), "ctx long double g: got %La", b);
    CHECK(shmem_longdouble_g(&x[3], right) == 0x1p-16445L, "subnormal g");
    shmem_barrier_all();
    shmem_free(x);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    test_float(); test_double(); test_longdouble();
    test_char(); test_schar(); test_short(); test_int(); test_long(); test_longlong();
    test_uchar(); test_ushort(); test_uint(); test_ulong(); test_ulonglong();
    test_int8(); test_int16(); test_int32(); test_int64();
    test_uint8(); test_uint16(); test_uint32(); test_uint64();
    test_size(); test_ptrdiff();
    test_longdouble_abi();
    shmem_ctx_destroy(ctx);
    if (me == 0) printf("rma_contig: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
