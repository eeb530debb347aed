/* net_bench: the rows of perftest/host/shmem_bench between two PEs on different hosts, timed
 * by the clock instead of by a fixed count, because a network operation costs 10 us to 10 ms
 * depending on the library and the machine's load, and a fixed count sized for one is useless
 * for the other. Standard OpenSHMEM 1.4 API only (builds with rshmem and with oshcc). Its data
 * is symmetric statics and its PEs meet through puts and waits (sync_all below), so only the
 * barrier row needs a collective across hosts: the other rows run on a library whose
 * collectives do not cross hosts yet.
 *   put8_quiet 8     shmem_putmem of 8 bytes + shmem_quiet
 *   put8_quiet_multi N  shmem_putmem of 8 bytes to each of the N other PEs, then one shmem_quiet
 *                    (3 PEs or more: quiet's cost when it has several PEs to complete)
 *   get8 8           shmem_getmem of 8 bytes
 *   fetch_add 8      shmem_long_atomic_fetch_add
 *   put_bw SIZE      shmem_putmem of SIZE bytes (1 KiB ... 4 MiB), WINDOW of them back to back,
 *                    each to the next SIZE slot of a 4 MiB array (wrapping), one quiet: GB/s
 *   put_nbi_bw SIZE  the same with shmem_putmem_nbi (256 KiB ... 4 MiB; only when named): the
 *                    library's raw RMA stream, no per-put completion (as fabtests' fi_rma_bw)
 *   barrier_all 0    shmem_barrier_all (all PEs)
 * PE 0 acts on PE 1 (put8_quiet_multi: on every other PE); each repetition runs for --time seconds (default 0.25) after an untimed
 * tenth of that; a row's figure is the median of --reps repetitions (default 3). Every row
 * checks that its data arrived; a wrong value exits non-zero.
 * Output (PE 0): one CSV line per row, `name,size,value,unit`.
 * Usage: net_bench [--reps N] [--time SECONDS] [row-name ...]   (no names: every row) */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPS 15
#define MAX_BW (4L << 20)
#define MAX_PES 64
/* Puts per quiet in the bandwidth rows (as OSU's osu_oshm_put_bw): the quiet's round trip is
 * shared by enough puts that the row measures the puts. */
#define WINDOW 64

static int me, npes, reps = 3;
static double budget = 0.25;
static int nsel;
static char **sel;

/* symmetric data */
static long word, counter, expect, source, barrier_count;
static long arrived[MAX_PES], released; /* sync_all: rounds each PE reached, PE 0's release */
static long bw_src[MAX_BW / 8], bw_dst[MAX_BW / 8];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int selected(const char *name)
{
    for (int i = 0; i < nsel; i++)
        if (strcmp(sel[i], name) == 0)
            return 1;
    return nsel == 0;
}

static void check(const char *row, const char *what, long got, long want)
{
    if (got == want)
        return;
    fprintf(stderr, "net_bench: PE %d: CHECK FAILED in row %s: %s: got %ld, want %ld\n", me, row, what, got, want);
    shmem_global_exit(2);
}

/* One long to `pe` and a quiet (shmem_putmem: the first routine a network transport serves). */
static void put_long(long *dest, long value, int pe)
{
    shmem_putmem(dest, &value, sizeof value, pe);
    shmem_quiet();
}

/* Every PE waits for every other (a central barrier of puts and waits): PE 0 collects each
 * PE's round number, then releases them. The quiets order the data before the signal. */
static void sync_all(void)
{
    static long round;
    round++;
    if (me == 0) {
        for (int pe = 1; pe < npes; pe++)
            shmem_long_wait_until(&arrived[pe], SHMEM_CMP_GE, round);
        for (int pe = 1; pe < npes; pe++)
            put_long(&released, round, pe);
    } else {
        put_long(&arrived[me], round, 0);
        shmem_long_wait_until(&released, SHMEM_CMP_GE, round);
    }
}

/* ---------- point-to-point rows: PE 0 on PE 1 ---------- */

static long puts_done, adds_done;

static void put8_quiet(long size)
{
    (void)size;
    long v = ++puts_done;
    shmem_putmem(&word, &v, 8, 1);
    shmem_quiet();
}

static void put8_quiet_multi(long size)
{
    (void)size;
    long v = ++puts_done;
    for (int pe = 1; pe < npes; pe++)
        shmem_putmem(&word, &v, 8, pe);
    shmem_quiet();
}

static void get8(long size)
{
    (void)size;
    long v = 0;
    shmem_getmem(&v, &source, 8, 1);
    check("get8", "value read from PE 1", v, 4242);
}

static void fetch_add(long size)
{
    (void)size;
    check("fetch_add", "value before the add", shmem_long_atomic_fetch_add(&counter, 1, 1), adds_done++);
}

static long bw_slot;

static void put_bw(long size)
{
    long slot = bw_slot++ % (MAX_BW / size);
    shmem_putmem(bw_dst + slot * (size / 8), bw_src, (size_t)size, 1);
}

static void put_nbi_bw(long size)
{
    long slot = bw_slot++ % (MAX_BW / size);
    shmem_putmem_nbi(bw_dst + slot * (size / 8), bw_src, (size_t)size, 1);
}

/* Calls op until the time budget is spent; returns seconds per call. Bandwidth rows end each
 * window of puts with a quiet inside the timed span. */
static double timed(void (*op)(long), long size, double seconds)
{
    long n = 0;
    double t0 = now(), t;
    do {
        int bw = op == put_bw || op == put_nbi_bw, batch = bw ? WINDOW : 8;
        for (int i = 0; i < batch; i++)
            op(size);
        n += batch;
        if (bw)
            shmem_quiet();
    } while ((t = now() - t0) < seconds);
    return t / (double)n;
}

