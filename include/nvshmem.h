/* rshmem's NVSHMEM interface: the host API (implemented in librshmem.so) and, when compiled
 * by nvcc, the header-only device library (rshmem/device/). Written for rshmem from NVSHMEM
 * 3.x's documented names, signatures and constants; no NVSHMEM code or header text.
 *
 *   nvcc -arch=sm_90 app.cu $(pkg-config --cflags --libs rshmem)      (no -rdc needed)
 *
 * Kernels compiled by NVRTC include it too (options: -I<prefix>/include -I$CUDA_HOME/include
 * -I$CUDA_HOME/include/cccl, as for NVSHMEM); load them with nvshmemx_cumodule_init.
 *
 * Define NVSHMEM_HOSTLIB_ONLY to get the host API only. */
#ifndef RSHMEM_NVSHMEM_H
#define RSHMEM_NVSHMEM_H

#include "rshmem/device/rshmem_common.h"

/* NVRTC compiles device code only: the host API is left out (the device headers define every
 * device routine). */
#if !defined(__CUDACC_RTC__)
RSHMEMI_EXTERN_C_BEGIN

/* ---- initialization and finalization ---------------------------------------------------- */
void nvshmem_init(void);
int nvshmem_init_thread(int requested, int *provided);
void nvshmem_query_thread(int *provided);
void nvshmem_finalize(void);
int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t *attributes);
int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t *attributes);
void nvshmemx_hostlib_finalize(void);
int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t *uniqueid);
int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks, const nvshmemx_uniqueid_t *uniqueid,
                                    nvshmemx_init_attr_t *attr);
int nvshmemx_set_attr_mpi_comm_args(void *mpi_comm, nvshmemx_init_attr_t *nvshmem_attr);
int nvshmemx_init_status(void);
RSHMEMI_HOSTDEV void nvshmem_global_exit(int status);

/* ---- queries ------------------------------------------------------------------------------ */
RSHMEMI_HOSTDEV int nvshmem_my_pe(void);
RSHMEMI_HOSTDEV int nvshmem_n_pes(void);
RSHMEMI_HOSTDEV int nvshmem_team_my_pe(nvshmem_team_t team);
RSHMEMI_HOSTDEV int nvshmem_team_n_pes(nvshmem_team_t team);
RSHMEMI_HOSTDEV void nvshmem_info_get_version(int *major, int *minor);
RSHMEMI_HOSTDEV void nvshmem_info_get_name(char *name);
RSHMEMI_HOSTDEV void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch);

/* ---- symmetric heap (GPU memory) --------------------------------------------------------- */
void *nvshmem_malloc(size_t size);
void *nvshmem_calloc(size_t count, size_t size);
void *nvshmem_align(size_t alignment, size_t size);
void nvshmem_free(void *ptr);
RSHMEMI_HOSTDEV void *nvshmem_ptr(const void *ptr, int pe);
/* rshmem maps no multicast objects: always NULL. */
RSHMEMI_HOSTDEV void *nvshmemx_mc_ptr(nvshmem_team_t team, const void *ptr);
/* Local buffers used as the local side of RMA (bookkeeping only: P2P needs no registration). */
int nvshmemx_buffer_register(void *addr, size_t length);
int nvshmemx_buffer_unregister(void *addr);
void nvshmemx_buffer_unregister_all(void);
/* Not supported (NULL / an error): allocate symmetric memory with nvshmem_malloc. */
void *nvshmemx_buffer_register_symmetric(void *buf_ptr, size_t size, int flags);
int nvshmemx_buffer_unregister_symmetric(void *mmap_ptr, size_t size);

/* ---- RMA ----------------------------------------------------------------------------------- */
#define RSHMEMI_DECL_RMA(NAME, TYPE)                                                                    \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_p(TYPE *dest, const TYPE value, int pe);                      \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_g(const TYPE *source, int pe);                                \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe);     \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_get(TYPE *dest, const TYPE *source, size_t nelems, int pe);     \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_put_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_get_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe); \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_iput(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, \
                                               size_t nelems, int pe);                                     \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_iget(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, \
                                               size_t nelems, int pe);
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DECL_RMA)
#undef RSHMEMI_DECL_RMA

