/* floor: what the hardware itself costs for the operations shmem_bench measures, so the
 * OpenSHMEM figures can be read against a physical floor.
 *
 * Two processes (fork) share one memfd mapped MAP_SHARED, as two PEs on one host share their
 * symmetric heaps. The parent measures; the child plays the peer:
 *   store_seen 8     a plain 8-byte store seen by the other process: ping-pong round trip / 2
 *   put8_quiet 8     8-byte store into the shared page + full fence (what a put + quiet needs)
 *   p 8              8-byte store into the shared page
 *   get8 8           8-byte load from the shared page
 *   fetch_add 8      atomic fetch-add on a shared line (the line stays here, as in the bench)
 *   atomic_add 8     atomic add without fetch
 *   fetch_add_pingpong 8   fetch-add on a line the other process modified last (line moves)
 *   barrier_all 0    two-process barrier on shared counters: each signals, then waits
 *   put_bw SIZE      memcpy private -> shared page, GB/s
 *   get_bw SIZE      memcpy shared page -> private, GB/s
 *   put_mr SIZE      message rate of memcpy private -> shared, each to the next SIZE bytes,
 *                    on freshly rewritten buffers (shmem_bench's put_mr method): M msgs/s
 * Output: CSV lines `name,size,value,unit` (same format as shmem_bench), then a table.
 * Usage: floor [--csv] [row-name ...]   (exact row names, 'put*' for a prefix; default: all) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPS 5
#define LINE 128 /* keep flags on separate cache-line pairs (adjacent-line prefetch) */
#define MAX_SIZE (4u << 20)
#define MR_BYTES (8u << 20) /* put_mr window (at least MAX_SIZE) */

struct shared {
    _Alignas(LINE) _Atomic uint64_t ping;
    _Alignas(LINE) _Atomic uint64_t pong;
    _Alignas(LINE) _Atomic uint64_t word;   /* target of stores and atomics */
    _Alignas(LINE) _Atomic uint64_t cmd;    /* what the child should do next */
    _Alignas(LINE) _Atomic uint64_t bar[2]; /* barrier counters, one per process */
    _Alignas(4096) unsigned char buf[];     /* the "remote heap" for memcpy */
};

enum { CMD_IDLE, CMD_PINGPONG, CMD_FADD_PINGPONG, CMD_BARRIER, CMD_FILL, CMD_EXIT };

static struct shared *sh;
static int csv_only;

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

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* ---------- the child: the peer PE ---------- */

static void child_loop(void)
{
    for (;;) {
        uint64_t c;
        /* Idle politely: the parent may be measuring on the other core (or on ours). */
        while ((c = atomic_load_explicit(&sh->cmd, memory_order_acquire)) == CMD_IDLE)
            usleep(200);
        if (c == CMD_EXIT)
            _exit(0);
        if (c == CMD_PINGPONG) {
            uint64_t seen = atomic_load_explicit(&sh->pong, memory_order_relaxed);
            while (atomic_load_explicit(&sh->cmd, memory_order_acquire) == CMD_PINGPONG) {
                uint64_t v = atomic_load_explicit(&sh->ping, memory_order_acquire);
                if (v != seen) {
                    seen = v;
                    atomic_store_explicit(&sh->pong, v, memory_order_release);
                } else {
                    cpu_relax();
                }
            }
        } else if (c == CMD_FADD_PINGPONG) {
            /* Turn-taking on one word: even values are the parent's turn, odd the child's. */
            while (atomic_load_explicit(&sh->cmd, memory_order_acquire) == CMD_FADD_PINGPONG) {
                uint64_t v = atomic_load_explicit(&sh->word, memory_order_acquire);
                if (v & 1)
                    atomic_fetch_add_explicit(&sh->word, 1, memory_order_acq_rel);
                else
                    cpu_relax();
            }
        } else if (c == CMD_FILL) {
            /* put_mr: for each new request number in ping, the peer rewrites its own buffer
             * (with the byte in `word`) and answers with the number in pong. */
            uint64_t done = atomic_load_explicit(&sh->pong, memory_order_relaxed);
            while (atomic_load_explicit(&sh->cmd, memory_order_acquire) == CMD_FILL) {
                uint64_t want = atomic_load_explicit(&sh->ping, memory_order_acquire);
                if (want != done) {
                    memset(sh->buf, (int)atomic_load(&sh->word), MR_BYTES);
                    done = want;
                    atomic_store_explicit(&sh->pong, done, memory_order_release);
                } else {
                    usleep(20);
                }
            }
        } else if (c == CMD_BARRIER) {
            uint64_t k = 0;
            while (atomic_load_explicit(&sh->cmd, memory_order_acquire) == CMD_BARRIER) {
                uint64_t mine = atomic_load_explicit(&sh->bar[1], memory_order_relaxed);
                /* Enter only when the parent has entered (it leads; it stops by changing cmd). */
                if (atomic_load_explicit(&sh->bar[0], memory_order_acquire) > k) {
                    atomic_store_explicit(&sh->bar[1], mine + 1, memory_order_release);
                    k++;
                } else {
                    cpu_relax();
                }
            }
        }
        /* Acknowledge: back to idle is the parent's job; wait for it. */
        while (atomic_load_explicit(&sh->cmd, memory_order_acquire) != CMD_IDLE &&
               atomic_load_explicit(&sh->cmd, memory_order_acquire) != CMD_EXIT)
            usleep(50);
    }
}

