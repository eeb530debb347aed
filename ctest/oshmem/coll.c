/* Collectives through Open MPI's OSHMEM ABI: the active-set forms (PE_start, logPE_stride,
 * PE_size, pSync) of barrier, sync, broadcast32/64, collect32/64, fcollect32/64,
 * alltoall32/64, alltoalls32/64 and the *_to_all reductions, on the whole job and on the even
 * and odd PEs. pSync and pWrk are sized with OSHMEM's own constants (an oshcc-built program
 * gives the library no more than that: BCAST 2, COLLECT/REDUCE 3, BARRIER/ALLTOALL 1 longs,
 * pWrk max(nreduce/2 + 1, 1)), with guard words behind them: a library that writes past them
 * corrupts the program, and this test notices. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>

#include "osh_common.h"

#define GUARD 0x5EC0DE5EC0DEL
#define NGUARD 4

static int me, npes;

/* An active set: PE_start, logPE_stride, PE_size. */
struct aset {
    int start, log, size;
    const char *name;
};

static int member(const struct aset *s)
{
    int d = me - s->start;
    int stride = 1 << s->log;
    return d >= 0 && d % stride == 0 && d / stride < s->size;
}

static int index_in(const struct aset *s)
{
    return (me - s->start) >> s->log;
}

static int pe_of(const struct aset *s, int i)
{
    return s->start + (i << s->log);
}

/* Symmetric long array of n elements followed by guard words. */
static long *guarded(size_t n, long init)
{
    long *p = shmem_malloc((n + NGUARD) * sizeof(long));
    CHECK(p != NULL, "shmem_malloc");
    for (size_t i = 0; i < n; i++)
        p[i] = init;
    for (int g = 0; g < NGUARD; g++)
        p[n + g] = GUARD;
    return p;
}

static void check_guard(const long *p, size_t n, const char *what)
{
    for (int g = 0; g < NGUARD; g++)
        CHECK(p[n + g] == GUARD, "%s: the library wrote past the end (guard word %d = %lx)", what, g,
              (unsigned long)p[n + g]);
}

static void check_psync(const long *psync, size_t n, const char *what)
{
    check_guard(psync, n, what);
    for (size_t i = 0; i < n; i++)
        CHECK(psync[i] == SHMEM_SYNC_VALUE, "%s: pSync[%zu] = %ld not restored to SHMEM_SYNC_VALUE", what, i,
              psync[i]);
}

static long *ps_barrier, *ps_bcast, *ps_collect, *ps_reduce, *ps_alltoall;

static void barriers(const struct aset *s)
{
    static int flag;
    if (!member(s))
        return;
    /* The first member puts a flag to every member, then barrier: everyone must see it. */
    flag = 0;
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    if (index_in(s) == 0)
        for (int i = 0; i < s->size; i++)
            shmem_int_p(&flag, 1 + s->start, pe_of(s, i));
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    CHECK(flag == 1 + s->start, "%s: shmem_barrier did not complete the put (flag %d)", s->name, flag);
    shmem_sync(s->start, s->log, s->size, ps_barrier);
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    check_psync(ps_barrier, SHMEM_BARRIER_SYNC_SIZE, "shmem_barrier");
}

/* shmem_malloc and shmem_free are collective over all PEs, so every PE runs the allocation
 * steps below; only members of the active set take part in the collective itself. */