#define RSHMEMI_DECL_SIZED(BITS, BYTES)                                                                 \
    RSHMEMI_HOSTDEV void nvshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);       \
    RSHMEMI_HOSTDEV void nvshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);       \
    RSHMEMI_HOSTDEV void nvshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe); \
    RSHMEMI_HOSTDEV void nvshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe); \
    RSHMEMI_HOSTDEV void nvshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                            size_t nelems, int pe);                                     \
    RSHMEMI_HOSTDEV void nvshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,  \
                                            size_t nelems, int pe);
RSHMEMI_REPT_SIZES(RSHMEMI_DECL_SIZED)
#undef RSHMEMI_DECL_SIZED

RSHMEMI_HOSTDEV void nvshmem_putmem(void *dest, const void *source, size_t bytes, int pe);
RSHMEMI_HOSTDEV void nvshmem_getmem(void *dest, const void *source, size_t bytes, int pe);
RSHMEMI_HOSTDEV void nvshmem_putmem_nbi(void *dest, const void *source, size_t bytes, int pe);
RSHMEMI_HOSTDEV void nvshmem_getmem_nbi(void *dest, const void *source, size_t bytes, int pe);

/* ---- atomics (host: blocking, one library kernel per call; device: inline atomics) ---------- */
#define RSHMEMI_DECL_AMO_STANDARD(NAME, TYPE)                                                             \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_fetch_add(TYPE *dest, TYPE value, int pe);               \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_atomic_add(TYPE *dest, TYPE value, int pe);                     \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe);                           \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_atomic_inc(TYPE *dest, int pe);                                 \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond, TYPE value, int pe);
RSHMEMI_REPT_AMO_STANDARD_TYPES(RSHMEMI_DECL_AMO_STANDARD)
#undef RSHMEMI_DECL_AMO_STANDARD

#define RSHMEMI_DECL_AMO_EXTENDED(NAME, TYPE)                                              \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_fetch(const TYPE *dest, int pe);          \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_atomic_set(TYPE *dest, TYPE value, int pe);      \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_swap(TYPE *dest, TYPE value, int pe);
RSHMEMI_REPT_AMO_EXTENDED_TYPES(RSHMEMI_DECL_AMO_EXTENDED)
#undef RSHMEMI_DECL_AMO_EXTENDED

#define RSHMEMI_DECL_AMO_BITWISE(NAME, TYPE)                                                \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_atomic_and(TYPE *dest, TYPE value, int pe);       \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_atomic_or(TYPE *dest, TYPE value, int pe);        \
    RSHMEMI_HOSTDEV void nvshmem_##NAME##_atomic_xor(TYPE *dest, TYPE value, int pe);       \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_fetch_and(TYPE *dest, TYPE value, int pe); \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_fetch_or(TYPE *dest, TYPE value, int pe);  \
    RSHMEMI_HOSTDEV TYPE nvshmem_##NAME##_atomic_fetch_xor(TYPE *dest, TYPE value, int pe);
RSHMEMI_REPT_AMO_BITWISE_TYPES(RSHMEMI_DECL_AMO_BITWISE)
#undef RSHMEMI_DECL_AMO_BITWISE

/* ---- signals, ordering, synchronization ----------------------------------------------------- */
RSHMEMI_HOSTDEV uint64_t nvshmem_signal_fetch(uint64_t *sig_addr);
RSHMEMI_HOSTDEV void nvshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
RSHMEMI_HOSTDEV void nvshmem_quiet(void);
RSHMEMI_HOSTDEV void nvshmem_fence(void);
RSHMEMI_HOSTDEV void nvshmem_barrier_all(void);
RSHMEMI_HOSTDEV void nvshmem_sync_all(void);
RSHMEMI_HOSTDEV int nvshmem_barrier(nvshmem_team_t team);
RSHMEMI_HOSTDEV int nvshmem_team_sync(nvshmem_team_t team);
#define nvshmem_sync nvshmem_team_sync

