/* rshmem-test: pes=1,2,4,7
 * Strided RMA (iput/iget) with positive strides for typed and sized (8..128-bit) elements,
 * default and created contexts: the selected elements arrive, the ones between stay untouched. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define NE 5      /* elements moved */
#define LEN 64    /* elements in each symmetric array (>= (NE-1)*max stride + 1) */

static int me, npes, right, left;
static shmem_ctx_t ctx;

/* The value element k of PE pe's transfer carries, and the filler of untouched slots. */
#define VAL_INT(T, pe, k) ((T)(((pe) + 1) * 16 + (k) + 1))
#define VAL_FLT(T, pe, k) ((T)(((pe) + 1) * 16 + (k) + 1) / (T)7)
#define FILL(T) ((T)-3)

/* One case: iput with strides (dst, sst) into the right neighbour, check what the left one
 * put here, then iget from the right neighbour with the strides swapped. USE_CTX picks the
 * shmem_ctx_ form. */
#define DEF_CASE(NAME, T, VAL)                                                              \
    static void case_##NAME(ptrdiff_t dst, ptrdiff_t sst, int use_ctx) {                    \
        T *sym = shmem_malloc(LEN * sizeof(T));                                            \
        T src[LEN], got[LEN];                                                               \
        for (int i = 0; i < LEN; i++) { sym[i] = FILL(T); src[i] = FILL(T); got[i] = FILL(T); } \
        for (int k = 0; k < NE; k++) src[k * sst] = VAL(T, me, k);                          \
        shmem_barrier_all();                                                                \
        if (use_ctx) shmem_ctx_##NAME##_iput(ctx, sym, src, dst, sst, NE, right);           \
        else shmem_##NAME##_iput(sym, src, dst, sst, NE, right);                            \
        shmem_##NAME##_iput(sym, src, dst, sst, 0, right); /* nothing */                    \
        shmem_barrier_all();                                                                \
        for (int i = 0; i < LEN; i++) {                                                     \
            int k = (i % dst == 0 && i / dst < NE) ? (int)(i / dst) : -1;                   \
            T want = k >= 0 ? VAL(T, left, k) : FILL(T);                                    \
            CHECK(sym[i] == want, #NAME "_iput dst=%td sst=%td ctx=%d: slot %d wrong", dst, sst, use_ctx, i); \
        }                                                                                   \
        /* iget: gather the right neighbour's strided elements (which are mine). */         \
        if (use_ctx) shmem_ctx_##NAME##_iget(ctx, got, sym, sst, dst, NE, right);           \
        else shmem_##NAME##_iget(got, sym, sst, dst, NE, right);                            \
        for (int i = 0; i < LEN; i++) {                                                     \
            int k = (i % sst == 0 && i / sst < NE) ? (int)(i / sst) : -1;                   \
            T want = k >= 0 ? VAL(T, me, k) : FILL(T);                                      \
            CHECK(got[i] == want, #NAME "_iget dst=%td sst=%td ctx=%d: slot %d wrong", sst, dst, use_ctx, i); \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        shmem_free(sym);                                                                    \
    }

DEF_CASE(char, char, VAL_INT)
DEF_CASE(short, short, VAL_INT)
DEF_CASE(int, int, VAL_INT)
DEF_CASE(long, long, VAL_INT)
DEF_CASE(uint64, uint64_t, VAL_INT)
DEF_CASE(float, float, VAL_FLT)
DEF_CASE(double, double, VAL_FLT)
DEF_CASE(longdouble, long double, VAL_FLT)

/* Sized forms: element k of PE pe is filled with bytes ((pe+1)*16 + k + 1), the filler with 0xEE. */
static void sized_case(int bits, ptrdiff_t dst, ptrdiff_t sst, int use_ctx) {
    size_t es = (size_t)bits / 8;
    unsigned char *sym = shmem_malloc(LEN * es);
    unsigned char src[LEN * 16], got[LEN * 16];
    memset(sym, 0xEE, LEN * es);
    memset(src, 0xEE, sizeof src);
    memset(got, 0xEE, sizeof got);
    for (int k = 0; k < NE; k++) memset(src + k * sst * es, (me + 1) * 16 + k + 1, es);
    shmem_barrier_all();
    switch (bits) {
    case 8: use_ctx ? shmem_ctx_iput8(ctx, sym, src, dst, sst, NE, right) : shmem_iput8(sym, src, dst, sst, NE, right); break;
    case 16: use_ctx ? shmem_ctx_iput16(ctx, sym, src, dst, sst, NE, right) : shmem_iput16(sym, src, dst, sst, NE, right); break;
    case 32: use_ctx ? shmem_ctx_iput32(ctx, sym, src, dst, sst, NE, right) : shmem_iput32(sym, src, dst, sst, NE, right); break;
    case 64: use_ctx ? shmem_ctx_iput64(ctx, sym, src, dst, sst, NE, right) : shmem_iput64(sym, src, dst, sst, NE, right); break;
    case 128: use_ctx ? shmem_ctx_iput128(ctx, sym, src, dst, sst, NE, right) : shmem_iput128(sym, src, dst, sst, NE, right); break;
    }
    shmem_barrier_all();
    for (int i = 0; i < LEN; i++) {
        int k = (i % dst == 0 && i / dst < NE) ? (int)(i / dst) : -1;
        unsigned char want = k >= 0 ? (unsigned char)((left + 1) * 16 + k + 1) : 0xEE;
        for (size_t b = 0; b < es; b++)
            CHECK(sym[i * es + b] == want, "iput%d dst=%td sst=%td: element %d byte %zu is %#x, want %#x", bits, dst, sst, i, b,
                  sym[i * es + b], want);
    }
    switch (bits) {
    case 8: use_ctx ? shmem_ctx_iget8(ctx, got, sym, sst, dst, NE, right) : shmem_iget8(got, sym, sst, dst, NE, right); break;
    case 16: use_ctx ? shmem_ctx_iget16(ctx, got, sym, sst, dst, NE, right) : shmem_iget16(got, sym, sst, dst, NE, right); break;
    case 32: use_ctx ? shmem_ctx_iget32(ctx, got, sym, sst, dst, NE, right) : shmem_iget32(got, sym, sst, dst, NE, right); break;
    case 64: use_ctx ? shmem_ctx_iget64(ctx, got, sym, sst, dst, NE, right) : shmem_iget64(got, sym, sst, dst, NE, right); break;
    case 128: use_ctx ? shmem_ctx_iget128(ctx, got, sym, sst, dst, NE, right) : shmem_iget128(got, sym, sst, dst, NE, right); break;
    }
    for (int i = 0; i < LEN; i++) {
        int k = (i % sst == 0 && i / sst < NE) ? (int)(i / sst) : -1;
        unsigned char want = k >= 0 ? (unsigned char)((me + 1) * 16 + k + 1) : 0xEE;
        for (size_t b = 0; b < es; b++)
            CHECK(got[i * es + b] == want, "iget%d: element %d byte %zu is %#x, want %#x", bits, i, b, got[i * es + b], want);
    }
    shmem_barrier_all();
    shmem_free(sym);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create failed");
    static const ptrdiff_t strides[][2] = {{1, 1}, {2, 1}, {1, 3}, {3, 2}, {7, 5}};
    for (int s = 0; s < 5; s++) {
        ptrdiff_t d = strides[s][0], t = strides[s][1];
        for (int c = 0; c < 2; c++) {
            case_char(d, t, c); case_short(d, t, c); case_int(d, t, c); case_long(d, t, c);
            case_uint64(d, t, c); case_float(d, t, c); case_double(d, t, c); case_longdouble(d, t, c);
            for (int bits = 8; bits <= 128; bits *= 2) sized_case(bits, d, t, c);
        }
    }
    shmem_ctx_destroy(ctx);
    if (me == 0) printf("rma_strided: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
