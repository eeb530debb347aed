/* On-stream point-to-point kernels of the host API: nvshmemx_<T>_p_on_stream (a value stored
 * at a peer's address, taken at enqueue time as a launch argument) and the
 * nvshmemx_<T>_wait_until{,_all,_all_vector}_on_stream waits. Compiled to PTX by
 * scripts/gen_ptx.sh; the argument structs are mirrored in src/cuda/kernels.rs (#[repr(C)]). */
#include <stdint.h>

struct rk_store_args {
    unsigned long long addr, value; /* value: the low `size` bytes */
    unsigned int size, pad;         /* 1, 2, 4 or 8 */
};

/* One thread: the kernel's end makes the store visible to the stream's later work. */
extern "C" __global__ void __launch_bounds__(1) rk_store(const __grid_constant__ rk_store_args a) {
    switch (a.size) {
    case 1: *(volatile uint8_t *)a.addr = (uint8_t)a.value; break;
    case 2: *(volatile uint16_t *)a.addr = (uint16_t)a.value; break;
    case 4: *(volatile uint32_t *)a.addr = (uint32_t)a.value; break;
    default: *(volatile uint64_t *)a.addr = a.value; break;
    }
}

struct rk_wait_args {
    unsigned long long ivars;  /* the first variable (this PE's symmetric memory) */
    unsigned long long nelems;
    unsigned long long status; /* device array of nelems ints, nonzero: skip that variable; 0: none */
    unsigned long long values; /* device array of nelems compare values; 0: `value` for all */
    unsigned long long value;
    unsigned int cmp;          /* NVSHMEM_CMP_EQ .. NVSHMEM_CMP_GE (0..5) */
    unsigned int size;         /* 2, 4 or 8 */
    unsigned int is_signed, pad;
};

template <typename T>
__device__ bool rk_compare(T v, T x, unsigned cmp) {
    switch (cmp) {
    case 0: return v == x;
    case 1: return v != x;
    case 2: return v > x;
    case 3: return v <= x;
    case 4: return v < x;
    default: return v >= x;
    }
}

/* The block's threads share the variables; each spins on its own until it compares true. */
template <typename T>
__device__ void rk_wait_all(const rk_wait_args &a) {
    const volatile T *ivars = (const volatile T *)a.ivars;
    const int *status = (const int *)a.status;
    const T *values = (const T *)a.values;
    for (unsigned long long i = threadIdx.x; i < a.nelems; i += blockDim.x) {
        if (status && status[i] != 0) continue;
        const T x = values ? values[i] : (T)a.value;
        while (!rk_compare<T>(ivars[i], x, a.cmp)) {
        }
    }
    /* What the writers stored before their flags is visible to the stream's later work. */
    __threadfence_system();
}

extern "C" __global__ void __launch_bounds__(256) rk_wait(const __grid_constant__ rk_wait_args a) {
    switch (a.size * 2 + (a.is_signed ? 1 : 0)) {
    case 4: rk_wait_all<uint16_t>(a); break;
    case 5: rk_wait_all<int16_t>(a); break;
    case 8: rk_wait_all<uint32_t>(a); break;
    case 9: rk_wait_all<int32_t>(a); break;
    case 16: rk_wait_all<uint64_t>(a); break;
    default: rk_wait_all<int64_t>(a); break;
    }
}
