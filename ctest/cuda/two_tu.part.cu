/* The second translation unit of two_tu.cu. */
#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void other_unit(int *box, int *out) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), right = (me + 1) % n;
    out[0] = me;
    out[1] = n;
    out[2] = nvshmem_ptr(box, right) != NULL;
    nvshmemx_int_put_block(&box[1], &out[3], 0, right); /* zero elements: a no-op */
    if (threadIdx.x == 0) nvshmem_int_p(&box[1], 200 + me, right);
}

void launch_other_unit(int *box, int *out) { other_unit<<<1, 32>>>(box, out); }
