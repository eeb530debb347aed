/* IBGDA route on the GPU: warp-coalesced nvshmem_<T>_p (built with -DRSHMEM_IBGDA_ROUTE; run with
 * NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model, 2 PEs, over RC and over DC, and with a tiny queue
 * where groups no longer fit: ctest/ibgda/run_gpu.sh).
 * Each PE writes its right neighbour's arrays with one p per lane, one phase per kernel:
 *   0 int32 at dest[lane]       coalesced: one inline WQE per warp (3 blocks instead of 32)
 *   1 uint64 at dest[lane]      coalesced: two WQEs per warp (192 + 64 bytes)
 *   2 char, 3 short at dest[lane]
 *   4 int32 at dest[31 - lane]  another order: one WQE per lane
 *   5 int32, even lanes only    gaps: one WQE per lane
 * Every byte that arrives is checked, and the bytes nobody wrote. The WQE blocks this PE reserved
 * in each phase (sum of resv_head over its QPs, read between kernels) show how many WQEs it took:
 * a lane's own p is one block, so the per-lane phases must take exactly one block per lane and
 * the coalesced ones at most half that (exactly the ideal when every warp stays converged). */
#include <string.h>
#include "ibgda_test.h"

#define CTAS 4
#define WARPS_PER_CTA 4
#define NWARPS (CTAS * WARPS_PER_CTA)
#define N (NWARPS * 32)
#define PHASES 6

static const int SIZE[PHASES] = {4, 8, 1, 2, 4, 4};

__host__ __device__ static uint64_t value_of(int pe, int phase, int i) {
    return 0x9e3779b97f4a7c15ull * (uint64_t)(pe * 7919 + phase * 104729 + i + 1);
}
__host__ __device__ static bool written(int phase, int i) { return phase != 5 || (i & 31) % 2 == 0; }

__global__ void phase_kernel(int phase, void *dst, int right) {
    const int me = nvshmem_my_pe();
    const int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    switch (phase) {
        case 0: nvshmem_int_p((int *)dst + i, (int)value_of(me, 0, i), right); break;
        case 1: nvshmem_uint64_p((uint64_t *)dst + i, value_of(me, 1, i), right); break;
        case 2: nvshmem_char_p((char *)dst + i, (char)value_of(me, 2, i), right); break;
        case 3: nvshmem_short_p((short *)dst + i, (short)value_of(me, 3, i), right); break;
        case 4: {
            const int j = i - lane + 31 - lane;
            nvshmem_int_p((int *)dst + j, (int)value_of(me, 4, j), right);
            break;
        }
        default:
            if (written(5, i)) nvshmem_int_p((int *)dst + i, (int)value_of(me, 5, i), right);
    }
}

/* Blocks of a warp's coalesced WQEs (ibgda_coalesce.h: one WQE per 192 bytes), av = address
 * vector bytes per WQE (0 on RC). */
static int coalesced_blocks(int size, int av) {
    const int head = 2 + av / 16, per = 192 / size, full = 32 / per, rest = 32 % per;
    int bb = 0;
    for (int k = 0; k < full + (rest ? 1 : 0); k++) {
        const int bytes = (k < full ? per : rest) * size, ds = head + (4 + bytes + 15) / 16;
        bb += (ds + 3) / 4;
    }
    return bb;
}

int main(void) {
    test_init();
    const int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    rshmem_ibgda_state st = ibgda_state(NULL);
    rshmem_ibgda_qp *q = ibgda_qps(&st);
    const int nwqes = 1 << q[st.num_rc_per_pe ? (uint32_t)right * st.num_rc_per_pe : 0].log_nwqes;
    free(q);
    const int av = st.num_rc_per_pe ? 0 : 16;
    void *dst[PHASES];
    for (int p = 0; p < PHASES; p++) dst[p] = nvshmem_calloc(N, 8);
    nvshmem_barrier_all();

    uint64_t blocks[PHASES];
    for (int p = 0; p < PHASES; p++) {
        const uint64_t b0 = ibgda_blocks();
        phase_kernel<<<CTAS, WARPS_PER_CTA * 32>>>(p, dst[p], right);
        step_done();
        blocks[p] = ibgda_blocks() - b0;
    }

    /* What the left neighbour wrote, byte by byte. */
    unsigned char *h = (unsigned char *)malloc((size_t)N * 8);
    for (int p = 0; p < PHASES; p++) {
        const int size = SIZE[p];
        CUDA_CHECK(cudaMemcpy(h, dst[p], (size_t)N * 8, cudaMemcpyDeviceToHost));
        for (int i = 0; i < N; i++) {
            const uint64_t v = value_of(left, p, i);
            for (int k = 0; k < size; k++) {
                const unsigned char want = written(p, i) ? (unsigned char)(v >> (8 * k)) : 0;
                if (h[(size_t)i * size + k] != want)
                    FAIL("phase %d (%d-byte p): element %d byte %d is 0x%02x, want 0x%02x", p, size, i, k, h[(size_t)i * size + k], want);
            }
        }
        for (size_t k = (size_t)N * size; k < (size_t)N * 8; k++)
            if (h[k]) FAIL("phase %d: byte %zu past the array was written", p, k);
    }

    /* How many WQE blocks each phase took on this PE. */
    for (int p = 0; p < PHASES; p++) {
        const int per_lane = p == 5 ? 16 : 32, ideal = coalesced_blocks(SIZE[p], av);
        const bool fits = ideal <= nwqes / 4; /* a larger group posts lane by lane (max_group_bb) */
        if (me == 0)
            printf("phase %d (%d-byte p, %s): %llu WQE blocks for %d p calls (one per lane: %d, coalesced ideal: %d)\n", p,
                   SIZE[p], p >= 4 ? "no pattern" : "dest[lane]", (unsigned long long)blocks[p], NWARPS * per_lane,
                   NWARPS * per_lane, NWARPS * ideal);
        if (p >= 4 || !fits) {
            CHECK_EQ(blocks[p], NWARPS * per_lane);
        } else {
            CHECK(blocks[p] >= (uint64_t)NWARPS * ideal && blocks[p] <= (uint64_t)NWARPS * 32 / 2,
                  "phase %d: %llu blocks, want between %d (every warp one group) and %d (half of one per lane)", p,
                  (unsigned long long)blocks[p], NWARPS * ideal, NWARPS * 16);
        }
    }
    if (me == 0)
        printf("ibgda coalesce (%s, %d-block queues): every byte of %d p calls per phase checked\n",
               st.num_rc_per_pe ? "RC" : "DC", nwqes, N);
    return test_pass("gpu_coalesce");
}
