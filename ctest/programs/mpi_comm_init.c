/* NVSHMEMX_INIT_WITH_MPI_COMM on a machine without a GPU, under Open MPI or MPICH (the two MPI
 * ABIs: a communicator is a pointer in one, an int in the other). The job cannot get past GPU
 * selection here, but everything before it runs: libmpi found at run time, the communicator
 * read with the right ABI, rank 0's unique id broadcast over it, every rank joined to rank 0's
 * bootstrap and the host heap set up among them. Each rank must then get
 * NVSHMEMX_ERROR_GPU_NOT_SELECTED; a garbled communicator or broadcast gives another error or a
 * bootstrap timeout instead.
 *
 *   mpi_comm_init world    every rank over MPI_COMM_WORLD
 *   mpi_comm_init split    even and odd ranks as two jobs (MPI_Comm_split), keys reversed
 *   mpi_comm_init misuse   attr.mpi_comm = NULL, then a call before MPI_Init: both
 *                          NVSHMEMX_ERROR_INVALID_VALUE, nothing joined
 * The error each rank prints names its PE number in the job it joined (the script checks them).
 * Rank 0 prints "PASS mpi_comm_init MODE (N ranks)" when every rank saw what it should. */
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>
#include <string.h>

static int init_over(MPI_Comm *comm) {
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    attr.mpi_comm = comm;
    return nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "world";
    int early = -1;
    if (strcmp(mode, "misuse") == 0) {
        MPI_Comm world = MPI_COMM_WORLD;
        early = init_over(&world); /* MPI is not initialized yet */
    }
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = -1, want = NVSHMEMX_ERROR_GPU_NOT_SELECTED;
    if (strcmp(mode, "world") == 0) {
        MPI_Comm world = MPI_COMM_WORLD;
        rc = init_over(&world);
    } else if (strcmp(mode, "split") == 0) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
        rc = init_over(&half);
        MPI_Comm_free(&half);
    } else if (strcmp(mode, "misuse") == 0) {
        rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, NULL);
        int rc2 = -1;
        if (rc == NVSHMEMX_ERROR_INVALID_VALUE) {
            nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER; /* mpi_comm stays NULL */
            rc2 = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
        }
        if (rc2 != NVSHMEMX_ERROR_INVALID_VALUE) rc = rc2;
        if (early != NVSHMEMX_ERROR_INVALID_VALUE) rc = early;
        want = NVSHMEMX_ERROR_INVALID_VALUE;
    } else {
        fprintf(stderr, "usage: mpi_comm_init world|split|misuse\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int ok = rc == want && nvshmemx_init_status() == NVSHMEM_STATUS_NOT_INITIALIZED;
    if (!ok) fprintf(stderr, "rank %d: %s: nvshmemx_init_attr returned %d (want %d), init status %d\n", rank, mode, rc, want, nvshmemx_init_status());
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == size) printf("PASS mpi_comm_init %s (%d ranks)\n", mode, size);
    MPI_Finalize();
    return all == size ? 0 : 1;
}
