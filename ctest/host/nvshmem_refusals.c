/* rshmem-test: pes=1,2
 * The NVSHMEM host routines rshmem declines, and the GPU-only ones called in a CPU job, return
 * their error status (or NULL) and say why on stderr, naming the routine and the way out:
 *   nvshmemx_team_init / nvshmemx_team_get_uniqueid   -> split a parent team instead
 *   nvshmemx_buffer_register / _unregister and nvshmemx_buffer_register_symmetric /
 *   _unregister_symmetric in a job started with shmem_init -> call nvshmem_init (NULL / an error
 *   status; the symmetric forms map GPU allocations, ctest/cuda/user_buffer.cu)
 * The job goes on normally afterwards (none of these is fatal). */
#define _GNU_SOURCE
#include <nvshmem.h>
#include <nvshmemx.h>

#include "capture.h"

/* The captured text names the routine and contains the hint. */
static void expect_said(const char *said, const char *routine, const char *hint) {
    CHECK(strstr(said, routine) != NULL, "the message does not name %s: \"%s\"", routine, said);
    CHECK(strstr(said, hint) != NULL, "the message of %s lacks \"%s\": \"%s\"", routine, hint, said);
}

int main(void) {
    shmem_init();
    static char buf[4096];
    char *said;

    stderr_begin();
    nvshmem_team_t team = NVSHMEM_TEAM_WORLD;
    int rc = nvshmemx_team_init(&team, NULL, 0, shmem_n_pes(), shmem_my_pe());
    said = stderr_end();
    CHECK(rc != 0, "nvshmemx_team_init returned 0");
    CHECK(team == NVSHMEM_TEAM_INVALID, "nvshmemx_team_init left the handle at %d, not NVSHMEM_TEAM_INVALID", (int)team);
    expect_said(said, "nvshmemx_team_init", "nvshmem_team_split_strided");
    free(said);

    stderr_begin();
    nvshmemx_team_uniqueid_t uid = 0;
    rc = nvshmemx_team_get_uniqueid(&uid);
    said = stderr_end();
    CHECK(rc != 0, "nvshmemx_team_get_uniqueid returned 0");
    expect_said(said, "nvshmemx_team_get_uniqueid", "split a parent team");
    free(said);

    stderr_begin();
    void *mapped = nvshmemx_buffer_register_symmetric(buf, sizeof buf, 0);
    said = stderr_end();
    CHECK(mapped == NULL, "nvshmemx_buffer_register_symmetric returned %p, not NULL", mapped);
    expect_said(said, "nvshmemx_buffer_register_symmetric", "call nvshmem_init");
    free(said);

    stderr_begin();
    rc = nvshmemx_buffer_unregister_symmetric(buf, sizeof buf);
    said = stderr_end();
    CHECK(rc != 0, "nvshmemx_buffer_unregister_symmetric returned 0");
    expect_said(said, "nvshmemx_buffer_unregister_symmetric", "call nvshmem_init");
    free(said);

    stderr_begin();
    rc = nvshmemx_buffer_register(buf, sizeof buf);
    int rc2 = nvshmemx_buffer_unregister(buf);
    said = stderr_end();
    CHECK(rc != 0 && rc2 != 0, "buffer_register/unregister in a CPU job returned %d/%d", rc, rc2);
    expect_said(said, "nvshmemx_buffer_register", "call nvshmem_init");
    expect_said(said, "nvshmemx_buffer_unregister", "call nvshmem_init");
    free(said);

    /* Still a working job. */
    shmem_barrier_all();
    if (shmem_my_pe() == 0) printf("PASS nvshmem_refusals\n");
    shmem_finalize();
    return 0;
}