static void broadcasts(const struct aset *s)
{
    const int mem = member(s);
    enum { NB = 37 };
    long *d64 = guarded(NB, -1);
    long src64[NB];
    int32_t *d32 = (int32_t *)guarded(NB, -1); /* NB int32 fit in NB longs */
    int32_t src32[NB];
    for (int root = 0; root < s->size; root++) {
        for (int i = 0; i < NB; i++) {
            src64[i] = 1000L * root + i;
            src32[i] = -(1000 * root + i);
        }
        for (int i = 0; i < NB; i++)
            d64[i] = -1;
        long *s64 = shmem_malloc(NB * sizeof(long)); /* source must be symmetric too */
        int32_t *s32 = shmem_malloc(NB * sizeof(int32_t));
        memcpy(s64, src64, sizeof src64);
        memcpy(s32, src32, sizeof src32);
        if (!mem)
            goto next;
        shmem_barrier(s->start, s->log, s->size, ps_barrier);
        shmem_broadcast64(d64, s64, NB, root, s->start, s->log, s->size, ps_bcast);
        shmem_barrier(s->start, s->log, s->size, ps_barrier);
        shmem_broadcast32(d32, s32, NB, root, s->start, s->log, s->size, ps_bcast);
        if (index_in(s) != root)
            for (int i = 0; i < NB; i++) {
                CHECK(d64[i] == src64[i], "%s: broadcast64 root %d element %d: %ld", s->name, root, i, d64[i]);
                CHECK(d32[i] == src32[i], "%s: broadcast32 root %d element %d", s->name, root, i);
            }
        check_guard(d64, NB, "broadcast64 target");
        check_guard((long *)d32, NB, "broadcast32 target");
        shmem_barrier(s->start, s->log, s->size, ps_barrier);
        check_psync(ps_bcast, SHMEM_BCAST_SYNC_SIZE, "shmem_broadcast");
    next:
        shmem_free(s32);
        shmem_free(s64);
    }
    shmem_free(d32);
    shmem_free(d64);
}

static void collects(const struct aset *s)
{
    const int mem = member(s);
    int idx = mem ? index_in(s) : 0;
    /* collect: member i contributes i+1 elements; fcollect: 3 each. */
    size_t total = (size_t)s->size * (s->size + 1) / 2;
    long *src = shmem_malloc((size_t)(s->size + 3) * sizeof(long));
    long *dst = guarded(total, -1);
    int32_t *src32 = shmem_malloc((size_t)(s->size + 3) * sizeof(int32_t));
    int32_t *dst32 = (int32_t *)guarded(total, -1);
    for (int i = 0; i < idx + 1; i++) {
        src[i] = 100L * idx + i;
        src32[i] = 100 * idx + i + 7;
    }
    long *fdst = guarded((size_t)3 * s->size, -1);
    int32_t *fdst32 = (int32_t *)guarded((size_t)3 * s->size, -1);
    if (!mem)
        goto done;
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_collect64(dst, src, (size_t)idx + 1, s->start, s->log, s->size, ps_collect);
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_collect32(dst32, src32, (size_t)idx + 1, s->start, s->log, s->size, ps_collect);
    size_t k = 0;
    for (int j = 0; j < s->size; j++)
        for (int i = 0; i < j + 1; i++, k++) {
            CHECK(dst[k] == 100L * j + i, "%s: collect64 element %zu = %ld", s->name, k, dst[k]);
            CHECK(dst32[k] == 100 * j + i + 7, "%s: collect32 element %zu", s->name, k);
        }
    check_guard(dst, total, "collect64 target");
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    check_psync(ps_collect, SHMEM_COLLECT_SYNC_SIZE, "shmem_collect");

    for (int i = 0; i < 3; i++) {
        src[i] = 10L * idx + i;
        src32[i] = -(10 * idx + i);
    }
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_fcollect64(fdst, src, 3, s->start, s->log, s->size, ps_collect);
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_fcollect32(fdst32, src32, 3, s->start, s->log, s->size, ps_collect);
    for (int j = 0; j < s->size; j++)
        for (int i = 0; i < 3; i++) {
            CHECK(fdst[3 * j + i] == 10L * j + i, "%s: fcollect64 [%d][%d]", s->name, j, i);
            CHECK(fdst32[3 * j + i] == -(10 * j + i), "%s: fcollect32 [%d][%d]", s->name, j, i);
        }
    check_guard(fdst, (size_t)3 * s->size, "fcollect64 target");
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    check_psync(ps_collect, SHMEM_COLLECT_SYNC_SIZE, "shmem_fcollect");
done:
    shmem_free(fdst32);
    shmem_free(fdst);
    shmem_free(dst32);
    shmem_free(dst);
    shmem_free(src32);
    shmem_free(src);
}

