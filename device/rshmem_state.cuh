/* The device state in constant memory, and how it gets there.
 *
 * Without -rdc every translation unit is its own device module, so each gets its own
 * `static __constant__` copy; a static initializer registers a writer (a host function of this
 * unit that calls cudaMemcpyToSymbol on this unit's copy) with librshmem, which calls it at
 * nvshmem_init (and at once if the library is already initialized). Under -rdc one merged
 * `inline __constant__` variable serves every unit (a `static` one would not: the symbol of a
 * second unit cannot be written with cudaMemcpyToSymbol there). Modules loaded at run time
 * (cubin, NVRTC, cudaLibrary) call nvshmemx_cumodule_init / nvshmemx_culibrary_init instead,
 * which find the variable by its name, rshmemi_device_state_d. */
#ifndef RSHMEM_STATE_CUH
#define RSHMEM_STATE_CUH

#include "rshmem/device/rshmem_common.h"

static_assert(sizeof(RshmemDeviceState) == RSHMEM_DEVICE_STATE_SIZE,
              "rshmem device state: header and library disagree on the layout");

#if defined(__CUDACC_RDC__)
inline __constant__ RshmemDeviceState rshmemi_device_state_d;
#else
static __constant__ RshmemDeviceState rshmemi_device_state_d;
#endif

#if !defined(__CUDACC_RTC__)
namespace {
/* Copies the library's state into this translation unit's constant copy. */
int rshmemi_write_device_state(const RshmemDeviceState *state, size_t size) {
    return (int)cudaMemcpyToSymbol(rshmemi_device_state_d, state, size, 0, cudaMemcpyHostToDevice);
}
struct rshmemi_state_registration {
    rshmemi_state_registration() { rshmem_device_state_register(&rshmemi_write_device_state); }
    ~rshmemi_state_registration() { rshmem_device_state_unregister(&rshmemi_write_device_state); }
};
/* One per translation unit: registers this unit's writer before main. */
rshmemi_state_registration rshmemi_state_registration_instance;
} /* namespace */
#endif

#define RSHMEMI_STATE rshmemi_device_state_d

#endif /* RSHMEM_STATE_CUH */
