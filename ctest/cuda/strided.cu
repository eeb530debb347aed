/* rshmem-cuda-test: pes=2
 * The device routines the NVSHMEM audit found missing: iput / iget (typed and sized, thread,
 * warp and block), alltoalls, double2 maxloc reduce (block), the warpgroup barrier and
 * mc_ptr. Each moves data between PEs; the host checks every element that should have moved
 * and that the gaps between strided elements were left alone. */
#include <string.h>
#include <vector>
#include "cuda_test.h"

#define NEL 37 /* elements moved */
#define DST 3  /* element strides */
#define SST 2
#define MAXE 16 /* largest element */

struct Case {
    const char *name;
    int bytes;
};
static const Case cases[] = {{"int_iput", 4},          {"int_iput_warp", 4}, {"int_iput_block", 4}, {"iput8", 1},
                             {"iput16_block", 2},      {"iput64_warp", 8},   {"iput128", 16},       {"int_iget", 4},
                             {"int_iget_warp", 4},     {"int_iget_block", 4}, {"iget32", 4},        {"iget128_block", 16}};
#define NCASES (int)(sizeof cases / sizeof cases[0])

__global__ void strided_kernel(int c, void *dest, const void *src, int pe) {
    bool one = threadIdx.x == 0, warp = threadIdx.x < 32;
    switch (c) {
        case 0: if (one) nvshmem_int_iput((int *)dest, (const int *)src, DST, SST, NEL, pe); break;
        case 1: if (warp) nvshmemx_int_iput_warp((int *)dest, (const int *)src, DST, SST, NEL, pe); break;
        case 2: nvshmemx_int_iput_block((int *)dest, (const int *)src, DST, SST, NEL, pe); break;
        case 3: if (one) nvshmem_iput8(dest, src, DST, SST, NEL, pe); break;
        case 4: nvshmemx_iput16_block(dest, src, DST, SST, NEL, pe); break;
        case 5: if (warp) nvshmemx_iput64_warp(dest, src, DST, SST, NEL, pe); break;
        case 6: if (one) nvshmem_iput128(dest, src, DST, SST, NEL, pe); break;
        case 7: if (one) nvshmem_int_iget((int *)dest, (const int *)src, DST, SST, NEL, pe); break;
        case 8: if (warp) nvshmemx_int_iget_warp((int *)dest, (const int *)src, DST, SST, NEL, pe); break;
        case 9: nvshmemx_int_iget_block((int *)dest, (const int *)src, DST, SST, NEL, pe); break;
        case 10: if (one) nvshmem_iget32(dest, src, DST, SST, NEL, pe); break;
        case 11: nvshmemx_iget128_block(dest, src, DST, SST, NEL, pe); break;
    }
}

/* Byte b of source element j on PE pe (never 0, so a gap that was written shows). */
static unsigned char pattern(int pe, int j, int b) { return (unsigned char)(1 + (pe * 131 + j * 7 + b) % 251); }

__global__ void alltoalls_kernel(int *dest, const int *src) { nvshmem_int_alltoalls(NVSHMEM_TEAM_WORLD, dest, src, 2, 3, 4); }

__global__ void maxloc_kernel(double2 *dest, const double2 *src) {
    nvshmemx_double2_maxloc_reduce_block(NVSHMEM_TEAM_WORLD, dest, src, 2);
}

