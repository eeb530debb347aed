/* Small on-stream broadcast, fcollect and alltoall: one block runs the low-latency form of the
 * device library's block-scope collective (device/rshmem_coll.cuh), which stores the data
 * with its flags straight into the members' mailboxes: one hop, no barrier before or after,
 * where rk_gather (coll.cu) takes an entry handshake, a round trip of loads and an exit
 * handshake. The runtime gives this module the device state as it does a user's module
 * (nvshmemx_cumodule_init) and launches it only for teams and sizes that have mailboxes, in
 * jobs whose GPUs all reach each other over P2P (src/runtime/gpu/coll.rs). */
#include <nvshmem.h>
#include <nvshmemx.h>

/* Threads of the block: one 16-byte unit each for the largest message (half a 4 KiB slot:
 * 2 KiB of payload per member is 256 units). */
#define RK_LL_THREADS 256

/* What the launch asks for; mirrored by LlArgs in src/cuda/coll.rs. */
enum { RK_LL_BROADCAST = 0, RK_LL_FCOLLECT = 1, RK_LL_ALLTOALL = 2 };
struct rk_ll_args {
    unsigned long long dest, src, nbytes;
    int team, what, root, pad;
};

extern "C" __global__ void __launch_bounds__(RK_LL_THREADS) rk_ll(const __grid_constant__ rk_ll_args a) {
    /* The low-latency forms alone (the host checked that they apply): the whole collectives
     * would make this module several times larger, and its JIT compile on first use longer.
     * Zero bytes: the start-up warm-up's launch, which touches nothing (see rk_gather). */
    if (a.nbytes == 0) return;
    rshmemi_block_sync sync;
    rshmemi_group g = sync.group();
    const int team = a.team;
    rshmemi_team t = rshmemi_team_checked(team, "rshmem's small on-stream collective");
    char *dest = (char *)a.dest;
    const char *src = (const char *)a.src;
    if (a.what == RK_LL_BROADCAST) rshmemi_broadcast_ll(team, t, dest, src, a.nbytes, a.root, g, sync);
    else if (a.what == RK_LL_FCOLLECT) rshmemi_fcollect_ll(team, t, dest, src, a.nbytes, g, sync);
    else rshmemi_alltoall_ll(team, t, dest, src, a.nbytes, g, sync);
}
