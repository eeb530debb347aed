/* rshmem-test: pes=1,2,4
 * RMA where the target is the calling PE: put/get/p/g/iput to self, and overlapping source and
 * destination inside one symmetric buffer, which rshmem copies like memmove. */
#include <shmem.h>
#include <stdint.h>
#include <string.h>
#include "check.h"

#define N 100

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int *a = shmem_malloc(N * sizeof(int));
    int ref[N], tmp[N];
    shmem_ctx_t ctx;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &ctx) == 0, "shmem_team_create_ctx(WORLD) failed");

    for (int i = 0; i < N; i++) ref[i] = i * 3 + me;
    /* Plain put and get to self. */
    shmem_int_put(a, ref, N, me);
    CHECK(memcmp(a, ref, sizeof ref) == 0, "put to self");
    memset(tmp, 0, sizeof tmp);
    shmem_ctx_int_get(ctx, tmp, a, N, me);
    CHECK(memcmp(tmp, ref, sizeof ref) == 0, "get from self");

    /* Overlapping forward (dest after source) and backward moves within the same buffer. */
    memcpy(tmp, ref, sizeof ref);
    shmem_int_put(a + 10, a, 50, me);
    memmove(tmp + 10, tmp, 50 * sizeof(int));
    CHECK(memcmp(a, tmp, sizeof tmp) == 0, "overlapping put (forward) differs from memmove");
    shmem_putmem(a, a + 5, 60 * sizeof(int), me);
    memmove(tmp, tmp + 5, 60 * sizeof(int));
    CHECK(memcmp(a, tmp, sizeof tmp) == 0, "overlapping putmem (backward) differs from memmove");
    shmem_ctx_getmem(ctx, a + 1, a, 80 * sizeof(int), me);
    memmove(tmp + 1, tmp, 80 * sizeof(int));
    CHECK(memcmp(a, tmp, sizeof tmp) == 0, "overlapping getmem differs from memmove");
    /* Put of a buffer onto itself. */
    shmem_int_put_nbi(a, a, N, me);
    shmem_quiet();
    CHECK(memcmp(a, tmp, sizeof tmp) == 0, "put onto itself changed the data");

    /* p, g and iput to self. */
    shmem_int_p(&a[7], -77, me);
    CHECK(a[7] == -77, "p to self: %d", a[7]);
    CHECK(shmem_int_g(&a[7], me) == -77, "g from self");
    int src[4] = {1, 2, 3, 4};
    shmem_int_iput(a + 20, src, 5, 1, 4, me);
    for (int k = 0; k < 4; k++) CHECK(a[20 + 5 * k] == src[k], "iput to self element %d", k);
    shmem_ctx_int_p(ctx, &a[0], 123, me);
    CHECK(shmem_ctx_int_g(SHMEM_CTX_DEFAULT, &a[0], me) == 123, "ctx p/g to self");

    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_free(a);
    if (me == 0) printf("rma_self: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