static void alltoalls(const struct aset *s)
{
    const int mem = member(s);
    int idx = mem ? index_in(s) : 0;
    enum { NE = 3, ST = 2 };
    size_t n = (size_t)s->size * NE;
    long *src = shmem_malloc(n * ST * sizeof(long));
    long *dst = guarded(n * ST, -1);
    int32_t *src32 = shmem_malloc(n * sizeof(int32_t));
    int32_t *dst32 = (int32_t *)guarded(n, -1);
    /* block j of my source goes to member j */
    for (int j = 0; j < s->size; j++)
        for (int e = 0; e < NE; e++) {
            src[j * NE + e] = 1000L * idx + 10 * j + e;
            src32[j * NE + e] = -(1000 * idx + 10 * j + e);
        }
    if (!mem)
        goto done;
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_alltoall64(dst, src, NE, s->start, s->log, s->size, ps_alltoall);
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_alltoall32(dst32, src32, NE, s->start, s->log, s->size, ps_alltoall);
    for (int j = 0; j < s->size; j++)
        for (int e = 0; e < NE; e++) {
            CHECK(dst[j * NE + e] == 1000L * j + 10 * idx + e, "%s: alltoall64 from %d element %d", s->name, j, e);
            CHECK(dst32[j * NE + e] == -(1000 * j + 10 * idx + e), "%s: alltoall32 from %d element %d", s->name, j,
                  e);
        }
    check_guard(dst, n * ST, "alltoall64 target");
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    check_psync(ps_alltoall, SHMEM_ALLTOALL_SYNC_SIZE, "shmem_alltoall");

    /* strided: source elements every 1, target every ST */
    for (size_t i = 0; i < n * ST; i++)
        dst[i] = -1;
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    shmem_alltoalls64(dst, src, ST, 1, NE, s->start, s->log, s->size, ps_alltoall);
    for (int j = 0; j < s->size; j++)
        for (int e = 0; e < NE; e++) {
            size_t at = ((size_t)j * NE + e) * ST;
            CHECK(dst[at] == 1000L * j + 10 * idx + e, "%s: alltoalls64 from %d element %d", s->name, j, e);
            CHECK(dst[at + 1] == -1, "%s: alltoalls64 wrote between strides", s->name);
        }
    check_guard(dst, n * ST, "alltoalls64 target");
    shmem_barrier(s->start, s->log, s->size, ps_barrier);
    check_psync(ps_alltoall, SHMEM_ALLTOALLS_SYNC_SIZE, "shmem_alltoalls");
done:
    shmem_free(dst32);
    shmem_free(src32);
    shmem_free(dst);
    shmem_free(src);
}

/* One reduction of type T with OP over nreduce elements; source element i of member m is
 * GEN(m, i); the expected result is folded here with the same C operator. */
