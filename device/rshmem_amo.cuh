/* Device atomics on symmetric objects: system-scope atomic instructions on the peer's mapped
 * heap (NVLink carries them to the owning GPU). */
#ifndef RSHMEM_AMO_CUH
#define RSHMEM_AMO_CUH

#include "rshmem/device/rshmem_p2p.cuh"

RSHMEMI_EXTERN_C_BEGIN

#ifdef __CUDA_ARCH__

#define RSHMEMI_DEF_AMO_STANDARD(NAME, TYPE)                                                                     \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_add(TYPE *dest, TYPE value, int pe) {                         \
        RSHMEMI_IBGDA_AMO_RET(AMO_FETCH_ADD, TYPE, dest, value, (TYPE)0, pe);                                    \
        return rshmemi_atomic_add((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                          \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_add(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_IBGDA_AMO_VOID(AMO_ADD, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_atomic_add((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                                 \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe) {                                     \
        RSHMEMI_IBGDA_AMO_RET(AMO_FETCH_ADD, TYPE, dest, (TYPE)1, (TYPE)0, pe);                                  \
        return rshmemi_atomic_add((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), (TYPE)1);                        \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_inc(TYPE *dest, int pe) {                                           \
        RSHMEMI_IBGDA_AMO_VOID(AMO_ADD, TYPE, dest, (TYPE)1, (TYPE)0, pe)                                        \
        rshmemi_atomic_add((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), (TYPE)1);                               \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond, TYPE value, int pe) {           \
        RSHMEMI_IBGDA_AMO_RET(AMO_COMPARE_SWAP, TYPE, dest, value, cond, pe);                                    \
        return rshmemi_atomic_cas((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), cond, value);                    \
    }
RSHMEMI_REPT_AMO_STANDARD_TYPES(RSHMEMI_DEF_AMO_STANDARD)
#undef RSHMEMI_DEF_AMO_STANDARD

#define RSHMEMI_DEF_AMO_EXTENDED(NAME, TYPE)                                                                     \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch(const TYPE *dest, int pe) {                                   \
        RSHMEMI_IBGDA_AMO_RET(AMO_FETCH, TYPE, dest, (TYPE)0, (TYPE)0, pe);                                      \
        return rshmemi_load((const TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe));                                 \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_set(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_IBGDA_AMO_VOID(AMO_SET, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_atomic_exch((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                                \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_swap(TYPE *dest, TYPE value, int pe) {                              \
        RSHMEMI_IBGDA_AMO_RET(AMO_SWAP, TYPE, dest, value, (TYPE)0, pe);                                         \
        return rshmemi_atomic_exch((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                         \
    }
RSHMEMI_REPT_AMO_EXTENDED_TYPES(RSHMEMI_DEF_AMO_EXTENDED)
#undef RSHMEMI_DEF_AMO_EXTENDED

#define RSHMEMI_DEF_AMO_BITWISE(NAME, TYPE)                                                                      \
    RSHMEMI_API void nvshmem_##NAME##_atomic_and(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_IBGDA_AMO_VOID(AMO_AND, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_atomic_and((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                                 \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_or(TYPE *dest, TYPE value, int pe) {                                \
        RSHMEMI_IBGDA_AMO_VOID(AMO_OR, TYPE, dest, value, (TYPE)0, pe)                                           \
        rshmemi_atomic_or((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                                  \
    }                                                                                                            \
    RSHMEMI_API void nvshmem_##NAME##_atomic_xor(TYPE *dest, TYPE value, int pe) {                               \
        RSHMEMI_IBGDA_AMO_VOID(AMO_XOR, TYPE, dest, value, (TYPE)0, pe)                                          \
        rshmemi_atomic_xor((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                                 \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_and(TYPE *dest, TYPE value, int pe) {                         \
        RSHMEMI_IBGDA_AMO_RET(AMO_FETCH_AND, TYPE, dest, value, (TYPE)0, pe);                                    \
        return rshmemi_atomic_and((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                          \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_or(TYPE *dest, TYPE value, int pe) {                          \
        RSHMEMI_IBGDA_AMO_RET(AMO_FETCH_OR, TYPE, dest, value, (TYPE)0, pe);                                     \
        return rshmemi_atomic_or((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                           \
    }                                                                                                            \
    RSHMEMI_API TYPE nvshmem_##NAME##_atomic_fetch_xor(TYPE *dest, TYPE value, int pe) {                         \
        RSHMEMI_IBGDA_AMO_RET(AMO_FETCH_XOR, TYPE, dest, value, (TYPE)0, pe);                                    \
        return rshmemi_atomic_xor((TYPE *)RSHMEMI_PEER(dest, sizeof(TYPE), pe), value);                          \
    }
RSHMEMI_REPT_AMO_BITWISE_TYPES(RSHMEMI_DEF_AMO_BITWISE)
#undef RSHMEMI_DEF_AMO_BITWISE

#endif /* __CUDA_ARCH__ */

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_AMO_CUH */
