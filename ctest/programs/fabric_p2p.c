/* Point-to-point routines between PEs on different hosts (network namespaces, or
 * RSHMEM_HOSTNAME): see ctest/scripts/fabric_p2p.sh. Only symmetric static data and
 * point-to-point routines are used (the job synchronises with its own AMO barrier), so the
 * test does not depend on collectives across hosts. Checked on every PE: typed, strided, nbi
 * and context puts/gets arrive; AMOs of every kind from PEs on both hosts hit one counter and
 * the total is exact; put-with-signal data is in place when the signal is; a put after a fence
 * is not seen before the put before it; a lock taken by PEs on both hosts is exclusive; shmem_ptr
 * is NULL exactly for PEs on other hosts. Prints "fabric_p2p: N PEs ok" on PE 0. */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric_sync.h"

#define MAXPE 16
#define ROUNDS 200
#define BLOCK 4096

static char hostnames[MAXPE][64];
static long longs[MAXPE];
static int ints[MAXPE * 4];
static double doubles[MAXPE];
static long counter, lock_word, lock_guarded;
static int icounter;
static unsigned long long bits;
static float fword;
static double dword;
static long block[MAXPE][BLOCK];
static uint64_t sigs[MAXPE];
static long fenced[2];
static long seen_word, seen_flag;
static int me, n;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "PE %d: line %d: ", me, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

