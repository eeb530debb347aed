/* rshmem-test: pes=1,2,4,7
 * Sized RMA (put8..put128, get8..get128, their nbi and ctx forms) and the byte-wise mem forms
 * (putmem, getmem, _nbi, ctx). Element counts are in elements of the size, so a 128-bit put of
 * n elements moves 16n bytes. nbi operations are checked after shmem_quiet. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define NE 37 /* odd on purpose */
#define SLOTS 12 /* separate areas: 5 sizes x (put, nbi) + mem + mem_nbi */

static int me, npes, right, left;
static shmem_ctx_t ctx;

/* Byte j of transfer `slot` made by PE pe. */
static unsigned char pattern(int pe, int slot, size_t j) {
    return (unsigned char)(pe * 131 + slot * 17 + j * 7 + 1);
}

static void put_sized(int bits, int nbi, int use_ctx, void *dst, const void *src, size_t n, int pe) {
#define PUT_CASE(B)                                                                    \
    case B:                                                                            \
        if (use_ctx) { if (nbi) shmem_ctx_put##B##_nbi(ctx, dst, src, n, pe); else shmem_ctx_put##B(ctx, dst, src, n, pe); } \
        else { if (nbi) shmem_put##B##_nbi(dst, src, n, pe); else shmem_put##B(dst, src, n, pe); } \
        break;
    switch (bits) { PUT_CASE(8) PUT_CASE(16) PUT_CASE(32) PUT_CASE(64) PUT_CASE(128) }
}

static void get_sized(int bits, int nbi, int use_ctx, void *dst, const void *src, size_t n, int pe) {
#define GET_CASE(B)                                                                    \
    case B:                                                                            \
        if (use_ctx) { if (nbi) shmem_ctx_get##B##_nbi(ctx, dst, src, n, pe); else shmem_ctx_get##B(ctx, dst, src, n, pe); } \
        else { if (nbi) shmem_get##B##_nbi(dst, src, n, pe); else shmem_get##B(dst, src, n, pe); } \
        break;
    switch (bits) { GET_CASE(8) GET_CASE(16) GET_CASE(32) GET_CASE(64) GET_CASE(128) }
}

static void round_trip(int use_ctx) {
    const size_t area = NE * 16 + 16; /* room for the largest size, plus a guard */
    unsigned char *sym = shmem_malloc(SLOTS * area);
    unsigned char src[NE * 16 + 16], got[NE * 16 + 16];
    memset(sym, 0xA5, SLOTS * area);
    shmem_barrier_all();

    int slot = 0;
    for (int bits = 8; bits <= 128; bits *= 2)
        for (int nbi = 0; nbi < 2; nbi++, slot++) {
            size_t bytes = NE * (size_t)bits / 8;
            for (size_t j = 0; j < bytes; j++) src[j] = pattern(me, slot, j);
            put_sized(bits, nbi, use_ctx, sym + slot * area, src, NE, right);
        }
    size_t membytes = NE * 3; /* mem counts bytes */
    for (size_t j = 0; j < membytes; j++) src[j] = pattern(me, slot, j);
    if (use_ctx) shmem_ctx_putmem(ctx, sym + slot * area, src, membytes, right);
    else shmem_putmem(sym + slot * area, src, membytes, right);
    slot++;
    for (size_t j = 0; j < membytes; j++) src[j] = pattern(me, slot, j);
    if (use_ctx) shmem_ctx_putmem_nbi(ctx, sym + slot * area, src, membytes, right);
    else shmem_putmem_nbi(sym + slot * area, src, membytes, right);
    if (use_ctx) shmem_ctx_quiet(ctx);
    else shmem_quiet();
    shmem_barrier_all();

    /* What the left neighbour wrote here, exactly that many bytes, guard bytes intact. */
    slot = 0;
    for (int bits = 8; bits <= 128; bits *= 2)
        for (int nbi = 0; nbi < 2; nbi++, slot++) {
            size_t bytes = NE * (size_t)bits / 8;
            for (size_t j = 0; j < area; j++) {
                unsigned char want = j < bytes ? pattern(left, slot, j) : 0xA5;
                CHECK(sym[slot * area + j] == want, "put%d%s ctx=%d: byte %zu is %#x, want %#x", bits, nbi ? "_nbi" : "", use_ctx, j,
                      sym[slot * area + j], want);
            }
        }
    for (int m = 0; m < 2; m++, slot++)
        for (size_t j = 0; j < area; j++) {
            unsigned char want = j < membytes ? pattern(left, slot, j) : 0xA5;
            CHECK(sym[slot * area + j] == want, "putmem%s ctx=%d: byte %zu is %#x, want %#x", m ? "_nbi" : "", use_ctx, j,
                  sym[slot * area + j], want);
        }

    /* Gets: read back from the right neighbour what this PE put there. */
    slot = 0;
    for (int bits = 8; bits <= 128; bits *= 2)
        for (int nbi = 0; nbi < 2; nbi++, slot++) {
            size_t bytes = NE * (size_t)bits / 8;
            memset(got, 0, sizeof got);
            get_sized(bits, nbi, use_ctx, got, sym + slot * area, NE, right);
            if (nbi) shmem_quiet();
            for (size_t j = 0; j < sizeof got; j++) {
                unsigned char want = j < bytes ? pattern(me, slot, j) : 0;
                CHECK(got[j] == want, "get%d%s ctx=%d: byte %zu is %#x, want %#x", bits, nbi ? "_nbi" : "", use_ctx, j, got[j], want);
            }
        }
    for (int m = 0; m < 2; m++, slot++) {
        memset(got, 0, sizeof got);
        if (m == 0) { if (use_ctx) shmem_ctx_getmem(ctx, got, sym + slot * area, membytes, right); else shmem_getmem(got, sym + slot * area, membytes, right); }
        else { if (use_ctx) shmem_ctx_getmem_nbi(ctx, got, sym + slot * area, membytes, right); else shmem_getmem_nbi(got, sym + slot * area, membytes, right); shmem_quiet(); }
        for (size_t j = 0; j < sizeof got; j++) {
            unsigned char want = j < membytes ? pattern(me, slot, j) : 0;
            CHECK(got[j] == want, "getmem%s ctx=%d: byte %zu is %#x, want %#x", m ? "_nbi" : "", use_ctx, j, got[j], want);
        }
    }
    shmem_barrier_all();
    shmem_free(sym);
}

/* A large putmem (several MiB) into the neighbour, nbi, completed by quiet. */
static void large(void) {
    const size_t n = 6u << 20;
    unsigned char *sym = shmem_malloc(n);
    unsigned char *src = malloc(n);
    CHECK(sym && src, "allocation failed");
    for (size_t j = 0; j < n; j++) src[j] = (unsigned char)(j * 13 + me);
    shmem_putmem_nbi(sym, src, n, right);
    shmem_quiet();
    shmem_barrier_all();
    for (size_t j = 0; j < n; j++)
        if (sym[j] != (unsigned char)(j * 13 + left)) CHECK(0, "large putmem: byte %zu wrong", j);
    shmem_barrier_all();
    free(src);
    shmem_free(sym);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    CHECK(shmem_ctx_create(SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE, &ctx) == 0, "shmem_ctx_create failed");
    round_trip(0);
    round_trip(1);
    large();
    shmem_ctx_destroy(ctx);
    if (me == 0) printf("rma_sized: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