#define REDUCE(T, NAME, OPNAME, FOLD, GEN, NRED, INPLACE)                                                   \
    do {                                                                                                    \
        size_t nwrk = (size_t)(NRED) / 2 + 1;                                                               \
        if (nwrk < SHMEM_REDUCE_MIN_WRKDATA_SIZE)                                                           \
            nwrk = SHMEM_REDUCE_MIN_WRKDATA_SIZE;                                                           \
        size_t wl = (nwrk * sizeof(T) + sizeof(long) - 1) / sizeof(long);                                 \
        size_t tl = ((size_t)(NRED) * sizeof(T) + sizeof(long) - 1) / sizeof(long);                       \
        long *wrk_l = guarded(wl, 0);                                                                       \
        long *dst_l = guarded(tl, 0);                                                                       \
        T *src = shmem_malloc((size_t)(NRED) * sizeof(T));                                                  \
        T *dst = (T *)dst_l;                                                                                \
        for (int i = 0; i < (NRED); i++)                                                                    \
            src[i] = (T)(GEN(idx, i));                                                                      \
        if (INPLACE)                                                                                        \
            memcpy(dst, src, (size_t)(NRED) * sizeof(T));                                                   \
        if (mem) {                                                                                          \
            shmem_barrier(s->start, s->log, s->size, ps_barrier);                                           \
            shmem_##NAME##_##OPNAME##_to_all(dst, INPLACE ? dst : src, (NRED), s->start, s->log, s->size,   \
                                             (T *)wrk_l, ps_reduce);                                        \
            for (int i = 0; i < (NRED); i++) {                                                              \
                T want = (T)(GEN(0, i));                                                                    \
                for (int m = 1; m < s->size; m++)                                                           \
                    want = FOLD(want, (T)(GEN(m, i)));                                                      \
                CHECK(dst[i] == want, "%s: %s_%s_to_all(nreduce %d%s) element %d", s->name, #NAME, #OPNAME, \
                      (NRED), INPLACE ? ", in place" : "", i);                                              \
            }                                                                                               \
            check_guard(dst_l, tl, #NAME "_" #OPNAME "_to_all target");                                    \
            check_guard(wrk_l, wl, #NAME "_" #OPNAME "_to_all pWrk");                                      \
            shmem_barrier(s->start, s->log, s->size, ps_barrier);                                           \
            check_psync(ps_reduce, SHMEM_REDUCE_SYNC_SIZE, #NAME "_" #OPNAME "_to_all");                   \
        }                                                                                                   \
        shmem_free(src);                                                                                    \
        shmem_free(dst_l);                                                                                  \
        shmem_free(wrk_l);                                                                                  \
    } while (0)

#define F_SUM(a, b) ((a) + (b))
#define F_PROD(a, b) ((a) * (b))
#define F_MIN(a, b) ((a) < (b) ? (a) : (b))
#define F_MAX(a, b) ((a) > (b) ? (a) : (b))
#define F_AND(a, b) ((a) & (b))
#define F_OR(a, b) ((a) | (b))
#define F_XOR(a, b) ((a) ^ (b))
#define G_ARITH(m, i) (((m) * 7 + (i) * 3) % 11 - 5)
#define G_SMALL(m, i) (((m) + (i)) % 3 + 1) /* products stay small and exact */
#define G_BITS(m, i) ((1L << ((m) % 16)) | ((long)(i) << 20) | ((m) == 0 ? 0xF00 : 0x300))
#define G_FLOAT(m, i) ((m) * 0.5 + (i) * 0.25)
#define G_CPLX(m, i) ((double)(m) + (double)(i) * I)

static void reductions(const struct aset *s)
{
    const int mem = member(s);
    int idx = mem ? index_in(s) : 0;
    static const int sizes[] = {1, 7, 100};
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int nr = sizes[k];
        REDUCE(int, int, sum, F_SUM, G_ARITH, nr, 0);
        REDUCE(long, long, sum, F_SUM, G_ARITH, nr, 0);
        REDUCE(long, long, sum, F_SUM, G_ARITH, nr, 1);
        REDUCE(long long, longlong, max, F_MAX, G_ARITH, nr, 0);
        REDUCE(short, short, min, F_MIN, G_ARITH, nr, 0);
        REDUCE(int, int, prod, F_PROD, G_SMALL, nr, 0);
        REDUCE(double, double, sum, F_SUM, G_FLOAT, nr, 0);
        REDUCE(float, float, max, F_MAX, G_FLOAT, nr, 0);
        REDUCE(double, double, min, F_MIN, G_FLOAT, nr, 1);
        REDUCE(long, long, and, F_AND, G_BITS, nr, 0);
        REDUCE(long, long, or, F_OR, G_BITS, nr, 0);
        REDUCE(int, int, xor, F_XOR, G_BITS, nr, 0);
        REDUCE(short, short, or, F_OR, G_BITS, nr, 0);
        REDUCE(long long, longlong, xor, F_XOR, G_BITS, nr, 0);
        REDUCE(double complex, complexd, sum, F_SUM, G_CPLX, nr, 0);
    }
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    ps_barrier = guarded(SHMEM_BARRIER_SYNC_SIZE, SHMEM_SYNC_VALUE);
    ps_bcast = guarded(SHMEM_BCAST_SYNC_SIZE, SHMEM_SYNC_VALUE);
    ps_collect = guarded(SHMEM_COLLECT_SYNC_SIZE, SHMEM_SYNC_VALUE);
    ps_reduce = guarded(SHMEM_REDUCE_SYNC_SIZE, SHMEM_SYNC_VALUE);
    ps_alltoall = guarded(SHMEM_ALLTOALL_SYNC_SIZE, SHMEM_SYNC_VALUE);
    shmem_barrier_all();

    struct aset sets[3] = {
        {0, 0, npes, "world"},
        {0, 1, (npes + 1) / 2, "even PEs"},
        {1, 1, npes / 2, "odd PEs"},
    };
    int nsets = npes >= 2 ? 3 : 1;
    for (int k = 0; k < nsets; k++) {
        const struct aset *s = &sets[k];
        barriers(s);
        broadcasts(s);
        collects(s);
        alltoalls(s);
        reductions(s);
        shmem_barrier_all();
    }
    shmem_sync_all();
    passed("coll");
    shmem_finalize();
    return 0;
}
