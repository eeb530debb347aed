/* rshmem-cuda-test: pes=2 launch=direct
 * Unique-id start-up through a file the program itself creates, with independent processes
 * (not forked from one another): `uid_file RANK NRANKS PATH` — rank 0 makes the id with
 * nvshmemx_get_uniqueid and writes it to PATH (write to a temporary name, then rename, so no
 * reader sees half an id); the others wait for PATH and read it. Run without those arguments,
 * the program starts NRANKS=2 such processes of itself and waits for them. Each job checks the
 * PE numbers, moves data around the ring and reduces on a stream. */
#include <errno.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cuda_test.h"

extern char **environ;

__global__ void ring(int *box, int value) { nvshmem_int_p(box, value, (nvshmem_my_pe() + 1) % nvshmem_n_pes()); }

static int rank_main(int rank, int nranks, const char *path) {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) {
        CHECK_EQ(nvshmemx_get_uniqueid(&id), 0);
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        CHECK(f != NULL, "create %s: %s", tmp, strerror(errno));
        CHECK(fwrite(&id, sizeof id, 1, f) == 1, "write %s", tmp);
        CHECK(fclose(f) == 0, "close %s", tmp);
        CHECK(rename(tmp, path) == 0, "rename to %s: %s", path, strerror(errno));
    } else {
        struct stat st;
        for (int waited = 0; stat(path, &st) != 0; waited++) {
            CHECK(waited < 3000, "no id in %s after 30 s", path);
            usleep(10000);
        }
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL && fread(&id, sizeof id, 1, f) == 1, "read %s", path);
        fclose(f);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    CHECK_EQ(nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr), 0);
    CHECK_EQ(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr), 0);
    test_pe = nvshmem_my_pe();
    CHECK_EQ(nvshmem_my_pe(), rank);
    CHECK_EQ(nvshmem_n_pes(), nranks);
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % count));
    int *box = (int *)nvshmem_calloc(1, sizeof(int)), *sum = (int *)nvshmem_malloc(sizeof(int));
    ring<<<1, 1>>>(box, 7000 + rank);
    step_done();
    int got = 0;
    CUDA_CHECK(cudaMemcpy(&got, box, sizeof got, cudaMemcpyDeviceToHost));
    CHECK_EQ(got, 7000 + (rank + nranks - 1) % nranks);
    CHECK_EQ(nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, sum, box, 1), 0);
    CUDA_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
    CHECK_EQ(got, 7000 * nranks + nranks * (nranks - 1) / 2);
    nvshmem_free(sum);
    nvshmem_free(box);
    if (rank == 0) {
        unlink(path);
        printf("PASS uid_file (%d independent processes, id through %s)\n", nranks, path);
    }
    nvshmem_finalize();
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4) return rank_main(atoi(argv[1]), atoi(argv[2]), argv[3]);
    /* Start the ranks as separate programs, as a job script would. */
    const int nranks = 2;
    char path[256], nr[16], rk[nranks][16];
    snprintf(path, sizeof path, "/tmp/rshmem-uid-file-%d-%ld", (int)getpid(), (long)time(NULL));
    snprintf(nr, sizeof nr, "%d", nranks);
    pid_t pids[nranks];
    for (int r = 0; r < nranks; r++) {
        snprintf(rk[r], sizeof rk[r], "%d", r);
        char *args[] = {argv[0], rk[r], nr, path, NULL};
        CHECK(posix_spawn(&pids[r], "/proc/self/exe", NULL, NULL, args, environ) == 0, "posix_spawn: %s", strerror(errno));
    }
    int failed = 0;
    for (int r = 0; r < nranks; r++) {
        int status = 0;
        CHECK(waitpid(pids[r], &status, 0) == pids[r], "waitpid");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed++;
    }
    unlink(path);
    CHECK(failed == 0, "%d of %d ranks failed", failed, nranks);
    return 0;
}
