/* rshmem IBGDA portability layer: the few primitives the posting path needs, for CUDA device
 * code (nvcc) and for plain host C++17 (the build that runs against the software HCA model in CI).
 *
 *   atomics on plain memory words   cuda::atomic_ref (system scope)  |  GCC __atomic builtins
 *   system-wide fence               __threadfence_system()            |  std::atomic_thread_fence
 *   8-byte doorbell store           st.release.sys.global.u64 (MMIO)  |  release store
 *   back-off while spinning         __nanosleep                       |  yield after a few spins
 *   which CTA / SM / warp am I      blockIdx, %smid, warp id          |  thread-local ids set by the harness
 *   lanes posting together          __match_any_sync on the QP        |  a group of one (the thread)
 *   fetch landing slot              one per resident hardware thread  |  a counter
 *
 * (std::atomic_ref is C++20; the host side uses the __atomic builtins on the same words instead.)
 */
#ifndef RSHMEM_IBGDA_PORT_H
#define RSHMEM_IBGDA_PORT_H

#if !defined(__CUDACC_RTC__) /* NVRTC: rshmem_common.h has the types */
#include <stdint.h>
#endif

#if defined(__CUDACC__)
#include <cuda/atomic>
#define RSHMEM_IBGDA_FN __device__ __forceinline__
#define RSHMEM_IBGDA_DEVICE_BUILD 1
#else
#include <atomic>
#include <thread>
#define RSHMEM_IBGDA_FN inline
#endif

namespace rshmem_ibgda {

#if defined(__CUDACC__)
template <class T>
using sys_ref = cuda::atomic_ref<T, cuda::thread_scope_system>;

template <class T> RSHMEM_IBGDA_FN T load_acquire(T *p) { return sys_ref<T>(*p).load(cuda::memory_order_acquire); }
template <class T> RSHMEM_IBGDA_FN T load_relaxed(T *p) { return sys_ref<T>(*p).load(cuda::memory_order_relaxed); }
template <class T> RSHMEM_IBGDA_FN void store_release(T *p, T v) { sys_ref<T>(*p).store(v, cuda::memory_order_release); }
template <class T> RSHMEM_IBGDA_FN void store_relaxed(T *p, T v) { sys_ref<T>(*p).store(v, cuda::memory_order_relaxed); }
template <class T> RSHMEM_IBGDA_FN T fetch_add(T *p, T v) { return sys_ref<T>(*p).fetch_add(v, cuda::memory_order_relaxed); }
template <class T> RSHMEM_IBGDA_FN T fetch_max(T *p, T v) { return sys_ref<T>(*p).fetch_max(v, cuda::memory_order_acq_rel); }
template <class T> RSHMEM_IBGDA_FN T exchange(T *p, T v) { return sys_ref<T>(*p).exchange(v, cuda::memory_order_acq_rel); }
/* Strong CAS with acq_rel on success; `expected` is updated on failure. */
template <class T> RSHMEM_IBGDA_FN bool cas(T *p, T &expected, T desired) {
    return sys_ref<T>(*p).compare_exchange_strong(expected, desired, cuda::memory_order_acq_rel,
                                                  cuda::memory_order_acquire);
}
RSHMEM_IBGDA_FN void fence_system() { __threadfence_system(); }
/* Device scope, for the counters only GPU threads of this GPU touch (cheaper than system scope:
 * no wait for this thread's stores to host memory). */
template <class T>
using gpu_ref = cuda::atomic_ref<T, cuda::thread_scope_device>;
template <class T> RSHMEM_IBGDA_FN T load_acquire_gpu(T *p) { return gpu_ref<T>(*p).load(cuda::memory_order_acquire); }
template <class T> RSHMEM_IBGDA_FN T load_relaxed_gpu(T *p) { return gpu_ref<T>(*p).load(cuda::memory_order_relaxed); }
template <class T> RSHMEM_IBGDA_FN void store_release_gpu(T *p, T v) { gpu_ref<T>(*p).store(v, cuda::memory_order_release); }
template <class T> RSHMEM_IBGDA_FN T fetch_add_gpu(T *p, T v) { return gpu_ref<T>(*p).fetch_add(v, cuda::memory_order_relaxed); }
template <class T> RSHMEM_IBGDA_FN T fetch_max_gpu(T *p, T v) { return gpu_ref<T>(*p).fetch_max(v, cuda::memory_order_acq_rel); }
template <class T> RSHMEM_IBGDA_FN T fetch_or_gpu(T *p, T v) { return gpu_ref<T>(*p).fetch_or(v, cuda::memory_order_relaxed); }
template <class T> RSHMEM_IBGDA_FN bool cas_gpu(T *p, T &expected, T desired) {
    return gpu_ref<T>(*p).compare_exchange_strong(expected, desired, cuda::memory_order_acq_rel, cuda::memory_order_acquire);
}
/* The doorbell register is MMIO mapped into the GPU (or host memory for the model / CPU ringer):
 * one 8-byte store with release semantics at system scope. */
RSHMEM_IBGDA_FN void doorbell_store(uint64_t *reg, uint64_t v) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(reg), "l"(v) : "memory");
}
RSHMEM_IBGDA_FN void backoff(unsigned &spins) {
    if (++spins > 16) __nanosleep(64);
}
RSHMEM_IBGDA_FN uint32_t cta_id() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
RSHMEM_IBGDA_FN uint32_t sm_id() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
RSHMEM_IBGDA_FN uint32_t warp_id() {
    uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    uint32_t warps_per_cta = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
    return cta_id() * warps_per_cta + tid / 32u;
}
/* ---- warp groups: the lanes of a warp that post to one QP at the same moment ---- */
RSHMEM_IBGDA_FN uint32_t lane_id() {
    uint32_t l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
}
/* The lanes executing this call now whose `key` equals mine (a mask that includes me). */
RSHMEM_IBGDA_FN uint32_t group_of(uint64_t key) { return __match_any_sync(__activemask(), (unsigned long long)key); }
RSHMEM_IBGDA_FN void group_sync(uint32_t mask) { __syncwarp(mask); }
RSHMEM_IBGDA_FN uint64_t group_bcast(uint32_t mask, uint64_t v, uint32_t from) {
    return __shfl_sync(mask, (unsigned long long)v, (int)from);
}
RSHMEM_IBGDA_FN uint32_t group_bcast32(uint32_t mask, uint32_t v, uint32_t from) { return __shfl_sync(mask, v, (int)from); }
/* Whether every lane of `mask` passes the same v. */
RSHMEM_IBGDA_FN bool group_uniform(uint32_t mask, uint32_t v) {
    int pred = 0;
    (void)__match_all_sync(mask, v, &pred);
    return pred != 0;
}
/* Whether pred holds on every lane of `mask`. */
RSHMEM_IBGDA_FN bool group_all(uint32_t mask, bool pred) { return __all_sync(mask, pred) != 0; }
RSHMEM_IBGDA_FN uint32_t popc(uint32_t x) { return (uint32_t)__popc(x); }
RSHMEM_IBGDA_FN uint32_t ctz64(uint64_t x) { return (uint32_t)__ffsll((long long)x) - 1u; }
RSHMEM_IBGDA_FN uint32_t first_lane(uint32_t mask) { return (uint32_t)__ffs(mask) - 1u; }
/* A landing slot index unique among the threads resident on the GPU right now: (SM, hardware
 * warp slot, lane). A thread has at most one fetch outstanding (fetches block), so no two
 * outstanding fetches share a slot. */
