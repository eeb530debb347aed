// Compile check: the IBGDA posting path as CUDA device code (every operation instantiated once).
// Built by tests/ibgda_layout.rs with nvcc when one is available; never run here.
#include "../../device/ibgda/ibgda_pe.h"

using namespace rshmem_ibgda;

__global__ void ibgda_every_op(rshmem_ibgda_state *st, uint64_t *w64, uint32_t *w32, uint8_t *bytes, uint32_t pe,
                               int *rc) {
    uint64_t o64 = 0;
    uint32_t o32 = 0;
    double d = 0;
    int r = 0;
    r |= p(st, w64, (uint64_t)1, pe);
    r |= p(st, w32, (uint32_t)2, pe);
    r |= p(st, bytes, (uint8_t)3, pe);
    r |= p(st, (uint16_t *)bytes, (uint16_t)4, pe);
    r |= g(st, (const double *)w64, pe, &d);
    r |= putmem_nbi(st, bytes, bytes + 64, 64, pe);
    r |= putmem(st, bytes, bytes + 64, 4096, pe);
    r |= getmem(st, bytes, bytes + 64, 4096, pe);
    for (uint32_t op = AMO_FETCH_ADD; op <= AMO_XOR; op++) {
        r |= amo(st, (amo_op)op, w64, (uint64_t)3, (uint64_t)1, pe, &o64);
        r |= amo(st, (amo_op)op, w32, (uint32_t)3, (uint32_t)1, pe, &o32);
    }
    r |= put_signal(st, bytes, bytes + 64, 100, w64, 1, true, pe, true);
    r |= fence_pe(st, pe);
    fence_thread(st);
    r |= quiet_all(st);
    rc[threadIdx.x] = r + (int)o64 + (int)o32 + (int)d + dct_owner(st, 1, 2);
}
