/* rshmem-test: pes=1,2,4,7 */
/* The deprecated active-set collectives: shmem_barrier, shmem_sync, shmem_broadcast32/64
 * (the root's dest is NOT updated), shmem_collect32/64, shmem_fcollect32/64,
 * shmem_alltoall32/64, shmem_alltoalls32/64 and every shmem_TYPENAME_OP_to_all, over the whole
 * job, over the even PEs (logPE_stride 1) while the odd PEs use their own set, and over PEs
 * 1..n-1. pSync arrays start at SHMEM_SYNC_VALUE and must still hold it at the end. */
#include <complex.h>
#include <stdint.h>
#include <string.h>
#include <shmem.h>
#include "check.h"

#define MAXPE 64
#define NR 9

static long psync_bar[SHMEM_BARRIER_SYNC_SIZE], psync_bcast[SHMEM_BCAST_SYNC_SIZE];
static long psync_coll[SHMEM_COLLECT_SYNC_SIZE], psync_red[SHMEM_REDUCE_SYNC_SIZE];
static long psync_a2a[SHMEM_ALLTOALL_SYNC_SIZE], psync_a2as[SHMEM_ALLTOALLS_SYNC_SIZE];
static long double pwrk[NR / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long double sbuf[4 * MAXPE], dbuf[4 * MAXPE * 3];

static int me, npes;
static int set_start, set_log, set_size, set_stride;

static int pe_of(int k) { return set_start + k * set_stride; }
static int my_index(void) { return (me - set_start) / set_stride; }

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
#define CVAL_sum(p, i) (((p) + (i)) % 5 - 2 + ((p) - (i)) % 3 * I)
#define CVAL_prod(p, i) (((p) + (i)) % 4 == 0 ? 1 + 1 * I : ((p) + (i)) % 4 == 1 ? 1 * I : ((p) + (i)) % 4 == 2 ? -1 : 1)

#define DEFINE_TO_ALL(TN, T, OP, VAL)                                                                 \
    static void to_all_##TN##_##OP(int inplace) {                                                     \
        T *src = (T *)sbuf, *dst = inplace ? (T *)sbuf : (T *)dbuf;                                   \
        for (int i = 0; i < NR; i++) src[i] = (T)VAL(me, i);                                          \
        shmem_barrier(set_start, set_log, set_size, psync_bar);                                       \
        shmem_##TN##_##OP##_to_all(dst, src, NR, set_start, set_log, set_size, (T *)pwrk, psync_red); \
        for (int i = 0; i < NR; i++) {                                                                \
            T want = (T)VAL(pe_of(0), i);                                                             \
            for (int k = 1; k < set_size; k++) {                                                      \
                T b = (T)VAL(pe_of(k), i);                                                            \
                want = (T)OPS_##OP(want, b);                                                          \
            }                                                                                         \
            CHECK(dst[i] == want, "shmem_%s_%s_to_all inplace=%d: element %d wrong", #TN, #OP, inplace, i); \
        }                                                                                             \
        shmem_barrier(set_start, set_log, set_size, psync_bar);                                       \
    }
#define DEF(TN, T, OP) DEFINE_TO_ALL(TN, T, OP, VAL_##OP)
#define RUN(TN, T, OP) to_all_##TN##_##OP(inplace);

#define OLD_BITWISE(X, OP) X(short, short, OP) X(int, int, OP) X(long, long, OP) X(longlong, long long, OP)
#ifdef NO_LONGDOUBLE
#define OLD_LD(X, OP)
#else
#define OLD_LD(X, OP) X(longdouble, long double, OP)
#endif
#define OLD_COMPARE(X, OP) OLD_BITWISE(X, OP) X(float, float, OP) X(double, double, OP) OLD_LD(X, OP)

OLD_BITWISE(DEF, and)
OLD_BITWISE(DEF, or)
OLD_BITWISE(DEF, xor)
OLD_COMPARE(DEF, max)
OLD_COMPARE(DEF, min)
OLD_COMPARE(DEF, sum)
OLD_COMPARE(DEF, prod)
DEFINE_TO_ALL(complexf, float _Complex, sum, CVAL_sum)
DEFINE_TO_ALL(complexd, double _Complex, sum, CVAL_sum)
DEFINE_TO_ALL(complexf, float _Complex, prod, CVAL_prod)
DEFINE_TO_ALL(complexd, double _Complex, prod, CVAL_prod)

static void reductions(void) {
    for (int inplace = 0; inplace < 2; inplace++) {
        OLD_BITWISE(RUN, and)
        OLD_BITWISE(RUN, or)
        OLD_BITWISE(RUN, xor)
        OLD_COMPARE(RUN, max)
        OLD_COMPARE(RUN, min)
        OLD_COMPARE(RUN, sum)
        OLD_COMPARE(RUN, prod)
        to_all_complexf_sum(inplace);
        to_all_complexd_sum(inplace);
        to_all_complexf_prod(inplace);
        to_all_complexd_prod(inplace);
    }
}

/* 32- and 64-bit data movement over the current active set. */
#define DEFINE_MOVES(BITS, T)                                                                          \
    static void moves##BITS(void) {                                                                    \
        T *src = (T *)sbuf, *dst = (T *)dbuf;                                                          \
        int t = my_index();                                                                            \
        /* broadcast from every root; the root's dest keeps its old value */                          \
        for (int root = 0; root < set_size; root++) {                                                  \
            for (int i = 0; i < 3; i++) { src[i] = (T)(me * 10 + i); dst[i] = (T)-1; }                 \
            shmem_barrier(set_start, set_log, set_size, psync_bar);                                    \
            shmem_broadcast##BITS(dst, src, 3, root, set_start, set_log, set_size, psync_bcast);       \
            for (int i = 0; i < 3; i++)                                                                \
                CHECK_EQ_LONG(dst[i], t == root ? (T)-1 : (T)(pe_of(root) * 10 + i));                  \
            shmem_barrier(set_start, set_log, set_size, psync_bar);                                    \
        }                                                                                              \
        /* collect: member k gives k % 3 elements */                                                   \
        for (int i = 0; i < t % 3; i++) src[i] = (T)(me * 100 + i);                                    \
        shmem_collect##BITS(dst, src, t % 3, set_start, set_log, set_size, psync_coll);                \
        int at = 0;                                                                                    \
        for (int k = 0; k < set_size; k++)                                                             \
            for (int i = 0; i < k % 3; i++, at++) CHECK_EQ_LONG(dst[at], (T)(pe_of(k) * 100 + i));     \
        shmem_barrier(set_start, set_log, set_size, psync_bar);                                        \
        /* fcollect: 2 each */                                                                         \
        src[0] = (T)(me + 1); src[1] = (T)-(me + 1);                                                   \
        shmem_fcollect##BITS(dst, src, 2, set_start, set_log, set_size, psync_coll);                   \
        for (int k = 0; k < set_size; k++) {                                                           \
            CHECK_EQ_LONG(dst[2 * k], (T)(pe_of(k) + 1));                                              \
            CHECK_EQ_LONG(dst[2 * k + 1], (T) - (pe_of(k) + 1));                                       \
        }                                                                                              \
        shmem_barrier(set_start, set_log, set_size, psync_bar);                                        \
        /* alltoall: 2 per member */                                                                   \
        for (int k = 0; k < set_size; k++) { src[2 * k] = (T)(me * 100 + k); src[2 * k + 1] = (T)k; } \
        shmem_alltoall##BITS(dst, src, 2, set_start, set_log, set_size, psync_a2a);                    \
        for (int k = 0; k < set_size; k++) {                                                           \
            CHECK_EQ_LONG(dst[2 * k], (T)(pe_of(k) * 100 + t));                                        \
            CHECK_EQ_LONG(dst[2 * k + 1], (T)t);                                                       \
        }                                                                                              \
        shmem_barrier(set_start, set_log, set_size, psync_bar);                                        \
        /* alltoalls: 1 per member, dest stride 3, source stride 2 */                                 \
        for (int k = 0; k < set_size; k++) src[2 * k] = (T)(me * 1000 + k);                            \
        for (int k = 0; k < 3 * set_size; k++) dst[k] = (T)-9;                                         \
        shmem_alltoalls##BITS(dst, src, 3, 2, 1, set_start, set_log, set_size, psync_a2as);           \
        for (int k = 0; k < set_size; k++) {                                                           \
            CHECK_EQ_LONG(dst[3 * k], (T)(pe_of(k) * 1000 + t));                                       \
            CHECK_EQ_LONG(dst[3 * k + 1], (T)-9);                                                      \
        }                                                                                              \
        shmem_barrier(set_start, set_log, set_size, psync_bar);                                        \
    }
