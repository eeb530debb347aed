/* Device code loaded at run time by cumodule.cu (compiled to a cubin and to PTX). */
#include <nvshmem.h>

extern "C" __global__ void module_kernel(int *box, int *out) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    out[0] = me;
    out[1] = n;
    nvshmem_int_p(&box[0], 300 + me, (me + 1) % n);
    nvshmem_int_atomic_add(&box[1], 1, 0);
}
