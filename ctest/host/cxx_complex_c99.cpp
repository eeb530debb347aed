/* rshmem-test: pes=1,2,4
 * C++ code written for other OpenSHMEM libraries passes C99 complex arrays (`double _Complex`,
 * a GCC/Clang extension in C++) to the complex reductions, as SOS's own C++ tests do: the typed
 * routines (team-based and the deprecated active-set form) and the generic shmem_sum_reduce /
 * shmem_prod_reduce must accept them beside std::complex; the sums and products checked. */
#include <shmem.h>
#include <cstdio>

static double _Complex dsrc[2], ddst[2];
static float _Complex fsrc[2], fdst[2];
static double _Complex wrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long psync[SHMEM_REDUCE_SYNC_SIZE];

static int check(const char *what, double _Complex got, double _Complex want) {
    if (__real__ got == __real__ want && __imag__ got == __imag__ want) return 0;
    std::fprintf(stderr, "FAIL PE %d: %s = %g%+gi, want %g%+gi\n", shmem_my_pe(), what,
                 __real__ got, __imag__ got, __real__ want, __imag__ want);
    return 1;
}

int main() {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), bad = 0;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    double _Complex sum = 0, prod = 1;
    for (int pe = 0; pe < n; pe++) {
        double _Complex v;
        __real__ v = pe + 1;
        __imag__ v = 1;
        sum += v;
        prod *= v;
    }
    __real__ dsrc[0] = me + 1;
    __imag__ dsrc[0] = 1;
    dsrc[1] = dsrc[0];
    fsrc[0] = fsrc[1] = (float _Complex)dsrc[0];
    shmem_barrier_all();

    bad |= shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, ddst, dsrc, 2) != 0;
    bad |= check("shmem_complexd_sum_reduce", ddst[1], sum);
    bad |= shmem_sum_reduce(SHMEM_TEAM_WORLD, fdst, fsrc, 2) != 0;
    bad |= check("shmem_sum_reduce(float _Complex)", (double _Complex)fdst[0], sum);
    bad |= shmem_prod_reduce(SHMEM_TEAM_WORLD, ddst, dsrc, 2) != 0;
    bad |= check("shmem_prod_reduce(double _Complex)", ddst[0], prod);
    shmem_complexd_sum_to_all(ddst, dsrc, 2, 0, 0, n, wrk, psync);
    bad |= check("shmem_complexd_sum_to_all", ddst[1], sum);

    shmem_finalize();
    return bad;
}
