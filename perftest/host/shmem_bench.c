/* shmem_bench: CPU micro-benchmark of an OpenSHMEM library, written against the standard
 * OpenSHMEM 1.4 API only, so the same source builds with rshmem (`pkg-config rshmem`) and with
 * Open MPI's OSHMEM (`oshcc`).
 *
 * Point-to-point rows run between PE 0 and PE 1 (PE 0 measures; the other PEs wait in a
 * barrier). barrier_all and the collectives run over all PEs.
 *   put8_quiet 8       shmem_putmem of 8 bytes + shmem_quiet, per operation
 *   get8 8             shmem_getmem of 8 bytes
 *   p 8                shmem_long_p (one quiet at the end of each repetition)
 *   fetch_add 8        shmem_long_atomic_fetch_add
 *   atomic_add 8       shmem_long_atomic_add (one quiet at the end of each repetition)
 *   barrier_all 0      shmem_barrier_all, all PEs
 *   barrier_all_long 0 shmem_barrier_all back to back for 0.5 s per repetition (mean): spans
 *                      many scheduler slices, for runs that share the CPUs with other work
 *   put_bw SIZE        shmem_putmem of SIZE bytes, back to back, quiet at the end: GB/s
 *   get_bw SIZE        shmem_getmem of SIZE bytes, back to back: GB/s
 *   put_mr SIZE        put message rate, as the public OSU benchmark osu_oshm_put_mr measures
 *                      it: a burst of shmem_putmem of SIZE bytes, each to the next SIZE bytes
 *                      of the peer's buffer (from the same offset here), one quiet at the end,
 *                      on buffers every PE has just rewritten (cold caches): M msgs/s
 *   bcast SIZE         shmem_broadcast64 from PE 0 to all PEs (8 B and 64 KiB), average over PEs
 *   sum_reduce SIZE    shmem_long_sum_to_all over all PEs (8 B and 64 KiB), average over PEs
 * Method: a warm-up (a tenth of the iterations) is not counted; each row runs REPS repetitions
 * of a fixed iteration count (scaled down with the message size) and reports the median;
 * time is clock_gettime(CLOCK_MONOTONIC). Collectives are timed one call at a time with an
 * untimed barrier between calls (so pSync reuse is legal and calls do not overlap).
 * Every row checks that its data really arrived; a wrong result exits non-zero.
 *
 * Output (PE 0): one CSV line per row `name,size,value,unit`, then a human-readable table
 * (lines starting with '#').
 * Usage: shmem_bench [--csv] [--reps N] [row-name ...]   (exact names, 'put*' for a prefix;
 *        no names: every row) */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 31
#define MAX_BW (4L << 20)      /* largest bandwidth message */
#define BW_BYTES (32L << 20)   /* bytes moved per bandwidth repetition */
#define COLL_BIG (64L << 10)   /* large collective size */
#define MR_BYTES (8L << 20)    /* put_mr buffer: every PE rewrites it before each burst */
#define COLL_NLONG (COLL_BIG / 8)

static int me, npes, peer, reps = 5, csv_only;
static int nsel;
static char **sel;

/* Symmetric data. */
static long *bw_src, *bw_dst;    /* MAX_BW bytes each (as longs, 8-byte aligned) */
static char *mr_buf;             /* MR_BYTES */
static long *coll_src, *coll_dst; /* COLL_NLONG longs each */
static long *pwrk;               /* reduction work array */
static long *psync_bcast, *psync_reduce;
static long *word, *counter;     /* targets of the 8-byte rows */
static long *stop;               /* barrier_all_long: PE 0 says when time is up */
static long *expect;             /* what the peer must find after a row */
static double *times_all;        /* per-PE figures gathered on PE 0 */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int selected(const char *name)
{
    if (nsel == 0)
        return 1;
    /* exact row names; a trailing '*' selects by prefix (e.g. "put*") */
    for (int i = 0; i < nsel; i++) {
        size_t n = strlen(sel[i]);
        if (n > 0 && sel[i][n - 1] == '*' ? strncmp(name, sel[i], n - 1) == 0 : strcmp(name, sel[i]) == 0)
            return 1;
    }
    return 0;
}