static void child_do(uint64_t c)
{
    atomic_store_explicit(&sh->cmd, c, memory_order_release);
}

/* ---------- rows ---------- */

static int selected(int nsel, char **sel, const char *name)
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

#define MAX_ROWS 64
static struct row {
    char name[32];
    size_t size;
    double value;
    const char *unit;
} rows[MAX_ROWS];
static int nrows;

static void emit(const char *name, size_t size, double value, const char *unit)
{
    printf("%s,%zu,%.6g,%s\n", name, size, value, unit);
    fflush(stdout);
    if (nrows < MAX_ROWS) {
        struct row *r = &rows[nrows++];
        snprintf(r->name, sizeof r->name, "%s", name);
        r->size = size;
        r->value = value;
        r->unit = unit;
    }
}

/* Runs `body(iters)` REPS times after a warm-up; returns the median time per iteration (s). */
typedef void (*body_fn)(long iters, size_t size);

static double measure(body_fn body, long iters, size_t size)
{
    double t[REPS];
    body(iters / 10 + 1, size); /* warm-up, not counted */
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        body(iters, size);
        t[r] = (now() - t0) / (double)iters;
    }
    return median(t, REPS);
}

static void body_pingpong(long iters, size_t size)
{
    (void)size;
    uint64_t v = atomic_load_explicit(&sh->ping, memory_order_relaxed);
    for (long i = 0; i < iters; i++) {
        v++;
        atomic_store_explicit(&sh->ping, v, memory_order_release);
        while (atomic_load_explicit(&sh->pong, memory_order_acquire) != v)
            cpu_relax();
    }
}

