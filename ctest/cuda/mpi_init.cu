/* rshmem-cuda-test: launch=mpi pes=2
 * NVSHMEMX_INIT_WITH_MPI_COMM: the program starts under mpirun, calls MPI_Init, and hands
 * nvshmemx_init_attr its communicator (attr.mpi_comm = &comm). Checked: PE numbers follow the
 * communicator's ranks, also for a communicator that reverses them (MPI_Comm_split with
 * key = -rank), data moves between the PEs, and a second job starts after finalize.
 * Built with mpi.h (Open MPI or MPICH); where the machine has no GPU the program checks
 * only that every rank got NVSHMEMX_ERROR_GPU_NOT_SELECTED after the MPI rendezvous. */
#include "cuda_test.h"
#if defined(__has_include)
#if __has_include(<mpi.h>)
#define HAVE_MPI 1
#endif
#endif

#if !defined(HAVE_MPI)
/* Built without mpi.h on the include path (the plain compile check): nothing to run. */
int main(void) {
    printf("SKIP mpi_init: built without mpi.h (add MPI's include directory, e.g. mpicc -showme:compile)\n");
    return 0;
}
#else
#include <mpi.h>

__global__ void put_rank(int *box, int value) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(box, value, (me + 1) % n);
}

static int job(MPI_Comm comm, int round) {
    int rank = -1, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    attr.mpi_comm = &comm;
    int rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
    if (rc == NVSHMEMX_ERROR_GPU_NOT_SELECTED) return 1; /* no GPU here */
    CHECK_EQ(rc, NVSHMEMX_SUCCESS);
    test_pe = nvshmem_my_pe();
    CHECK_EQ(nvshmem_my_pe(), rank);
    CHECK_EQ(nvshmem_n_pes(), size);
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % count));
    int *box = (int *)nvshmem_calloc(1, sizeof(int));
    put_rank<<<1, 1>>>(box, round * 1000 + rank);
    step_done();
    int got = -1;
    CUDA_CHECK(cudaMemcpy(&got, box, sizeof got, cudaMemcpyDeviceToHost));
    CHECK_EQ(got, round * 1000 + (rank + size - 1) % size);
    nvshmem_free(box);
    nvshmem_finalize();
    return 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int wrank = 0, wsize = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int no_gpu = job(MPI_COMM_WORLD, 1);
    if (no_gpu) {
        /* Every rank must have got there: the MPI rendezvous and the unique-id join ran. */
        int all = 0;
        MPI_Allreduce(&no_gpu, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (wrank == 0) printf("SKIP mpi_init: no GPU; all %d ranks reached GPU selection through the MPI communicator\n", all);
        int ok = all == wsize;
        MPI_Finalize();
        return ok ? 0 : 1;
    }
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &reversed);
    job(reversed, 2);
    MPI_Comm_free(&reversed);
    if (wrank == 0) printf("PASS mpi_init (%d ranks, 2 jobs, world and reversed communicators)\n", wsize);
    MPI_Finalize();
    return 0;
}
#endif /* HAVE_MPI */