static void fail(const char *row, const char *what, long got, long want)
{
    fprintf(stderr, "shmem_bench: PE %d: CHECK FAILED in row %s: %s: got %ld, want %ld\n", me, row, what, got,
            want);
    shmem_global_exit(2);
}

#define MAX_ROWS 64
static struct row {
    const char *name;
    long size;
    double value;
    const char *unit;
} rows[MAX_ROWS];
static int nrows;

static void emit(const char *name, long size, double value, const char *unit)
{
    if (me != 0)
        return;
    printf("%s,%ld,%.6g,%s\n", name, size, value, unit);
    fflush(stdout);
    if (nrows < MAX_ROWS)
        rows[nrows++] = (struct row){name, size, value, unit};
}

/* ---------- point-to-point rows: PE 0 acts on PE `peer` ---------- */

typedef void (*p2p_fn)(long iters, long size);

static long op_seq; /* values written by the 8-byte rows, so the peer can check the last one */

static void do_put8_quiet(long iters, long size)
{
    (void)size;
    for (long i = 0; i < iters; i++) {
        long v = ++op_seq;
        shmem_putmem(word, &v, 8, peer);
        shmem_quiet();
    }
}

static void do_get8(long iters, long size)
{
    (void)size;
    long v = 0, s = 0;
    for (long i = 0; i < iters; i++) {
        shmem_getmem(&v, word, 8, peer);
        s += v;
    }
    if (v != op_seq)
        fail("get8", "value read", v, op_seq);
    (void)s;
}

static void do_p(long iters, long size)
{
    (void)size;
    for (long i = 0; i < iters; i++)
        shmem_long_p(word, ++op_seq, peer);
    shmem_quiet();
}

static long fadd_count; /* additions PE 0 made to `counter` on the peer */

static void do_fetch_add(long iters, long size)
{
    (void)size;
    for (long i = 0; i < iters; i++) {
        long old = shmem_long_atomic_fetch_add(counter, 1, peer);
        if (old != fadd_count)
            fail("fetch_add", "fetched value", old, fadd_count);
        fadd_count++;
    }
}

static void do_atomic_add(long iters, long size)
{
    (void)size;
    for (long i = 0; i < iters; i++)
        shmem_long_atomic_add(counter, 1, peer);
    fadd_count += iters;
    shmem_quiet();
}

static void do_put_bw(long iters, long size)
{
    for (long i = 0; i < iters; i++)
        shmem_putmem(bw_dst, bw_src, (size_t)size, peer);
    shmem_quiet();
}

static void do_get_bw(long iters, long size)
{
    for (long i = 0; i < iters; i++)
        shmem_getmem(bw_dst, bw_src, (size_t)size, peer);
}

/* Runs one point-to-point row; returns the median seconds per operation (PE 0 only). */
static double run_p2p(p2p_fn fn, long iters, long size)
{
    double t[MAX_REPS];
    shmem_barrier_all();
    if (me == 0) {
        fn(iters / 10 + 1, size);
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            fn(iters, size);
            t[r] = (now() - t0) / (double)iters;
        }
    }
    shmem_barrier_all();
    return me == 0 ? median(t, reps) : 0.0;
}

/* After a row that wrote `got` on the peer, PE 0 sends the value it expects there. */
static void check_on_peer(const char *row, const long *got, long want_on_pe0)
{
    if (me == 0) {
        shmem_long_p(expect, want_on_pe0, peer);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == peer && me != 0 && *got != *expect)
        fail(row, "value on the peer", *got, *expect);
    shmem_barrier_all();
}

static void fill_pattern(long *buf, long nlong, long salt)
{
    for (long i = 0; i < nlong; i++)
        buf[i] = salt * 1000003L + i;
}