/* Warpgroup 1 of a 256-thread block: a value put before the barrier is there after it. */
__global__ void warpgroup_kernel(int *box, int *errors) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    if (threadIdx.x == 0 && nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, box) != NULL) atomicAdd(errors, 1000);
    if (threadIdx.x < 128) return;
    for (int it = 1; it <= 100; it++) {
        if (threadIdx.x == 128) nvshmem_int_p(&box[it % 2], it * 10 + me, right);
        nvshmemx_barrier_warpgroup(NVSHMEM_TEAM_WORLD);
        if (threadIdx.x == 200 && *(volatile int *)&box[it % 2] != it * 10 + left) atomicAdd(errors, 1);
    }
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    size_t src_bytes = (size_t)NEL * SST * MAXE, dst_bytes = (size_t)NEL * DST * MAXE;
    unsigned char *src = (unsigned char *)nvshmem_malloc(src_bytes);
    unsigned char *dst = (unsigned char *)nvshmem_malloc(dst_bytes);
    std::vector<unsigned char> h(src_bytes > dst_bytes ? src_bytes : dst_bytes);

    for (int c = 0; c < NCASES; c++) {
        int e = cases[c].bytes;
        bool get = strstr(cases[c].name, "iget") != NULL;
        for (size_t j = 0; j < src_bytes / e; j++)
            for (int b = 0; b < e; b++) h[j * e + b] = pattern(me, (int)j, b);
        CUDA_CHECK(cudaMemcpy(src, h.data(), src_bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(dst, 0, dst_bytes));
        ready();
        /* iput: my source into the right PE's dest; iget: the right PE's source into my dest. */
        strided_kernel<<<1, 128>>>(c, dst, src, right);
        step_done();
        CUDA_CHECK(cudaMemcpy(h.data(), dst, dst_bytes, cudaMemcpyDeviceToHost));
        int from = get ? right : left, bad = 0;
        for (size_t k = 0; k < dst_bytes / e; k++)
            for (int b = 0; b < e; b++) {
                bool moved = k % DST == 0 && k / DST < NEL;
                unsigned char want = moved ? pattern(from, (int)(k / DST * SST), b) : 0;
                if (h[k * e + b] != want && bad++ < 4)
                    fprintf(stderr, "PE %d %s: element %zu byte %d: %d, want %d\n", me, cases[c].name, k, b, h[k * e + b], want);
            }
        CHECK(bad == 0, "%s: %d wrong bytes", cases[c].name, bad);
    }

    /* alltoalls: block j of PE i (4 elements, source stride 3) to block i on PE j (dest stride 2). */
    int *a_src = (int *)nvshmem_malloc(n * 4 * 3 * sizeof(int));
    int *a_dst = (int *)nvshmem_malloc(n * 4 * 2 * sizeof(int));
    std::vector<int> hi(n * 4 * 3);
    for (size_t x = 0; x < hi.size(); x++) hi[x] = me * 1000 + (int)x;
    CUDA_CHECK(cudaMemcpy(a_src, hi.data(), hi.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(a_dst, 0, n * 4 * 2 * sizeof(int)));
    ready();
    alltoalls_kernel<<<1, 1>>>(a_dst, a_src);
    step_done();
    CUDA_CHECK(cudaMemcpy(hi.data(), a_dst, n * 4 * 2 * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            CHECK_EQ(hi[(i * 4 + k) * 2], i * 1000 + (me * 4 + k) * 3);
            CHECK_EQ(hi[(i * 4 + k) * 2 + 1], 0);
        }

    /* maxloc: element 0 (value = PE) goes to the last PE; element 1 is a tie (7.0 everywhere),
     * which the smallest location (10) wins. */
    double2 *m_src = (double2 *)nvshmem_malloc(2 * sizeof(double2));
    double2 *m_dst = (double2 *)nvshmem_malloc(2 * sizeof(double2));
    double2 hm[2] = {make_double2((double)me, (double)me), make_double2(7.0, 10.0 + me)};
    CUDA_CHECK(cudaMemcpy(m_src, hm, sizeof hm, cudaMemcpyHostToDevice));
    ready();
    maxloc_kernel<<<1, 64>>>(m_dst, m_src);
    step_done();
    CUDA_CHECK(cudaMemcpy(hm, m_dst, sizeof hm, cudaMemcpyDeviceToHost));
    CHECK(hm[0].x == n - 1 && hm[0].y == n - 1, "maxloc[0] = (%g, %g), want (%d, %d)", hm[0].x, hm[0].y, n - 1, n - 1);
    CHECK(hm[1].x == 7.0 && hm[1].y == 10.0, "maxloc[1] = (%g, %g), want (7, 10)", hm[1].x, hm[1].y);

    int *box = (int *)nvshmem_calloc(2, sizeof(int));
    int *errors;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    ready();
    warpgroup_kernel<<<1, 256>>>(box, errors);
    step_done();
    int e = 0;
    CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    CHECK(e == 0, "warpgroup barrier / mc_ptr: %d errors (1000: mc_ptr not NULL)", e);
    return test_pass("strided");
}
