/* IBGDA over DC on the GPU (built with -DRSHMEM_IBGDA_ROUTE; run with NVSHMEM_DISABLE_P2P=1
 * RSHMEM_IBGDA_NIC=model NVSHMEM_IBGDA_NUM_RC_PER_PE=0, 2 PEs; ctest/ibgda/run_gpu.sh sets
 * NVSHMEM_IBGDA_NUM_DCI=8 NVSHMEM_IBGDA_NUM_DCT=3 NVSHMEM_IBGDA_DCI_MAP_BY=cta).
 *   (no argument)  the state is DC with the configured counts and a DCT table; CTAS CTAs (fewer
 *                  than the DCIs) each send puts from a local array, p, AMOs and a put_signal
 *                  toward the other PE and read back with get and g; every byte is checked. Only
 *                  the DCIs of those CTAs (cta % num_dci) are marked used, and the others carry
 *                  nothing but their warm-up write: quiet left them alone.
 *   key            PE 0's copy of PE 1's DC access key is corrupted in its peer table: a blocking
 *                  put then fails with an error CQE, and the message names the put, PE 0, PE 1
 *                  over DC and the rejected key. Expected to FAIL (run_gpu.sh checks the message). */
#include <string.h>
#include "ibgda_test.h"

#define CTAS 3
#define THREADS 64
#define NTHR (CTAS * THREADS)
#define MSG 40 /* from a local array: inline */

__host__ __device__ static unsigned char byte_of(int pe, int t, int k) { return (unsigned char)(pe * 59 + t * 13 + k * 7 + 3); }
__host__ __device__ static uint64_t word_of(int pe, int t) { return ((uint64_t)(pe + 1) << 48) | (uint64_t)t * 0x10001ull; }

__global__ void traffic(char *msgs, uint64_t *words, uint64_t *counters, uint64_t *fetched, char *sig_src,
                        char *sig_data, uint64_t *sig, char *got, uint64_t *gwords, int other) {
    const int me = nvshmem_my_pe(), t = blockIdx.x * blockDim.x + threadIdx.x;
    char buf[MSG];
    for (int k = 0; k < MSG; k++) buf[k] = (char)byte_of(me, t, k);
    nvshmem_putmem(&msgs[(size_t)t * MSG], buf, MSG, other);
    nvshmem_uint64_p(&words[t], word_of(me, t), other);
    nvshmem_uint64_atomic_add(&counters[blockIdx.x], 1, other);
    fetched[t] = nvshmem_uint64_atomic_fetch_add(&counters[CTAS + blockIdx.x], 1, other);
    nvshmem_quiet();
    /* Read back what this thread just wrote there. */
    nvshmem_getmem(&got[(size_t)t * MSG], &msgs[(size_t)t * MSG], MSG, other);
    gwords[t] = nvshmem_uint64_g(&words[t], other);
    __syncthreads();
    if (threadIdx.x == 0) {
        /* From the heap (an RDMA WRITE), then the signal on the same DCI. */
        for (int k = 0; k < 256; k++) sig_src[blockIdx.x * 256 + k] = (char)byte_of(me, blockIdx.x, k);
        nvshmem_putmem_signal(&sig_data[blockIdx.x * 256], &sig_src[blockIdx.x * 256], 256, &sig[blockIdx.x], 1,
                              NVSHMEM_SIGNAL_ADD, other);
    }
}

/* NTHR messages of MSG bytes and NTHR words, as PE `pe`'s threads wrote them. */
static void check_sent(const unsigned char *m, const uint64_t *w, int pe, const char *what) {
    for (int t = 0; t < NTHR; t++) {
        for (int k = 0; k < MSG; k++)
            if (m[(size_t)t * MSG + k] != byte_of(pe, t, k)) FAIL("thread %d's %s: byte %d is %d", t, what, k, m[(size_t)t * MSG + k]);
        if (w[t] != word_of(pe, t)) FAIL("thread %d's %s: word 0x%llx", t, what, (unsigned long long)w[t]);
    }
}

__global__ void bad_put(char *dst, const char *src, int other) { nvshmem_putmem(dst, src, 64, other); }

static unsigned env_or(const char *name, unsigned dflt) {
    const char *v = getenv(name);
    return v ? (unsigned)atoi(v) : dflt;
}

