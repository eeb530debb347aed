/* Device ordering, point-to-point synchronization and barriers. Over P2P every put is a
 * store that is already on its way, so quiet and fence are system-scope memory fences. */
#ifndef RSHMEM_SYNC_CUH
#define RSHMEM_SYNC_CUH

#include "rshmem/device/rshmem_p2p.cuh"

template <typename SYNC>
RSHMEMI_DEV void rshmemi_sync_team_group(const rshmemi_team &t, rshmemi_group g, SYNC sync) {
    sync();
    if (g.tid == 0) rshmemi_sync_team_one_thread(t);
    sync();
}
template <typename SYNC>
RSHMEMI_DEV void rshmemi_sync_all_group(rshmemi_group g, SYNC sync) {
    rshmemi_sync_team_group(rshmemi_team_of(NVSHMEM_TEAM_WORLD), g, sync);
}

RSHMEMI_EXTERN_C_BEGIN

#ifdef __CUDA_ARCH__

RSHMEMI_API void nvshmem_quiet(void) { rshmemi_ibgda_quiet(__func__); __threadfence_system(); }
RSHMEMI_API void nvshmem_fence(void) { rshmemi_ibgda_fence(); __threadfence_system(); }
RSHMEMI_API void nvshmem_barrier_all(void) { rshmemi_sync_all_group(rshmemi_thread_group(), rshmemi_no_sync()); }
RSHMEMI_API void nvshmem_sync_all(void) { rshmemi_sync_all_group(rshmemi_thread_group(), rshmemi_no_sync()); }
RSHMEMI_API int nvshmem_barrier(nvshmem_team_t team) {
    rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), rshmemi_thread_group(), rshmemi_no_sync());
    return 0;
}
RSHMEMI_API int nvshmem_team_sync(nvshmem_team_t team) {
    rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), rshmemi_thread_group(), rshmemi_no_sync());
    return 0;
}
RSHMEMI_API int nvshmem_team_my_pe(nvshmem_team_t team) { return rshmemi_team_of(team).my; }
RSHMEMI_API int nvshmem_team_n_pes(nvshmem_team_t team) {
    rshmemi_team t = rshmemi_team_of(team);
    return t.size > 0 ? t.size : -1;
}
RSHMEMI_API int nvshmem_team_translate_pe(nvshmem_team_t src_team, int src_pe, nvshmem_team_t dest_team) {
    rshmemi_team a = rshmemi_team_of(src_team), b = rshmemi_team_of(dest_team);
    if (a.size <= 0 || b.size <= 0 || src_pe < 0 || src_pe >= a.size) return -1;
    return rshmemi_team_index(b, rshmemi_team_pe(a, src_pe));
}
RSHMEMI_API void nvshmem_global_exit(int status) {
    printf("rshmem: PE %d called nvshmem_global_exit(%d) in device code\n", RSHMEMI_STATE.mype, status);
    __trap();
}
RSHMEMI_API void nvshmem_info_get_version(int *major, int *minor) {
    *major = NVSHMEM_MAJOR_VERSION;
    *minor = NVSHMEM_MINOR_VERSION;
}
RSHMEMI_API void nvshmemx_vendor_get_version_info(int *major, int *minor, int *patch) {
    *major = NVSHMEM_VENDOR_MAJOR_VERSION;
    *minor = NVSHMEM_VENDOR_MINOR_VERSION;
    *patch = NVSHMEM_VENDOR_PATCH_VERSION;
}
RSHMEMI_API void nvshmem_info_get_name(char *name) {
    const char *v = NVSHMEM_VENDOR_STRING;
    int i = 0;
    for (; v[i] && i < NVSHMEM_MAX_NAME_LEN - 1; i++) name[i] = v[i];
    name[i] = 0;
}

#endif /* __CUDA_ARCH__ */

/* ---- device-only routines --------------------------------------------------------------- */
#define RSHMEMI_DEF_SYNC_GROUP(SCOPE)                                                                         \
    RSHMEMI_API void nvshmemx_barrier_all_##SCOPE(void) {                                                     \
        rshmemi_sync_all_group(rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_sync());                          \
    }                                                                                                         \
    RSHMEMI_API void nvshmemx_sync_all_##SCOPE(void) {                                                        \
        rshmemi_sync_all_group(rshmemi_##SCOPE##_group(), rshmemi_##SCOPE##_sync());                          \
    }                                                                                                         \
    RSHMEMI_API int nvshmemx_barrier_##SCOPE(nvshmem_team_t team) {                                           \
        rshmemi_##SCOPE##_sync sync;                                                                          \
        rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), rshmemi_##SCOPE##_group(), sync);       \
        return 0;                                                                                             \
    }                                                                                                         \
    RSHMEMI_API int nvshmemx_team_sync_##SCOPE(nvshmem_team_t team) {                                         \
        rshmemi_##SCOPE##_sync sync;                                                                          \
        rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), rshmemi_##SCOPE##_group(), sync);       \
        return 0;                                                                                             \
    }
RSHMEMI_DEF_SYNC_GROUP(warp)
RSHMEMI_DEF_SYNC_GROUP(block)
#undef RSHMEMI_DEF_SYNC_GROUP

RSHMEMI_API uint64_t nvshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value) {
    return rshmemi_wait_until(sig_addr, cmp, cmp_value);
}

#define RSHMEMI_DEF_WAIT(NAME, TYPE)                                                                          \
    RSHMEMI_API void nvshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value) {                       \
        rshmemi_wait_until(ivar, cmp, cmp_value);                                                             \
    }                                                                                                         \
    RSHMEMI_API int nvshmem_##NAME##_test(TYPE *ivar, int cmp, TYPE cmp_value) {                              \
        int ok = rshmemi_compare(rshmemi_load(ivar), cmp, cmp_value);                                         \
        if (ok) __threadfence_system();                                                                       \
        return ok;                                                                                            \
    }                                                                                                         \
    RSHMEMI_API void nvshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems, const int *status, int cmp,  \
                                                     TYPE cmp_value) {                                        \
        for (size_t i = 0; i < nelems; i++)                                                                   \
            if (!status || !status[i]) rshmemi_wait_until(&ivars[i], cmp, cmp_value);                         \
    }                                                                                                         \
    RSHMEMI_API size_t nvshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                       TYPE cmp_value) {                                      \
        bool any = false;                                                                                     \
        for (size_t i = 0; i < nelems; i++) any |= !status || !status[i];                                     \
        if (!any) return (size_t)-1;                                                                          \
        for (;;)                                                                                              \
            for (size_t i = 0; i < nelems; i++)                                                               \
                if ((!status || !status[i]) && rshmemi_compare(rshmemi_load(&ivars[i]), cmp, cmp_value)) {    \
                    __threadfence_system();                                                                   \
                    return i;                                                                                 \
                }                                                                                             \
    }
RSHMEMI_REPT_WAIT_TYPES(RSHMEMI_DEF_WAIT)
#undef RSHMEMI_DEF_WAIT

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_SYNC_CUH */
