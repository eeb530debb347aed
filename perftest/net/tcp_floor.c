/* The floor of the multi-host path: plain TCP between two (namespaced) hosts, no library.
 *   tcp_floor server PORT                         serve one client, then exit
 *   tcp_floor client HOST PORT [ITERS [SECONDS]]  8-byte ping-pong, then streams per write size
 * Prints CSV lines as perftest/host/shmem_bench does (name,size,value,unit):
 *   tcp_rtt,8,<us>,us          an 8-byte message there and back (median of 5 runs of ITERS/5)
 *   tcp_stream,SIZE,<GB/s>,GB/s SIZE-byte writes, 1 KiB ... 4 MiB, until the server has read
 *                               it all (it answers one byte): per size an untimed stream of
 *                               WARM_BYTES, then RUNS streams of about SECONDS each (default
 *                               0.25; sized from the warm-up's rate), and the median of them.
 *                               As net_bench times each row (an untimed tenth, then the median
 *                               of 3 repetitions of --time seconds): one stream of 128 MiB
 *                               (~40 ms) per size read 0.9-4.6 GB/s at 256 KiB on a quiet
 *                               machine (results/net-2026-11-29d-putbw/).
 * TCP_NODELAY on both sides, as a latency-minded transport would set it. Blocking reads: each
 * side sleeps until its message arrives, which is the cheapest wake-up the kernel offers. */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4 << 20)           /* the server's reads, and the largest stream write */
#define WARM_BYTES (16ull << 20)  /* each size's untimed stream */
#define MIN_WRITE 1024
#define RUNS 5                    /* timed runs of the ping-pong */
#define STREAM_RUNS 3             /* timed streams per write size */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

/* Reads or writes exactly n bytes. */
static void full(int fd, void *buf, size_t n, int writing) {
    char *p = buf;
    while (n > 0) {
        ssize_t k = writing ? write(fd, p, n) : read(fd, p, n);
        if (k <= 0) die(writing ? "write" : "read (peer closed?)");
        p += k;
        n -= (size_t)k;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void nodelay(int fd) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
}

static int serve(const char *port) {
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(port))};
    if (s < 0) die("socket");
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 1) != 0) die("bind/listen");
    int c = accept(s, NULL, NULL);
    if (c < 0) die("accept");
    nodelay(c);
    unsigned long long iters;
    full(c, &iters, sizeof iters, 0);
    char msg[8];
    for (unsigned long long i = 0; i < iters; i++) {
        full(c, msg, 8, 0);
        full(c, msg, 8, 1);
    }
    /* streams: each announced by its length (a multiple of CHUNK), 0 ends them */
    char *buf = malloc(CHUNK);
    for (unsigned long long bytes;;) {
        full(c, &bytes, sizeof bytes, 0);
        if (bytes == 0) break;
        for (unsigned long long got = 0; got < bytes; got += CHUNK) full(c, buf, CHUNK, 0);
        full(c, msg, 1, 1); /* stream received: the client stops its clock */
    }
    free(buf);
    close(c);
    close(s);
    return 0;
}

/* One stream of `bytes` (a multiple of CHUNK) in `size`-byte writes, until the server has read
 * it all; returns bytes per second. */
static double stream(int c, char *buf, size_t size, unsigned long long bytes) {
    char ack;
    double t0 = now();
    full(c, &bytes, sizeof bytes, 1);
    for (unsigned long long sent = 0; sent < bytes; sent += size) full(c, buf, size, 1);
    full(c, &ack, 1, 0);
    return bytes / (now() - t0);
}

static int client(const char *host, const char *port, unsigned long long iters, double seconds) {
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0) die("getaddrinfo");
    int c = -1;
    for (int tries = 0; tries < 100; tries++) { /* the server may still be starting */
        c = socket(ai->ai_family, SOCK_STREAM, 0);
        if (connect(c, ai->ai_addr, ai->ai_addrlen) == 0) break;
        close(c);
        c = -1;
        usleep(50000);
    }
    if (c < 0) die("connect");
    freeaddrinfo(ai);
    nodelay(c);
    /* a warm-up tenth, then RUNS timed runs sharing the rest; the median is printed */
    if (iters < 10 * RUNS) iters = 10 * RUNS;
    unsigned long long n = iters / 10, per_run = (iters - iters / 10) / RUNS;
    iters = n + RUNS * per_run; /* what the server answers */
    full(c, &iters, sizeof iters, 1);
    char msg[8] = {0};
    double rtt[RUNS];
    for (int run = -1; run < RUNS; run++) {
        double t0 = now();
        for (unsigned long long i = 0; i < n; i++) {
            full(c, msg, 8, 1);
            full(c, msg, 8, 0);
        }
        if (run >= 0) rtt[run] = (now() - t0) / n * 1e6;
        n = per_run;
    }
    qsort(rtt, RUNS, sizeof rtt[0], cmp_double);
    printf("tcp_rtt,8,%.3f,us\n", rtt[RUNS / 2]);
    fflush(stdout);
    char *buf = calloc(1, CHUNK);
    for (size_t size = MIN_WRITE; size <= CHUNK; size *= 4) {
        double rate = stream(c, buf, size, WARM_BYTES), gbs[STREAM_RUNS];
        /* each timed stream lasts about `seconds` at the warm-up's rate, in whole CHUNKs */
        unsigned long long bytes = (unsigned long long)(rate * seconds / CHUNK + 1) * CHUNK;
        for (int run = 0; run < STREAM_RUNS; run++) gbs[run] = stream(c, buf, size, bytes) / 1e9;
        qsort(gbs, STREAM_RUNS, sizeof gbs[0], cmp_double);
        printf("tcp_stream,%zu,%.3f,GB/s\n", size, gbs[STREAM_RUNS / 2]);
        fflush(stdout);
    }
    unsigned long long end = 0;
    full(c, &end, sizeof end, 1);
    free(buf);
    close(c);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "server") == 0) return serve(argv[2]);
    if (argc >= 4 && argc <= 6 && strcmp(argv[1], "client") == 0) {
        double seconds = argc == 6 ? atof(argv[5]) : 0.25;
        if (!(seconds > 0 && seconds <= 60)) {
            fprintf(stderr, "tcp_floor: SECONDS must be in (0, 60]\n");
            return 2;
        }
        return client(argv[2], argv[3], argc >= 5 ? strtoull(argv[4], NULL, 10) : 20000, seconds);
    }
    fprintf(stderr, "usage: %s server PORT | %s client HOST PORT [ITERS [SECONDS]]\n", argv[0], argv[0]);
    return 2;
}