int main(int argc, char **argv) {
    test_init();
    const int me = nvshmem_my_pe(), other = 1 - me;
    CHECK(nvshmem_n_pes() == 2, "run with 2 PEs");
    uint64_t addr = 0;
    rshmem_ibgda_state st = ibgda_state(&addr);
    CHECK(st.num_rc_per_pe == 0, "run with NVSHMEM_IBGDA_NUM_RC_PER_PE=0 (DC)");
    CHECK_EQ(st.num_dci, env_or("NVSHMEM_IBGDA_NUM_DCI", 1));
    CHECK_EQ(st.num_qps, st.num_dci);
    CHECK_EQ(st.num_dct, env_or("NVSHMEM_IBGDA_NUM_DCT", 2));
    CHECK(st.dcts != 0 && st.dci_qps != 0 && st.qp_used != 0, "DC state without its tables");
    CHECK(st.num_dci > CTAS, "run with more DCIs than the %d CTAs (NVSHMEM_IBGDA_NUM_DCI=8)", CTAS);

    if (argc > 1 && strcmp(argv[1], "key") == 0) {
        char *dst = (char *)nvshmem_calloc(64, 1), *src = (char *)nvshmem_calloc(64, 1);
        if (me == 0) {
            /* Byte 7 of the DC key in peers[1].av (big-endian: its low byte). */
            unsigned char *key = (unsigned char *)(uintptr_t)(st.peers + sizeof(rshmem_ibgda_peer) +
                                                              offsetof(rshmem_ibgda_peer, av) + 7);
            unsigned char b;
            CUDA_CHECK(cudaMemcpy(&b, key, 1, cudaMemcpyDeviceToHost));
            b ^= 0x40;
            CUDA_CHECK(cudaMemcpy(key, &b, 1, cudaMemcpyHostToDevice));
            bad_put<<<1, 1>>>(dst, src, 1);
            cudaError_t e = cudaDeviceSynchronize();
            fprintf(stderr, "PE 0: kernel finished: %s\n", cudaGetErrorString(e));
        }
        nvshmem_barrier_all();
        printf("no error was reported\n");
        return test_pass("gpu_dc key");
    }

    char *msgs = (char *)nvshmem_calloc((size_t)NTHR * MSG, 1);
    uint64_t *words = (uint64_t *)nvshmem_calloc(NTHR, 8);
    uint64_t *counters = (uint64_t *)nvshmem_calloc(2 * CTAS, 8);
    char *sig_src = (char *)nvshmem_calloc(CTAS * 256, 1);
    char *sig_data = (char *)nvshmem_calloc(CTAS * 256, 1);
    uint64_t *sig = (uint64_t *)nvshmem_calloc(CTAS, 8);
    char *got = (char *)nvshmem_calloc((size_t)NTHR * MSG, 1);
    uint64_t *fetched, *gwords;
    CUDA_CHECK(cudaMalloc(&fetched, NTHR * 8));
    CUDA_CHECK(cudaMalloc(&gwords, NTHR * 8));
    nvshmem_barrier_all();
    traffic<<<CTAS, THREADS>>>(msgs, words, counters, fetched, sig_src, sig_data, sig, got, gwords, other);
    step_done();

    /* What the other PE sent here. */
    unsigned char *hm = (unsigned char *)malloc((size_t)NTHR * MSG);
    uint64_t hw[NTHR], hc[2 * CTAS], hs[CTAS], hf[NTHR], hg[NTHR];
    unsigned char hsd[CTAS * 256];
    CUDA_CHECK(cudaMemcpy(hm, msgs, (size_t)NTHR * MSG, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hw, words, sizeof hw, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hc, counters, sizeof hc, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hs, sig, sizeof hs, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hsd, sig_data, sizeof hsd, cudaMemcpyDeviceToHost));
    check_sent(hm, hw, other, "put and p");
    for (int c = 0; c < CTAS; c++) {
        CHECK_EQ(hc[c], THREADS);
        CHECK_EQ(hc[CTAS + c], THREADS);
        CHECK_EQ(hs[c], 1);
        for (int k = 0; k < 256; k++) CHECK_EQ(hsd[c * 256 + k], byte_of(other, c, k));
    }
    /* What this PE read back, and its fetch-add tickets (0..THREADS-1 per CTA, each once). */
    unsigned char *hgot = (unsigned char *)malloc((size_t)NTHR * MSG);
    CUDA_CHECK(cudaMemcpy(hgot, got, (size_t)NTHR * MSG, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hf, fetched, sizeof hf, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hg, gwords, sizeof hg, cudaMemcpyDeviceToHost));
    check_sent(hgot, hg, me, "get and g");
    for (int c = 0; c < CTAS; c++) {
        char seen[THREADS] = {0};
        for (int t = 0; t < THREADS; t++) {
            uint64_t f = hf[c * THREADS + t];
            CHECK(f < THREADS && !seen[f], "CTA %d: fetch-add ticket %llu repeated or out of range", c, (unsigned long long)f);
            seen[f] = 1;
        }
    }

    /* Map by CTA: CTA c used DCI c % num_dci; only those are marked, the rest saw only the warm-up. */
    const uint64_t used = ibgda_used_word0(&st);
    uint64_t want = 0;
    for (int c = 0; c < CTAS; c++) want |= 1ull << (c % st.num_dci);
    CHECK(used == want, "QP-used bitmap 0x%llx, want 0x%llx (DCIs of the %d CTAs)", (unsigned long long)used,
          (unsigned long long)want, CTAS);
    rshmem_ibgda_qp *q = ibgda_qps(&st);
    for (uint32_t i = 0; i < st.num_dci; i++) {
        CHECK(q[i].kind == RSHMEM_IBGDA_QP_DCI && q[i].err_count == 0, "DCI %u: kind %u, %u errors", i, q[i].kind, q[i].err_count);
        if (!((want >> i) & 1)) CHECK_EQ(q[i].resv_head, 1); /* the warm-up write only */
        else CHECK(q[i].resv_head > 1 && q[i].completed_head == q[i].ready_head, "DCI %u not quiet", i);
    }
    free(q);
    if (me == 0)
        printf("ibgda dc: %u DCIs, %u DCTs per PE, %d CTAs x %d threads: puts, p, AMOs, put_signal, get, g checked; DCIs used 0x%llx\n",
               st.num_dci, st.num_dct, CTAS, THREADS, (unsigned long long)used);
    return test_pass("gpu_dc");
}
