/* rshmem: definitions shared by the NVSHMEM host header (include/nvshmem.h) and the
 * header-only device library. Names, signatures and constant values follow NVSHMEM 3.x so
 * that programs written against NVSHMEM's documentation build unchanged.
 * Plain C compatible; CUDA types come from the CUDA headers when they are available. */
#ifndef RSHMEM_DEVICE_COMMON_H
#define RSHMEM_DEVICE_COMMON_H

#if defined(__CUDACC_RTC__)
/* NVRTC has no C library: the fixed-width types as libcu++ defines them under NVRTC (so that
 * <cuda/std/cstdint> may be included as well); size_t and ptrdiff_t are built in. */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
#else
#include <stddef.h>
#include <stdint.h>
#endif
#include "rshmem/rshmem_abi.h"

/* ---- CUDA types ---------------------------------------------------------------------- */
#if defined(__CUDACC_RTC__)
/* NVRTC: device code only. half and bfloat16 where the CUDA headers are on the include path
 * (-I$CUDA_HOME/include, as NVSHMEM needs too). */
#if __has_include(<cuda_fp16.h>) && __has_include(<cuda_bf16.h>)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define RSHMEMI_HAVE_FP16 1
#endif
#elif defined(__CUDACC__)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define RSHMEMI_HAVE_CUDA_TYPES 1
#define RSHMEMI_HAVE_FP16 1
#elif defined(__has_include)
#if __has_include(<cuda_runtime.h>) && __has_include(<cuda.h>)
#include <cuda.h>
#include <cuda_runtime.h>
#define RSHMEMI_HAVE_CUDA_TYPES 1
#endif
#endif
#ifndef RSHMEMI_HAVE_CUDA_TYPES
/* No CUDA headers: the handle types as opaque pointers (the same tags CUDA uses). */
typedef struct CUstream_st *cudaStream_t;
typedef struct CUmod_st *CUmodule;
typedef struct CUlib_st *CUlibrary;
#endif
#if defined(__cplusplus) && defined(RSHMEMI_HAVE_CUDA_TYPES) && !defined(RSHMEMI_HAVE_FP16)
#if defined(__has_include)
#if __has_include(<cuda_fp16.h>) && __has_include(<cuda_bf16.h>)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define RSHMEMI_HAVE_FP16 1
#endif
#endif
#endif

/* ---- execution-space prefixes ---------------------------------------------------------
 * A routine that exists on the host (in librshmem.so) and on the device (inline, in the
 * device headers) is declared __host__ __device__ while compiling device code, and defined
 * for the device only under __CUDA_ARCH__; host code links the library's symbol. */
#if defined(__CUDA_ARCH__)
#define RSHMEMI_HOSTDEV __host__ __device__
#else
#define RSHMEMI_HOSTDEV
#endif

#ifdef __cplusplus
#define RSHMEMI_EXTERN_C_BEGIN extern "C" {
#define RSHMEMI_EXTERN_C_END }
#else
#define RSHMEMI_EXTERN_C_BEGIN
#define RSHMEMI_EXTERN_C_END
#endif

/* ---- constants (NVSHMEM's values) ----------------------------------------------------- */
#define NVSHMEM_MAJOR_VERSION 1
#define NVSHMEM_MINOR_VERSION 3
#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 4
#define NVSHMEM_VENDOR_PATCH_VERSION 5
#define NVSHMEM_VENDOR_VERSION \
    (NVSHMEM_VENDOR_MAJOR_VERSION * 10000 + NVSHMEM_VENDOR_MINOR_VERSION * 100 + NVSHMEM_VENDOR_PATCH_VERSION)
#define NVSHMEM_MAX_NAME_LEN 256
#define NVSHMEM_VENDOR_STRING "rshmem (NVSHMEM 3.4 API)"

enum nvshmemi_cmp_type {
    NVSHMEM_CMP_EQ = 0,
    NVSHMEM_CMP_NE = 1,
    NVSHMEM_CMP_GT = 2,
    NVSHMEM_CMP_LE = 3,
    NVSHMEM_CMP_LT = 4,
    NVSHMEM_CMP_GE = 5,
    NVSHMEM_CMP_SENTINEL = 0x7fffffff
};
typedef enum nvshmemi_cmp_type nvshmemx_cmp_type_t;

