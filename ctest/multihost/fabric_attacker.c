/* A stranger on the network (ctest/scripts/multihost_stranger.sh): opens its own libfabric
 * tcp;ofi_rxm endpoint, as any program on a host that can reach the job could, and tries to
 * read one word of a PE's symmetric heap and overwrite another with memory keys it guesses.
 * usage: fabric_attacker LOCAL_IP VICTIM_IP PORT READ_ADDRS WRITE_ADDRS NKEYS [KEY...]
 * Tries keys 0..NKEYS-1 and then each KEY given; per key and per address pair (the ADDRS are
 * comma lists of the same length: virtual addresses and region offsets, as the victim's
 * provider may take either) one fi_read of 8 bytes and one fi_write of 8 bytes, each on a new
 * connection. Prints one line per operation: "read key K at A: got 0x..." / "write key K at
 * A: completed" when the victim let it through, else the error or "no answer", then a
 * summary line. Exits 0
 * whatever the victim did (the script judges); 2 when it cannot even open its endpoint. */
#include <inttypes.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_mr *mr;
static uint64_t buf[2];   /* [0] what a read got, [1] what a write sends */
static char why[200];     /* why the last attempt was refused */
static int stuck;         /* operations that never completed: stop after a few */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what, int rc) {
    fprintf(stderr, "fabric_attacker: %s: %s\n", what, fi_strerror(-rc));
    exit(2);
}

/* Waits up to 3 s for the one operation in flight; 1 done, 0 refused (why in `why`), -1 none. */
static int wait_one(struct fid_cq *cq) {
    size_t len = sizeof why;
    double until = now() + 3;
    while (now() < until) {
        struct fi_cq_entry entry;
        ssize_t rc = fi_cq_read(cq, &entry, 1);
        if (rc == 1) return 1;
        if (rc == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            fi_cq_readerr(cq, &err, 0);
            snprintf(why, len, "%s", fi_strerror(err.err));
            return 0;
        }
        if (rc < 0 && rc != -FI_EAGAIN) {
            snprintf(why, len, "fi_cq_read: %s", fi_strerror((int)-rc));
            return 0;
        }
    }
    stuck++;
    return -1;
}

/* One read (write = 0) or write of 8 bytes at `addr` with `key`, on a fresh endpoint: the
 * victim's provider drops the connection of a peer that names an unknown key. */
static int attempt(struct fi_info *info, const char *ip, const char *port, int write, uint64_t addr, uint64_t key) {
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT};
    static struct fi_context2 ctx;
    int rc;
    if ((rc = fi_av_open(domain, &av_attr, &av, NULL))) die("fi_av_open", rc);
    if ((rc = fi_cq_open(domain, &cq_attr, &cq, NULL))) die("fi_cq_open", rc);
    if ((rc = fi_endpoint(domain, info, &ep, NULL))) die("fi_endpoint", rc);
    if ((rc = fi_ep_bind(ep, &av->fid, 0))) die("fi_ep_bind av", rc);
    if ((rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV))) die("fi_ep_bind cq", rc);
    if ((rc = fi_enable(ep))) die("fi_enable", rc);
    fi_addr_t victim;
    if (fi_av_insertsvc(av, ip, port, &victim, 0, NULL) != 1) die("fi_av_insertsvc", -FI_EINVAL);
    void *desc = fi_mr_desc(mr);
    do rc = write ? (int)fi_write(ep, &buf[1], 8, desc, victim, addr, key, &ctx)
                  : (int)fi_read(ep, &buf[0], 8, desc, victim, addr, key, &ctx);
    while (rc == -FI_EAGAIN && (fi_cq_read(cq, NULL, 0), 1));
    int done = rc ? (snprintf(why, sizeof why, "%s", fi_strerror(-rc)), 0) : wait_one(cq);
    fi_close(&ep->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    return done;
}

static void report(const char *op, uint64_t key, uint64_t addr, int rc, const char *got) {
    printf("%s key %" PRIu64 " at %#" PRIx64 ": %s\n", op, key, addr, rc == 1 ? got : rc == 0 ? why : "no answer");
}

/* "A,B,C" (at most 8 numbers) into out; returns how many. */
static int parse_list(char *text, uint64_t *out) {
    int n = 0;
    for (char *t = strtok(text, ","); t && n < 8; t = strtok(NULL, ",")) out[n++] = strtoull(t, NULL, 0);
    return n;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s LOCAL_IP VICTIM_IP PORT READ_ADDRS WRITE_ADDRS NKEYS [KEY...]\n", argv[0]);
        return 2;
    }
    uint64_t read_addr[8], write_addr[8];
    int naddr = parse_list(argv[4], read_addr);
    if (parse_list(argv[5], write_addr) != naddr) die("READ_ADDRS and WRITE_ADDRS differ in length", -FI_EINVAL);
    long nkeys = atol(argv[6]);
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct fi_info *hints = fi_allocinfo(), *info;
    hints->caps = FI_RMA | FI_READ | FI_WRITE;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE; /* a write completes once the victim took it */
    int rc = fi_getinfo(FI_VERSION(1, 11), argv[1], NULL, FI_SOURCE, hints, &info);
    if (rc) die("fi_getinfo", rc);
    if ((rc = fi_fabric(info->fabric_attr, &fabric, NULL))) die("fi_fabric", rc);
    if ((rc = fi_domain(fabric, info, &domain, NULL))) die("fi_domain", rc);
    if ((rc = fi_mr_reg(domain, buf, sizeof buf, FI_READ | FI_WRITE, 0, 0, 0, &mr, NULL))) die("fi_mr_reg", rc);
    int nextra = argc - 7, reads = 0, writes = 0;
    for (long i = 0; i < nkeys + nextra && stuck < 3; i++) {
        uint64_t key = i < nkeys ? (uint64_t)i : strtoull(argv[7 + i - nkeys], NULL, 0);
        for (int a = 0; a < naddr; a++) {
            char got[64];
            buf[0] = 0;
            int done = attempt(info, argv[2], argv[3], 0, read_addr[a], key);
            snprintf(got, sizeof got, "got 0x%" PRIx64, buf[0]);
            report("read", key, read_addr[a], done, got);
            reads += done == 1;
            buf[1] = 0xbadbadbadbadbadULL;
            done = attempt(info, argv[2], argv[3], 1, write_addr[a], key);
            report("write", key, write_addr[a], done, "completed");
            writes += done == 1;
        }
    }
    printf("fabric_attacker: %d reads and %d writes completed, %d without an answer\n", reads, writes, stuck);
    return 0;
}