/* ---- teams (handles: NVSHMEM_TEAM_WORLD 0, NVSHMEM_TEAM_SHARED 1, NVSHMEMX_TEAM_NODE 2, ...;
 * splits get handles from NVSHMEM_TEAMS_MIN on; non-members get NVSHMEM_TEAM_INVALID) -------- */
typedef uint64_t nvshmemx_team_uniqueid_t;
typedef struct {
    int version;
    int num_contexts;
    nvshmemx_team_uniqueid_t uniqueid;
    char padding[48];
} nvshmem_team_config_v2;
typedef nvshmem_team_config_v2 nvshmem_team_config_t;
#define NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS 0x0000000000000001
#define NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID 0x0000000000000002
#define NVSHMEM_TEAM_CONFIG_INITIALIZER \
    { (2 << 16) + (int)sizeof(nvshmem_team_config_t), -1, 0xFFFFFFFFFFFFFFFFull, { 0 } }

RSHMEMI_HOSTDEV int nvshmem_team_translate_pe(nvshmem_team_t src_team, int src_pe, nvshmem_team_t dest_team);
void nvshmem_team_get_config(nvshmem_team_t team, nvshmem_team_config_t *config);
int nvshmem_team_split_strided(nvshmem_team_t parent_team, int PE_start, int PE_stride, int PE_size,
                               const nvshmem_team_config_t *config, long config_mask, nvshmem_team_t *new_team);
int nvshmem_team_split_2d(nvshmem_team_t parent_team, int xrange, const nvshmem_team_config_t *xaxis_config,
                          long xaxis_mask, nvshmem_team_t *xaxis_team, const nvshmem_team_config_t *yaxis_config,
                          long yaxis_mask, nvshmem_team_t *yaxis_team);
void nvshmem_team_destroy(nvshmem_team_t team);
/* Teams from a unique id are not supported (an error; split a parent team instead). */
int nvshmemx_team_get_uniqueid(nvshmemx_team_uniqueid_t *uniqueid);
int nvshmemx_team_init(nvshmem_team_t *team, nvshmem_team_config_t *config, long config_mask, int npes,
                       int pe_idx_in_team);

/* ---- collectives: blocking from the host or one thread of a kernel; on a stream from the host
 * (rshmem's own kernels, enqueued on the stream). Each returns 0 or an NVSHMEMX_ERROR_* code.
 * The blocking host forms run on the library's own (non-blocking) stream and wait for it: they
 * are not ordered after work the program queued on its streams (cudaMemcpy/cudaMemset on the
 * legacy stream included); synchronize those first. */
RSHMEMI_HOSTDEV int nvshmem_alltoallmem(nvshmem_team_t team, void *dest, const void *src, size_t nelems);
RSHMEMI_HOSTDEV int nvshmem_broadcastmem(nvshmem_team_t team, void *dest, const void *src, size_t nelems, int PE_root);
RSHMEMI_HOSTDEV int nvshmem_fcollectmem(nvshmem_team_t team, void *dest, const void *src, size_t nelems);
int nvshmemx_alltoallmem_on_stream(nvshmem_team_t team, void *dest, const void *src, size_t nelem, cudaStream_t stream);
int nvshmemx_broadcastmem_on_stream(nvshmem_team_t team, void *dest, const void *src, size_t nelem, int PE_root,
                                    cudaStream_t stream);
int nvshmemx_fcollectmem_on_stream(nvshmem_team_t team, void *dest, const void *src, size_t nelem, cudaStream_t stream);
int nvshmemx_barrier_on_stream(nvshmem_team_t team, cudaStream_t stream);
int nvshmemx_team_sync_on_stream(nvshmem_team_t team, cudaStream_t stream);

#define RSHMEMI_DECL_COLL(NAME, TYPE)                                                                              \
    RSHMEMI_HOSTDEV int nvshmem_##NAME##_alltoall(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nelems); \
    RSHMEMI_HOSTDEV int nvshmem_##NAME##_broadcast(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nelem,  \
                                                   int PE_root);                                                    \
    RSHMEMI_HOSTDEV int nvshmem_##NAME##_fcollect(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nelem);  \
    int nvshmemx_##NAME##_alltoall_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nelem,        \
                                             cudaStream_t stream);                                                  \
    int nvshmemx_##NAME##_broadcast_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nelem,       \
                                              int PE_root, cudaStream_t stream);                                    \
    int nvshmemx_##NAME##_fcollect_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nelem,        \
                                             cudaStream_t stream);
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DECL_COLL)
#undef RSHMEMI_DECL_COLL

