/* Used by ctest/scripts/multihost_stranger.sh: a job across hosts that a stranger attacks.
 * usage: fabric_secret DIR SECONDS [LAG_MS]
 * Every PE keeps a secret and a canary in its symmetric heap and writes
 * DIR/target.<pe> = "<pid> <address of secret> <address of canary>" (what an attacker who
 * knows the program would know). Then the PEs put a round counter to their neighbour and
 * barrier, round after round, each checking its own secret and canary, until DIR/stop exists
 * (PE 0 looks) or SECONDS pass. PE 0 prints "fabric_secret: <n> PEs ok after <r> rounds"
 * when nothing changed; a PE that finds its canary or secret changed says so and exits 1.
 * With LAG_MS, the last PE sleeps that long after each barrier before it looks: a PE that
 * leaves barriers late must still stop in the same round as the others. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define SECRET 0x5ec2e7a11ce5ec2eLL
#define CANARY 0x0ca7a2e0ca7a2e01LL

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR SECONDS [LAG_MS]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    double limit = atof(argv[2]);
    int lag_ms = argc > 3 ? atoi(argv[3]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long long *secret = shmem_malloc(sizeof *secret);
    long long *canary = shmem_malloc(sizeof *canary);
    long long *mailbox = shmem_malloc(2 * sizeof *mailbox); /* a neighbour may be one round ahead */
    long long *stop = shmem_malloc(sizeof *stop); /* the last round + 1; 0: not decided yet */
    *secret = SECRET + me;
    *canary = CANARY;
    mailbox[0] = mailbox[1] = -1;
    *stop = 0;
    char path[4096], stop_path[4096];
    snprintf(path, sizeof path, "%s/target.%d", dir, me);
    snprintf(stop_path, sizeof stop_path, "%s/stop", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 2;
    }
    fprintf(f, "%d %p %p\n", (int)getpid(), (void *)secret, (void *)canary);
    fclose(f);
    shmem_barrier_all();
    double start = now();
    long long round;
    for (round = 0;; round++) {
        /* PE 0 names the last round before that round's barrier. A PE that leaves the previous
         * barrier late may see the value one round early: it stops after the round named, not
         * at the first sight of the value, so every PE does the same rounds. */
        if (me == 0 && *stop == 0 && (access(stop_path, F_OK) == 0 || now() - start > limit))
            for (int pe = 0; pe < n; pe++) shmem_longlong_p(stop, round + 1, pe);
        shmem_longlong_p(&mailbox[round & 1], round, (me + 1) % n);
        shmem_barrier_all();
        if (lag_ms > 0 && me == n - 1) usleep(1000 * lag_ms);
        if (mailbox[round & 1] != round || *canary != CANARY || *secret != SECRET + me) {
            long long seen = mailbox[round & 1];
            usleep(200000); /* a late put (still on its way) or a lost one? */
            printf("fabric_secret: PE %d round %lld: mailbox %lld (%lld 0.2 s later), canary %#llx, secret %#llx: CHANGED\n",
                   me, round, seen, mailbox[round & 1], *canary, *secret);
            return 1;
        }
        if (*stop != 0 && round + 1 >= *stop) break;
        usleep(2000);
    }
    shmem_barrier_all();
    if (me == 0) printf("fabric_secret: %d PEs ok after %lld rounds\n", n, round);
    shmem_finalize();
    return 0;
}
