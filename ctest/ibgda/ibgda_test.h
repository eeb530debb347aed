/* Host-side looks at this PE's IBGDA state for the GPU tests of ctest/ibgda (built with
 * -DRSHMEM_IBGDA_ROUTE; run with NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model): the per-PE state
 * and the QP descriptors the device posts to, copied out of GPU memory between kernels. */
#ifndef RSHMEM_IBGDA_TEST_H
#define RSHMEM_IBGDA_TEST_H
#include <stdint.h>
#include <stdlib.h>
#include "../cuda/cuda_test.h"

/* This PE's rshmem_ibgda_state (a copy) and its device address. */
static inline rshmem_ibgda_state ibgda_state(uint64_t *addr) {
    RshmemDeviceState s;
    CUDA_CHECK(cudaMemcpyFromSymbol(&s, rshmemi_device_state_d, sizeof s));
    CHECK(s.flags & RSHMEM_DEVICE_FLAG_IBGDA, "run with NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model");
    rshmem_ibgda_state st;
    CUDA_CHECK(cudaMemcpy(&st, (const void *)(uintptr_t)s.ibgda, sizeof st, cudaMemcpyDeviceToHost));
    CHECK(st.version == RSHMEM_IBGDA_STATE_VERSION, "IBGDA state version %u, this test knows %u", st.version,
          RSHMEM_IBGDA_STATE_VERSION);
    if (addr) *addr = s.ibgda;
    return st;
}

/* A copy of the QP array in use (RC QPs or DCIs); free() it. */
static inline rshmem_ibgda_qp *ibgda_qps(const rshmem_ibgda_state *st) {
    size_t bytes = (size_t)st->num_qps * sizeof(rshmem_ibgda_qp);
    rshmem_ibgda_qp *q = (rshmem_ibgda_qp *)malloc(bytes);
    uint64_t arr = st->num_rc_per_pe ? st->rc_qps : st->dci_qps;
    CUDA_CHECK(cudaMemcpy(q, (const void *)(uintptr_t)arr, bytes, cudaMemcpyDeviceToHost));
    return q;
}

/* WQE blocks reserved so far on all of this PE's QPs (every WQE takes at least one). */
static inline uint64_t ibgda_blocks(void) {
    rshmem_ibgda_state st = ibgda_state(NULL);
    rshmem_ibgda_qp *q = ibgda_qps(&st);
    uint64_t n = 0;
    for (uint32_t i = 0; i < st.num_qps; i++)
        if (q[i].qpn) n += q[i].resv_head;
    free(q);
    return n;
}

/* Word 0 of the QP-used bitmap (QPs 0..63). */
static inline uint64_t ibgda_used_word0(const rshmem_ibgda_state *st) {
    uint64_t w = 0;
    CUDA_CHECK(cudaMemcpy(&w, (const void *)(uintptr_t)st->qp_used, 8, cudaMemcpyDeviceToHost));
    return w;
}
#endif
