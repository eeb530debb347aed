/* rshmem-test: pes=1,2,4,7
 * Put-with-signal: every typed form (standard RMA types), sized and putmem forms, with their
 * _nbi and ctx variants; SHMEM_SIGNAL_SET around a ring with acknowledgements, SHMEM_SIGNAL_ADD
 * from every PE into one counter; shmem_signal_wait_until returns the value it saw, and the data
 * is checked only after the signal (it must already be complete). */
#include <stdint.h>
#include <string.h>
#include "check.h"

#define NELEM 5
#define SLOT 256
#define BIG (64 * 1024)

static int me, npes, next, prev;

/* Ring: round r (1..4) uses form r, SET to r; the receiver acks by setting our sig[1] to r. */
#define TYPED_TEST(T, N)                                                                               \
    static void typed_##N(void) {                                                                      \
        T *data = shmem_malloc(NELEM * sizeof(T));                                                     \
        uint64_t *sig = shmem_calloc(2, sizeof(uint64_t));                                             \
        T src[NELEM];                                                                                  \
        for (int r = 1; r <= 4; r++) {                                                                 \
            if (r > 1) shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, (uint64_t)(r - 1));              \
            for (int i = 0; i < NELEM; i++) src[i] = (T)(me * 10 + r + i);                             \
            switch (r) {                                                                               \
            case 1: shmem_##N##_put_signal(data, src, NELEM, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, next); break; \
            case 2: shmem_##N##_put_signal_nbi(data, src, NELEM, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, next); break; \
            case 3: shmem_ctx_##N##_put_signal(SHMEM_CTX_DEFAULT, data, src, NELEM, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, next); break; \
            default: shmem_ctx_##N##_put_signal_nbi(SHMEM_CTX_DEFAULT, data, src, NELEM, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, next); break; \
            }                                                                                          \
            uint64_t got = shmem_signal_wait_until(&sig[0], SHMEM_CMP_GE, (uint64_t)r);                \
            CHECK(got == (uint64_t)r, #N " round %d: signal_wait_until returned %llu", r, (unsigned long long)got); \
            CHECK(shmem_signal_fetch(&sig[0]) == (uint64_t)r, #N " signal_fetch");                    \
            for (int i = 0; i < NELEM; i++)                                                            \
                CHECK(data[i] == (T)(prev * 10 + r + i), #N " round %d: element %d wrong after the signal", r, i); \
            shmem_uint64_atomic_set(&sig[1], (uint64_t)r, prev);                                       \
        }                                                                                              \
        shmem_barrier_all();                                                                           \
        shmem_free(sig);                                                                               \
        shmem_free(data);                                                                              \
    }

#define RMA_TYPES(X)                                                                                   \
    X(float, float) X(double, double) X(long double, longdouble) X(char, char) X(signed char, schar)  \
    X(short, short) X(int, int) X(long, long) X(long long, longlong) X(unsigned char, uchar)           \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)                            \
    X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) X(int32_t, int32)               \
    X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)    \
    X(size_t, size) X(ptrdiff_t, ptrdiff)

RMA_TYPES(TYPED_TEST)