/* One row: PE 0 measures (the other PEs wait in the barrier); the median per-call seconds. */
static double p2p_row(void (*op)(long), long size)
{
    double t[MAX_REPS] = {0};
    sync_all();
    if (me == 0) {
        timed(op, size, budget / 10);
        for (int r = 0; r < reps; r++)
            t[r] = timed(op, size, budget);
        qsort(t, (size_t)reps, sizeof t[0], by_value);
    }
    sync_all();
    return t[reps / 2];
}

static void emit(const char *name, long size, double value, const char *unit)
{
    if (me == 0)
        printf("%s,%ld,%.6g,%s\n", name, size, value, unit);
    fflush(stdout);
}

/* After a row that wrote `got` on PE 1, PE 0 tells PE 1 what it must find there. */
static void check_on_peer(const char *row, const long *got, long want)
{
    if (me == 0)
        put_long(&expect, want, 1);
    sync_all();
    if (me == 1)
        check(row, "value on PE 1", *got, expect);
    sync_all();
}

/* The same for a row that wrote `got` on every PE but PE 0. */
static void check_on_peers(const char *row, const long *got, long want)
{
    if (me == 0)
        for (int pe = 1; pe < npes; pe++)
            put_long(&expect, want, pe);
    sync_all();
    if (me != 0)
        check(row, "value on this PE", *got, expect);
    sync_all();
}

static void fill(long *buf, long nlong, long salt)
{
    for (long i = 0; i < nlong; i++)
        buf[i] = salt * 7919 + i;
}

/* ---------- barrier: every PE runs the count PE 0 chose ---------- */

static void barrier_row(void)
{
    double t[MAX_REPS];
    if (me == 0) {
        double t0 = now();
        for (int i = 0; i < 20; i++)
            shmem_barrier_all();
        double each = (now() - t0) / 20;
        long n = (long)(budget / (each > 1e-7 ? each : 1e-7));
        barrier_count = n < 10 ? 10 : n;
        for (int pe = 1; pe < npes; pe++)
            put_long(&barrier_count, barrier_count, pe);
    } else {
        for (int i = 0; i < 20; i++)
            shmem_barrier_all();
    }
    shmem_barrier_all();
    for (int r = 0; r < reps; r++) {
        shmem_barrier_all();
        double t0 = now();
        for (long i = 0; i < barrier_count; i++)
            shmem_barrier_all();
        t[r] = (now() - t0) / (double)barrier_count;
    }
    qsort(t, (size_t)reps, sizeof t[0], by_value);
    emit("barrier_all", 0, t[reps / 2] * 1e6, "us");
}

int main(int argc, char **argv)
{
    sel = calloc((size_t)argc, sizeof *sel);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
            budget = atof(argv[++i]);
        } else if (strcmp(argv[i], "--csv") == 0) {
            /* accepted for symmetry with shmem_bench: the output is always CSV */
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [--reps N] [--time SECONDS] [put8_quiet put8_quiet_multi get8 fetch_add barrier_all put_bw put_nbi_bw]\n",
                    argv[0]);
            return 2;
        } else {
            sel[nsel++] = argv[i];
        }
    }
    if (reps < 1 || reps > MAX_REPS || !(budget > 0 && budget <= 60)) {
        fprintf(stderr, "net_bench: --reps must be 1..%d and --time in (0, 60] seconds\n", MAX_REPS);
        return 2;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2 || npes > MAX_PES) {
        if (me == 0)
            fprintf(stderr, "net_bench: needs 2 to %d PEs (PE 0 acts on PE 1), got %d\n", MAX_PES, npes);
        shmem_global_exit(2);
    }
    source = 4242;
    sync_all();

    if (selected("put8_quiet")) {
        emit("put8_quiet", 8, p2p_row(put8_quiet, 8) * 1e6, "us");
        check_on_peer("put8_quiet", &word, puts_done);
    }
    if (selected("put8_quiet_multi") && npes >= 3) {
        emit("put8_quiet_multi", npes - 1, p2p_row(put8_quiet_multi, 0) * 1e6, "us");
        check_on_peers("put8_quiet_multi", &word, puts_done);
    }
    if (selected("get8"))
        emit("get8", 8, p2p_row(get8, 8) * 1e6, "us");
    if (selected("fetch_add")) {
        emit("fetch_add", 8, p2p_row(fetch_add, 8) * 1e6, "us");
        check_on_peer("fetch_add", &counter, adds_done);
    }
    if (selected("put_bw")) {
        for (long size = 1024; size <= MAX_BW; size *= 4) {
            if (me == 0)
                fill(bw_src, size / 8, size);
            bw_slot = 0; /* the first put of the row writes slot 0, which PE 1 checks */
            emit("put_bw", size, (double)size / p2p_row(put_bw, size) / 1e9, "GB/s");
            if (me == 1) {
                check("put_bw", "first word on PE 1", bw_dst[0], size * 7919);
                check("put_bw", "last word on PE 1", bw_dst[size / 8 - 1], size * 7919 + size / 8 - 1);
            }
        }
    }
    for (long size = 256L << 10; nsel > 0 && selected("put_nbi_bw") && size <= MAX_BW; size *= 4) {
        if (me == 0)
            fill(bw_src, size / 8, size);
        bw_slot = 0;
        emit("put_nbi_bw", size, (double)size / p2p_row(put_nbi_bw, size) / 1e9, "GB/s");
        if (me == 1)
            check("put_nbi_bw", "last word on PE 1", bw_dst[size / 8 - 1], size * 7919 + size / 8 - 1);
    }
    /* last: the one row that needs a collective across hosts */
    if (selected("barrier_all"))
        barrier_row();
    sync_all();
    shmem_finalize();
    free(sel);
    return 0;
}
