/* rshmem-cuda-test: pes=2
 * A Jacobi solver on a 2-D grid split by rows over the PEs, the way NVSHMEM users write halo
 * exchanges, in two variants: (p) the kernel that computes the new values sends each boundary
 * element to the neighbour's halo row with nvshmem_float_p as it goes; (block) a separate
 * kernel sends whole boundary rows with nvshmemx_float_put_nbi_block and nvshmem_quiet. Each
 * iteration ends with nvshmemx_barrier_all_on_stream. After the iterations every PE's rows
 * are compared with a CPU solve of the whole grid. */
#include <math.h>
#include <vector>
#include "cuda_test.h"

#define NX 1024
#define NY 512 /* interior rows of the whole grid */
#define ITERS 100

/* Local layout: rows 0 and ny+1 are halos (or the fixed global boundary); columns 0 and NX-1 fixed. */
__device__ __host__ inline float stencil(float up, float down, float left, float right) { return ((up + down) + (left + right)) * 0.25f; }

__global__ void step_p(float *out, const float *in, int ny, int top, int bottom) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y + 1;
    if (col < 1 || col >= NX - 1 || row > ny) return;
    float v = stencil(in[(row - 1) * NX + col], in[(row + 1) * NX + col], in[row * NX + col - 1], in[row * NX + col + 1]);
    out[row * NX + col] = v;
    if (row == 1 && top >= 0) nvshmem_float_p(out + (size_t)(ny + 1) * NX + col, v, top);      /* my first row: top's bottom halo */
    if (row == ny && bottom >= 0) nvshmem_float_p(out + col, v, bottom);                       /* my last row: bottom's top halo */
}

__global__ void step_plain(float *out, const float *in, int ny) {
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y + 1;
    if (col < 1 || col >= NX - 1 || row > ny) return;
    out[row * NX + col] = stencil(in[(row - 1) * NX + col], in[(row + 1) * NX + col], in[row * NX + col - 1], in[row * NX + col + 1]);
}

/* Block 0 sends the first row up, block 1 the last row down (whole rows: the fixed columns too). */
__global__ void halo_block(float *a, int ny, int top, int bottom) {
    if (blockIdx.x == 0 && top >= 0) nvshmemx_float_put_nbi_block(a + (size_t)(ny + 1) * NX, a + NX, NX, top);
    if (blockIdx.x == 1 && bottom >= 0) nvshmemx_float_put_nbi_block(a, a + (size_t)ny * NX, NX, bottom);
    if (threadIdx.x == 0) nvshmem_quiet();
}

static void init_local(std::vector<float> &h, int me, int npes, int ny) {
    for (int r = 0; r < ny + 2; r++)
        for (int c = 0; c < NX; c++) {
            int grow = me * ny + r; /* global row, with the global top boundary at 0 */
            float v = 0.0f;
            if (c == 0 || c == NX - 1) v = 0.5f;
            if (grow == 0) v = 1.0f;
            if (grow == NY + 1) v = -1.0f;
            (void)npes;
            h[r * NX + c] = v;
        }
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    CHECK(NY % npes == 0, "the grid's %d rows must split evenly over %d PEs", NY, npes);
    int ny = NY / npes, top = me > 0 ? me - 1 : -1, bottom = me < npes - 1 ? me + 1 : -1;
    size_t bytes = (size_t)(ny + 2) * NX * sizeof(float);
    float *a = (float *)nvshmem_malloc(bytes), *b = (float *)nvshmem_malloc(bytes);

    /* CPU reference over the whole grid (rows 0 and NY+1 fixed). */
    std::vector<float> g((NY + 2) * NX), gn;
    for (int r = 0; r < NY + 2; r++)
        for (int c = 0; c < NX; c++) g[r * NX + c] = (r == 0) ? 1.0f : (r == NY + 1) ? -1.0f : (c == 0 || c == NX - 1) ? 0.5f : 0.0f;
    gn = g;
    for (int it = 0; it < ITERS; it++) {
        for (int r = 1; r <= NY; r++)
            for (int c = 1; c < NX - 1; c++) gn[r * NX + c] = stencil(g[(r - 1) * NX + c], g[(r + 1) * NX + c], g[r * NX + c - 1], g[r * NX + c + 1]);
        std::swap(g, gn);
    }

    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<float> h((ny + 2) * NX);
    for (int variant = 0; variant < 2; variant++) {
        init_local(h, me, npes, ny);
        CUDA_CHECK(cudaMemcpy(a, h.data(), bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice));
        ready(); /* the copies (legacy stream) land before stream s and the neighbours touch a, b */
        float *in = a, *out = b;
        dim3 grid((NX + 255) / 256, ny);
        for (int it = 0; it < ITERS; it++) {
            if (variant == 0) {
                step_p<<<grid, 256, 0, s>>>(out, in, ny, top, bottom);
            } else {
                step_plain<<<grid, 256, 0, s>>>(out, in, ny);
                halo_block<<<2, 256, 0, s>>>(out, ny, top, bottom);
            }
            nvshmemx_barrier_all_on_stream(s);
            std::swap(in, out);
        }
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpy(h.data(), in, bytes, cudaMemcpyDeviceToHost));
        for (int r = 1; r <= ny; r++)
            for (int c = 0; c < NX; c++) {
                float want = g[(me * ny + r) * NX + c], got = h[r * NX + c];
                CHECK(fabsf(got - want) <= 1e-5f, "%s: row %d (global %d) col %d: %g, want %g", variant ? "put_nbi_block" : "p",
                      r, me * ny + r, c, got, want);
            }
        nvshmem_barrier_all();
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    nvshmem_free(b);
    nvshmem_free(a);
    if (me == 0) printf("jacobi: %dx%d grid, %d iterations, halo by p and by put_nbi_block: matches the CPU solve\n", NX, NY, ITERS);
    return test_pass("jacobi");
}