/* Every PE adds 1 to PE 0's counter with its slot; round k uses sized form k. */
static void sized_add(void) {
    unsigned char *slots = shmem_malloc((size_t)npes * SLOT);
    uint64_t *count = shmem_calloc(1, sizeof(uint64_t));
    unsigned char src[SLOT];
    for (int k = 0; k < 6; k++) {
        memset(src, me + 16 * k + 1, SLOT);
        void *dst = slots + (size_t)me * SLOT;
        int form = (me + k) % 4; /* plain, nbi, ctx, ctx nbi */
#define SEND(NAME, ESZ)                                                                                \
    switch (form) {                                                                                    \
    case 0: shmem_##NAME##_signal(dst, src, SLOT / ESZ, count, 1, SHMEM_SIGNAL_ADD, 0); break;         \
    case 1: shmem_##NAME##_signal_nbi(dst, src, SLOT / ESZ, count, 1, SHMEM_SIGNAL_ADD, 0); break;     \
    case 2: shmem_ctx_##NAME##_signal(SHMEM_CTX_DEFAULT, dst, src, SLOT / ESZ, count, 1, SHMEM_SIGNAL_ADD, 0); break; \
    default: shmem_ctx_##NAME##_signal_nbi(SHMEM_CTX_DEFAULT, dst, src, SLOT / ESZ, count, 1, SHMEM_SIGNAL_ADD, 0); break; \
    }
        switch (k) {
        case 0: SEND(put8, 1) break;
        case 1: SEND(put16, 2) break;
        case 2: SEND(put32, 4) break;
        case 3: SEND(put64, 8) break;
        case 4: SEND(put128, 16) break;
        default: SEND(putmem, 1) break;
        }
#undef SEND
        if (me == 0) {
            uint64_t want = (uint64_t)npes * (k + 1);
            uint64_t got = shmem_signal_wait_until(count, SHMEM_CMP_EQ, want);
            CHECK(got == want, "sized round %d: signal %llu", k, (unsigned long long)got);
            for (int p = 0; p < npes; p++)
                for (int i = 0; i < SLOT; i++)
                    CHECK(slots[p * SLOT + i] == (unsigned char)(p + 16 * k + 1), "sized round %d: PE %d byte %d", k, p, i);
        }
        shmem_barrier_all(); /* PE 0 has read the slots before anyone rewrites them */
    }
    /* Large increments: ADD keeps all 64 bits. */
    if (me == 0) *count = 0;
    shmem_barrier_all();
    shmem_putmem_signal(slots + (size_t)me * SLOT, src, 0, count, (uint64_t)1 << 40, SHMEM_SIGNAL_ADD, 0);
    if (me == 0) {
        uint64_t got = shmem_signal_wait_until(count, SHMEM_CMP_GE, ((uint64_t)npes) << 40);
        CHECK(got == ((uint64_t)npes) << 40, "ADD of 2^40: %llx", (unsigned long long)got);
    }
    shmem_barrier_all();
    shmem_free(count);
    shmem_free(slots);
}

/* A large payload around the ring, many rounds: all of it is there when the signal is. */
static void big_ring(void) {
    unsigned *data = shmem_malloc(BIG);
    uint64_t *sig = shmem_calloc(2, sizeof(uint64_t));
    unsigned *src = malloc(BIG);
    size_t n = BIG / sizeof(unsigned);
    for (unsigned r = 1; r <= 20; r++) {
        if (r > 1) shmem_signal_wait_until(&sig[1], SHMEM_CMP_GT, r - 2);
        for (size_t i = 0; i < n; i++) src[i] = r * 1000003u + (unsigned)me * 7919u + (unsigned)i;
        if (r % 2) shmem_putmem_signal_nbi(data, src, BIG, &sig[0], r, SHMEM_SIGNAL_SET, next);
        else shmem_uint32_put_signal(data, src, n, &sig[0], r, SHMEM_SIGNAL_SET, next);
        uint64_t got = shmem_signal_wait_until(&sig[0], SHMEM_CMP_NE, r - 1);
        CHECK(got == r, "big ring round %u: signal %llu", r, (unsigned long long)got);
        for (size_t i = 0; i < n; i++)
            CHECK(data[i] == r * 1000003u + (unsigned)prev * 7919u + (unsigned)i, "big ring round %u: word %zu", r, i);
        shmem_uint64_atomic_set(&sig[1], r, prev);
    }
    shmem_barrier_all();
    free(src);
    shmem_free(sig);
    shmem_free(data);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
#define RUN(T, N) typed_##N();
    RMA_TYPES(RUN)
#undef RUN
    sized_add();
    big_ring();
    if (me == 0) printf("signal_all: %d PEs ok\n", npes);
    shmem_finalize();
    return 0;
}