RSHMEM_IBGDA_FN uint64_t fetch_slot_index(uint64_t *) {
    uint32_t w;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
    return ((uint64_t)sm_id() * 64u + (w & 63u)) * 32u + lane_id();
}
#else
template <class T> inline T load_acquire(T *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
template <class T> inline T load_relaxed(T *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
template <class T> inline void store_release(T *p, T v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
template <class T> inline void store_relaxed(T *p, T v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
template <class T> inline T fetch_add(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
template <class T> inline T fetch_max(T *p, T v) {
    T cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    }
    return cur;
}
template <class T> inline T exchange(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL); }
template <class T> inline bool cas(T *p, T &expected, T desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
inline void fence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
/* Host threads: device scope is the same as system scope. */
template <class T> inline T load_acquire_gpu(T *p) { return load_acquire(p); }
template <class T> inline T load_relaxed_gpu(T *p) { return load_relaxed(p); }
template <class T> inline void store_release_gpu(T *p, T v) { store_release(p, v); }
template <class T> inline T fetch_add_gpu(T *p, T v) { return fetch_add(p, v); }
template <class T> inline T fetch_max_gpu(T *p, T v) { return fetch_max(p, v); }
template <class T> inline bool cas_gpu(T *p, T &expected, T desired) { return cas(p, expected, desired); }
template <class T> inline T fetch_or_gpu(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
inline void doorbell_store(uint64_t *reg, uint64_t v) { __atomic_store_n(reg, v, __ATOMIC_RELEASE); }
/* Host threads share few cores with the model thread: yield early. */
inline void backoff(unsigned &spins) {
    if (++spins > 4) std::this_thread::yield();
}
/* The host harness plays CTAs / SMs / warps with threads and sets these. */
struct host_ids {
    uint32_t cta, sm, warp;
};
inline host_ids &this_thread_ids() {
    static thread_local host_ids ids = {0, 0, 0};
    return ids;
}
inline uint32_t cta_id() { return this_thread_ids().cta; }
inline uint32_t sm_id() { return this_thread_ids().sm; }
inline uint32_t warp_id() { return this_thread_ids().warp; }
/* A host thread posts alone: a group of one. */
inline uint32_t lane_id() { return 0; }
inline uint32_t group_of(uint64_t) { return 1u; }
inline void group_sync(uint32_t) {}
inline uint64_t group_bcast(uint32_t, uint64_t v, uint32_t) { return v; }
inline uint32_t group_bcast32(uint32_t, uint32_t v, uint32_t) { return v; }
inline bool group_uniform(uint32_t, uint32_t) { return true; }
inline bool group_all(uint32_t, bool pred) { return pred; }
inline uint32_t popc(uint32_t x) { return (uint32_t)__builtin_popcount(x); }
inline uint32_t ctz64(uint64_t x) { return (uint32_t)__builtin_ctzll(x); }
inline uint32_t first_lane(uint32_t mask) { return (uint32_t)__builtin_ctz(mask); }
/* Host threads take slots from a counter (the tests keep fewer fetches in flight than slots). */
inline uint64_t fetch_slot_index(uint64_t *counter) { return fetch_add(counter, (uint64_t)1); }
#endif

} // namespace rshmem_ibgda

#endif /* RSHMEM_IBGDA_PORT_H */
