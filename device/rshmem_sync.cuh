/* Device ordering, barriers and team queries (the point-to-point waits are in rshmem_wait.cuh).
 * Over P2P every put is a store that is already on its way, so quiet and fence are system-scope
 * memory fences. */
#ifndef RSHMEM_SYNC_CUH
#define RSHMEM_SYNC_CUH

#include "rshmem/device/rshmem_p2p.cuh"

/* A team barrier (release: quiet + sync) and a team sync (execution only), by a group. */
template <typename SYNC>
RSHMEMI_DEV void rshmemi_sync_team_group(const rshmemi_team &t, rshmemi_group g, SYNC sync) {
    rshmemi_team_barrier<true>(t, g, sync);
}
template <typename SYNC>
RSHMEMI_DEV void rshmemi_team_sync_group(const rshmemi_team &t, rshmemi_group g, SYNC sync) {
    rshmemi_team_barrier<false>(t, g, sync);
}

RSHMEMI_EXTERN_C_BEGIN

#ifdef __CUDA_ARCH__

RSHMEMI_API void nvshmem_quiet(void) { rshmemi_remote_quiet(__func__); __threadfence_system(); }
/* fence orders this thread's puts to each PE: a release fence suffices (later stores are not
 * seen before earlier ones); quiet keeps the full fence (loads after it too). */
RSHMEMI_API void nvshmem_fence(void) {
    rshmemi_remote_fence();
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}
RSHMEMI_API void nvshmem_barrier_all(void) {
    rshmemi_sync_team_group(rshmemi_team_of(NVSHMEM_TEAM_WORLD), rshmemi_thread_group(), rshmemi_no_sync());
}
RSHMEMI_API void nvshmem_sync_all(void) {
    rshmemi_team_sync_group(rshmemi_team_of(NVSHMEM_TEAM_WORLD), rshmemi_thread_group(), rshmemi_no_sync());
}
RSHMEMI_API int nvshmem_barrier(nvshmem_team_t team) {
    rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), rshmemi_thread_group(), rshmemi_no_sync());
    return 0;
}
RSHMEMI_API int nvshmem_team_sync(nvshmem_team_t team) {
    rshmemi_team_sync_group(rshmemi_team_checked(team, __func__), rshmemi_thread_group(), rshmemi_no_sync());
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
        rshmemi_##SCOPE##_sync sync;                                                                          \
        rshmemi_sync_team_group(rshmemi_team_of(NVSHMEM_TEAM_WORLD), sync.group(), sync);                     \
    }                                                                                                         \
    RSHMEMI_API void nvshmemx_sync_all_##SCOPE(void) {                                                        \
        rshmemi_##SCOPE##_sync sync;                                                                          \
        rshmemi_team_sync_group(rshmemi_team_of(NVSHMEM_TEAM_WORLD), sync.group(), sync);                     \
    }                                                                                                         \
    RSHMEMI_API int nvshmemx_barrier_##SCOPE(nvshmem_team_t team) {                                           \
        rshmemi_##SCOPE##_sync sync;                                                                          \
        rshmemi_sync_team_group(rshmemi_team_checked(team, __func__), sync.group(), sync);                    \
        return 0;                                                                                             \
    }                                                                                                         \
    RSHMEMI_API int nvshmemx_team_sync_##SCOPE(nvshmem_team_t team) {                                         \
        rshmemi_##SCOPE##_sync sync;                                                                          \
        rshmemi_team_sync_group(rshmemi_team_checked(team, __func__), sync.group(), sync);                    \
        return 0;                                                                                             \
    }
RSHMEMI_DEF_SYNC_GROUP(warp)
RSHMEMI_DEF_SYNC_GROUP(block)
#undef RSHMEMI_DEF_SYNC_GROUP

RSHMEMI_EXTERN_C_END

#endif /* RSHMEM_SYNC_CUH */
