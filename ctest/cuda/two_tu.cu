/* rshmem-cuda-test: pes=2
 * Two translation units of one program both include the device headers, without -rdc: each
 * gets its own constant copy of the device state, and both must be filled in (the other unit
 * is two_tu.part.cu). Also built with -rdc=true as two_tu_rdc (one merged copy). */
#include "cuda_test.h"

void launch_other_unit(int *box, int *out); /* two_tu.part.cu */

__global__ void this_unit(int *box, int *out) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    out[0] = me;
    out[1] = n;
    out[2] = nvshmem_ptr(box, right) != NULL;
    nvshmem_int_p(&box[0], 100 + me, right);
}

int main(void) {
    test_init();
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), left = (me + n - 1) % n;
    int *box = (int *)nvshmem_calloc(2, sizeof(int));
    int *out;
    CUDA_CHECK(cudaMalloc(&out, 8 * sizeof(int)));
    CUDA_CHECK(cudaMemset(out, 0xff, 8 * sizeof(int)));
    this_unit<<<1, 1>>>(box, out);
    launch_other_unit(box, out + 4);
    step_done();
    int h[8], b[2];
    int same_host = test_same_host((me + 1) % n);
    CUDA_CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b, box, sizeof b, cudaMemcpyDeviceToHost));
    for (int unit = 0; unit < 2; unit++) {
        CHECK(h[4 * unit] == me, "unit %d sees my_pe %d", unit, h[4 * unit]);
        CHECK(h[4 * unit + 1] == n, "unit %d sees n_pes %d", unit, h[4 * unit + 1]);
        /* The peer's memory is mapped here only when it shares this host (NULL across hosts). */
        CHECK(h[4 * unit + 2] == same_host, "unit %d: nvshmem_ptr to the peer is %s, want %s (peer on %s host)", unit,
              h[4 * unit + 2] ? "non-NULL" : "NULL", same_host ? "non-NULL" : "NULL", same_host ? "this" : "another");
    }
    CHECK_EQ(b[0], 100 + left);
    CHECK_EQ(b[1], 200 + left);
    return test_pass("two_tu");
}
