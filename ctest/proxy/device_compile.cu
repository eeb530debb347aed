// Compile check: the proxy channel's issuing side as CUDA device code (every operation once).
// Built by tests/proxy_channel.rs with nvcc when one is available; never run here.
#include "../../device/rshmem_proxy.cuh"

__global__ void proxy_every_op(RshmemProxyChannel *ch, char *buf, int *rc) {
    using namespace rshmem_proxy;
    uint64_t v = 0, old = 0;
    int r = put(ch, 1, 0, buf, 64, false, __func__);
    r |= put(ch, 1, 0, buf, 64, true, __func__);
    r |= get(ch, 1, 0, buf, 64, false, __func__);
    r |= p(ch, 1, 8, 5, 8, __func__);
    r |= g(ch, 1, 8, 4, &v, __func__);
    r |= amo(ch, 1, 0, RSHMEM_PROXY_AMO_ADD, RSHMEM_PROXY_TYPE_U64, 1, __func__);
    r |= fetch_amo(ch, 1, 0, RSHMEM_PROXY_AMO_CSWAP, RSHMEM_PROXY_TYPE_U32, 1, 0, &old, __func__);
    r |= put_signal(ch, 1, 0, buf, 8, 64, 1, RSHMEM_PROXY_AMO_SET, true, __func__);
    r |= fence(ch, __func__);
    r |= quiet(ch, __func__);
    rc[0] = r;
    buf[0] = (char)(v + old);
}
