/* rshmem-test: pes=4,7 */
/* Crossfire: every PE floods every other PE with small puts (injected, packed, staged, and a
 * put_nbi written from the caller's buffer) and blocking gets, both ways at once, with
 * barriers in between, then checks every value. Registered only in the multihost suite, with
 * a provider send window of 4 operations (FI_OFI_RXM_TX_SIZE): PEs keep finding their send
 * queue full toward peers that are themselves blocked on a full queue toward them, which
 * clears only if every PE drives its provider's receive side while it waits (issue 18). */
#include <shmem.h>
#include <string.h>
#include "check.h"

#define MAXPE 16
#define ROUNDS 30
#define SMALL 128          /* 8-byte puts (injected) per peer per round */
#define MID 2048           /* a packed put */
#define STAGED (100 << 10) /* a staged put */
#define BIG (300 << 10)    /* a put_nbi written from the caller's buffer */

static long small[MAXPE][SMALL];
static char mid[MAXPE][MID];
static char staged[MAXPE][STAGED];
static char big[MAXPE][BIG];
static char src[BIG];
static long probe;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes <= MAXPE, "too many PEs for the test");
    probe = 1000 + me;
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        memset(src, (me * 31 + r) & 0x7f, sizeof src);
        /* Everyone starts on a different peer, so every pair fires both ways at once. */
        for (int k = 1; k < npes; k++) {
            int pe = (me + k) % npes;
            for (int i = 0; i < SMALL; i++) shmem_long_p(&small[me][i], (long)r * 100000 + me * 1000 + i, pe);
            shmem_putmem(mid[me], src, MID, pe);
            shmem_putmem(staged[me], src, STAGED, pe);
            shmem_putmem_nbi(big[me], src, BIG, pe);
            CHECK_EQ_LONG(shmem_long_g(&probe, pe), 1000 + pe);
        }
        shmem_barrier_all(); /* (completes the put_nbi before src changes) */
        for (int pe = 0; pe < npes; pe++) {
            if (pe == me) continue;
            for (int i = 0; i < SMALL; i++) CHECK_EQ_LONG(small[pe][i], (long)r * 100000 + pe * 1000 + i);
            long want = (pe * 31 + r) & 0x7f;
            for (int i = 0; i < MID; i++) CHECK_EQ_LONG(mid[pe][i], want);
            for (int i = 0; i < STAGED; i += 997) CHECK_EQ_LONG(staged[pe][i], want);
            CHECK_EQ_LONG(staged[pe][STAGED - 1], want);
            for (int i = 0; i < BIG; i += 997) CHECK_EQ_LONG(big[pe][i], want);
            CHECK_EQ_LONG(big[pe][BIG - 1], want);
        }
        shmem_barrier_all();
    }
    if (me == 0) printf("crossfire: OK on %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