static void body_store_fence(long iters, size_t size)
{
    (void)size;
    for (long i = 0; i < iters; i++) {
        atomic_store_explicit(&sh->word, (uint64_t)i, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
    }
}

static void body_store(long iters, size_t size)
{
    (void)size;
    for (long i = 0; i < iters; i++)
        atomic_store_explicit(&sh->word, (uint64_t)i, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
}

static volatile uint64_t sink;

static void body_load(long iters, size_t size)
{
    (void)size;
    uint64_t s = 0;
    for (long i = 0; i < iters; i++) {
        s += atomic_load_explicit(&sh->word, memory_order_relaxed);
        __asm__ __volatile__("" ::: "memory"); /* one real load per iteration */
    }
    sink = s;
}

static void body_fetch_add(long iters, size_t size)
{
    (void)size;
    uint64_t s = 0;
    for (long i = 0; i < iters; i++)
        s += atomic_fetch_add_explicit(&sh->word, 1, memory_order_seq_cst);
    sink = s;
}

static void body_add(long iters, size_t size)
{
    (void)size;
    for (long i = 0; i < iters; i++)
        atomic_fetch_add_explicit(&sh->word, 1, memory_order_seq_cst); /* result unused: lock add */
}

static void body_fadd_pingpong(long iters, size_t size)
{
    (void)size;
    for (long i = 0; i < iters; i++) {
        uint64_t v;
        while ((v = atomic_load_explicit(&sh->word, memory_order_acquire)) & 1)
            cpu_relax();
        atomic_fetch_add_explicit(&sh->word, 1, memory_order_acq_rel); /* hand over */
    }
    while (atomic_load_explicit(&sh->word, memory_order_acquire) & 1)
        cpu_relax();
}

static void body_barrier(long iters, size_t size)
{
    (void)size;
    for (long i = 0; i < iters; i++) {
        uint64_t mine = atomic_load_explicit(&sh->bar[0], memory_order_relaxed) + 1;
        atomic_store_explicit(&sh->bar[0], mine, memory_order_release);
        while (atomic_load_explicit(&sh->bar[1], memory_order_acquire) < mine)
            cpu_relax();
    }
}

static unsigned char *priv;

static void body_put_bw(long iters, size_t size)
{
    for (long i = 0; i < iters; i++) {
        memcpy(sh->buf, priv, size);
        __asm__ __volatile__("" ::: "memory");
    }
    atomic_thread_fence(memory_order_seq_cst);
}

static void body_get_bw(long iters, size_t size)
{
    for (long i = 0; i < iters; i++) {
        memcpy(priv, sh->buf, size);
        __asm__ __volatile__("" ::: "memory");
    }
}

/* put_mr: one burst of `iters` copies of `size` bytes to consecutive offsets after both
 * buffers were rewritten; returns messages per second. */
static double put_mr_burst(long iters, size_t size, int fill)
{
    memset(priv, fill, MR_BYTES);
    atomic_store(&sh->word, (uint64_t)(fill - 1));
    uint64_t request = atomic_load(&sh->ping) + 1;
    atomic_store_explicit(&sh->ping, request, memory_order_release);
    while (atomic_load_explicit(&sh->pong, memory_order_acquire) != request)
        usleep(20);
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        memcpy(sh->buf + (size_t)i * size, priv + (size_t)i * size, size);
        __asm__ __volatile__("" ::: "memory");
    }
    atomic_thread_fence(memory_order_seq_cst);
    double rate = (double)iters / (now() - t0);
    if (sh->buf[(size_t)iters * size - 1] != (unsigned char)fill) {
        fprintf(stderr, "floor: put_mr: the last byte did not arrive\n");
        exit(1);
    }
    return rate;
}

static long bw_iters(size_t size)
{
    long it = (long)((64u << 20) / size);
    return it < 8 ? 8 : it;
}

static void wait_child_idle(void)
{
    /* Let the child notice the command change and park before the next row. */
    usleep(2000);
}

int main(int argc, char **argv)
{
    int nsel = 0;
    char **sel = calloc((size_t)argc, sizeof *sel);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0)
            csv_only = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: %s [--csv] [row-name ...]\n", argv[0]);
            return 0;
        } else
            sel[nsel++] = argv[i];
    }

    size_t bytes = sizeof(struct shared) + MR_BYTES;
    int fd = memfd_create("floor", 0);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        perror("floor: memfd_create/ftruncate");
        return 1;
    }
    sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sh == MAP_FAILED) {
        perror("floor: mmap");
        return 1;
    }
    priv = aligned_alloc(4096, MR_BYTES);
    memset(priv, 1, MR_BYTES);
    pid_t child = fork();
    if (child < 0) {
        perror("floor: fork");
        return 1;
    }
    if (child == 0) {
        memset(sh->buf, 0, MR_BYTES); /* the peer first-touches its own heap */
        child_loop();
    }
    usleep(20000);

    if (selected(nsel, sel, "store_seen")) {
        child_do(CMD_PINGPONG);
        emit("store_seen", 8, measure(body_pingpong, 200000, 0) / 2 * 1e6, "us");
        child_do(CMD_IDLE);
        wait_child_idle();
    }
    if (selected(nsel, sel, "put8_quiet"))
        emit("put8_quiet", 8, measure(body_store_fence, 1000000, 0) * 1e6, "us");
    if (selected(nsel, sel, "get8"))
        emit("get8", 8, measure(body_load, 1000000, 0) * 1e6, "us");
    if (selected(nsel, sel, "p"))
        emit("p", 8, measure(body_store, 1000000, 0) * 1e6, "us");
    if (selected(nsel, sel, "fetch_add"))
        emit("fetch_add", 8, measure(body_fetch_add, 1000000, 0) * 1e6, "us");
    if (selected(nsel, sel, "atomic_add"))
        emit("atomic_add", 8, measure(body_add, 1000000, 0) * 1e6, "us");
    if (selected(nsel, sel, "fetch_add_pingpong")) {
        atomic_store(&sh->word, 0);
        child_do(CMD_FADD_PINGPONG);
        /* each iteration is two hand-overs (ours and the child's) */
        emit("fetch_add_pingpong", 8, measure(body_fadd_pingpong, 200000, 0) / 2 * 1e6, "us");
        child_do(CMD_IDLE);
        wait_child_idle();
    }
    if (selected(nsel, sel, "barrier_all")) {
        atomic_store(&sh->bar[0], 0);
        atomic_store(&sh->bar[1], 0);
        child_do(CMD_BARRIER);
        emit("barrier_all", 0, measure(body_barrier, 200000, 0) * 1e6, "us");
        child_do(CMD_IDLE);
        wait_child_idle();
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *name = pass ? "get_bw" : "put_bw";
        if (!selected(nsel, sel, name))
            continue;
        for (size_t s = 1024; s <= MAX_SIZE; s *= 4) {
            double t = measure(pass ? body_get_bw : body_put_bw, bw_iters(s), s);
            emit(name, s, (double)s / t / 1e9, "GB/s");
        }
    }
    if (selected(nsel, sel, "put_mr")) {
        static const size_t sizes[] = {8, 4096, 16384, 65536, 131072};
        child_do(CMD_FILL);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            long iters = sizes[k] < 8192 ? 500 : 50;
            double t[REPS];
            put_mr_burst(iters, sizes[k], 2);
            for (int r = 0; r < REPS; r++)
                t[r] = put_mr_burst(iters, sizes[k], 3 + r);
            emit("put_mr", sizes[k], median(t, REPS) / 1e6, "Mmsg/s");
        }
        child_do(CMD_IDLE);
        wait_child_idle();
    }
    child_do(CMD_EXIT);
    waitpid(child, NULL, 0);

    if (!csv_only) {
        printf("\n# physical floor: two processes sharing a MAP_SHARED memfd (median of %d)\n", REPS);
        printf("# %-20s %10s %12s %s\n", "row", "size", "value", "unit");
        for (int i = 0; i < nrows; i++)
            printf("# %-20s %10zu %12.4f %s\n", rows[i].name, rows[i].size, rows[i].value, rows[i].unit);
    }
    free(sel);
    return 0;
}