#define RSHMEMI_DECL_REDUCE(NAME, TYPE, OP)                                                                          \
    RSHMEMI_HOSTDEV int nvshmem_##NAME##_##OP##_reduce(nvshmem_team_t team, TYPE *dest, const TYPE *src,              \
                                                       size_t nreduce);                                              \
    RSHMEMI_HOSTDEV int nvshmem_##NAME##_##OP##_reducescatter(nvshmem_team_t team, TYPE *dest, const TYPE *src,       \
                                                              size_t nreduce);                                       \
    int nvshmemx_##NAME##_##OP##_reduce_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *src, size_t nreduce,   \
                                                  cudaStream_t stream);                                              \
    int nvshmemx_##NAME##_##OP##_reducescatter_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *src,            \
                                                         size_t nreduce, cudaStream_t stream);
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, and)
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, or)
RSHMEMI_REPT_BITWISE_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, xor)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, max)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, min)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, sum)
RSHMEMI_REPT_STANDARD_REDUCE_TYPES(RSHMEMI_DECL_REDUCE, prod)
#undef RSHMEMI_DECL_REDUCE

/* ---- on-stream operations --------------------------------------------------------------------- */
void nvshmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe, cudaStream_t cstrm);
void nvshmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe, cudaStream_t cstrm);
void nvshmemx_putmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe, cudaStream_t cstrm);
void nvshmemx_getmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe, cudaStream_t cstrm);
void nvshmemx_quiet_on_stream(cudaStream_t cstrm);
void nvshmemx_barrier_all_on_stream(cudaStream_t cstrm);
void nvshmemx_sync_all_on_stream(cudaStream_t cstrm);
void nvshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, cudaStream_t cstrm);
void nvshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t bytes, uint64_t *sig_addr, uint64_t signal,
                                      int sig_op, int pe, cudaStream_t cstrm);
void nvshmemx_putmem_signal_nbi_on_stream(void *dest, const void *source, size_t bytes, uint64_t *sig_addr, uint64_t signal,
                                          int sig_op, int pe, cudaStream_t cstrm);
void nvshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value, cudaStream_t cstream);

/* Typed and sized forms. p_on_stream takes its value at the call; g_on_stream returns the value,
 * so it waits for the stream. iput/iget strides are in elements. The waits' status and
 * cmp_values arrays may be host or device memory: they are read in stream order. */
#define RSHMEMI_DECL_RMA_ON_STREAM(NAME, TYPE)                                                                        \
    void nvshmemx_##NAME##_p_on_stream(TYPE *dest, const TYPE value, int pe, cudaStream_t cstrm);                      \
    TYPE nvshmemx_##NAME##_g_on_stream(const TYPE *src, int pe, cudaStream_t cstrm);                                   \
    void nvshmemx_##NAME##_put_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe, cudaStream_t cstrm);   \
    void nvshmemx_##NAME##_put_nbi_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe,                    \
                                             cudaStream_t cstrm);                                                     \
    void nvshmemx_##NAME##_get_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe, cudaStream_t cstrm);   \
    void nvshmemx_##NAME##_get_nbi_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe,                    \
                                             cudaStream_t cstrm);                                                     \
    void nvshmemx_##NAME##_iput_on_stream(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                          int pe, cudaStream_t cstrm);                                                \
    void nvshmemx_##NAME##_iget_on_stream(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                          int pe, cudaStream_t cstrm);                                                \
    void nvshmemx_##NAME##_put_signal_on_stream(TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr,     \
                                                uint64_t signal, int sig_op, int pe, cudaStream_t cstrm);             \
    void nvshmemx_##NAME##_put_signal_nbi_on_stream(TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr, \
                                                    uint64_t signal, int sig_op, int pe, cudaStream_t cstrm);
