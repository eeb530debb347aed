/* rshmem-test: pes=1,2,4
 * The generic OpenSHMEM routines from C++ (issue 21 item 4): overloads of shmem_put, shmem_p,
 * shmem_g, shmem_get, shmem_atomic_*, shmem_wait_until, the collectives and reductions (complex
 * types included), with and without a context, pick the typed routine of each argument type;
 * the data checked on every PE. Built with g++ by CTest. */
#include <shmem.h>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            std::fprintf(stderr, "FAIL PE %d line %d: %s: ", shmem_my_pe(), __LINE__, #cond);   \
            std::fprintf(stderr, __VA_ARGS__);                                                  \
            std::fprintf(stderr, "\n");                                                         \
            shmem_global_exit(1);                                                               \
        }                                                                                       \
    } while (0)

static long longs[4];
static double doubles[4];
static short shorts[4];
static int ints[4];
static uint64_t counter;
static unsigned int bits;
static long long from_left;
static std::complex<double> zsrc[2], zsum[2];
static float fsrc[3], fmax_[3];
static int bcast[3];

int main() {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;

    long lv[4] = {me * 10L, me * 10L + 1, me * 10L + 2, me * 10L + 3};
    shmem_put(longs, lv, 4, right);                       /* long */
    shmem_p(&doubles[1], 0.5 + me, right);                /* double */
    const short sv[2] = {short(me), short(-me)};
    shmem_put(SHMEM_CTX_DEFAULT, shorts, sv, 2, right);   /* ctx, short */
    shmem_p(SHMEM_CTX_DEFAULT, &from_left, (long long)me << 35, right); /* ctx, long long */
    shmem_barrier_all();
    for (int i = 0; i < 4; i++) CHECK(longs[i] == left * 10L + i, "longs[%d] = %ld", i, longs[i]);
    CHECK(doubles[1] == 0.5 + left, "doubles[1] = %g", doubles[1]);
    CHECK(shorts[0] == left && shorts[1] == -left, "shorts %d %d", shorts[0], shorts[1]);
    CHECK(from_left == (long long)left << 35, "from_left %lld", from_left);
    CHECK(shmem_g(&doubles[1], right) == 0.5 + me, "shmem_g double");
    long back[4];
    shmem_get(back, longs, 4, right);
    CHECK(back[3] == me * 10L + 3, "shmem_get long: %ld", back[3]);
    shmem_barrier_all();

    /* AMOs: every PE adds to PE 0's counter, fetch-adds, ors a bit */
    shmem_atomic_add(&counter, (uint64_t)me + 1, 0);
    (void)shmem_atomic_fetch_inc(SHMEM_CTX_DEFAULT, &counter, 0);
    shmem_atomic_or(&bits, 1u << me, 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(counter == (uint64_t)n * (n + 1) / 2 + n, "counter %llu", (unsigned long long)counter);
        CHECK(bits == (1u << n) - 1, "bits %x", bits);
        CHECK(shmem_atomic_fetch(&bits, 0) == bits, "atomic_fetch");
        CHECK(shmem_atomic_swap(&ints[0], 5, 0) == 0 && ints[0] == 5, "atomic_swap int");
        CHECK(shmem_atomic_compare_swap(&longs[0], longs[0], -1L, 0) != -1 && longs[0] == -1, "compare_swap long");
    }
    shmem_barrier_all();

    /* wait_until on an int (the deprecated C shmem_wait_until takes a long) */
    ints[1] = 0;
    shmem_barrier_all();
    shmem_p(&ints[1], 42, right);
    shmem_wait_until(&ints[1], SHMEM_CMP_EQ, 42);
    shmem_barrier_all();

    /* collectives on the world team; reductions of complex and float */
    for (int i = 0; i < 2; i++) zsrc[i] = std::complex<double>(me + i, -me);
    for (int i = 0; i < 3; i++) fsrc[i] = float(me * (i + 1));
    if (me == 0)
        for (int i = 0; i < 3; i++) bcast[i] = 7 * (i + 1);
    shmem_sync(SHMEM_TEAM_WORLD);
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, zsum, zsrc, 2) == 0, "sum_reduce complex");
    CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, fmax_, fsrc, 3) == 0, "max_reduce float");
    CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, bcast, bcast, 3, 0) == 0, "broadcast int");
    double s = n * (n - 1) / 2.0;
    CHECK(zsum[0] == std::complex<double>(s, -s) && zsum[1] == std::complex<double>(s + n, -s), "zsum (%g,%g)",
          zsum[0].real(), zsum[0].imag());
    CHECK(fmax_[2] == float((n - 1) * 3), "fmax %g", fmax_[2]);
    CHECK(bcast[2] == 21, "bcast %d", bcast[2]);
    shmem_finalize();
    if (me == 0) std::printf("cxx_generic: %d PEs ok\n", n);
    return 0;
}