enum nvshmemi_thread_support {
    NVSHMEM_THREAD_SINGLE = 0,
    NVSHMEM_THREAD_FUNNELED = 1,
    NVSHMEM_THREAD_SERIALIZED = 2,
    NVSHMEM_THREAD_MULTIPLE = 3,
    NVSHMEM_THREAD_TYPE_SENTINEL = 0x7fffffff
};

typedef enum { NVSHMEM_SIGNAL_SET = 9, NVSHMEM_SIGNAL_ADD = 10 } nvshmemx_signal_op_t;

typedef enum {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED = 1,
    NVSHMEM_STATUS_IS_INITIALIZED = 2,
    NVSHMEM_STATUS_LIMITED_MPG = 3,
    NVSHMEM_STATUS_FULL_MPG = 4,
    NVSHMEM_STATUS_INVALID = 0x7fffffff
} nvshmemx_init_status_t;

enum flags {
    NVSHMEMX_INIT_THREAD_PES = RSHMEM_INIT_THREAD_PES,
    NVSHMEMX_INIT_WITH_MPI_COMM = RSHMEM_INIT_WITH_MPI_COMM,
    NVSHMEMX_INIT_WITH_SHMEM = RSHMEM_INIT_WITH_SHMEM,
    NVSHMEMX_INIT_WITH_UNIQUEID = RSHMEM_INIT_WITH_UNIQUEID,
    NVSHMEMX_INIT_MAX = 0x7fffffff
};

/* Status codes of routines that return one (NVSHMEM's numbering; rshmem returns 0 on success
 * and a non-zero code on failure, after a message naming the routine). */
typedef enum {
    NVSHMEMX_SUCCESS = 0,
    NVSHMEMX_ERROR_INVALID_VALUE = 1,
    NVSHMEMX_ERROR_OUT_OF_MEMORY = 2,
    NVSHMEMX_ERROR_NOT_SUPPORTED = 3,
    NVSHMEMX_ERROR_SYMMETRY = 4,
    NVSHMEMX_ERROR_GPU_NOT_SELECTED = 5,
    NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED = 6,
    NVSHMEMX_ERROR_INTERNAL = 7,
    NVSHMEMX_ERROR_SENTINEL = 0x7fffffff
} nvshmemx_status;

typedef int32_t nvshmem_team_t;
typedef nvshmem_team_t nvshmemx_team_t;
enum {
    NVSHMEM_TEAM_INVALID = -1,
    NVSHMEM_TEAM_WORLD = 0,
    NVSHMEM_TEAM_WORLD_INDEX = 0,
    NVSHMEM_TEAM_SHARED = 1,
    NVSHMEM_TEAM_SHARED_INDEX = 1,
    NVSHMEMX_TEAM_NODE = 2,
    NVSHMEM_TEAM_NODE_INDEX = 2,
    NVSHMEMX_TEAM_SAME_MYPE_NODE = 3,
    NVSHMEM_TEAM_SAME_MYPE_NODE_INDEX = 3,
    NVSHMEM_TEAMS_MIN = 6
};

/* Init attributes: the structs are rshmem's (src/abi), with NVSHMEM's names and sizes. */
typedef RshmemUniqueId nvshmemx_uniqueid_v1;
typedef RshmemUniqueId nvshmemx_uniqueid_t;
typedef RshmemUniqueIdArgs nvshmemx_uniqueid_args_v1;
typedef RshmemUniqueIdArgs nvshmemx_uniqueid_args_t;
typedef RshmemInitArgs nvshmemx_init_args_v1;
typedef RshmemInitArgs nvshmemx_init_args_t;
typedef RshmemInitAttr nvshmemx_init_attr_v1;
typedef RshmemInitAttr nvshmemx_init_attr_t;

#define RSHMEMI_VERSION_WORD(T) ((1 << 16) + (int)sizeof(T))
#define NVSHMEMX_UNIQUEID_INITIALIZER { RSHMEMI_VERSION_WORD(nvshmemx_uniqueid_t), { 0 } }
#define NVSHMEMX_UNIQUEID_ARGS_INITIALIZER { RSHMEMI_VERSION_WORD(nvshmemx_uniqueid_args_t), NULL, -1, -1 }
#define NVSHMEMX_INIT_ARGS_INITIALIZER \
    { RSHMEMI_VERSION_WORD(nvshmemx_init_args_t), NVSHMEMX_UNIQUEID_ARGS_INITIALIZER, { 0 } }
