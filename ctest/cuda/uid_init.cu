/* rshmem-cuda-test: pes=2 launch=direct
 * Unique-id start-up as frameworks do it (torch.distributed, MPI): the program makes its own
 * processes and passes rank 0's id to the others itself (here: fork and a pipe), then every
 * rank calls nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID). Then finalize and a second,
 * independent job in the same processes with a fresh id (re-initialization). */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cuda_test.h"

__global__ void ring(int *box, int round) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(box, round * 100 + me, (me + 1) % n);
}

static void job(int rank, int nranks, int fd_read, int *fd_write, int round) {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) {
        CHECK_EQ(nvshmemx_get_uniqueid(&id), 0);
        for (int r = 1; r < nranks; r++) CHECK(write(fd_write[r], &id, sizeof id) == (ssize_t)sizeof id, "pipe write");
    } else {
        CHECK(read(fd_read, &id, sizeof id) == (ssize_t)sizeof id, "pipe read");
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_EQ(nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr), 0);
    CHECK_EQ(nvshmemx_init_status(), NVSHMEM_STATUS_NOT_INITIALIZED);
    CHECK_EQ(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr), 0);
    test_pe = nvshmem_my_pe();
    CHECK_EQ(nvshmemx_init_status(), NVSHMEM_STATUS_IS_INITIALIZED);
    CHECK_EQ(nvshmem_my_pe(), rank);
    CHECK_EQ(nvshmem_n_pes(), nranks);
    int *box = (int *)nvshmem_calloc(1, sizeof(int));
    ring<<<1, 1>>>(box, round);
    step_done();
    int got = 0;
    CUDA_CHECK(cudaMemcpy(&got, box, sizeof got, cudaMemcpyDeviceToHost));
    CHECK_EQ(got, round * 100 + (rank + nranks - 1) % nranks);
    nvshmem_free(box);
    nvshmem_barrier_all();
    nvshmem_finalize();
    CHECK_EQ(nvshmemx_init_status(), NVSHMEM_STATUS_NOT_INITIALIZED);
}

int main(void) {
    const int nranks = 2;
    int pipes[2][2] = {{-1, -1}, {-1, -1}};
    for (int round = 1; round <= 2; round++) CHECK(pipe(pipes[round - 1]) == 0, "pipe");
    /* Fork before anything touches CUDA. */
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    int rank = child == 0 ? 1 : 0;
    for (int round = 1; round <= 2; round++) {
        int w[2] = {-1, pipes[round - 1][1]};
        job(rank, nranks, pipes[round - 1][0], w, round);
    }
    if (child == 0) return 0;
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank 1 failed (status %d)", status);
    printf("PASS uid_init (2 ranks, 2 jobs)\n");
    return 0;
}