static int same_host(int p) { return strcmp(hostnames[p], hostnames[me]) == 0; }

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    if (n > MAXPE) return 2;
    char name[64] = {0};
    const char *forced = getenv("RSHMEM_HOSTNAME");
    if (forced) snprintf(name, sizeof name, "%s", forced);
    else gethostname(name, sizeof name - 1);
    for (int p = 0; p < n; p++) shmem_putmem(hostnames[me], name, sizeof name, p);
    amo_barrier();

    /* shmem_ptr: NULL exactly for PEs on other hosts; every PE accessible by RMA. */
    int others = 0;
    for (int p = 0; p < n; p++) {
        void *ptr = shmem_ptr(&counter, p);
        others += !same_host(p);
        CHECK(same_host(p) ? ptr != NULL : ptr == NULL, "shmem_ptr(PE %d on %s) = %p", p, hostnames[p], ptr);
        CHECK(shmem_pe_accessible(p) && shmem_addr_accessible(&counter, p), "PE %d not accessible", p);
    }
    CHECK(others > 0, "no PE on another host: the test needs at least 2 hosts");

    /* Typed puts, p, iput, nbi and context puts to every PE. */
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    for (int p = 0; p < n; p++) {
        long v = 1000L * me + p;
        shmem_long_put(&longs[me], &v, 1, p);
        shmem_int_p(&ints[4 * me], me + 7, p);
        int pair[2] = {me + 100, me + 200};
        shmem_int_iput(&ints[4 * me + 1], pair, 2, 1, 2, p); /* ints[4me+1], ints[4me+3] */
        double d = me + 0.25;
        shmem_ctx_double_put_nbi(ctx, &doubles[me], &d, 1, p);
        shmem_ctx_quiet(ctx); /* d is reused after the loop */
    }
    shmem_quiet();
    amo_barrier();
    for (int q = 0; q < n; q++) {
        CHECK(longs[q] == 1000L * q + me, "long_put from PE %d: %ld", q, longs[q]);
        CHECK(ints[4 * q] == q + 7, "int_p from PE %d: %d", q, ints[4 * q]);
        CHECK(ints[4 * q + 1] == q + 100 && ints[4 * q + 3] == q + 200 && ints[4 * q + 2] == 0,
              "int_iput from PE %d: %d %d %d", q, ints[4 * q + 1], ints[4 * q + 2], ints[4 * q + 3]);
        CHECK(doubles[q] == q + 0.25, "ctx_double_put_nbi from PE %d: %g", q, doubles[q]);
    }
    /* Gets: g, typed, iget, nbi, context. */
    for (int p = 0; p < n; p++) {
        CHECK(shmem_long_g(&longs[me], p) == 1000L * me + p, "long_g from PE %d", p);
        CHECK(shmem_ctx_int_g(ctx, &ints[4 * p], p) == p + 7, "ctx_int_g from PE %d", p);
        int pair[2] = {0, 0};
        shmem_int_iget(pair, &ints[4 * p + 1], 1, 2, 2, p);
        CHECK(pair[0] == p + 100 && pair[1] == p + 200, "int_iget from PE %d: %d %d", p, pair[0], pair[1]);
        double d = 0;
        shmem_double_get_nbi(&d, &doubles[p], 1, p);
        shmem_quiet();
        CHECK(d == p + 0.25, "double_get_nbi from PE %d: %g", p, d);
    }
    shmem_ctx_destroy(ctx);
    amo_barrier();

    /* Large nbi puts from symmetric and private buffers, complete at quiet; a large nbi get. */
    static long sym_src[BLOCK];
    long *priv = malloc(sizeof(long) * BLOCK);
    for (int i = 0; i < BLOCK; i++) sym_src[i] = priv[i] = 7L * me + i;
    for (int p = 0; p < n; p++) shmem_long_put_nbi(block[me], p % 2 ? sym_src : priv, BLOCK, p);
    shmem_quiet();
    amo_barrier();
    for (int q = 0; q < n; q++)
        for (int i = 0; i < BLOCK; i++) CHECK(block[q][i] == 7L * q + i, "put_nbi from PE %d at %d: %ld", q, i, block[q][i]);
    for (int p = 0; p < n; p++) {
        memset(priv, 0, sizeof(long) * BLOCK);
        shmem_long_get_nbi(priv, block[p], BLOCK, p);
        shmem_quiet();
        for (int i = 0; i < BLOCK; i++) CHECK(priv[i] == 7L * p + i, "get_nbi from PE %d at %d: %ld", p, i, priv[i]);
    }
    free(priv);
    amo_barrier();

    /* AMOs from every PE (both hosts) on PE 0's and the last PE's words. */
    int last = n - 1;
    for (int i = 0; i < ROUNDS; i++) {
        shmem_long_atomic_fetch_add(&counter, 2, 0);
        shmem_long_atomic_inc(&counter, 0);
        shmem_long_atomic_add(&counter, 1, last);
        shmem_int_atomic_fetch_inc(&icounter, last);
        shmem_ulonglong_atomic_xor(&bits, 1ULL << (me % 64), 0);
    }
    shmem_ulonglong_atomic_fetch_or(&bits, 1ULL << 63, last);
    shmem_quiet();
    amo_barrier();
    if (me == 0) {
        long want = 3L * ROUNDS * n + (last == 0 ? (long)ROUNDS * n : 0);
        CHECK(counter == want, "counter on PE 0 = %ld, want %ld", counter, want);
        CHECK((bits & ~(1ULL << 63)) == 0, "xor on PE 0 left %llx (an even number of flips each)", bits);
    }
    if (me == last) {
        if (last != 0) CHECK(counter == (long)ROUNDS * n, "counter on PE %d = %ld, want %ld", last, counter, (long)ROUNDS * n);
        CHECK(icounter == ROUNDS * n, "int counter = %d, want %d", icounter, ROUNDS * n);
        CHECK(bits >> 63, "fetch_or did not set bit 63");
    }
    amo_barrier();
    /* compare_swap: exactly one PE wins each slot. */
    for (int p = 0; p < n; p++) {
        long old = shmem_long_atomic_compare_swap(&longs[p], 1000L * p + last, -1 - me, last);
        (void)old;
    }
    amo_barrier();
    if (me == last)
        for (int p = 0; p < n; p++) CHECK(longs[p] < 0 && longs[p] >= -n, "compare_swap slot %d = %ld", p, longs[p]);
    /* swap, fetch, set on float/double and ints. */
    if (me == 0) {
        shmem_float_atomic_set(&fword, 1.5f, last);
        shmem_double_atomic_set(&dword, -2.5, last);
        shmem_quiet();
        CHECK(shmem_float_atomic_swap(&fword, 3.0f, last) == 1.5f, "float swap");
        CHECK(shmem_double_atomic_fetch(&dword, last) == -2.5, "double fetch");
        CHECK(shmem_float_atomic_fetch(&fword, last) == 3.0f, "float fetch after swap");
        CHECK(shmem_int_atomic_swap(&icounter, 5, last) == ROUNDS * n, "int swap");
        CHECK(shmem_uint_atomic_fetch_and((unsigned int *)&icounter, 4u, last) == 5, "uint fetch_and");
        CHECK(shmem_int_atomic_fetch(&icounter, last) == 4, "int fetch after and");
        long f = 0;
        shmem_long_atomic_fetch_add_nbi(&f, &counter, 0, last);
        shmem_quiet();
        CHECK(f == (long)ROUNDS * n, "fetch_add_nbi: %ld", f);
    }
    amo_barrier();

    /* put-with-signal to the next PE (another host when PEs alternate): data before signal. */
    int to = (me + 1) % n, from = (me + n - 1) % n;
    static long src[BLOCK];
    for (int r = 1; r <= 20; r++) {
        for (int i = 0; i < BLOCK; i++) src[i] = r * 1000000L + me * 1000L + i % 1000;
        shmem_long_put_signal(block[me], src, BLOCK, &sigs[me], 1, SHMEM_SIGNAL_ADD, to);
        shmem_signal_wait_until(&sigs[from], SHMEM_CMP_GE, (uint64_t)r);
        for (int i = 0; i < BLOCK; i++) {
            long want = r * 1000000L + from * 1000L + i % 1000;
            CHECK(block[from][i] == want, "round %d: signal seen before data from PE %d at %d: %ld", r, from, i, block[from][i]);
        }
        CHECK(shmem_signal_fetch(&sigs[from]) == (uint64_t)r, "signal_fetch round %d", r);
        amo_barrier(); /* the sender may overwrite block[] only after it was checked */
    }

    /* fence: the second put is not seen before the first. */
    for (int r = 1; r <= 50; r++) {
        if (me == 0) {
            shmem_long_p(&fenced[0], r, last);
            shmem_fence();
            shmem_long_p(&fenced[1], r, last);
        }
        if (me == last) {
            shmem_long_wait_until(&fenced[1], SHMEM_CMP_GE, r);
            long second = fenced[1], first = shmem_long_atomic_fetch(&fenced[0], last);
            CHECK(first >= second, "fence: second put (%ld) seen before the first (%ld)", second, first);
        }
    }
    amo_barrier();

    /* quiet makes small (injected) puts visible to a third PE: PE 0 puts i to B on another host,
     * quiets, then tells C (another PE of B's host, which reads B's memory directly); C must see
     * at least i. */
    int b = last, c = last;
    for (int p = 0; p < n; p++)
        if (p != b && p != 0 && strcmp(hostnames[p], hostnames[b]) == 0) c = p;
    for (long i = 1; i <= 300; i++) {
        if (me == 0) {
            shmem_long_p(&seen_word, i, b);
            shmem_quiet();
            shmem_long_atomic_set(&seen_flag, i, c);
        }
        if (me == c) {
            shmem_long_wait_until(&seen_flag, SHMEM_CMP_GE, i);
            long f = shmem_long_atomic_fetch(&seen_flag, c), v = shmem_long_g(&seen_word, b);
            CHECK(v >= f, "PE %d read %ld from PE %d after PE 0's quiet and flag %ld", c, v, b, f);
        }
    }
    amo_barrier();

    /* The lock, from PEs on both hosts: a read-modify-write of PE 0's word under it. */
    for (int i = 0; i < 50; i++) {
        shmem_set_lock(&lock_word);
        long v = shmem_long_g(&lock_guarded, 0);
        shmem_long_p(&lock_guarded, v + 1, 0);
        shmem_clear_lock(&lock_word);
    }
    amo_barrier();
    if (me == 0) CHECK(lock_guarded == 50L * n, "lock: %ld increments, want %ld (not exclusive)", lock_guarded, 50L * n);
    if (me == 0) CHECK(shmem_test_lock(&lock_word) == 0, "test_lock did not take the free lock");
    amo_barrier();
    if (me == last) CHECK(shmem_test_lock(&lock_word) != 0, "test_lock took a held lock");
    amo_barrier();
    if (me == 0) shmem_clear_lock(&lock_word);
    amo_barrier();

    if (me == 0) printf("fabric_p2p: %d PEs ok\n", n);
    shmem_finalize();
    return 0;
}
