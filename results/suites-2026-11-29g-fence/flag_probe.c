/* LD_PRELOAD probe for tests-mellanox data.tc26 (issue 18, session 31; README.md here).
 * Build: gcc -O2 -shared -fPIC -I<stage>/include flag_probe.c -o flag_probe.so -ldl
 * Run:   rshmemrun ... env LD_PRELOAD=$PWD/flag_probe.so oshmem_test exec --task=data:tc26
 * It: every shmem_int_p to another PE first
 * writes that PE's `seq` word (a symmetric long made at init) with how many such flags this
 * PE has sent it. At each shmem_barrier_all entry where the completion flag is already 1,
 * print the sender's count and how many flags this PE has waited for (= its own non-self
 * p calls): equal -> no new flag was sent (the old one came back); one more -> the left PE
 * sent this round's flag before this PE entered the barrier (barrier released it early). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <shmem.h>
static volatile int *flagp;
static volatile long *seqp;
static long sent_to[1024], mine;
static long nbar;
static void after_init(void) {
    seqp = shmem_malloc(sizeof(long));
    *seqp = 0;
    shmem_barrier_all();
}
void shmem_init(void) {
    void (*real)(void) = dlsym(RTLD_NEXT, "shmem_init");
    real();
    after_init();
}
void start_pes(int n) {
    void (*real)(int) = dlsym(RTLD_NEXT, "start_pes");
    real(n);
    after_init();
}
void shmem_int_p(int *dest, int v, int pe) {
    static void (*real)(int *, int, int);
    if (!real) real = dlsym(RTLD_NEXT, "shmem_int_p");
    flagp = dest;
    if (pe != shmem_my_pe() && seqp) {
        shmem_long_p((long *)seqp, ++sent_to[pe], pe);
        mine++;
    }
    real(dest, v, pe);
}
void shmem_barrier_all(void) {
    static void (*real)(void);
    if (!real) real = dlsym(RTLD_NEXT, "shmem_barrier_all");
    nbar++;
    int f = flagp ? *flagp : 0;
    long s = seqp ? *seqp : -1;
    real();
    if (f == 1)
        fprintf(stderr, "PROBE2 PE %d barrier %ld: flag=1 at entry; left sent %ld flags, this PE waited for %ld\n", shmem_my_pe(),
                nbar, s, mine);
}
