/* The floor of the multi-host path: plain TCP between two (namespaced) hosts, no library.
 *   tcp_floor server PORT               serve one client, then exit
 *   tcp_floor client HOST PORT [ITERS]  8-byte ping-pong (round trip / 2) and a 256 MiB stream
 * Prints one line per measurement: "pingpong_8B_us <half round trip>" and "stream_MBps <MB/s>".
 * TCP_NODELAY on both sides, as a latency-minded transport would set it. */
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

#define CHUNK (1 << 20)
#define STREAM_BYTES (256ull << 20)

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
    char *buf = malloc(CHUNK);
    for (unsigned long long got = 0; got < STREAM_BYTES; got += CHUNK) full(c, buf, CHUNK, 0);
    full(c, msg, 1, 1); /* stream received: the client stops its clock */
    close(c);
    close(s);
    return 0;
}

static int client(const char *host, const char *port, unsigned long long iters) {
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
    full(c, &iters, sizeof iters, 1);
    char msg[8] = {0};
    for (int warm = 0; warm < 2; warm++) {
        unsigned long long n = warm ? iters - iters / 10 : iters / 10;
        double t0 = now();
        for (unsigned long long i = 0; i < n; i++) {
            full(c, msg, 8, 1);
            full(c, msg, 8, 0);
        }
        if (warm) printf("pingpong_8B_us %.2f\n", (now() - t0) / n / 2 * 1e6);
    }
    char *buf = calloc(1, CHUNK);
    double t0 = now();
    for (unsigned long long sent = 0; sent < STREAM_BYTES; sent += CHUNK) full(c, buf, CHUNK, 1);
    full(c, msg, 1, 0);
    printf("stream_MBps %.0f\n", STREAM_BYTES / (now() - t0) / 1e6);
    close(c);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "server") == 0) return serve(argv[2]);
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "client") == 0)
        return client(argv[2], argv[3], argc == 5 ? strtoull(argv[4], NULL, 10) : 20000);
    fprintf(stderr, "usage: %s server PORT | %s client HOST PORT [ITERS]\n", argv[0], argv[0]);
    return 2;
}
