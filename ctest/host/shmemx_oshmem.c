/* rshmem-test: pes=1,2,4
 * Open MPI OSHMEM's shmemx_ routines (issue 21 item 5): the sized-integer names do what the
 * standard routines they stand for do, shmemx_malloc_with_hint allocates, and
 * shmemx_alltoall_global_nb delivers every block and counts each PE's arrival on its target. */
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

static int32_t i32[8];
static int64_t i64[8];
static uint64_t u64;
static int16_t s16;
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static int16_t wrk16[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static int32_t wrk32[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static int64_t wrk64[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 8];
static int16_t red16, sum16;
static int32_t red32, sum32;
static int64_t red64, sum64;
static long counter;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();

    /* p/g: each PE writes its number to the right */
    shmemx_int16_p(&s16, (int16_t)(me + 1000), right);
    shmemx_int32_p(&i32[0], me + 2000, right);
    shmemx_int64_p(&i64[0], (int64_t)me << 40, right);
    shmem_barrier_all();
    CHECK_EQ_LONG(shmemx_int16_g(&s16, right), me + 1000);
    CHECK_EQ_LONG(s16, left + 1000);
    CHECK_EQ_LONG(i32[0], left + 2000);
    CHECK_EQ_LONG(i64[0], (int64_t)left << 40);
    CHECK_EQ_LONG(shmemx_int32_g(&i32[0], right), me + 2000);
    CHECK_EQ_LONG(shmemx_int64_g(&i64[0], right), (int64_t)me << 40);
    shmem_barrier_all();

    /* AMOs on PE 0's words: each PE adds, increments, fetch-adds */
    if (me == 0) { i32[1] = 0; i64[1] = 0; }
    shmem_barrier_all();
    shmemx_int32_add(&i32[1], 10, 0);
    shmemx_int32_inc(&i32[1], 0);
    (void)shmemx_int64_fadd(&i64[1], 100, 0);
    (void)shmemx_int64_finc(&i64[1], 0);
    shmem_barrier_all();
    CHECK_EQ_LONG(shmemx_int32_fetch(&i32[1], 0), 11 * n);
    CHECK_EQ_LONG(shmemx_int64_fetch(&i64[1], 0), 101 * n);
    shmem_barrier_all();
    if (me == 0) {
        shmemx_int32_set(&i32[2], 5, 0);
        CHECK_EQ_LONG(shmemx_int32_swap(&i32[2], 6, 0), 5);
        CHECK_EQ_LONG(shmemx_int32_cswap(&i32[2], 6, 7, 0), 6);
        CHECK_EQ_LONG(shmemx_int32_cswap(&i32[2], 6, 8, 0), 7); /* no swap: 7 stays */
        shmemx_int64_set(&i64[2], -1, 0);
        CHECK_EQ_LONG(shmemx_int64_cswap(&i64[2], -1, 42, 0), -1);
        CHECK_EQ_LONG(shmemx_int64_swap(&i64[2], 43, 0), 42);
        u64 = 0xF0;
        CHECK_EQ_LONG(shmemx_uint64_atomic_fetch_or(&u64, 0x0F, 0), 0xF0);
        CHECK_EQ_LONG(shmemx_uint64_atomic_fetch_and(&u64, 0x3C, 0), 0xFF);
        CHECK_EQ_LONG(shmemx_uint64_atomic_fetch_xor(&u64, 0xFF, 0), 0x3C);
        shmemx_uint64_atomic_xor(&u64, 0x01, 0);
        CHECK_EQ_LONG(u64, 0xC2);
        i32[3] = 0x0F;
        shmemx_int32_atomic_and(&i32[3], 0x3C, 0);
        shmemx_int32_atomic_or(&i32[3], 0x40, 0);
        CHECK_EQ_LONG(i32[3], 0x4C);
    }
    shmem_barrier_all();

    /* wait: PE left sets my i32[4]/i64[4] after the barrier */
    i32[4] = 0;
    i64[4] = 0;
    shmem_barrier_all();
    shmemx_int32_p(&i32[4], 7, right);
    shmemx_int64_p(&i64[4], 9, right);
    shmemx_int32_wait(&i32[4], 0);
    shmemx_int64_wait_until(&i64[4], SHMEM_CMP_EQ, 9);
    CHECK_EQ_LONG(i32[4], 7);
    shmem_barrier_all();

    /* sized to_all reductions */
    red16 = (int16_t)(me + 1);
    red32 = me + 1;
    red64 = (int64_t)(me + 1) << 33;
    shmemx_int16_sum_to_all(&sum16, &red16, 1, 0, 0, n, wrk16, psync);
    shmem_barrier_all();
    shmemx_int32_max_to_all(&sum32, &red32, 1, 0, 0, n, wrk32, psync);
    shmem_barrier_all();
    shmemx_int64_sum_to_all(&sum64, &red64, 1, 0, 0, n, wrk64, psync);
    CHECK_EQ_LONG(sum16, n * (n + 1) / 2);
    CHECK_EQ_LONG(sum32, n);
    CHECK_EQ_LONG(sum64, ((int64_t)n * (n + 1) / 2) << 33);

    /* malloc_with_hint and alltoall_global_nb */
    const size_t block = 24;
    unsigned char *src = shmemx_malloc_with_hint(block * (size_t)n, 0);
    unsigned char *dst = shmemx_malloc_with_hint(block * (size_t)n, 1);
    CHECK(src != NULL && dst != NULL, "shmemx_malloc_with_hint returned NULL");
    for (int j = 0; j < n; j++) memset(src + block * (size_t)j, me * 16 + j, block);
    memset(dst, 0xEE, block * (size_t)n);
    counter = 0;
    shmem_barrier_all();
    shmemx_alltoall_global_nb(dst, src, block, &counter);
    shmem_long_wait_until(&counter, SHMEM_CMP_EQ, n);
    for (int j = 0; j < n; j++)
        for (size_t b = 0; b < block; b++)
            CHECK(dst[block * (size_t)j + b] == (unsigned char)(j * 16 + me), "alltoall_global_nb: byte %zu of block %d is %d",
                  b, j, dst[block * (size_t)j + b]);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