static void check_pattern(const char *row, const long *buf, long nlong, long salt)
{
    for (long i = 0; i < nlong; i += 509)
        if (buf[i] != salt * 1000003L + i)
            fail(row, "pattern element", buf[i], salt * 1000003L + i);
    if (buf[nlong - 1] != salt * 1000003L + nlong - 1)
        fail(row, "last element", buf[nlong - 1], salt * 1000003L + nlong - 1);
}

static long bw_iters(long size)
{
    long it = BW_BYTES / size;
    return it < 8 ? 8 : it;
}

static void bandwidth_rows(void)
{
    for (int get = 0; get < 2; get++) {
        const char *name = get ? "get_bw" : "put_bw";
        if (!selected(name))
            continue;
        for (long size = 1024; size <= MAX_BW; size *= 4) {
            long nlong = size / 8;
            /* put: PE 0's source goes to the peer's destination; get: the peer's source comes
             * to PE 0's destination. Fresh patterns each size, so stale data cannot pass. */
            if (get ? me == peer : me == 0)
                fill_pattern(bw_src, nlong, size + get);
            double t = run_p2p(get ? do_get_bw : do_put_bw, bw_iters(size), size);
            emit(name, size, (double)size / t / 1e9, "GB/s");
            if (get ? me == 0 : me == peer)
                check_pattern(name, bw_dst, nlong, size + get);
            shmem_barrier_all();
        }
    }
}

/* One put_mr burst of `iters` puts of `size` bytes; returns messages per second (PE 0). PE 0
 * fills its buffer with fill + 1 and the peer with fill, so the peer can see the bytes arrive. */
static double put_mr_burst(long iters, long size, int fill)
{
    memset(mr_buf, me == 0 ? fill + 1 : fill, (size_t)MR_BYTES);
    shmem_barrier_all();
    double rate = 0;
    if (me == 0) {
        double t0 = now();
        for (long i = 0, off = 0; i < iters; i++, off += size)
            shmem_putmem(mr_buf + off, mr_buf + off, (size_t)size, peer);
        shmem_quiet();
        rate = (double)iters / (now() - t0);
    }
    shmem_barrier_all();
    if (me == peer && me != 0 && (mr_buf[0] != (char)(fill + 1) || mr_buf[iters * size - 1] != (char)(fill + 1)))
        fail("put_mr", "byte put", mr_buf[iters * size - 1], (char)(fill + 1));
    return rate;
}

static void put_mr_rows(void)
{
    static const long sizes[] = {8, 4096, 16384, 65536, 131072};
    if (!selected("put_mr"))
        return;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        long size = sizes[k];
        long iters = size < 8192 ? 500 : 50; /* osu_oshm_put_mr's counts */
        double t[MAX_REPS];
        put_mr_burst(iters, size, 1);
        for (int r = 0; r < reps; r++)
            t[r] = put_mr_burst(iters, size, 2 * r + 3);
        emit("put_mr", size, median(t, reps) / 1e6, "Mmsg/s");
    }
}

/* ---------- all-PE rows ---------- */

static void barrier_row(void)
{
    const long iters = 1000;
    double t[MAX_REPS];
    for (long i = 0; i < iters / 10; i++)
        shmem_barrier_all();
    for (int r = 0; r < reps; r++) {
        shmem_barrier_all();
        double t0 = now();
        for (long i = 0; i < iters; i++)
            shmem_barrier_all();
        t[r] = (now() - t0) / (double)iters;
    }
    emit("barrier_all", 0, median(t, reps) * 1e6, "us");
}

/* Barriers for `seconds` (PE 0's clock; it tells everyone when to stop): mean time per barrier. */
static double barriers_for(double seconds)
{
    long n = 0;
    *stop = 0;
    shmem_barrier_all();
    double t0 = now();
    for (;;) {
        for (int i = 0; i < 100; i++)
            shmem_barrier_all();
        if (me == 0 && now() - t0 >= seconds)
            for (int pe = 0; pe < npes; pe++)
                shmem_long_p(stop, 1, pe);
        shmem_barrier_all(); /* makes PE 0's decision visible to all: every PE stops here */
        n += 101;
        if (*stop)
            break;
    }
    return (now() - t0) / (double)n;
}