RSHMEMI_REPT_RMA_TYPES(RSHMEMI_DECL_RMA_ON_STREAM)
#undef RSHMEMI_DECL_RMA_ON_STREAM

#define RSHMEMI_DECL_SIZED_ON_STREAM(BITS, BYTES)                                                                      \
    void nvshmemx_put##BITS##_on_stream(void *dest, const void *source, size_t nelems, int pe, cudaStream_t cstrm);     \
    void nvshmemx_put##BITS##_nbi_on_stream(void *dest, const void *source, size_t nelems, int pe, cudaStream_t cstrm); \
    void nvshmemx_get##BITS##_on_stream(void *dest, const void *source, size_t nelems, int pe, cudaStream_t cstrm);     \
    void nvshmemx_get##BITS##_nbi_on_stream(void *dest, const void *source, size_t nelems, int pe, cudaStream_t cstrm); \
    void nvshmemx_iput##BITS##_on_stream(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                                         int pe, cudaStream_t cstrm);                                                  \
    void nvshmemx_iget##BITS##_on_stream(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                                         int pe, cudaStream_t cstrm);                                                  \
    void nvshmemx_put##BITS##_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,       \
                                               uint64_t signal, int sig_op, int pe, cudaStream_t cstrm);               \
    void nvshmemx_put##BITS##_signal_nbi_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,   \
                                                   uint64_t signal, int sig_op, int pe, cudaStream_t cstrm);
RSHMEMI_REPT_SIZES(RSHMEMI_DECL_SIZED_ON_STREAM)
#undef RSHMEMI_DECL_SIZED_ON_STREAM

#define RSHMEMI_DECL_WAIT_ON_STREAM(NAME, TYPE)                                                                        \
    void nvshmemx_##NAME##_wait_until_on_stream(TYPE *ivar, int cmp, TYPE cmp_value, cudaStream_t cstream);            \
    void nvshmemx_##NAME##_wait_until_all_on_stream(TYPE *ivars, size_t nelems, const int *status, int cmp,            \
                                                    TYPE cmp_value, cudaStream_t cstream);                             \
    void nvshmemx_##NAME##_wait_until_all_vector_on_stream(TYPE *ivars, size_t nelems, const int *status, int cmp,     \
                                                           TYPE *cmp_value, cudaStream_t cstream);
RSHMEMI_REPT_WAIT_TYPES(RSHMEMI_DECL_WAIT_ON_STREAM)
#undef RSHMEMI_DECL_WAIT_ON_STREAM

/* ---- modules loaded at run time (cubin, NVRTC, cudaLibrary) ---------------------------------- */
int nvshmemx_cumodule_init(CUmodule module);
int nvshmemx_cumodule_finalize(CUmodule module);
int nvshmemx_culibrary_init(CUlibrary library);
int nvshmemx_culibrary_finalize(CUlibrary library);

/* ---- rshmem extensions ------------------------------------------------------------------------ */
/* Per-translation-unit device state writer (see rshmem/device/rshmem_state.cuh). */
typedef int (*rshmem_state_writer_t)(const RshmemDeviceState *state, size_t size);
int rshmem_device_state_register(rshmem_state_writer_t writer);
void rshmem_device_state_unregister(rshmem_state_writer_t writer);
/* GPU memory held by the library on this PE: heap backed now, runtime area, and the drop in
 * free device memory the driver measured across nvshmem_init. */
int rshmem_gpu_memory_usage(size_t *heap_mapped, size_t *runtime_area, size_t *measured);
/* PEs of the job on this PE's GPU (1 before nvshmem_init). */
int rshmem_pes_on_my_gpu(void);
/* Called at program load by each translation unit compiled with -DRSHMEM_PROXY_ROUTE (the device
 * headers do it): GPU PEs with peers on other hosts then skip the init warning about that flag. */
void rshmem_proxy_route_compiled(void);

RSHMEMI_EXTERN_C_END
#endif /* !__CUDACC_RTC__ */

#if defined(__CUDACC__) && !defined(NVSHMEM_HOSTLIB_ONLY)
#include "rshmem/device/rshmem_device.cuh"
#endif

#endif /* RSHMEM_NVSHMEM_H */
