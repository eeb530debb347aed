/* RMA through Open MPI's OSHMEM ABI: typed put/get/p/g (named and C11 generic), sized and mem
 * forms, strided iput/iget, non-blocking forms with quiet, the ctx forms with SHMEM_CTX_DEFAULT
 * and with a created context, symmetric globals, heap routines, shmem_ptr and the queries.
 * Each PE writes to its right neighbour and reads from its left one, so any PE count works. */
#include <stdint.h>
#include <stdlib.h>

#include "osh_common.h"

#define N 64

/* Symmetric global and static data (the data segment is symmetric in OpenSHMEM). */
long g_long[N];
static double s_double[N];
int g_int_scalar;

static int me, npes, right, left;

/* The value PE `pe` puts into element i, per type, so the receiver knows what to expect. */
#define VAL(pe, i) ((pe) * 1000 + (i) + 1)

#define TYPED_PUT_GET(T, NAME)                                                                   \
    do {                                                                                         \
        T *dst = shmem_malloc(N * sizeof(T));                                                    \
        T src[N], back[N];                                                                       \
        CHECK(dst != NULL, "shmem_malloc failed");                                               \
        for (int i = 0; i < N; i++) {                                                            \
            src[i] = (T)VAL(me, i);                                                              \
            dst[i] = 0;                                                                          \
        }                                                                                        \
        shmem_barrier_all();                                                                     \
        shmem_##NAME##_put(dst, src, N, right);                                                  \
        shmem_barrier_all();                                                                     \
        for (int i = 0; i < N; i++)                                                              \
            CHECK(dst[i] == (T)VAL(left, i), #NAME "_put element %d", i);                        \
        /* get the right neighbour's array: it holds what this PE put there */                   \
        shmem_##NAME##_get(back, dst, N, right);                                                 \
        for (int i = 0; i < N; i++)                                                              \
            CHECK(back[i] == (T)VAL(me, i), #NAME "_get element %d", i);                         \
        shmem_barrier_all();                                                                     \
        shmem_##NAME##_p(&dst[3], (T)77, right);                                                 \
        shmem_barrier_all();                                                                     \
        CHECK(dst[3] == (T)77, #NAME "_p");                                                      \
        CHECK(shmem_##NAME##_g(&dst[3], left) == (T)77, #NAME "_g");                             \
        shmem_barrier_all();                                                                     \
        shmem_free(dst);                                                                         \
    } while (0)

static void typed(void)
{
    TYPED_PUT_GET(char, char);
    TYPED_PUT_GET(short, short);
    TYPED_PUT_GET(int, int);
    TYPED_PUT_GET(long, long);
    TYPED_PUT_GET(long long, longlong);
    TYPED_PUT_GET(float, float);
    TYPED_PUT_GET(double, double);
    TYPED_PUT_GET(long double, longdouble);
    TYPED_PUT_GET(unsigned int, uint);
    TYPED_PUT_GET(unsigned long, ulong);
    TYPED_PUT_GET(int32_t, int32);
    TYPED_PUT_GET(int64_t, int64);
    TYPED_PUT_GET(uint64_t, uint64);
    TYPED_PUT_GET(size_t, size);
    TYPED_PUT_GET(ptrdiff_t, ptrdiff);
}

/* putmem/getmem, put8..put128 and get8..get128, on the heap and on globals. */
static void sized(void)
{
    unsigned char *buf = shmem_malloc(4096);
    unsigned char src[4096], back[4096];
    for (int i = 0; i < 4096; i++)
        src[i] = (unsigned char)(i * 7 + me);
    memset(buf, 0, 4096);
    shmem_barrier_all();
    shmem_putmem(buf, src, 1000, right);
    shmem_put8(buf + 1000, src + 1000, 100, right);
    shmem_put16(buf + 1100, src + 1100, 50, right);
    shmem_put32(buf + 1200, src + 1200, 25, right);
    shmem_put64(buf + 1300, src + 1300, 20, right);
    shmem_put128(buf + 1460, src + 1460, 10, right);
    shmem_barrier_all();
    for (int i = 0; i < 1620; i++)
        CHECK(buf[i] == (unsigned char)(i * 7 + left), "sized put byte %d: %d", i, buf[i]);
    memset(back, 0, sizeof back);
    shmem_getmem(back, buf, 1000, right);
    shmem_get8(back + 1000, buf + 1000, 100, right);
    shmem_get16(back + 1100, buf + 1100, 50, right);
    shmem_get32(back + 1200, buf + 1200, 25, right);
    shmem_get64(back + 1300, buf + 1300, 20, right);
    shmem_get128(back + 1460, buf + 1460, 10, right);
    for (int i = 0; i < 1620; i++)
        CHECK(back[i] == (unsigned char)(i * 7 + me), "sized get byte %d", i);
    shmem_barrier_all();
    shmem_free(buf);

    /* globals and statics */
    long lsrc[N];
    double dsrc[N];
    for (int i = 0; i < N; i++) {
        lsrc[i] = VAL(me, i);
        dsrc[i] = VAL(me, i) + 0.5;
    }
    shmem_long_put(g_long, lsrc, N, right);
    shmem_double_put(s_double, dsrc, N, right);
    shmem_int_p(&g_int_scalar, me + 100, right);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) {
        CHECK_EQ_LONG(g_long[i], VAL(left, i));
        CHECK(s_double[i] == VAL(left, i) + 0.5, "static double %d", i);
    }
    CHECK_EQ_LONG(g_int_scalar, left + 100);
    CHECK_EQ_LONG(shmem_int_g(&g_int_scalar, right), me + 100);
    shmem_barrier_all();
}

/* Strided: every 3rd element of the source to every 2nd of the target. */
static void strided(void)
{
    long *t = shmem_calloc(3 * N, sizeof(long));
    CHECK(t != NULL, "shmem_calloc");
    for (int i = 0; i < 3 * N; i++)
        CHECK_EQ_LONG(t[i], 0);
    long s[3 * N], back[N];
    for (int i = 0; i < 3 * N; i++)
        s[i] = VAL(me, i);
    shmem_barrier_all();
    shmem_long_iput(t, s, 2, 3, N, right);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) {
        CHECK_EQ_LONG(t[2 * i], VAL(left, 3 * i));
        CHECK_EQ_LONG(t[2 * i + 1], 0);
    }
    shmem_long_iget(back, t, 1, 2, N, left);
    /* left's t holds what its own left put: VAL(left-of-left, 3i) */
    int ll = (left + npes - 1) % npes;
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(back[i], VAL(ll, 3 * i));
    /* sized strided forms */
    int32_t s32[2 * N], t32back[N];
    for (int i = 0; i < 2 * N; i++)
        s32[i] = (int32_t)VAL(me, i);
    int32_t *t32 = shmem_calloc(2 * N, sizeof(int32_t));
    shmem_barrier_all();
    shmem_iput32(t32, s32, 2, 2, N, right);
    shmem_barrier_all();
    shmem_iget32(t32back, t32, 1, 2, N, me);
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(t32back[i], VAL(left, 2 * i));
    shmem_barrier_all();
    shmem_free(t32);
    shmem_free(t);
}

/* Non-blocking forms complete at quiet (put) or at quiet (get). */
static void nbi(void)
{
    long *t = shmem_malloc(N * sizeof(long));
    long s[N], back[N];
    for (int i = 0; i < N; i++) {
        s[i] = VAL(me, i) * 3;
        t[i] = -1;
    }
    shmem_barrier_all();
    shmem_long_put_nbi(t, s, N / 2, right);
    shmem_putmem_nbi(t + N / 2, s + N / 2, (N / 2) * sizeof(long), right);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(t[i], VAL(left, i) * 3);
    shmem_long_get_nbi(back, t, N / 2, right);
    shmem_getmem_nbi(back + N / 2, t + N / 2, (N / 2) * sizeof(long), right);
    shmem_quiet();
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(back[i], VAL(me, i) * 3);
    shmem_barrier_all();
    shmem_free(t);
}

/* ctx forms: SHMEM_CTX_DEFAULT (the exported object oshmem_ctx_default) and a created context. */
static void contexts(void)
{
    long *t = shmem_malloc(N * sizeof(long));
    long s[N], back[N];
    for (int i = 0; i < N; i++) {
        s[i] = VAL(me, i) + 5;
        t[i] = 0;
    }
    shmem_barrier_all();
    shmem_ctx_long_put(SHMEM_CTX_DEFAULT, t, s, N, right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(t[i], VAL(left, i) + 5);
    shmem_ctx_long_get(SHMEM_CTX_DEFAULT, back, t, N, right);
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(back[i], VAL(me, i) + 5);
    shmem_barrier_all();
    shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &t[0], 4242, right);
    shmem_ctx_fence(SHMEM_CTX_DEFAULT);
    shmem_ctx_putmem(SHMEM_CTX_DEFAULT, &t[1], &s[0], sizeof(long), right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    CHECK_EQ_LONG(t[0], 4242);
    CHECK_EQ_LONG(t[1], VAL(left, 0) + 5);
    CHECK_EQ_LONG(shmem_ctx_long_g(SHMEM_CTX_DEFAULT, &t[1], right), VAL(me, 0) + 5);
    double *d = shmem_malloc(sizeof(double));
    *d = 0;
    shmem_barrier_all();
    shmem_ctx_double_p(SHMEM_CTX_DEFAULT, d, me + 0.25, right);
    shmem_barrier_all();
    CHECK(*d == left + 0.25, "ctx_double_p");
    CHECK(shmem_ctx_double_g(SHMEM_CTX_DEFAULT, d, right) == me + 0.25, "ctx_double_g");

    shmem_ctx_t ctx;
    int rc = shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED, &ctx);
    CHECK(rc == 0, "shmem_ctx_create returned %d", rc);
    shmem_barrier_all();
    shmem_ctx_int_p(ctx, &g_int_scalar, -me, right);
    shmem_ctx_long_put_nbi(ctx, t, s, N, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK_EQ_LONG(g_int_scalar, -left);
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(t[i], VAL(left, i) + 5);
    shmem_ctx_getmem(ctx, back, t, N * sizeof(long), right);
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(back[i], VAL(me, i) + 5);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(t);
}

/* The C11 generic selection macros of OSHMEM's header (shmem_put, shmem_p, shmem_g, shmem_get,
 * with and without a context argument). */
static void generics(void)
{
#if OSHMEM_HAVE_C11 || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
    int *ti = shmem_malloc(N * sizeof(int));
    double *td = shmem_malloc(N * sizeof(double));
    int si[N], bi[N];
    double sd[N];
    for (int i = 0; i < N; i++) {
        si[i] = VAL(me, i);
        sd[i] = VAL(me, i) / 4.0;
        ti[i] = 0;
        td[i] = 0;
    }
    shmem_barrier_all();
    shmem_put(ti, si, N, right);
    shmem_put(SHMEM_CTX_DEFAULT, td, sd, N, right);
    shmem_barrier_all();
    for (int i = 0; i < N; i++) {
        CHECK_EQ_LONG(ti[i], VAL(left, i));
        CHECK(td[i] == VAL(left, i) / 4.0, "generic put double %d", i);
    }
    shmem_get(bi, ti, N, right);
    for (int i = 0; i < N; i++)
        CHECK_EQ_LONG(bi[i], VAL(me, i));
    shmem_barrier_all();
    shmem_p(&ti[0], 31337, right);
    shmem_p(SHMEM_CTX_DEFAULT, &td[0], 2.5, right);
    shmem_barrier_all();
    CHECK_EQ_LONG(ti[0], 31337);
    CHECK(td[0] == 2.5, "generic p double");
    CHECK_EQ_LONG(shmem_g(&ti[1], left), VAL((left + npes - 1) % npes, 1));
    CHECK(shmem_g(SHMEM_CTX_DEFAULT, &td[1], left) == VAL((left + npes - 1) % npes, 1) / 4.0, "generic g");
    shmem_barrier_all();
    shmem_free(td);
    shmem_free(ti);
#endif
}

/* Heap routines, accessibility and shmem_ptr. */
static void heap_and_queries(void)
{
    long *a = shmem_align(256, 10 * sizeof(long));
    CHECK(a != NULL && ((uintptr_t)a % 256) == 0, "shmem_align(256) gave %p", (void *)a);
    for (int i = 0; i < 10; i++)
        a[i] = VAL(me, i);
    shmem_barrier_all();
    long *b = shmem_realloc(a, 1000 * sizeof(long));
    CHECK(b != NULL, "shmem_realloc");
    for (int i = 0; i < 10; i++)
        CHECK_EQ_LONG(b[i], VAL(me, i)); /* contents preserved */
    shmem_barrier_all();
    CHECK_EQ_LONG(shmem_long_g(&b[9], right), VAL(right, 9));
    CHECK(shmem_addr_accessible(b, right) == 1, "heap address accessible");
    CHECK(shmem_addr_accessible(g_long, right) == 1, "global accessible");
    long on_stack = 0;
    CHECK(shmem_addr_accessible(&on_stack, right) == 0, "stack address must not be accessible");
    CHECK(shmem_pe_accessible(right) == 1, "pe accessible");
    long *p = shmem_ptr(b, right);
    if (p != NULL) /* may be NULL when the library cannot map the peer: both are allowed */
        CHECK_EQ_LONG(p[9], VAL(right, 9));
    CHECK(shmem_ptr(b, me) == b || shmem_ptr(b, me) == NULL, "shmem_ptr to self");
    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor >= 4, "version %d.%d", major, minor);
    shmem_barrier_all();
    shmem_free(b);
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    typed();
    sized();
    strided();
    nbi();
    contexts();
    generics();
    heap_and_queries();
    passed("rma");
    shmem_finalize();
    return 0;
}