DEFINE_MOVES(32, int32_t)
DEFINE_MOVES(64, int64_t)

static void all_forms(int start, int log, int size) {
    set_start = start, set_log = log, set_size = size, set_stride = 1 << log;
    shmem_barrier(start, log, size, psync_bar);
    shmem_sync(start, log, size, psync_bar);
    moves32();
    moves64();
    reductions();
    shmem_sync(start, log, size, psync_bar);
}

static void check_psync(long *p, int n) {
    for (int i = 0; i < n; i++) CHECK_EQ_LONG(p[i], SHMEM_SYNC_VALUE);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs");
    long *all[] = {psync_bar, psync_bcast, psync_coll, psync_red, psync_a2a, psync_a2as};
    int sizes[] = {SHMEM_BARRIER_SYNC_SIZE, SHMEM_BCAST_SYNC_SIZE, SHMEM_COLLECT_SYNC_SIZE,
                   SHMEM_REDUCE_SYNC_SIZE, SHMEM_ALLTOALL_SYNC_SIZE, SHMEM_ALLTOALLS_SYNC_SIZE};
    for (int a = 0; a < 6; a++)
        for (int i = 0; i < sizes[a]; i++) all[a][i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    all_forms(0, 0, npes);
    /* evens (stride 2) and odds at the same time */
    if (me % 2 == 0)
        all_forms(0, 1, (npes + 1) / 2);
    else
        all_forms(1, 1, npes / 2);
    /* PEs 1..n-1 */
    shmem_barrier_all();
    if (npes > 1 && me > 0) all_forms(1, 0, npes - 1);
    shmem_barrier_all();

    for (int a = 0; a < 6; a++) check_psync(all[a], sizes[a]);
    shmem_barrier_all();
    if (me == 0) printf("coll_deprecated: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
