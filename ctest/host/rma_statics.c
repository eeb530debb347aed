/* rshmem-test: pes=1,2,4,7
 * RMA on symmetric data outside the heap: initialised and zero globals, file-scope statics and
 * a function-local static, through put/get/p/g/iput and a context. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define N 16

long global_data[N] = {1, 2, 3};          /* .data */
double global_bss[N];                      /* .bss */
static int static_array[N];                /* file-scope static */
static long double static_ld = 2.0L;       /* .data, long double */
static volatile int flag;                  /* set remotely with p */

static short *local_static(void) {
    static short counter[4] = {7, 7, 7, 7}; /* function-local static */
    return counter;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create failed");
    CHECK(global_data[1] == 2 && static_ld == 2.0L, "initialised data must survive shmem_init");

    long lsrc[N];
    double dsrc[N];
    int isrc[N];
    for (int i = 0; i < N; i++) {
        lsrc[i] = 1000L * me + i;
        dsrc[i] = me + i / 8.0;
        isrc[i] = -(me * 100 + i);
    }
    shmem_barrier_all();
    shmem_long_put(global_data, lsrc, N, right);
    shmem_ctx_double_put(ctx, global_bss, dsrc, N, right);
    shmem_int_iput(static_array, isrc, 2, 1, N / 2, right);   /* even slots */
    shmem_int_p(&static_array[1], 4242 + me, right);           /* one odd slot */
    shmem_longdouble_p(&static_ld, 1.0L / (me + 3), right);
    shmem_short_p(&local_static()[2], (short)(me + 50), right);
    shmem_fence();
    shmem_int_p((int *)&flag, me + 1, right);
    shmem_barrier_all();

    CHECK(flag == left + 1, "flag: got %d", flag);
    for (int i = 0; i < N; i++) {
        CHECK_EQ_LONG(global_data[i], 1000L * left + i);
        CHECK(global_bss[i] == left + i / 8.0, "global_bss[%d] = %g", i, global_bss[i]);
    }
    for (int i = 0; i < N; i += 2) CHECK_EQ_LONG(static_array[i], -(left * 100 + i / 2));
    CHECK_EQ_LONG(static_array[1], 4242 + left);
    CHECK_EQ_LONG(static_array[3], 0);
    CHECK(static_ld == 1.0L / (left + 3), "static long double: got %La", static_ld);
    short *c = local_static();
    CHECK(c[0] == 7 && c[1] == 7 && c[2] == left + 50 && c[3] == 7, "local static: %d %d %d %d", c[0], c[1], c[2], c[3]);

    /* Reads of the neighbour's statics. */
    long lgot[N];
    shmem_long_get(lgot, global_data, N, right);
    for (int i = 0; i < N; i++) CHECK_EQ_LONG(lgot[i], 1000L * me + i);
    double dgot[N];
    shmem_ctx_double_get(ctx, dgot, global_bss, N, right);
    CHECK(memcmp(dgot, dsrc, sizeof dsrc) == 0, "double get of a global");
    CHECK_EQ_LONG(shmem_int_g(&static_array[1], right), 4242 + me);
    CHECK(shmem_longdouble_g(&static_ld, right) == 1.0L / (me + 3), "long double g of a static");
    CHECK_EQ_LONG(shmem_ctx_short_g(ctx, &local_static()[2], right), me + 50);
    int igot[N / 2];
    shmem_int_iget(igot, static_array, 1, 2, N / 2, right);
    for (int i = 0; i < N / 2; i++) CHECK_EQ_LONG(igot[i], -(me * 100 + i));

    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    if (me == 0) printf("rma_statics: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
