/* AMOs through Open MPI's OSHMEM ABI: the named 1.4 forms (int, long, long long, unsigned,
 * fixed-width for the bitwise AMOs (the only fixed-width AMOs OSHMEM 1.4 has), float/double for
 * swap/set/fetch), the deprecated names (fadd, finc, add, inc,
 * swap, cswap, fetch, set), the ctx forms with SHMEM_CTX_DEFAULT, and the C11 generic
 * shmem_atomic_* macros of OSHMEM's header. Contended updates: every PE hits PE 0 at once. */
#include <stdint.h>

#include "osh_common.h"

static int me, npes, right, left;
static int native_oshmem;

long g_counter;        /* symmetric global, contended on PE 0 */
int g_icounter;
unsigned long g_bits;  /* one bit per PE, set with atomic_or */

#define ROUNDS 50

/* The non-fetching and fetching arithmetic AMOs of one type, on the right neighbour. */
#define ARITH(T, NAME)                                                                        \
    do {                                                                                      \
        T *x = shmem_malloc(sizeof(T));                                                       \
        *x = (T)10;                                                                           \
        shmem_barrier_all();                                                                  \
        CHECK(shmem_##NAME##_atomic_fetch_add(x, (T)5, right) == (T)10, #NAME " fetch_add"); \
        shmem_##NAME##_atomic_add(x, (T)3, right);                                            \
        shmem_##NAME##_atomic_inc(x, right);                                                  \
        CHECK(shmem_##NAME##_atomic_fetch_inc(x, right) == (T)19, #NAME " fetch_inc");        \
        CHECK(shmem_##NAME##_atomic_fetch(x, right) == (T)20, #NAME " fetch");                \
        CHECK(shmem_##NAME##_atomic_swap(x, (T)7, right) == (T)20, #NAME " swap");            \
        CHECK(shmem_##NAME##_atomic_compare_swap(x, (T)8, (T)9, right) == (T)7,               \
              #NAME " compare_swap (no match)");                                              \
        CHECK(shmem_##NAME##_atomic_compare_swap(x, (T)7, (T)9, right) == (T)7,               \
              #NAME " compare_swap (match)");                                                 \
        shmem_##NAME##_atomic_set(x, (T)42, right);                                           \
        shmem_barrier_all();                                                                  \
        CHECK(*x == (T)42, #NAME " set: %lld", (long long)*x);                              \
        shmem_barrier_all();                                                                  \
        shmem_free(x);                                                                        \
    } while (0)

/* Like ARITH without compare_swap (for int, whose native cswap is broken; see below). */
#define ARITH_NO_CSWAP(T, NAME)                                                               \
    do {                                                                                      \
        T *x = shmem_malloc(sizeof(T));                                                       \
        *x = (T)10;                                                                           \
        shmem_barrier_all();                                                                  \
        CHECK(shmem_##NAME##_atomic_fetch_add(x, (T)5, right) == (T)10, #NAME " fetch_add"); \
        shmem_##NAME##_atomic_add(x, (T)3, right);                                            \
        shmem_##NAME##_atomic_inc(x, right);                                                  \
        CHECK(shmem_##NAME##_atomic_fetch_inc(x, right) == (T)19, #NAME " fetch_inc");        \
        CHECK(shmem_##NAME##_atomic_fetch(x, right) == (T)20, #NAME " fetch");                \
        CHECK(shmem_##NAME##_atomic_swap(x, (T)7, right) == (T)20, #NAME " swap");            \
        shmem_##NAME##_atomic_set(x, (T)42, right);                                           \
        shmem_barrier_all();                                                                  \
        CHECK(*x == (T)42, #NAME " set");                                                     \
        shmem_barrier_all();                                                                  \
        shmem_free(x);                                                                        \
    } while (0)

/* Bitwise AMOs. The fetching ones are checked only on rshmem: natively (Open MPI 4.1.4 over
 * UCX 1.13) shmem_*_atomic_fetch_and/fetch_or leave the target unchanged and fetch_xor zeroes
 * it, while returning the old value (wrong results, found by this test; see ctest/scripts/ldpreload_oshmem.sh). */
#define BITWISE(T, NAME)                                                                      \
    do {                                                                                      \
        T *x = shmem_malloc(sizeof(T));                                                       \
        *x = (T)0xF0;                                                                         \
        shmem_barrier_all();                                                                  \
        shmem_##NAME##_atomic_and(x, (T)0x3C, right);                                         \
        shmem_##NAME##_atomic_or(x, (T)0x101, right);                                         \
        shmem_##NAME##_atomic_xor(x, (T)0x11, right);                                         \
        shmem_barrier_all();                                                                  \
        CHECK(*x == (T)0x120, #NAME " and/or/xor result %llx", (unsigned long long)*x);      \
        shmem_barrier_all();                                                                  \
        if (!native_oshmem) {                                                                 \
            *x = (T)0xF0;                                                                     \
            shmem_barrier_all();                                                              \
            CHECK(shmem_##NAME##_atomic_fetch_and(x, (T)0x3C, right) == (T)0xF0, #NAME " f_and"); \
            CHECK(shmem_##NAME##_atomic_fetch_or(x, (T)0x01, right) == (T)0x30, #NAME " f_or"); \
            CHECK(shmem_##NAME##_atomic_fetch_xor(x, (T)0x11, right) == (T)0x31, #NAME " f_xor"); \
            shmem_barrier_all();                                                              \
            CHECK(*x == (T)0x20, #NAME " fetching bitwise result %llx", (unsigned long long)*x); \
            shmem_barrier_all();                                                              \
        }                                                                                     \
        shmem_free(x);                                                                        \
    } while (0)

static void named(void)
{
    if (native_oshmem) {
        /* Known bug of Open MPI 4.1.4's OSHMEM: 32-bit shmem_int_cswap (and compare_swap)
         * aborts with "stack smashing detected" inside liboshmem. Skipped natively only. */
        if (me == 0)
            printf("amo: native OSHMEM: skipping 32-bit compare_swap (known liboshmem bug: stack "
                   "smashing) and fetching bitwise AMOs (wrong results in liboshmem 4.1.4/UCX)\n");
        ARITH_NO_CSWAP(int, int);
        ARITH_NO_CSWAP(unsigned int, uint);
    } else {
        ARITH(int, int);
        ARITH(unsigned int, uint);
    }
    ARITH(long, long);
    ARITH(long long, longlong);
    ARITH(unsigned long, ulong);
    ARITH(unsigned long long, ulonglong);
    BITWISE(unsigned int, uint);
    BITWISE(unsigned long, ulong);
    BITWISE(unsigned long long, ulonglong);
    BITWISE(int32_t, int32);
    BITWISE(int64_t, int64);
    BITWISE(uint32_t, uint32);
    BITWISE(uint64_t, uint64);

    /* float and double: swap, set, fetch */
    double *d = shmem_malloc(sizeof(double));
    float *f = shmem_malloc(sizeof(float));
    *d = 1.5;
    *f = 2.5f;
    shmem_barrier_all();
    CHECK(shmem_double_atomic_swap(d, 3.25, right) == 1.5, "double swap");
    CHECK(shmem_float_atomic_swap(f, 4.75f, right) == 2.5f, "float swap");
    CHECK(shmem_double_atomic_fetch(d, right) == 3.25, "double fetch");
    shmem_float_atomic_set(f, 8.5f, right);
    shmem_barrier_all();
    CHECK(*f == 8.5f && *d == 3.25, "float set / double swap arrived");
    CHECK(shmem_float_atomic_fetch(f, left) == 8.5f, "float fetch");
    shmem_barrier_all();
    shmem_free(f);
    shmem_free(d);
}

/* Deprecated 1.3 names still in OSHMEM's header. */
static void deprecated(void)
{
    long *x = shmem_malloc(sizeof(long));
    *x = 100;
    shmem_barrier_all();
    CHECK_EQ_LONG(shmem_long_fadd(x, 10, right), 100);
    shmem_long_add(x, 5, right);
    shmem_long_inc(x, right);
    CHECK_EQ_LONG(shmem_long_finc(x, right), 116);
    CHECK_EQ_LONG(shmem_long_fetch(x, right), 117);
    CHECK_EQ_LONG(shmem_long_swap(x, 1, right), 117);
    CHECK_EQ_LONG(shmem_long_cswap(x, 1, 2, right), 1);
    shmem_long_set(x, 55, right);
    CHECK_EQ_LONG(shmem_longlong_fadd((long long *)x, 0, right), 55);
    double *d = shmem_malloc(sizeof(double));
    *d = 0.5;
    shmem_barrier_all();
    CHECK(shmem_double_swap(d, 1.0, right) == 0.5, "double_swap");
    shmem_barrier_all();
    CHECK_EQ_LONG(*x, 55);
    CHECK(*d == 1.0, "double_swap arrived");
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(x);
}

static void ctx_forms(void)
{
    long *x = shmem_malloc(sizeof(long));
    *x = 0;
    shmem_barrier_all();
    CHECK_EQ_LONG(shmem_ctx_long_atomic_fetch_add(SHMEM_CTX_DEFAULT, x, 4, right), 0);
    shmem_ctx_long_atomic_inc(SHMEM_CTX_DEFAULT, x, right);
    shmem_ctx_long_atomic_add(SHMEM_CTX_DEFAULT, x, 2, right);
    CHECK_EQ_LONG(shmem_ctx_long_atomic_compare_swap(SHMEM_CTX_DEFAULT, x, 7, 70, right), 7);
    CHECK_EQ_LONG(shmem_ctx_long_atomic_swap(SHMEM_CTX_DEFAULT, x, 71, right), 70);
    CHECK_EQ_LONG(shmem_ctx_long_atomic_fetch_inc(SHMEM_CTX_DEFAULT, x, right), 71);
    CHECK_EQ_LONG(shmem_ctx_long_atomic_fetch(SHMEM_CTX_DEFAULT, x, right), 72);
    shmem_ctx_ulong_atomic_xor(SHMEM_CTX_DEFAULT, (unsigned long *)x, 1UL, right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    CHECK_EQ_LONG(*x, 73);
    shmem_barrier_all();
    shmem_free(x);
}

/* OSHMEM's C11 generic macros dispatch on the pointer type; with a context as first argument
 * they pick the ctx form. */
static void generics(void)
{
#if OSHMEM_HAVE_C11 || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
    long *l = shmem_malloc(sizeof(long));
    long long *ll = shmem_malloc(sizeof(long long));
    unsigned int *u = shmem_malloc(sizeof(unsigned int));
    double *d = shmem_malloc(sizeof(double));
    *l = 1;
    *ll = 1000;
    *u = 0xFF;
    *d = 0.0;
    shmem_barrier_all();
    CHECK_EQ_LONG(shmem_atomic_fetch_add(l, 2L, right), 1);
    shmem_atomic_add(ll, 24LL, right);
    shmem_atomic_inc(l, right);
    CHECK_EQ_LONG(shmem_atomic_fetch_inc(ll, right), 1024);
    CHECK_EQ_LONG(shmem_atomic_fetch(l, right), 4);
    CHECK_EQ_LONG(shmem_atomic_swap(l, 9L, right), 4);
    CHECK_EQ_LONG(shmem_atomic_compare_swap(l, 9L, 10L, right), 9);
    shmem_atomic_set(d, 6.5, right);
    CHECK(shmem_atomic_swap(d, 7.5, right) == 6.5, "generic double swap");
    if (native_oshmem) { /* same sequence without the fetching forms (native bug above) */
        shmem_atomic_and(u, 0x0Fu, right);
        shmem_atomic_or(u, 0x30u, right);
        shmem_atomic_xor(u, 0x01u, right);
    } else {
        CHECK_EQ_LONG(shmem_atomic_fetch_and(u, 0x0Fu, right), 0xFF);
        shmem_atomic_or(u, 0x30u, right);
        CHECK_EQ_LONG(shmem_atomic_fetch_xor(u, 0x01u, right), 0x3F);
    }
    shmem_atomic_and(u, 0xF0u, right);
    shmem_atomic_xor(u, 0x01u, right);
    /* ctx variants */
    CHECK_EQ_LONG(shmem_atomic_fetch_add(SHMEM_CTX_DEFAULT, l, 1L, right), 10);
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, ll, right);
    shmem_barrier_all();
    CHECK_EQ_LONG(*l, 11);
    CHECK_EQ_LONG(*ll, 1026);
    CHECK_EQ_LONG(*u, 0x31);
    CHECK(*d == 7.5, "generic set/swap double");
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(u);
    shmem_free(ll);
    shmem_free(l);
#endif
}

/* Every PE updates PE 0's globals at once: nothing may be lost, fetched values are distinct. */
static void contended(void)
{
    g_counter = 0;
    g_icounter = 0;
    g_bits = 0;
    shmem_barrier_all();
    long last = -1;
    for (int i = 0; i < ROUNDS; i++) {
        long old = shmem_long_atomic_fetch_add(&g_counter, 1, 0);
        CHECK(old > last, "fetch_add results must increase for one PE: %ld after %ld", old, last);
        last = old;
        shmem_int_atomic_inc(&g_icounter, 0);
    }
    shmem_ulong_atomic_or(&g_bits, 1UL << (me % 64), 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK_EQ_LONG(g_counter, (long)ROUNDS * npes);
        CHECK_EQ_LONG(g_icounter, (long)ROUNDS * npes);
        unsigned long want = 0;
        for (int pe = 0; pe < npes; pe++)
            want |= 1UL << (pe % 64);
        CHECK(g_bits == want, "bits %lx want %lx", g_bits, want);
    }
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    native_oshmem = !running_on_rshmem();
    named();
    deprecated();
    ctx_forms();
    generics();
    contended();
    passed("amo");
    shmem_finalize();
    return 0;
}