static void barrier_long_row(void)
{
    double t[MAX_REPS];
    barriers_for(0.05);
    for (int r = 0; r < reps; r++)
        t[r] = barriers_for(0.5);
    emit("barrier_all_long", 0, median(t, reps) * 1e6, "us");
}

/* One collective call of `nlong` longs, iteration `it` (checked against what it must give). */
static void bcast_once(long nlong, long it)
{
    if (me == 0) {
        coll_src[nlong - 1] = -it;
        coll_src[0] = it;
    }
    shmem_broadcast64(coll_dst, coll_src, (size_t)nlong, 0, 0, 0, npes, psync_bcast);
}

static void bcast_check(long nlong, long it)
{
    if (me == 0)
        return;
    if (coll_dst[0] != it)
        fail("bcast", "first element", coll_dst[0], it);
    if (nlong > 1 && coll_dst[nlong - 1] != -it)
        fail("bcast", "last element", coll_dst[nlong - 1], -it);
}

static void reduce_once(long nlong, long it)
{
    coll_src[nlong - 1] = 1;
    coll_src[0] = me + it;
    shmem_long_sum_to_all(coll_dst, coll_src, (int)nlong, 0, 0, npes, pwrk, psync_reduce);
}

static void reduce_check(long nlong, long it)
{
    long want = (long)npes * (npes - 1) / 2 + it * npes;
    if (coll_dst[0] != want)
        fail("sum_reduce", "sum", coll_dst[0], want);
    if (nlong > 1 && coll_dst[nlong - 1] != npes)
        fail("sum_reduce", "last element", coll_dst[nlong - 1], npes);
}

/* Times `iters` calls one by one (barrier between, untimed); the row's value for a repetition
 * is the average over PEs of each PE's mean time per call. Median over repetitions. */
static void collective_row(const char *name, long bytes, void (*once)(long, long), void (*check)(long, long))
{
    long nlong = bytes / 8;
    long iters = bytes > 4096 ? 100 : 300;
    double t[MAX_REPS];
    long it = 0;
    for (long i = 0; i < iters / 10 + 1; i++, it++) {
        shmem_barrier_all();
        once(nlong, it);
        check(nlong, it);
    }
    for (int r = 0; r < reps; r++) {
        double sum = 0;
        for (long i = 0; i < iters; i++, it++) {
            shmem_barrier_all();
            double t0 = now();
            once(nlong, it);
            sum += now() - t0;
            check(nlong, it);
        }
        shmem_double_p(&times_all[me], sum / (double)iters, 0);
        shmem_barrier_all();
        if (me == 0) {
            double avg = 0;
            for (int pe = 0; pe < npes; pe++)
                avg += times_all[pe];
            t[r] = avg / npes;
        }
    }
    shmem_barrier_all();
    emit(name, bytes, me == 0 ? median(t, reps) * 1e6 : 0.0, "us");
}

static void print_table(void)
{
    if (me != 0 || csv_only)
        return;
    printf("\n# shmem_bench: %d PEs, point-to-point rows between PE 0 and PE %d, median of %d\n", npes, peer, reps);
    printf("# %-12s %10s %12s %s\n", "row", "size", "value", "unit");
    for (int i = 0; i < nrows; i++)
        printf("# %-12s %10ld %12.4f %s\n", rows[i].name, rows[i].size, rows[i].value, rows[i].unit);
}

static long *sym_longs(long n)
{
    long *p = shmem_malloc((size_t)n * sizeof(long));
    if (!p) {
        fprintf(stderr, "shmem_bench: shmem_malloc of %ld bytes failed\n", n * (long)sizeof(long));
        shmem_global_exit(1);
    }
    memset(p, 0, (size_t)n * sizeof(long));
    return p;
}

