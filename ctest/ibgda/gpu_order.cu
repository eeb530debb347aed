/* IBGDA route on the GPU, ordering (built with -DRSHMEM_IBGDA_ROUTE; NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model, 2 PEs; run_gpu.sh
 * runs it with NVSHMEM_IBGDA_RC_MAP_BY=warp NVSHMEM_IBGDA_NUM_RC_PER_PE=8 RSHMEM_IBGDA_MODEL_THREADS=4,
 * so different warps post on different QPs served by different model threads, which run in any
 * order relative to each other).
 *   quiet   8 warps of PE 0 put to PE 1 on their own QPs; one thread quiets and then raises a flag
 *           on its QP: PE 1, on seeing the flag, must find every word (quiet covers all QPs).
 *   fence   per lane: rounds of data, fence, flag; PE 1 must never see a flag ahead of its data.
 *   signal  put_signal of 1 MiB from the heap: when the signal arrives every byte is there.
 *   get     PE 0 reads PE 1's copy of the pattern with getmem into the heap and into a
 *           cudaMalloc buffer (8-byte pieces through the landing slot). */
#include "../cuda/cuda_test.h"

#define WARPS 8
#define PER_LANE 64
#define NWORDS (WARPS * 32 * PER_LANE)
#define ROUNDS 200
#define BIG (1 << 20)

__global__ void quiet_sender(uint64_t *data, uint64_t *flag) {
    int t = threadIdx.x;
    for (int i = 0; i < PER_LANE; i++) nvshmem_uint64_p(&data[t * PER_LANE + i], 1000000ull + t * PER_LANE + i, 1);
    __syncthreads();
    if (t == 0) {
        nvshmem_quiet();
        nvshmem_uint64_p(flag, 1, 1);
    }
}

__global__ void quiet_receiver(const uint64_t *data, uint64_t *flag, int *errors) {
    int t = threadIdx.x;
    if (t == 0) nvshmem_uint64_wait_until(flag, NVSHMEM_CMP_EQ, 1);
    __syncthreads();
    for (int i = 0; i < PER_LANE; i++) {
        uint64_t v = *(volatile const uint64_t *)&data[t * PER_LANE + i];
        if (v != 1000000ull + t * PER_LANE + i) atomicAdd(errors, 1);
    }
}

__global__ void fence_sender(uint64_t *data, uint64_t *flags) {
    int l = threadIdx.x;
    for (uint64_t r = 1; r <= ROUNDS; r++) {
        nvshmem_uint64_p(&data[l], r, 1);
        nvshmem_fence();
        nvshmem_uint64_p(&flags[l], r, 1);
    }
    nvshmem_quiet();
}

__global__ void fence_receiver(const uint64_t *data, const uint64_t *flags, int *errors) {
    int l = threadIdx.x;
    uint64_t f = 0;
    while (f < ROUNDS) {
        f = *(volatile const uint64_t *)&flags[l];
        __threadfence();
        uint64_t d = *(volatile const uint64_t *)&data[l];
        if (d < f) atomicAdd(errors, 1);
    }
}

__global__ void signal_sender(char *dst, const char *src, uint64_t *sig) {
    nvshmemx_putmem_signal_block(dst, src, BIG, sig, 7, NVSHMEM_SIGNAL_SET, 1);
}

__global__ void signal_receiver(const char *dst, uint64_t *sig, int *errors) {
    if (threadIdx.x == 0) nvshmem_signal_wait_until(sig, NVSHMEM_CMP_EQ, 7);
    __syncthreads();
    for (int i = threadIdx.x; i < BIG; i += blockDim.x)
        if (dst[i] != (char)(i * 31 + 5)) atomicAdd(errors, 1);
}

__global__ void get_back(char *heap_dst, char *plain_dst, const char *src) {
    nvshmem_quiet();
    nvshmem_getmem(heap_dst, src, 4096, 1);
    nvshmem_getmem(plain_dst, src + 8, 203, 1);
}

__global__ void fill(char *p, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = (char)(i * 31 + 5);
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe();
    CHECK(nvshmem_n_pes() == 2, "run with 2 PEs");
    uint64_t *data = (uint64_t *)nvshmem_calloc(NWORDS, 8);
    uint64_t *flag = (uint64_t *)nvshmem_calloc(1, 8);
    uint64_t *fdata = (uint64_t *)nvshmem_calloc(32, 8);
    uint64_t *fflags = (uint64_t *)nvshmem_calloc(32, 8);
    char *big_src = (char *)nvshmem_malloc(BIG);
    char *big_dst = (char *)nvshmem_calloc(BIG, 1);
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, 8);
    char *back = (char *)nvshmem_calloc(4096, 1);
    int *errors;
    char *plain;
    CUDA_CHECK(cudaMalloc(&errors, sizeof(int)));
    CUDA_CHECK(cudaMemset(errors, 0, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&plain, 256));
    fill<<<64, 256>>>(big_src, BIG);
    step_done();

    /* quiet */
    if (me == 0) quiet_sender<<<1, WARPS * 32>>>(data, flag);
    else quiet_receiver<<<1, WARPS * 32>>>(data, flag, errors);
    step_done();
    /* fence */
    if (me == 0) fence_sender<<<1, 32>>>(fdata, fflags);
    else fence_receiver<<<1, 32>>>(fdata, fflags, errors);
    step_done();
    /* put with signal */
    if (me == 0) signal_sender<<<1, 128>>>(big_dst, big_src, sig);
    else signal_receiver<<<1, 256>>>(big_dst, sig, errors);
    step_done();
    int e = 0;
    CUDA_CHECK(cudaMemcpy(&e, errors, sizeof e, cudaMemcpyDeviceToHost));
    CHECK(e == 0, "%d ordering violations seen on PE %d", e, me);

    /* gets of PE 1's pattern */
    if (me == 0) {
        get_back<<<1, 1>>>(back, plain, big_src);
        CUDA_CHECK(cudaDeviceSynchronize());
        char h[4096], hp[203];
        CUDA_CHECK(cudaMemcpy(h, back, sizeof h, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(hp, plain, sizeof hp, cudaMemcpyDeviceToHost));
        for (int i = 0; i < 4096; i++) CHECK(h[i] == (char)(i * 31 + 5), "getmem into the heap: byte %d", i);
        for (int i = 0; i < 203; i++) CHECK(hp[i] == (char)((i + 8) * 31 + 5), "getmem into cudaMalloc memory: byte %d", i);
    }
    if (me == 0) printf("ibgda order: quiet over %d QPs, %d fenced rounds x 32 lanes, 1 MiB put_signal, gets: ok\n", WARPS, ROUNDS);
    return test_pass("gpu_order");
}
