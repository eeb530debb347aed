/* IBGDA route on the GPU (built with -DRSHMEM_IBGDA_ROUTE; run with NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model, 2 PEs; see
 * ctest/ibgda/run_gpu.sh, which also runs it with a tiny queue: NVSHMEM_QP_DEPTH=16).
 * Many warps keep many operations outstanding toward the right neighbour: inline p, RDMA WRITEs
 * from the heap, puts from a thread-local array (inline chunks), non-fetching atomic adds and
 * fetch-add tickets. Then every byte of every destination is checked (untouched bytes too),
 * the counters' sums, and that the tickets are a permutation. */
#include <string.h>
#include "../cuda/cuda_test.h"

#define CTAS 8
#define THREADS 256
#define OPS 16
#define NTHR (CTAS * THREADS)
#define NSLOT (NTHR * OPS)
#define MSG 48   /* from the heap: an RDMA WRITE (above the 28-byte inline limit) */
#define LMSG 40  /* from a local array: inline chunks */
#define NCNT 64

__host__ __device__ static unsigned char byte_of(int pe, int slot, int k) { return (unsigned char)(pe * 131 + slot * 7 + k * 13 + 1); }
__host__ __device__ static int kind_of(int g, int i) { return (g + i) % 4; }
__host__ __device__ static uint64_t word_of(int pe, int slot) { return ((uint64_t)(pe + 1) << 40) | (uint64_t)slot; }

__global__ void stress(uint64_t *p_dst, char *m_dst, const char *m_src, char *l_dst, uint64_t *counters, uint64_t *ticket,
                       uint64_t *tickets_out, int right) {
    int me = nvshmem_my_pe();
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < OPS; i++) {
        int slot = g * OPS + i;
        switch (kind_of(g, i)) {
            case 0: nvshmem_uint64_p(&p_dst[slot], word_of(me, slot), right); break;
            case 1: nvshmem_putmem_nbi(&m_dst[(size_t)slot * MSG], &m_src[(size_t)slot * MSG], MSG, right); break;
            case 2: {
                char buf[LMSG];
                for (int k = 0; k < LMSG; k++) buf[k] = (char)byte_of(me, slot, k + 100);
                nvshmem_putmem(&l_dst[(size_t)slot * LMSG], buf, LMSG, right);
                break;
            }
            default:
                if (i % 8 == 3) tickets_out[slot] = nvshmem_uint64_atomic_fetch_add(ticket, 1, right);
                else nvshmem_uint64_atomic_add(&counters[slot % NCNT], (uint64_t)(1 + (i & 3)), right);
        }
    }
    nvshmem_quiet();
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t *p_dst = (uint64_t *)nvshmem_calloc(NSLOT, 8);
    char *m_dst = (char *)nvshmem_calloc((size_t)NSLOT * MSG, 1);
    char *m_src = (char *)nvshmem_malloc((size_t)NSLOT * MSG);
    char *l_dst = (char *)nvshmem_calloc((size_t)NSLOT * LMSG, 1);
    uint64_t *counters = (uint64_t *)nvshmem_calloc(NCNT, 8);
    uint64_t *ticket = (uint64_t *)nvshmem_calloc(1, 8);
    uint64_t *tickets_out;
    CUDA_CHECK(cudaMalloc(&tickets_out, NSLOT * 8));
    CUDA_CHECK(cudaMemset(tickets_out, 0xff, NSLOT * 8));
    unsigned char *h = (unsigned char *)malloc((size_t)NSLOT * MSG);
    for (int s = 0; s < NSLOT; s++)
        for (int k = 0; k < MSG; k++) h[(size_t)s * MSG + k] = byte_of(me, s, k);
    CUDA_CHECK(cudaMemcpy(m_src, h, (size_t)NSLOT * MSG, cudaMemcpyHostToDevice));
    nvshmem_barrier_all();

    stress<<<CTAS, THREADS>>>(p_dst, m_dst, m_src, l_dst, counters, ticket, tickets_out, right);
    step_done();

    /* What the left neighbour sent me, byte by byte. */
    uint64_t *hp = (uint64_t *)malloc(NSLOT * 8);
    unsigned char *hl = (unsigned char *)malloc((size_t)NSLOT * LMSG);
    CUDA_CHECK(cudaMemcpy(hp, p_dst, NSLOT * 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h, m_dst, (size_t)NSLOT * MSG, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hl, l_dst, (size_t)NSLOT * LMSG, cudaMemcpyDeviceToHost));
    long checked = 0;
    uint64_t want_sum[NCNT];
    memset(want_sum, 0, sizeof want_sum);
    int nticket = 0;
    for (int g = 0; g < NTHR; g++)
        for (int i = 0; i < OPS; i++) {
            int s = g * OPS + i, kind = kind_of(g, i);
            CHECK_EQ(hp[s], kind == 0 ? word_of(left, s) : 0);
            for (int k = 0; k < MSG; k++)
                if (h[(size_t)s * MSG + k] != (kind == 1 ? byte_of(left, s, k) : 0))
                    FAIL("slot %d (kind %d) heap-put byte %d is %d, want %d", s, kind, k, h[(size_t)s * MSG + k], kind == 1 ? byte_of(left, s, k) : 0);
            for (int k = 0; k < LMSG; k++)
                if (hl[(size_t)s * LMSG + k] != (kind == 2 ? byte_of(left, s, k + 100) : 0))
                    FAIL("slot %d (kind %d) local-put byte %d is %d", s, kind, k, hl[(size_t)s * LMSG + k]);
            if (kind == 3 && i % 8 != 3) want_sum[s % NCNT] += 1 + (i & 3);
            if (kind == 3 && i % 8 == 3) nticket++;
            checked += 8 + MSG + LMSG;
        }
    uint64_t hc[NCNT], ht;
    CUDA_CHECK(cudaMemcpy(hc, counters, sizeof hc, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&ht, ticket, 8, cudaMemcpyDeviceToHost));
    for (int c = 0; c < NCNT; c++) CHECK_EQ(hc[c], want_sum[c]);
    CHECK_EQ(ht, nticket);
    /* My tickets (from my right neighbour's counter) are 0..nticket-1, each once. */
    uint64_t *tk = (uint64_t *)malloc(NSLOT * 8);
    CUDA_CHECK(cudaMemcpy(tk, tickets_out, NSLOT * 8, cudaMemcpyDeviceToHost));
    char *seen = (char *)calloc(nticket, 1);
    for (int g = 0; g < NTHR; g++)
        for (int i = 0; i < OPS; i++) {
            int s = g * OPS + i;
            if (kind_of(g, i) == 3 && i % 8 == 3) {
                CHECK(tk[s] < (uint64_t)nticket && !seen[tk[s]], "ticket %llu of slot %d repeated or out of range", (unsigned long long)tk[s], s);
                seen[tk[s]] = 1;
            }
        }
    if (me == 0) printf("ibgda stress: %d threads x %d ops, %ld bytes checked, %d tickets\n", NTHR, OPS, checked, nticket);
    return test_pass("gpu_stress");
}
