/* rshmem-cuda-test: pes=2
 * Put-with-signal at thread, warp and block scope (SET and ADD), signal_op, signal_fetch,
 * signal_wait_until, typed wait_until / test / wait_until_all / wait_until_any: a ring of
 * rounds where each PE sends to its right neighbour and checks what its left one sent. */
#include "cuda_test.h"

#define WORDS 3000
#define ROUNDS 20

__device__ int check_round(const int *buf, int from, int round) {
    for (int i = 0; i < WORDS; i++)
        if (buf[i] != from * 100000 + round * 1000 + (i % 1000)) return i + 1;
    return 0;
}

/* scope 0 thread, 1 warp, 2 block; op NVSHMEM_SIGNAL_SET or _ADD. errors[0] counts failures. */
__global__ void ring_kernel(int *data, const int *src_unused, uint64_t *sig, int scope, int op, int nbi, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    __shared__ int local[WORDS];
    for (int round = 1; round <= ROUNDS; round++) {
        int *slot = data + (round % 2) * WORDS; /* two slots: the sender never overwrites unread data */
        for (int i = threadIdx.x; i < WORDS; i += blockDim.x) local[i] = me * 100000 + round * 1000 + (i % 1000);
        __syncthreads();
        uint64_t value = op == NVSHMEM_SIGNAL_SET ? (uint64_t)round : 1;
        if (scope == 0) {
            if (threadIdx.x == 0) {
                if (nbi) nvshmem_int_put_signal_nbi(slot, local, WORDS, sig, value, op, right);
                else nvshmem_int_put_signal(slot, local, WORDS, sig, value, op, right);
            }
        } else if (scope == 1) {
            if (threadIdx.x < 32) {
                if (nbi) nvshmemx_putmem_signal_nbi_warp(slot, local, WORDS * sizeof(int), sig, value, op, right);
                else nvshmemx_putmem_signal_warp(slot, local, WORDS * sizeof(int), sig, value, op, right);
            }
        } else {
            if (nbi) nvshmemx_int_put_signal_nbi_block(slot, local, WORDS, sig, value, op, right);
            else nvshmemx_int_put_signal_block(slot, local, WORDS, sig, value, op, right);
        }
        if (threadIdx.x == 0) {
            uint64_t got = nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)round);
            if (got < (uint64_t)round) atomicAdd(errors, 1);
            int bad = check_round(slot, left, round);
            if (bad) {
                printf("PE %d round %d scope %d op %d: word %d wrong (%d)\n", me, round, scope, op, bad - 1, slot[bad - 1]);
                atomicAdd(errors, 1);
            }
            if (nvshmem_signal_fetch(sig) < (uint64_t)round) atomicAdd(errors, 1);
        }
        /* Nobody starts the next round (and reuses a slot) before its receiver has read it. */
        nvshmemx_barrier_all_block();
    }
}

__global__ void wait_kernel(int *flags, long long *lflag, uint64_t *sig, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    /* signal_op SET then ADD into the right neighbour's sig. */
    nvshmemx_signal_op(sig, 5, NVSHMEM_SIGNAL_SET, right);
    nvshmemx_signal_op(sig, 2, NVSHMEM_SIGNAL_ADD, right);
    if (nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 7) != 7) atomicAdd(errors, 1);
    /* Typed flags: set four ints on the right, in reverse order, then one long long. */
    for (int i = 3; i >= 0; i--) nvshmem_int_p(&flags[i], 10 + i, right);
    nvshmem_fence();
    nvshmem_longlong_p(lflag, -42, right);
    nvshmem_longlong_wait_until(lflag, NVSHMEM_CMP_LT, 0);
    /* After the fence, the ints arrived before the long long. */
    if (!nvshmem_int_test(&flags[0], NVSHMEM_CMP_EQ, 10)) atomicAdd(errors, 1);
    nvshmem_int_wait_until_all(flags, 4, NULL, NVSHMEM_CMP_GE, 10);
    int status[4] = {1, 1, 0, 1};
    size_t which = nvshmem_int_wait_until_any(flags, 4, status, NVSHMEM_CMP_EQ, 12);
    if (which != 2) atomicAdd(errors, 1);
    if (nvshmem_int_test(&flags[3], NVSHMEM_CMP_NE, 13)) atomicAdd(errors, 1);
}

int main(void) {
    test_init();
    int *data = (int *)nvshmem_calloc(2 * WORDS, sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    int cases = 0;
    for (int scope = 0; scope < 3; scope++)
        for (int op = NVSHMEM_SIGNAL_SET; op <= NVSHMEM_SIGNAL_ADD; op++)
            for (int nbi = 0; nbi < 2; nbi++) {
                CUDA_CHECK(cudaMemset(sig, 0, sizeof(uint64_t)));
                CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
                nvshmem_barrier_all();
                ring_kernel<<<1, 256>>>(data, NULL, sig, scope, op, nbi, errors);
                step_done();
                int e = 0;
                CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
                CHECK(e == 0, "scope %d op %d nbi %d: %d errors", scope, op, nbi, e);
                uint64_t s = 0;
                CUDA_CHECK(cudaMemcpy(&s, sig, sizeof s, cudaMemcpyDeviceToHost));
                CHECK_EQ(s, ROUNDS);
                cases++;
            }

    int *flags = (int *)nvshmem_calloc(4, sizeof(int));
    long long *lflag = (long long *)nvshmem_calloc(1, sizeof(long long));
    CUDA_CHECK(cudaMemset(sig, 0, sizeof(uint64_t)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    nvshmem_barrier_all();
    wait_kernel<<<1, 1>>>(flags, lflag, sig, errors);
    step_done();
    int e = 0;
    CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    CHECK(e == 0, "wait kernel: %d errors", e);
    CHECK_EQ(nvshmem_signal_fetch(sig), 7);
    if (nvshmem_my_pe() == 0) printf("signal: %d put_signal cases\n", cases);
    return test_pass("signal");
}
