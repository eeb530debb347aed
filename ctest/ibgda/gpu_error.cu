/* IBGDA route on the GPU, errors (built with -DRSHMEM_IBGDA_ROUTE; NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model, 2 PEs). Expected
 * to FAIL with a message; run_gpu.sh checks the message.
 * PE 0 writes to an address inside PE 1's reserved heap but past what is mapped (registered):
 * the device's own check passes (the address is in the heap's range), the NIC rejects the WQE
 * with a remote access error.
 *   argv[1] = device: a blocking nvshmem_putmem from the heap waits for its completion, sees the
 *                     error CQE and stops the kernel with a message naming the op and the PEs.
 *   argv[1] = host:   an nvshmem_int_p (inline, nothing waits for it); the host barrier that
 *                     follows reports the error, naming the op and the PEs. */
#include <string.h>
#include "../cuda/cuda_test.h"

__global__ void bad_put(char *bad, const char *src) { nvshmem_putmem(bad, src, 64, 1); }
__global__ void bad_p(int *bad) { nvshmem_int_p(bad, 42, 1); }

int main(int argc, char **argv) {
    test_init();
    const char *mode = argc > 1 ? argv[1] : "device";
    char *src = (char *)nvshmem_calloc(64, 1);
    /* The last bytes of this PE's reserved heap: symmetric by construction, never mapped here. */
    RshmemDeviceState s;
    CUDA_CHECK(cudaMemcpyFromSymbol(&s, rshmemi_device_state_d, sizeof s));
    CHECK(s.flags & RSHMEM_DEVICE_FLAG_IBGDA, "run with NVSHMEM_DISABLE_P2P=1 RSHMEM_IBGDA_NIC=model");
    char *bad = (char *)(uintptr_t)(s.heap_base + s.heap_stride - 128);
    if (nvshmem_my_pe() == 0) {
        if (strcmp(mode, "host") == 0) bad_p<<<1, 1>>>((int *)bad);
        else bad_put<<<1, 1>>>(bad, src);
        cudaError_t e = cudaDeviceSynchronize();
        fprintf(stderr, "PE 0: kernel finished: %s\n", cudaGetErrorString(e));
    }
    nvshmem_barrier_all();
    printf("no error was reported\n");
    return test_pass("gpu_error");
}
