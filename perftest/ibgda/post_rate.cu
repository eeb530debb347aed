/* GPU-side IBGDA post rate (WQEs per second) against the software HCA model in sink mode. Built
 * with -DRSHMEM_IBGDA_ROUTE (ctest/ibgda/stage_gpu.sh).
 *
 *   NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model RSHMEM_IBGDA_MODEL_SINK=1 \
 *   NVSHMEM_IBGDA_RC_MAP_BY=cta|sm|warp NVSHMEM_IBGDA_NUM_RC_PER_PE=64 NVSHMEM_QP_DEPTH=8192 \
 *   rshmemrun -n 2 ./post_rate [label [scattered|contiguous]]
 * (DC: NVSHMEM_IBGDA_NUM_RC_PER_PE=0 with NVSHMEM_IBGDA_NUM_DCI / _DCI_MAP_BY=cta|sm|warp|dct.)
 *
 * PE 0's kernel has every thread post nvshmem_uint64_p (an 8-byte inline RDMA WRITE, one 64-byte
 * WQE) toward PE 1, ITERS times. The lanes of a warp write every other word (scattered, the
 * default), so no two p share a WQE and the rates are WQEs per second. With `contiguous` they
 * write consecutive words and each warp's 32 p become two coalesced WQEs (ibgda_coalesce.h): the
 * CSV then counts p calls (column `p_calls`, rates in M p/s) and adds the WQE blocks posted. Time runs from the first thread's start to the last thread's
 * end (%globaltimer, in the kernel), so launch latency is not counted.
 *   burst      each QP receives at most half its ring: no thread waits for the NIC, the figure is
 *              the GPU's posting cost (reserve, write the WQE, publish, doorbell) alone
 *   sustained  8x as many WQEs: rings fill and threads wait for the model NIC to consume them
 *              (the model thread's speed is part of this figure)
 * A device quiet between runs brings every QP's completion counters up to date.
 * Prints CSV rows: label,map_by,ctas,threads,qps_used,wqes,burst_ns,burst_mwqe_s,ns_per_wqe,sustained_mwqe_s
 * (ns_per_wqe: burst time divided by WQEs, i.e. GPU-wide time per post, not one thread's latency);
 * contiguous: label,map_by,ctas,threads,qps_used,p_calls,burst_ns,burst_mp_s,ns_per_p,sustained_mp_s,blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include "../../ctest/ibgda/ibgda_test.h"

#define THREADS 1024

__device__ unsigned long long t_start, t_end;

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void __launch_bounds__(THREADS) post(uint64_t *dst, int iters, int pe, int stride) {
    unsigned long long t0 = now_ns();
    uint64_t *d = dst + ((threadIdx.x * stride) & 2047);
    for (int i = 0; i < iters; i++) nvshmem_uint64_p(d, (uint64_t)i, pe);
    __syncthreads();
    unsigned long long t1 = now_ns();
    if (threadIdx.x == 0) {
        atomicMin(&t_start, t0);
        atomicMax(&t_end, t1);
    }
}

__global__ void quiet_kernel() { nvshmem_quiet(); }

static double run(uint64_t *dst, int ctas, int iters, int stride) {
    unsigned long long big = ~0ull, zero = 0;
    CUDA_CHECK(cudaMemcpyToSymbol(t_start, &big, 8));
    CUDA_CHECK(cudaMemcpyToSymbol(t_end, &zero, 8));
    post<<<ctas, THREADS>>>(dst, iters, 1, stride);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    quiet_kernel<<<1, 1>>>();
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long a, b;
    CUDA_CHECK(cudaMemcpyFromSymbol(&a, t_start, 8));
    CUDA_CHECK(cudaMemcpyFromSymbol(&b, t_end, 8));
    return (double)(b - a);
}

int main(int argc, char **argv) {
    test_init();
    const char *label = argc > 1 ? argv[1] : "run";
    const bool contiguous = argc > 2 && strcmp(argv[2], "contiguous") == 0;
    const int stride = contiguous ? 1 : 2;
    /* Transport, QP count and mapping as the runtime set them up. */
    rshmem_ibgda_state st = ibgda_state(NULL);
    const bool dc = st.num_rc_per_pe == 0;
    const char *maps[] = {"cta", "sm", "warp", "dct"};
    const unsigned map_by = dc ? st.dci_map_by : st.rc_map_by;
    const char *map = maps[map_by & 3];
    const int nqps = dc ? (int)st.num_dci : (int)st.num_rc_per_pe; /* QPs that can carry PE 1's traffic */
    rshmem_ibgda_qp *q = ibgda_qps(&st);
    const int depth = 1 << q[dc ? 0 : st.num_rc_per_pe].log_nwqes;
    free(q);
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    uint64_t *dst = (uint64_t *)nvshmem_calloc(2048, 8);
    const int ctas_list[] = {1, 2, 4, 8, 16, 32, 64, 132};
    if (nvshmem_my_pe() == 0) {
        if (contiguous) printf("label,map_by,ctas,threads,qps_used,p_calls,burst_ns,burst_mp_s,ns_per_p,sustained_mp_s,blocks\n");
        else printf("label,map_by,ctas,threads,qps_used,wqes,burst_ns,burst_mwqe_s,ns_per_wqe,sustained_mwqe_s\n");
        for (int ctas : ctas_list) {
            if (ctas > sms) continue;
            int warps = ctas * THREADS / 32;
            int units = map_by == RSHMEM_IBGDA_MAP_BY_WARP ? warps : map_by == RSHMEM_IBGDA_MAP_BY_DCT ? (int)st.num_dct : ctas;
            int qps = std::min(units, nqps);
            /* Threads sharing the busiest QP, and posts per thread so it gets at most half a ring. */
            long per_qp_threads = ((long)ctas * THREADS + qps - 1) / qps;
            int iters = (int)std::max(1L, (long)(depth / 2) / per_qp_threads);
            double best = 1e30;
            run(dst, ctas, iters, stride); /* warm-up */
            const uint64_t b0 = ibgda_blocks();
            for (int r = 0; r < 5; r++) best = std::min(best, run(dst, ctas, iters, stride));
            const double blocks = (double)(ibgda_blocks() - b0) / 5;
            double wqes = (double)ctas * THREADS * iters;
            double sus = run(dst, ctas, iters * 8, stride);
            double swqes = wqes * 8;
            printf("%s,%s,%d,%d,%d,%.0f,%.0f,%.1f,%.3f,%.1f", label, map, ctas, THREADS, qps, wqes, best, wqes / best * 1e3,
                   best / wqes, swqes / sus * 1e3);
            if (contiguous) printf(",%.0f", blocks);
            printf("\n");
            fflush(stdout);
        }
    }
    nvshmem_barrier_all();
    return test_pass("post_rate");
}