int main(int argc, char **argv)
{
    sel = calloc((size_t)argc, sizeof *sel);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0) {
            csv_only = 1;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > MAX_REPS) {
                fprintf(stderr, "shmem_bench: --reps must be 1..%d\n", MAX_REPS);
                return 1;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: %s [--csv] [--reps N] [row-name ...]\n"
                   "rows: put8_quiet get8 p fetch_add atomic_add barrier_all barrier_all_long put_bw get_bw put_mr bcast sum_reduce\n",
                   argv[0]);
            return 0;
        } else {
            sel[nsel++] = argv[i];
        }
    }

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    peer = npes > 1 ? 1 : 0;

    bw_src = sym_longs(MAX_BW / 8);
    bw_dst = sym_longs(MAX_BW / 8);
    mr_buf = (char *)sym_longs(MR_BYTES / 8);
    coll_src = sym_longs(COLL_NLONG);
    coll_dst = sym_longs(COLL_NLONG);
    long nwrk = COLL_NLONG / 2 + 1;
    if (nwrk < SHMEM_REDUCE_MIN_WRKDATA_SIZE)
        nwrk = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    pwrk = sym_longs(nwrk);
    psync_bcast = sym_longs(SHMEM_BCAST_SYNC_SIZE);
    psync_reduce = sym_longs(SHMEM_REDUCE_SYNC_SIZE);
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psync_bcast[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync_reduce[i] = SHMEM_SYNC_VALUE;
    word = sym_longs(1);
    counter = sym_longs(1);
    expect = sym_longs(1);
    stop = sym_longs(1);
    times_all = (double *)sym_longs(npes);
    shmem_barrier_all();

    if (selected("put8_quiet")) {
        emit("put8_quiet", 8, run_p2p(do_put8_quiet, 100000, 8) * 1e6, "us");
        check_on_peer("put8_quiet", word, op_seq);
    }
    if (selected("get8")) {
        /* PE 0 knows the last value it stored: get must read exactly that. */
        if (me == 0) {
            long v = ++op_seq;
            shmem_long_p(word, v, peer);
            shmem_quiet();
        }
        emit("get8", 8, run_p2p(do_get8, 100000, 8) * 1e6, "us");
    }
    if (selected("p")) {
        emit("p", 8, run_p2p(do_p, 100000, 8) * 1e6, "us");
        check_on_peer("p", word, op_seq);
    }
    if (selected("fetch_add"))
        emit("fetch_add", 8, run_p2p(do_fetch_add, 100000, 8) * 1e6, "us");
    if (selected("atomic_add")) {
        emit("atomic_add", 8, run_p2p(do_atomic_add, 100000, 8) * 1e6, "us");
        check_on_peer("atomic_add", counter, fadd_count);
    }
    if (selected("barrier_all"))
        barrier_row();
    if (selected("barrier_all_long"))
        barrier_long_row();
    bandwidth_rows();
    put_mr_rows();
    if (selected("bcast")) {
        collective_row("bcast", 8, bcast_once, bcast_check);
        collective_row("bcast", COLL_BIG, bcast_once, bcast_check);
    }
    if (selected("sum_reduce")) {
        collective_row("sum_reduce", 8, reduce_once, reduce_check);
        collective_row("sum_reduce", COLL_BIG, reduce_once, reduce_check);
    }

    print_table();
    shmem_barrier_all();
    shmem_free(times_all);
    shmem_free(stop);
    shmem_free(expect);
    shmem_free(counter);
    shmem_free(word);
    shmem_free(psync_reduce);
    shmem_free(psync_bcast);
    shmem_free(pwrk);
    shmem_free(coll_dst);
    shmem_free(coll_src);
    shmem_free(bw_dst);
    shmem_free(bw_src);
    shmem_free(mr_buf);
    shmem_finalize();
    free(sel);
    return 0;
}
