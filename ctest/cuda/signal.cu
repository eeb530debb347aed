/* rshmem-cuda-test: pes=2
 * Put-with-signal at thread, warp and block scope (SET and ADD), signal_op, signal_fetch,
 * signal_wait_until, typed wait_until / test / wait_until_all / wait_until_any: a ring of
 * rounds where each PE sends to its right neighbour and checks what its left one sent.
 * Then ordering under many threads at once: put_signal_nbi from many CTAs / warps into one
 * counter (the data is there once the count is), and p + fence + p(flag) by every thread of a
 * grid, each receiving thread waiting for its flag and reading its word right after. */
#include "cuda_test.h"

#define WORDS 3000
#define ROUNDS 20

__device__ int check_round(const int *buf, int from, int round) {
    for (int i = 0; i < WORDS; i++)
        if (buf[i] != from * 100000 + round * 1000 + (i % 1000)) return i + 1;
    return 0;
}

/* scope 0 thread, 1 warp, 2 block; op NVSHMEM_SIGNAL_SET or _ADD. errors[0] counts failures. */
__global__ void ring_kernel(int *data, const int *src_unused, uint64_t *sig, int scope, int op, int nbi, int rounds, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    __shared__ int local[WORDS];
    for (int round = 1; round <= rounds; round++) {
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

#define SLICE 1024 /* ints per CTA (block scope) or per warp (warp scope) */
#define MANY_CTAS 16
#define MANY_THREADS 256
#define MANY_ROUNDS 8

__device__ int many_value(int pe, int round, size_t i) { return pe * 1000003 + round * 7919 + (int)i; }

/* Every CTA (block_scope) or warp fills its slice and puts it with put_signal_nbi, signal ADD 1
 * into one counter on the right; thread 0 of CTA 0 waits for every slice's signal of this round,
 * then (after a CTA barrier) CTA 0 reads all the data the left PE sent. */
__global__ void many_put_signal_kernel(int *data, int *src, uint64_t *count, int round, int block_scope, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    size_t slices = block_scope ? gridDim.x : (size_t)gridDim.x * blockDim.x / 32, total = slices * SLICE;
    if (block_scope) {
        size_t at = (size_t)blockIdx.x * SLICE;
        for (size_t i = threadIdx.x; i < SLICE; i += blockDim.x) src[at + i] = many_value(me, round, at + i);
        __syncthreads();
        nvshmemx_int_put_signal_nbi_block(data + at, src + at, SLICE, count, 1, NVSHMEM_SIGNAL_ADD, right);
    } else {
        size_t at = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32 * SLICE;
        for (size_t i = threadIdx.x % 32; i < SLICE; i += 32) src[at + i] = many_value(me, round, at + i);
        __syncwarp();
        nvshmemx_int_put_signal_nbi_warp(data + at, src + at, SLICE, count, 1, NVSHMEM_SIGNAL_ADD, right);
    }
    if (blockIdx.x != 0) return;
    if (threadIdx.x == 0) nvshmem_signal_wait_until(count, NVSHMEM_CMP_GE, (uint64_t)round * slices);
    __syncthreads();
    for (size_t i = threadIdx.x; i < total; i += blockDim.x)
        if (data[i] != many_value(left, round, i)) {
            printf("PE %d round %d block_scope %d: word %zu is %d, want %d\n", me, round, block_scope, i, data[i],
                   many_value(left, round, i));
            atomicAdd(errors, 1);
            break;
        }
}

/* Every thread: its word for this round with p, a fence, then its flag with p; then it waits
 * for the left PE's flag and reads the left PE's word at once. Words are per round (never
 * overwritten), flags count rounds. */
__global__ void fence_flags_kernel(int *words, uint64_t *flags, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x, nt = (size_t)gridDim.x * blockDim.x;
    for (int round = 1; round <= MANY_ROUNDS; round++) {
        int *w = words + (size_t)(round - 1) * nt + t;
        nvshmem_int_p(w, many_value(me, round, t), right);
        nvshmem_fence();
        nvshmem_uint64_p(&flags[t], (uint64_t)round, right);
        nvshmem_uint64_wait_until(&flags[t], NVSHMEM_CMP_GE, (uint64_t)round);
        if (*w != many_value(left, round, t)) atomicAdd(errors, 1);
    }
}

int main(void) {
    test_init();
    int *data = (int *)nvshmem_calloc(2 * WORDS, sizeof(int));
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    int cases = 0;
    /* Across hosts the shared-memory source travels 8 bytes a proxy request (1500 a put, about
     * 20 thousand requests a second: results/gpu-crosshost-2026-11-27c/): fewer rounds there. */
    const int rounds = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE) < nvshmem_n_pes() ? 3 : ROUNDS;
    for (int scope = 0; scope < 3; scope++)
        for (int op = NVSHMEM_SIGNAL_SET; op <= NVSHMEM_SIGNAL_ADD; op++)
            for (int nbi = 0; nbi < 2; nbi++) {
                CUDA_CHECK(cudaMemset(sig, 0, sizeof(uint64_t)));
                CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
                nvshmem_barrier_all();
                ring_kernel<<<1, 256>>>(data, NULL, sig, scope, op, nbi, rounds, errors);
                step_done();
                int e = 0;
                CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
                CHECK(e == 0, "scope %d op %d nbi %d: %d errors", scope, op, nbi, e);
                uint64_t s = 0;
                CUDA_CHECK(cudaMemcpy(&s, sig, sizeof s, cudaMemcpyDeviceToHost));
                CHECK_EQ(s, (uint64_t)rounds);
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

    /* Many senders into one counter, block and warp scope. */
    size_t many = (size_t)MANY_CTAS * MANY_THREADS * SLICE / 32; /* the larger (warp) layout */
    int *mdata = (int *)nvshmem_calloc(many, sizeof(int));
    int *msrc = (int *)nvshmem_calloc(many, sizeof(int));
    uint64_t *count = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    /* Through IBGDA or the proxy (no P2P: every operation is a posted request) a smaller grid.
     * Every PE the same grid: a receiver counts its sender's slices and flags by its own grid
     * (a grid chosen by each PE's own right neighbour hung at 4 PEs on 2 hosts, where PEs 0 and
     * 2 waited for 16 slices from a sender of 2). */
    const int all_p2p = nvshmem_team_n_pes(NVSHMEMX_TEAM_NODE) == nvshmem_n_pes() &&
                        nvshmem_ptr(mdata, (nvshmem_my_pe() + 1) % nvshmem_n_pes()) != NULL;
    int grid = all_p2p ? MANY_CTAS : 2;
    int block = grid == MANY_CTAS ? MANY_THREADS : 64;
    for (int block_scope = 1; block_scope >= 0; block_scope--) {
        CUDA_CHECK(cudaMemset(count, 0, sizeof(uint64_t)));
        CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
        ready();
        for (int round = 1; round <= MANY_ROUNDS; round++) {
            many_put_signal_kernel<<<grid, block>>>(mdata, msrc, count, round, block_scope, errors);
            step_done(); /* the next round overwrites the data only after this one was read */
        }
        CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
        CHECK(e == 0, "many put_signal (block scope %d): %d errors", block_scope, e);
    }

    /* p + fence + p(flag) from every thread, waits and reads right after. */
    const size_t nt = (size_t)grid * block;
    int *words = (int *)nvshmem_calloc(nt * MANY_ROUNDS, sizeof(int));
    uint64_t *mflags = (uint64_t *)nvshmem_calloc(nt, sizeof(uint64_t));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    ready();
    fence_flags_kernel<<<grid, block>>>(words, mflags, errors);
    step_done();
    CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    CHECK(e == 0, "p + fence + flag from %zu threads: %d words read before their flag's data", nt, e);

    if (nvshmem_my_pe() == 0) printf("signal: %d put_signal cases\n", cases);
    return test_pass("signal");
}
