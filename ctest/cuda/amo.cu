/* rshmem-cuda-test: pes=2
 * Device atomics on PE 0's objects from every thread of every PE: fetch_add hands out each
 * ticket exactly once, inc/add/and/or/xor/compare_swap/swap/set/fetch leave the exact values. */
#include <string.h>
#include "cuda_test.h"

#define THREADS 256
#define BLOCKS 4
#define PER_PE (THREADS * BLOCKS)

struct Objects {
    unsigned long long ticket;
    int inc_count;
    long long add_sum;
    unsigned int bits_or;
    uint64_t bits_and;
    uint32_t bits_xor;
    int cas_winner;
    int32_t fetch_inc_count;
    size_t size_add;
    ptrdiff_t ptrdiff_add;
    double swapped;
    float set_value;
    long fetched;
};

__global__ void amo_kernel(Objects *o, unsigned long long *tickets, int *fetch_inc_seen) {
    int me = nvshmem_my_pe();
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int g = me * PER_PE + t; /* global thread number */
    tickets[t] = nvshmem_ulonglong_atomic_fetch_add(&o->ticket, 1ull, 0);
    nvshmem_int_atomic_inc(&o->inc_count, 0);
    nvshmem_longlong_atomic_add(&o->add_sum, (long long)g, 0);
    nvshmem_uint_atomic_or(&o->bits_or, 1u << (g % 32), 0);
    nvshmem_uint64_atomic_and(&o->bits_and, ~(1ull << (g % 64)), 0);
    nvshmem_uint32_atomic_xor(&o->bits_xor, 1u << (g % 32), 0);
    nvshmem_int_atomic_compare_swap(&o->cas_winner, -1, g, 0);
    fetch_inc_seen[t] = nvshmem_int32_atomic_fetch_inc(&o->fetch_inc_count, 0);
    nvshmem_size_atomic_add(&o->size_add, (size_t)2, 0);
    nvshmem_ptrdiff_atomic_add(&o->ptrdiff_add, (ptrdiff_t)-3, 0);
}

__global__ void extended_kernel(Objects *o, double *old_out, long *fetched_out) {
    int me = nvshmem_my_pe();
    /* One thread per PE, in PE order (a device barrier separates them). */
    for (int turn = 0; turn < nvshmem_n_pes(); turn++) {
        if (turn == me) {
            old_out[0] = nvshmem_double_atomic_swap(&o->swapped, 100.0 + me, 0);
            nvshmem_float_atomic_set(&o->set_value, 0.5f + me, 0);
            fetched_out[0] = nvshmem_long_atomic_fetch(&o->fetched, 0);
            nvshmem_long_atomic_set(&o->fetched, 1000L + me, 0);
            unsigned int before = nvshmem_uint_atomic_fetch_or(&o->bits_or, 0u, 0);
            unsigned int after = nvshmem_uint_atomic_fetch_and(&o->bits_or, 0xffffffffu, 0);
            if (before != after) fetched_out[1] = -1;
            uint64_t x = nvshmem_uint64_atomic_fetch_xor(&o->bits_and, 0, 0);
            fetched_out[2] = (long)(x == nvshmem_uint64_atomic_fetch(&o->bits_and, 0));
        }
        nvshmem_barrier_all();
    }
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    Objects *o = (Objects *)nvshmem_malloc(sizeof(Objects));
    unsigned long long *tickets = (unsigned long long *)nvshmem_malloc(PER_PE * sizeof(unsigned long long));
    int *fi = (int *)nvshmem_malloc(PER_PE * sizeof(int));
    Objects init;
    memset(&init, 0, sizeof init);
    init.bits_and = ~0ull;
    init.cas_winner = -1;
    init.swapped = -1.0;
    init.fetched = 7;
    CUDA_CHECK(cudaMemcpy(o, &init, sizeof init, cudaMemcpyHostToDevice));
    nvshmem_barrier_all();

    amo_kernel<<<BLOCKS, THREADS>>>(o, tickets, fi);
    step_done();

    /* PE 0 gathers every PE's tickets and fetch_inc values: each must appear exactly once. */
    if (me == 0) {
        int total = n * PER_PE;
        char *seen_t = (char *)calloc(total, 1), *seen_f = (char *)calloc(total, 1);
        unsigned long long *t = (unsigned long long *)malloc(PER_PE * sizeof *t);
        int *f = (int *)malloc(PER_PE * sizeof *f);
        for (int pe = 0; pe < n; pe++) {
            nvshmem_getmem(t, tickets, PER_PE * sizeof *t, pe);
            nvshmem_getmem(f, fi, PER_PE * sizeof *f, pe);
            for (int i = 0; i < PER_PE; i++) {
                CHECK(t[i] < (unsigned long long)total && !seen_t[t[i]], "ticket %llu from PE %d handed out twice or out of range", t[i], pe);
                CHECK(f[i] >= 0 && f[i] < total && !seen_f[f[i]], "fetch_inc value %d from PE %d repeated", f[i], pe);
                seen_t[t[i]] = seen_f[f[i]] = 1;
            }
        }
        Objects r;
        CUDA_CHECK(cudaMemcpy(&r, o, sizeof r, cudaMemcpyDeviceToHost));
        CHECK_EQ(r.ticket, total);
        CHECK_EQ(r.inc_count, total);
        CHECK_EQ(r.add_sum, (long long)total * (total - 1) / 2);
        CHECK_EQ(r.bits_or, 0xffffffffu);
        CHECK_EQ(r.bits_and, 0);
        /* Each bit is flipped total/32 times. */
        CHECK_EQ(r.bits_xor, (total / 32) % 2 ? 0xffffffffu : 0u);
        CHECK(r.cas_winner >= 0 && r.cas_winner < total, "compare_swap winner %d", r.cas_winner);
        CHECK_EQ(r.fetch_inc_count, total);
        CHECK_EQ(r.size_add, 2 * total);
        CHECK_EQ(r.ptrdiff_add, -3 * total);
    }
    nvshmem_barrier_all();

    double *old_d, old_out[1];
    long *fetched_d, fetched_out[3];
    CUDA_CHECK(cudaMalloc(&old_d, sizeof(double)));
    CUDA_CHECK(cudaMalloc(&fetched_d, 3 * sizeof(long)));
    CUDA_CHECK(cudaMemset(fetched_d, 0, 3 * sizeof(long)));
    extended_kernel<<<1, 1>>>(o, old_d, fetched_d);
    step_done();
    CUDA_CHECK(cudaMemcpy(old_out, old_d, sizeof old_out, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(fetched_out, fetched_d, sizeof fetched_out, cudaMemcpyDeviceToHost));
    /* PE k swaps in 100+k and sees what PE k-1 left (PE 0 sees the initial -1). */
    CHECK(*old_out == (me == 0 ? -1.0 : 100.0 + me - 1), "swap returned %f", *old_out);
    CHECK_EQ(fetched_out[0], me == 0 ? 7 : 1000 + me - 1);
    CHECK_EQ(fetched_out[1], 0);
    CHECK_EQ(fetched_out[2], 1);
    if (me == 0) {
        Objects r;
        CUDA_CHECK(cudaMemcpy(&r, o, sizeof r, cudaMemcpyDeviceToHost));
        CHECK(r.swapped == 100.0 + n - 1, "swapped %f", r.swapped);
        CHECK(r.set_value == 0.5f + n - 1, "set %f", r.set_value);
        CHECK_EQ(r.fetched, 1000 + n - 1);
    }
    return test_pass("amo");
}
