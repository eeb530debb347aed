/* PEs on different "hosts" (RSHMEM_HOSTNAME differs, see ctest/scripts/fabric_routes.sh) reach
 * each other through the fabric transport: small and large puts and gets of static data, checked
 * on every PE (fabric_p2p.c checks the other point-to-point routines). The symmetric heap is not
 * used: shmem_malloc's barrier does not cross hosts yet. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_sync.h"

#define BIG 65536

static long slots[64];
static unsigned char big[8][BIG]; /* 7 PEs at most in fabric_routes.sh */

static void check(int ok, const char *what, int pe, long got, long want) {
    if (!ok) {
        fprintf(stderr, "PE %d: %s from/to PE %d: got %ld, want %ld\n", shmem_my_pe(), what, pe, got, want);
        exit(1);
    }
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n > 8) return 2;
    unsigned char *heap = &big[0][0];
    unsigned char *mine = malloc(BIG);
    for (int i = 0; i < BIG; i++) mine[i] = (unsigned char)(me * 31 + i * 7);
    for (int p = 0; p < n; p++) {
        long v = 1000L * me + p;
        shmem_putmem(&slots[me], &v, sizeof v, p);         /* small: static data, injected */
        shmem_putmem(heap + (size_t)me * BIG, mine, BIG, p); /* large */
    }
    shmem_quiet();
    amo_barrier();
    for (int q = 0; q < n; q++) {
        check(slots[q] == 1000L * q + me, "small put", q, slots[q], 1000L * q + me);
        for (int i = 0; i < BIG; i++) {
            unsigned char want = (unsigned char)(q * 31 + i * 7);
            check(heap[(size_t)q * BIG + i] == want, "large put", q, heap[(size_t)q * BIG + i], want);
        }
    }
    for (int p = 0; p < n; p++) {
        long got = -1;
        shmem_getmem(&got, &slots[(me + 1) % n], sizeof got, p);
        check(got == 1000L * ((me + 1) % n) + p, "small get", p, got, 1000L * ((me + 1) % n) + p);
        memset(mine, 0, BIG);
        shmem_getmem(mine, heap + (size_t)p * BIG, BIG, p);
        for (int i = 0; i < BIG; i++) check(mine[i] == (unsigned char)(p * 31 + i * 7), "large get", p, mine[i], (unsigned char)(p * 31 + i * 7));
    }
    amo_barrier();
    if (me == 0) printf("fabric_routes: %d PEs ok\n", n);
    free(mine);
    shmem_finalize();
    return 0;
}
