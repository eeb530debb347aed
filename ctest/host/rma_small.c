/* rshmem-test: pes=1,2,4
 * Small puts and gets (0..40 bytes), which rshmem copies inline rather than through memmove:
 * every size at every alignment lands exactly, the bytes around it stay untouched, overlapping
 * moves within one buffer behave like memmove, and static (global) targets work the same. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define MAXN 40
#define PAD 16
#define BUF (PAD + 8 + MAXN + PAD)

static unsigned char global_buf[BUF];

static unsigned char pattern(int pe, int i, int salt) {
    return (unsigned char)(pe * 37 + i * 11 + salt * 101 + 1);
}

/* Puts n bytes at offset PAD+off of `dst` on `peer`, reads them back with a get, and checks
 * the peer's buffer byte by byte (including the padding) with a second get of the whole buffer. */
static void round_trip(unsigned char *dst, int peer, int me, int n, int off, int salt) {
    unsigned char src[MAXN + 8], back[BUF], want[BUF];
    for (int i = 0; i < BUF; i++) want[i] = 0xA5;
    shmem_putmem(dst, want, BUF, peer); /* known background */
    for (int i = 0; i < n; i++) src[off + i] = pattern(me, i, salt);
    shmem_putmem(dst + PAD + off, src + off, (size_t)n, peer);
    memcpy(want + PAD + off, src + off, (size_t)n);
    memset(back, 0, sizeof back);
    shmem_getmem(back + PAD + off, dst + PAD + off, (size_t)n, peer);
    CHECK(memcmp(back + PAD + off, src + off, (size_t)n) == 0, "get of %d bytes at offset %d from PE %d", n, off, peer);
    shmem_getmem(back, dst, BUF, peer);
    for (int i = 0; i < BUF; i++)
        CHECK(back[i] == want[i], "byte %d after a %d-byte put at offset %d to PE %d: got %d, want %d", i, n, off, peer,
              back[i], want[i]);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    /* Each PE writes only into its own slice of the target's buffers: slice me of npes. */
    unsigned char *heap = shmem_malloc((size_t)npes * BUF);
    static unsigned char statics[8][BUF];
    CHECK(npes <= 8, "test assumes at most 8 PEs");
    int peer = (me + 1) % npes;

    for (int n = 0; n <= MAXN; n++)
        for (int off = 0; off < 8; off++) {
            round_trip(heap + (size_t)me * BUF, peer, me, n, off, n + off);
            round_trip(statics[me], peer, me, n, off, n * 3 + off);
        }

    /* Overlapping moves within this PE's own buffer, forward and backward, every small size. */
    for (int n = 1; n <= 17; n++)
        for (int shift = -9; shift <= 9; shift++) {
            unsigned char ref[BUF];
            for (int i = 0; i < BUF; i++) ref[i] = pattern(me, i, n + shift);
            memcpy(global_buf, ref, BUF);
            shmem_putmem(global_buf + PAD + shift, global_buf + PAD, (size_t)n, me);
            memmove(ref + PAD + shift, ref + PAD, (size_t)n);
            CHECK(memcmp(global_buf, ref, BUF) == 0, "overlapping put of %d bytes shifted by %d", n, shift);
            for (int i = 0; i < BUF; i++) ref[i] = pattern(me, i, n - shift);
            memcpy(global_buf, ref, BUF);
            shmem_getmem(global_buf + PAD + shift, global_buf + PAD, (size_t)n, me);
            memmove(ref + PAD + shift, ref + PAD, (size_t)n);
            CHECK(memcmp(global_buf, ref, BUF) == 0, "overlapping get of %d bytes shifted by %d", n, shift);
        }

    /* The sized and typed forms of one element take the same path. */
    long *w = shmem_malloc(4 * sizeof(long));
    long v = 0x1122334455667788L + me;
    shmem_put64(w + 1, &v, 1, peer);
    short s = (short)(0x7a00 + me);
    shmem_put16((char *)w + 1, &s, 1, peer); /* deliberately unaligned 2-byte put */
    shmem_barrier_all();
    int from = (me + npes - 1) % npes;
    CHECK_EQ_LONG(w[1], 0x1122334455667788L + from);
    short got;
    memcpy(&got, (char *)w + 1, 2);
    CHECK_EQ_LONG(got, 0x7a00 + from);
    shmem_barrier_all();
    shmem_free(w);
    shmem_free(heap);
    shmem_finalize();
    return 0;
}
