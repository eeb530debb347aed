/* The proxy's remote-AMO taker: one thread that runs the atomic a PE on another host asked for
 * on this PE's GPU memory, unless a device thread waiting in device code took it first
 * (device/rshmem_proxy.cuh, serve_amo; src/proxy/gpu.rs, AmoDoorbell). */
#include <rshmem/device/rshmem_proxy.cuh>

extern "C" __global__ void rk_proxy_amo(RshmemProxyChannel *ch) { rshmem_proxy::serve_amo(ch); }
