/* Device atomics on symmetric objects: system-scope atomic instructions on the peer's mapped
 * heap (NVLink carries them to the owning GPU). The forms without a result are reductions
 * (red.relaxed.sys) and atomic_set a relaxed store: the thread waits for no reply. */
#ifndef RSHMEM_AMO_CUH
#define RSHMEM_AMO_CUH

#include "rshmem/device/rshmem_p2p.cuh"

RSHMEMI_EXTERN_C_BEGIN

#ifdef __CUDA_ARCH__

/* The start of every AMO: the careful route (IBGDA or checks), then the peer's address. */
#define RSHMEMI_AMO_START(OP, TYPE, DEST, VALUE, COND, PE) \
    RSHMEMI_CAREFUL(PE, DEST, sizeof(TYPE), __func__, rshmemi_remote_amo<TYPE>(rshmem_ibgda::OP, DEST, VALUE, COND, PE, __func__))
#define RSHMEMI_AMO_START_VOID(OP, TYPE, DEST, VALUE, COND, PE) \
    RSHMEMI_CAREFUL(PE, DEST, sizeof(TYPE), __func__, (void)rshmemi_remote_amo<TYPE>(rshmem_ibgda::OP, DEST, VALUE, COND, PE, __func__))
#define RSHMEMI_AMO_PEER(TYPE, DEST, PE) ((TYPE *)rshmemi_peer(DEST, PE))

#define RSHMEMI_DEF_AMO_STANDARD(NAME, TYPE)                                                                     \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_add(TYPE *dest, TYPE value, int pe) {                         \
        RSHMEMI_AMO_START(AMO_FETCH_ADD, TYPE, dest, value, (TYPE)0, pe)                                         \
        return rshmemi_atomic_add(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                      \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_add(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_AMO_START_VOID(AMO_ADD, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_red_add(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                                \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe) {                                     \
        RSHMEMI_AMO_START(AMO_FETCH_ADD, TYPE, dest, (TYPE)1, (TYPE)0, pe)                                       \
        return rshmemi_atomic_add(RSHMEMI_AMO_PEER(TYPE, dest, pe), (TYPE)1);                                    \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_inc(TYPE *dest, int pe) {                                           \
        RSHMEMI_AMO_START_VOID(AMO_ADD, TYPE, dest, (TYPE)1, (TYPE)0, pe)                                        \
        rshmemi_red_add(RSHMEMI_AMO_PEER(TYPE, dest, pe), (TYPE)1);                                              \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond, TYPE value, int pe) {           \
        RSHMEMI_AMO_START(AMO_COMPARE_SWAP, TYPE, dest, value, cond, pe)                                         \
        return rshmemi_atomic_cas(RSHMEMI_AMO_PEER(TYPE, dest, pe), cond, value);                                \
    }
RSHMEMI_REPT_AMO_STANDARD_TYPES(RSHMEMI_DEF_AMO_STANDARD)
#undef RSHMEMI_DEF_AMO_STANDARD

#define RSHMEMI_DEF_AMO_EXTENDED(NAME, TYPE)                                                                     \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch(const TYPE *dest, int pe) {                                   \
        RSHMEMI_AMO_START(AMO_FETCH, TYPE, dest, (TYPE)0, (TYPE)0, pe)                                           \
        return rshmemi_load((const TYPE *)rshmemi_peer(dest, pe));                                               \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_set(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_AMO_START_VOID(AMO_SET, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_store(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                                  \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_swap(TYPE *dest, TYPE value, int pe) {                              \
        RSHMEMI_AMO_START(AMO_SWAP, TYPE, dest, value, (TYPE)0, pe)                                              \
        return rshmemi_atomic_exch(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                     \
    }
RSHMEMI_REPT_AMO_EXTENDED_TYPES(RSHMEMI_DEF_AMO_EXTENDED)
#undef RSHMEMI_DEF_AMO_EXTENDED

#define RSHMEMI_DEF_AMO_BITWISE(NAME, TYPE)                                                                      \
    RSHMEMI_API void nvshmem_##NAME##_atomic_and(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_AMO_START_VOID(AMO_AND, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_red_and(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                                \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_or(TYPE *dest, TYPE value, int pe) {                                \
        RSHMEMI_AMO_START_VOID(AMO_OR, TYPE, dest, value, (TYPE)0, pe)                                           \
        rshmemi_red_or(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                                 \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_xor(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_AMO_START_VOID(AMO_XOR, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_red_xor(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                                \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_and(TYPE *dest, TYPE value, int pe) {                         \
        RSHMEMI_AMO_START(AMO_FETCH_AND, TYPE, dest, value, (TYPE)0, pe)                                         \
        return rshmemi_atomic_and(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                      \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_or(TYPE *dest, TYPE value, int pe) {                          \
        RSHMEMI_AMO_START(AMO_FETCH_OR, TYPE, dest, value, (TYPE)0, pe)                                          \
        return rshmemi_atomic_or(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                       \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_xor(TYPE *dest, TYPE value, int pe) {                         \
        RSHMEMI_AMO_START(AMO_FETCH_XOR, TYPE, dest, value, (TYPE)0, pe)                                         \
        return rshmemi_atomic_xor(RSHMEMI_AMO_PEER(TYPE, dest, pe), value);                                      \
    }
RSHMEMI_REPT_AMO_BITWISE_TYPES(RSHMEMI_DEF_AMO_BITWISE)
#undef RSHMEMI_DEF_AMO_BITWISE
#undef RSHMEMI_AMO_START
#undef RSHMEMI_AMO_START_VOID
#undef RSHMEMI_AMO_PEER

#endif /* __CUDA_ARCH__ */

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_AMO_CUH */