#define NVSHMEMX_INIT_ATTR_INITIALIZER \
    { RSHMEMI_VERSION_WORD(nvshmemx_init_attr_t), NULL, NVSHMEMX_INIT_ARGS_INITIALIZER }

/* ---- type tables: X(NAME, TYPE) --------------------------------------------------------- */
/* GENERATED by scripts/gen_headers.py from scripts/type_table.py, up to the end marker. */

/* NVSHMEM's standard RMA types. */
#if defined(RSHMEMI_HAVE_FP16)
#define RSHMEMI_REPT_RMA_TYPES_FP16(X) X(half, half) X(bfloat16, __nv_bfloat16)
#else
#define RSHMEMI_REPT_RMA_TYPES_FP16(X)
#endif
#define RSHMEMI_REPT_RMA_TYPES(X)                                                                  \
    RSHMEMI_REPT_RMA_TYPES_FP16(X) X(float, float) X(double, double) X(char, char)                 \
    X(short, short) X(schar, signed char) X(int, int) X(long, long) X(longlong, long long)         \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                        \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t)     \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)                      \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

/* Standard AMO types: inc, fetch_inc, add, fetch_add, compare_swap. */
#define RSHMEMI_REPT_AMO_STANDARD_TYPES(X)                                                         \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int)                         \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t)   \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)

/* Extended AMO types: fetch, set, swap. */
#define RSHMEMI_REPT_AMO_EXTENDED_TYPES(X)                                                         \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int)                         \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t)   \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)                  \
    X(float, float) X(double, double)

/* Bitwise AMO types: and, or, xor and their fetching forms. */
#define RSHMEMI_REPT_AMO_BITWISE_TYPES(X)                                                          \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)                 \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)

/* Point-to-point synchronization types: wait_until, test. */
#define RSHMEMI_REPT_WAIT_TYPES(X)                                                                 \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(ushort, unsigned short)     \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)                 \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)    \
    X(ptrdiff, ptrdiff_t)

/* Bitwise reductions (and, or, xor) on unsigned and fixed-width integers. */
#define RSHMEMI_REPT_BITWISE_REDUCE_TYPES(X, OP)                                                   \
    X(uchar, unsigned char, OP) X(ushort, unsigned short, OP) X(uint, unsigned int, OP)            \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP)           \
    X(int16, int16_t, OP) X(int32, int32_t, OP) X(int64, int64_t, OP) X(uint8, uint8_t, OP)        \
    X(uint16, uint16_t, OP) X(uint32, uint32_t, OP) X(uint64, uint64_t, OP) X(size, size_t, OP)

/* max, min, sum and prod on every standard type. */
#if defined(RSHMEMI_HAVE_FP16)
#define RSHMEMI_REPT_STANDARD_REDUCE_TYPES_FP16(X, OP) X(bfloat16, __nv_bfloat16, OP) X(half, half, OP)
#else
#define RSHMEMI_REPT_STANDARD_REDUCE_TYPES_FP16(X, OP)
#endif
#define RSHMEMI_REPT_STANDARD_REDUCE_TYPES(X, OP)                                                  \
    X(uchar, unsigned char, OP) X(ushort, unsigned short, OP) X(uint, unsigned int, OP)            \
    X(ulong, unsigned long, OP) X(ulonglong, unsigned long long, OP) X(int8, int8_t, OP)           \
    X(int16, int16_t, OP) X(int32, int32_t, OP) X(int64, int64_t, OP) X(uint8, uint8_t, OP)        \
    X(uint16, uint16_t, OP) X(uint32, uint32_t, OP) X(uint64, uint64_t, OP) X(size, size_t, OP)    \
    X(char, char, OP) X(schar, signed char, OP) X(short, short, OP) X(int, int, OP)                \
    X(long, long, OP) X(longlong, long long, OP) RSHMEMI_REPT_STANDARD_REDUCE_TYPES_FP16(X, OP)    \
    X(float, float, OP) X(double, double, OP)

/* ---- end of the generated type tables */

/* Sized RMA: X(BITS, BYTES). */
#define RSHMEMI_REPT_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

#endif /* RSHMEM_DEVICE_COMMON_H */
